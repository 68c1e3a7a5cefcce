package testenv

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// RecordedRequest is one request as the fake upstream received it.
type RecordedRequest struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	// ContentLength is what the request declared: -1 when it came chunked.
	ContentLength    int64
	TransferEncoding []string
	Trailer          http.Header
}

// ScriptedResponse is what the fake upstream sends back.
type ScriptedResponse struct {
	Status int // 0 means 200
	Header http.Header
	// Body is written in one go when Chunks is nil. Otherwise each chunk is written and flushed, with
	// ChunkDelay between chunks, so the proxy sees a stream.
	Body       []byte
	Chunks     [][]byte
	ChunkDelay time.Duration
	Trailer    http.Header // optional HTTP trailers (the response then goes chunked)
}

// FakeUpstream is a scripted LLM provider. It records every request and rejects (400) any whose body
// length differs from its Content-Length, or whose body on a known LLM path is not JSON. Without a
// script it answers like OpenAI on /v1/chat/completions and like Anthropic on /v1/messages (JSON, or
// SSE when the request has "stream":true), and 404 elsewhere.
type FakeUpstream struct {
	mu     sync.Mutex
	reqs   []RecordedRequest
	script func(RecordedRequest) *ScriptedResponse
}

// NewFakeUpstream returns a fake upstream with the default behaviour.
func NewFakeUpstream() *FakeUpstream { return &FakeUpstream{} }

// Requests returns a copy of the requests received so far, oldest first.
func (u *FakeUpstream) Requests() []RecordedRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]RecordedRequest(nil), u.reqs...)
}

// Reset forgets the recorded requests. The script stays.
func (u *FakeUpstream) Reset() {
	u.mu.Lock()
	u.reqs = nil
	u.mu.Unlock()
}

// SetScript installs fn. A nil fn, or fn returning nil, means the default behaviour.
func (u *FakeUpstream) SetScript(fn func(RecordedRequest) *ScriptedResponse) {
	u.mu.Lock()
	u.script = fn
	u.mu.Unlock()
}

func (u *FakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, readErr := io.ReadAll(r.Body)
	rec := RecordedRequest{
		Method:           r.Method,
		Path:             r.URL.Path,
		Header:           r.Header.Clone(),
		Body:             body,
		ContentLength:    r.ContentLength,
		TransferEncoding: append([]string(nil), r.TransferEncoding...),
		Trailer:          r.Trailer.Clone(),
	}
	u.mu.Lock()
	u.reqs = append(u.reqs, rec)
	script := u.script
	u.mu.Unlock()

	if readErr != nil {
		writeError(w, r, http.StatusBadRequest, "could not read request body: "+readErr.Error())
		return
	}
	if cl := r.Header.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err != nil || n != int64(len(body)) {
			writeError(w, r, http.StatusBadRequest,
				fmt.Sprintf("body length %d does not match Content-Length %q", len(body), cl))
			return
		}
	}
	var sr *ScriptedResponse
	if script != nil {
		sr = script(rec)
	}
	if sr == nil {
		sr = DefaultResponse(rec)
	}
	sr.write(w, r)
}

func (sr *ScriptedResponse) write(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, vs := range sr.Header {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	for k := range sr.Trailer {
		h.Add("Trailer", k)
	}
	status := sr.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	rc := http.NewResponseController(w)
	if sr.Chunks == nil {
		_, _ = w.Write(sr.Body)
	}
	for i, c := range sr.Chunks {
		if i > 0 && sr.ChunkDelay > 0 {
			select {
			case <-time.After(sr.ChunkDelay):
			case <-r.Context().Done():
				return
			}
		}
		if _, err := w.Write(c); err != nil {
			return
		}
		_ = rc.Flush()
	}
	for k, vs := range sr.Trailer {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
}

// DefaultResponse is what the fake upstream answers when no script handles req. Scripts can start from
// it and change what they need.
func DefaultResponse(req RecordedRequest) *ScriptedResponse {
	known := req.Path == "/v1/chat/completions" || req.Path == "/v1/messages"
	if !known || req.Method != http.MethodPost {
		return errorResponse(http.StatusNotFound, "invalid_request_error",
			fmt.Sprintf("Unknown request URL: %s %s.", req.Method, req.Path))
	}
	if !gjson.ValidBytes(req.Body) {
		return errorResponse(http.StatusBadRequest, "invalid_request_error",
			"We could not parse the JSON body of your request.")
	}
	model := gjson.GetBytes(req.Body, "model").String()
	stream := gjson.GetBytes(req.Body, "stream").Bool()
	promptTokens := 1 + len(req.Body)/4
	if req.Path == "/v1/messages" {
		if model == "" {
			model = "claude-sonnet-4-5"
		}
		if stream {
			return sseResponse(anthropicStream(model, promptTokens))
		}
		return jsonResponse(anthropicMessage(model, promptTokens))
	}
	if model == "" {
		model = "gpt-4o-mini"
	}
	if stream {
		usage := gjson.GetBytes(req.Body, "stream_options.include_usage").Bool()
		return sseResponse(openAIStream(model, promptTokens, usage))
	}
	return jsonResponse(openAICompletion(model, promptTokens))
}

func jsonResponse(body []byte) *ScriptedResponse {
	return &ScriptedResponse{
		Status: http.StatusOK,
		Header: http.Header{
			"Content-Type":   {"application/json"},
			"Content-Length": {strconv.Itoa(len(body))},
		},
		Body: body,
	}
}

func sseResponse(events [][]byte) *ScriptedResponse {
	return &ScriptedResponse{
		Status: http.StatusOK,
		Header: http.Header{
			"Content-Type":  {"text/event-stream; charset=utf-8"},
			"Cache-Control": {"no-cache"},
		},
		Chunks: events,
	}
}

func errorResponse(status int, typ, msg string) *ScriptedResponse {
	r := jsonResponse(errorJSON(typ, msg))
	r.Status = status
	return r
}

func writeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	errorResponse(status, "invalid_request_error", msg).write(w, r)
}
