package extproc

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/toolproc/toolproc/testenv"
)

// replayEnv is Envoy's replay listener as the stand-in models it (a proxy
// with no ext_proc filter) in front of a fake upstream.
func replayEnv(t *testing.T, upstream http.Handler) (*Server, *ReplayClient) {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	p, err := testenv.NewProxy(testenv.ProxyConfig{UpstreamURL: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	listener := httptest.NewServer(p)
	t.Cleanup(listener.Close)
	s := testServer(t, "server: {replay_url: "+listener.URL+", replay_timeout: 2s}")
	rc, err := NewReplayClient(s.cfg, s.metrics)
	if err != nil {
		t.Fatal(err)
	}
	return s, rc
}

func TestReplayThroughEnvoyListener(t *testing.T) {
	up := testenv.NewFakeUpstream()
	s, rc := replayEnv(t, up)
	orig := hdrs(":authority", "api.anthropic.com", ":path", "/v1/messages?beta=true", ":method", "POST", ":scheme", "https",
		"x-api-key", "sk-ant-secret", "anthropic-beta", "context-management-2025-06-27", "content-type", "application/json",
		"content-length", "999999", "x-envoy-expected-rq-timeout-ms", "1000", "x-request-id", "r1", "accept-encoding", "gzip")
	body := `{"model":"claude","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	resp, err := rc.Do(context.Background(), Replay{Purpose: "expand_context", Headers: orig.GetHeaders(), Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(got), `"type":"message"`) {
		t.Fatalf("status %d: %s", resp.StatusCode, got)
	}
	reqs := up.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream got %d requests", len(reqs))
	}
	r := reqs[0]
	checks := map[string]bool{
		"path and query kept":           r.Path == "/v1/messages",
		"body sent":                     string(r.Body) == body,
		"content-length recomputed":     r.ContentLength == int64(len(body)),
		"credential forwarded":          r.Header.Get("x-api-key") == "sk-ant-secret",
		"beta header forwarded":         r.Header.Get("anthropic-beta") == "context-management-2025-06-27",
		"replay marked":                 r.Header.Get(ReplayHeader) == "expand_context",
		"x-envoy-* dropped":             r.Header.Get("x-envoy-expected-rq-timeout-ms") == "",
		"accept-encoding not forwarded": r.Header.Get("accept-encoding") != "gzip",
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if testutil.ToFloat64(s.metrics.Replays.WithLabelValues("expand_context", "2xx")) != 1 {
		t.Error("replay not counted")
	}
}

func TestReplayTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s, rc := replayEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	start := time.Now()
	_, err := rc.Do(context.Background(), Replay{Purpose: "overflow", Headers: hdrs(":path", "/v1/messages", ":method", "POST").GetHeaders(), Body: []byte(`{}`)})
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("want a timeout error within the bound, got %v after %v", err, time.Since(start))
	}
	if strings.Contains(err.Error(), "sk-") {
		t.Fatal("error text must not carry credentials")
	}
	if testutil.ToFloat64(s.metrics.Replays.WithLabelValues("overflow", "error")) != 1 {
		t.Error("failed replay not counted")
	}
}
