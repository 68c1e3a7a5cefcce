package testenv

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The fake upstream run as its own process (testenv/cmd/fakeupstream, the
// compose topology of envoy/e2e) cannot be given a Go script or asked for
// its recorded requests in memory. These are the remote equivalents: a
// request header that names a canned script, a header that tags the
// requests of one test, and an admin endpoint that returns the requests
// carrying a tag.

const (
	// ScriptHeader names one of Scripts for this request.
	ScriptHeader = "x-toolproc-e2e-script"
	// TagHeader marks the requests of one test; the admin endpoint filters on it.
	TagHeader = "x-toolproc-e2e-tag"
)

// Scripts are the canned answers a request can ask for by ScriptHeader.
var Scripts = map[string]func(RecordedRequest) *ScriptedResponse{
	// plain-ok answers any request with a small plain-text body: for tests
	// about the request, whose answer should pass untouched.
	"plain-ok": func(RecordedRequest) *ScriptedResponse {
		return &ScriptedResponse{Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte(`{"ok":true}`)}
	},
}

// WithScripts plays Scripts on ScriptHeader, else next (nil: the default).
func WithScripts(next func(RecordedRequest) *ScriptedResponse) func(RecordedRequest) *ScriptedResponse {
	return func(r RecordedRequest) *ScriptedResponse {
		if s, ok := Scripts[r.Header.Get(ScriptHeader)]; ok {
			return s(r)
		}
		if next == nil {
			return nil
		}
		return next(r)
	}
}

// AdminHandler serves GET /requests?tag=T: the recorded requests carrying
// TagHeader T, oldest first, as JSON. Without a tag it answers 400: tests
// share one upstream and must see only their own requests.
func (u *FakeUpstream) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /requests", func(w http.ResponseWriter, r *http.Request) {
		tag := r.URL.Query().Get("tag")
		if tag == "" {
			http.Error(w, "tag is required", http.StatusBadRequest)
			return
		}
		out := []RecordedRequest{}
		for _, rec := range u.Requests() {
			if rec.Header.Get(TagHeader) == tag {
				out = append(out, rec)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	return mux
}

// RemoteUpstream reads a FakeUpstream's requests through its AdminHandler.
type RemoteUpstream struct {
	Admin string // base URL of the admin listener
	Tag   string
}

// Requests are the requests tagged r.Tag, oldest first.
func (r RemoteUpstream) Requests() ([]RecordedRequest, error) {
	resp, err := http.Get(strings.TrimRight(r.Admin, "/") + "/requests?tag=" + url.QueryEscape(r.Tag))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fake upstream admin: %s", resp.Status)
	}
	var out []RecordedRequest
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("fake upstream admin: %w", err)
	}
	return out, nil
}
