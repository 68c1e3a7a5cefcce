package testenv

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A proxy without ExtProcAddr is the plain HCM + router: the replay listener.
func TestPlainProxy(t *testing.T) {
	e := newEnv(t, ProxyConfig{}, nil)
	body := chatBody("")
	r := e.do("POST", "/v1/chat/completions?x=1", body, "Content-Type", "application/json", "Connection", "keep-alive")
	mustStatus(t, r, 200)
	if !bytes.Contains(r.body, []byte(AnswerText)) {
		t.Fatalf("body %q lacks the canned answer", r.body)
	}
	if r.header.Get("X-Envoy-Upstream-Service-Time") == "" {
		t.Error("x-envoy-upstream-service-time missing on the response")
	}
	reqs := e.up.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream saw %d requests", len(reqs))
	}
	got := reqs[0]
	if !bytes.Equal(got.Body, body) || got.ContentLength != int64(len(body)) {
		t.Errorf("upstream body %q (content-length %d), want the original with its length", got.Body, got.ContentLength)
	}
	if got.Header.Get("X-Request-Id") == "" || got.Header.Get("X-Forwarded-Proto") != "http" {
		t.Errorf("HCM headers missing upstream: %v", got.Header)
	}
}

// §12.1: one stream per exchange, protocol_config on the first message only, metadata_context on every
// message, initial metadata from config and route, and the stream closed at the end.
func TestStreamLifecycle(t *testing.T) {
	cfg := ProxyConfig{
		Mode:            mode("SEND", "BUFFERED", "SEND", "STREAMED"),
		InitialMetadata: map[string]string{"x-toolproc-profile": "default", "x-team": "a"},
		Routes:          []RouteOverride{{Prefix: "/v1/messages", InitialMetadata: map[string]string{"x-team": "b"}}},
	}
	e := newEnv(t, cfg, autoProc(hooks{}))
	for _, tc := range []struct {
		path, team string
	}{{"/v1/chat/completions", "a"}, {"/v1/messages", "b"}} {
		mustStatus(t, e.do("POST", tc.path, chatBody("")), 200)
		s := e.proc.next(t)
		msgs := s.wait(t)
		// The response body may come in one or more reads; the end of stream is last.
		const want = `request_headers,request_body\(eos\),response_headers(,response_body)*,response_body\(eos\)`
		if got := strings.Join(kinds(msgs), ","); !kindsMatch(got, want) {
			t.Errorf("%s: messages %s", tc.path, got)
		}
		for i, m := range msgs {
			if m.GetMetadataContext() == nil {
				t.Errorf("%s: message %d has no metadata_context", tc.path, i)
			}
			if (m.GetProtocolConfig() != nil) != (i == 0) {
				t.Errorf("%s: message %d protocol_config = %v", tc.path, i, m.GetProtocolConfig())
			}
		}
		pc := msgs[0].GetProtocolConfig()
		if pc.GetRequestBodyMode() != modeBuffered || pc.GetResponseBodyMode() != modeStreamed {
			t.Errorf("protocol_config = %v", pc)
		}
		if got := s.md.Get("x-team"); len(got) != 1 || got[0] != tc.team {
			t.Errorf("%s: x-team metadata = %v, want %s", tc.path, got, tc.team)
		}
		if got := s.md.Get("x-toolproc-profile"); len(got) != 1 || got[0] != "default" {
			t.Errorf("%s: x-toolproc-profile metadata = %v", tc.path, got)
		}
		if s.end != io.EOF && status.Code(s.end) != codes.Canceled {
			t.Errorf("stream ended with %v, want EOF or Canceled", s.end)
		}
	}
}

// §1 and §12.10: the request headers message has lower-case keys, values in raw_value only,
// pseudo-headers first, the HCM's additions, no hop-by-hop headers, and end_of_stream for a GET.
func TestRequestHeadersMessage(t *testing.T) {
	tests := []struct {
		name   string
		method string
		body   []byte
		eos    bool
	}{
		{"get", "GET", nil, true},
		{"post", "POST", chatBody(""), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, ProxyConfig{}, autoProc(hooks{}))
			r := e.do(tc.method, "/v1/models?limit=2", tc.body, "X-Custom-Header", "Äpfel", "Connection", "keep-alive", "Keep-Alive", "timeout=5")
			if r.err != nil {
				t.Fatal(r.err)
			}
			msgs := e.proc.next(t).wait(t)
			rh := msgs[0].GetRequestHeaders()
			if rh == nil {
				t.Fatalf("first message is %s", kind(msgs[0]))
			}
			if rh.GetEndOfStream() != tc.eos {
				t.Errorf("end_of_stream = %v, want %v", rh.GetEndOfStream(), tc.eos)
			}
			var keys []string
			for _, h := range rh.GetHeaders().GetHeaders() {
				keys = append(keys, h.GetKey())
				if h.GetKey() != strings.ToLower(h.GetKey()) {
					t.Errorf("key %q is not lower-case", h.GetKey())
				}
				if h.GetValue() != "" {
					t.Errorf("%s: value %q set; Envoy uses raw_value only", h.GetKey(), h.GetValue())
				}
			}
			if got := strings.Join(keys[:4], ","); got != ":authority,:path,:method,:scheme" {
				t.Errorf("pseudo-headers = %s", got)
			}
			for k, want := range map[string]string{":path": "/v1/models?limit=2", ":method": tc.method, ":scheme": "http", "x-custom-header": "Äpfel", "x-forwarded-proto": "http"} {
				if v, _ := headerValue(rh.GetHeaders(), k); v != want {
					t.Errorf("%s = %q, want %q", k, v, want)
				}
			}
			if v, ok := headerValue(rh.GetHeaders(), "x-request-id"); !ok || len(v) != 36 {
				t.Errorf("x-request-id = %q", v)
			}
			for _, k := range []string{"connection", "keep-alive", "transfer-encoding", "host"} {
				if _, ok := headerValue(rh.GetHeaders(), k); ok {
					t.Errorf("%s reached the processor", k)
				}
			}
		})
	}
}

// §1: the response headers message starts with :status and carries x-envoy-upstream-service-time and,
// for a chunked upstream, transfer-encoding.
func TestResponseHeadersMessage(t *testing.T) {
	e := newEnv(t, ProxyConfig{Mode: mode("SEND", "NONE", "SEND", "STREAMED")}, autoProc(hooks{}))
	mustStatus(t, e.do("POST", "/v1/chat/completions", chatBody(`,"stream":true`)), 200)
	msgs := e.proc.next(t).wait(t)
	var rh *extprocv3.HttpHeaders
	for _, m := range msgs {
		if m.GetResponseHeaders() != nil {
			rh = m.GetResponseHeaders()
		}
	}
	if rh == nil {
		t.Fatal("no response_headers message")
	}
	if first := rh.GetHeaders().GetHeaders()[0]; first.GetKey() != ":status" || string(first.GetRawValue()) != "200" {
		t.Errorf("first header = %v", first)
	}
	if _, ok := headerValue(rh.GetHeaders(), "x-envoy-upstream-service-time"); !ok {
		t.Error("x-envoy-upstream-service-time missing")
	}
	if v, _ := headerValue(rh.GetHeaders(), "transfer-encoding"); v != "chunked" {
		t.Errorf("transfer-encoding = %q, want chunked from the SSE upstream", v)
	}
	if v, _ := headerValue(rh.GetHeaders(), "content-type"); !strings.HasPrefix(v, "text/event-stream") {
		t.Errorf("content-type = %q", v)
	}
}

// §6 per-route: disabled opens no stream; a route mode replaces the whole mode (and drives
// content-length removal); initial metadata merges (covered in TestStreamLifecycle).
func TestRouteOverrides(t *testing.T) {
	cfg := ProxyConfig{
		Mode: mode("SEND", "BUFFERED", "SEND", "NONE"),
		Routes: []RouteOverride{
			{Prefix: "/healthz", Disabled: true},
			{Prefix: "/v1/messages", Mode: mode("SKIP", "STREAMED", "SKIP", "NONE")},
		},
	}
	e := newEnv(t, cfg, autoProc(hooks{}))

	e.up.SetScript(func(RecordedRequest) *ScriptedResponse { return &ScriptedResponse{Body: []byte("ok")} })
	mustStatus(t, e.do("GET", "/healthz", nil), 200)
	e.proc.noStream(t)

	body := []byte(`{"model":"claude","stream":false,"messages":[]}`)
	mustStatus(t, e.do("POST", "/v1/messages", body), 200)
	msgs := e.proc.next(t).wait(t)
	if got := strings.Join(kinds(msgs), ","); got != "request_body(eos)" {
		t.Errorf("route mode: messages %s, want only the streamed body", got)
	}
	if pc := msgs[0].GetProtocolConfig(); pc.GetRequestBodyMode() != modeStreamed || pc.GetResponseBodyMode() != modeNone {
		t.Errorf("protocol_config = %v, want the route's modes", pc)
	}
	last := e.up.Requests()[1]
	if last.ContentLength != -1 || !bytes.Equal(last.Body, body) {
		t.Errorf("route STREAMED: upstream content-length %d, want chunked (-1) with the same body", last.ContentLength)
	}
}

// §12 (brief item 11): response chunks are flushed as they come, so the client reads the first event
// while the upstream is still waiting to send the second.
func TestResponseStreamingFlushes(t *testing.T) {
	for _, m := range []string{"NONE", "STREAMED", "FULL_DUPLEX_STREAMED"} {
		t.Run(m, func(t *testing.T) {
			release := make(chan struct{})
			upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "data: first\n\n")
				http.NewResponseController(w).Flush()
				select {
				case <-release:
				case <-time.After(5 * time.Second):
				}
				_, _ = io.WriteString(w, "data: second\n\n")
			})
			e := newEnv(t, ProxyConfig{Mode: mode("SEND", "NONE", "SEND", m)}, autoProc(hooks{}), upstream)
			resp, err := http.Post(e.url+"/v1/chat/completions", "application/json", bytes.NewReader(chatBody("")))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			line, err := br.ReadString('\n')
			if err != nil || line != "data: first\n" {
				t.Fatalf("first line %q, %v", line, err)
			}
			close(release)
			rest, _ := io.ReadAll(br)
			if string(rest) != "\ndata: second\n\n" {
				t.Fatalf("rest %q", rest)
			}
		})
	}
}

// §4 content-encoding: Envoy never decodes, so gzip bytes reach the processor and the client as sent.
func TestGzipPassesAsBytes(t *testing.T) {
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	_, _ = zw.Write(bytes.Repeat([]byte("data: {\"x\":\"héllo\"}\n\n"), 200))
	_ = zw.Close()
	gz := zb.Bytes()
	e := newEnv(t, ProxyConfig{Mode: mode("SEND", "NONE", "SEND", "STREAMED"), ResponseChunker: RandomChunks(7, 97)}, autoProc(hooks{}))
	e.up.SetScript(func(RecordedRequest) *ScriptedResponse {
		return &ScriptedResponse{Header: http.Header{"Content-Encoding": {"gzip"}, "Content-Type": {"text/event-stream"}}, Chunks: [][]byte{gz[:len(gz)/2], gz[len(gz)/2:]}}
	})
	r := e.do("POST", "/v1/chat/completions", chatBody(""), "Accept-Encoding", "gzip")
	mustStatus(t, r, 200)
	if !bytes.Equal(r.body, gz) || r.header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("client got %d bytes (encoding %q), want the %d gzip bytes untouched", len(r.body), r.header.Get("Content-Encoding"), len(gz))
	}
	if got := bodies(e.proc.next(t).wait(t), false); !bytes.Equal(got, gz) {
		t.Fatalf("processor saw %d bytes, want the gzip bytes", len(got))
	}
}

// §9 and §12.11: a client that goes away cancels the side stream.
func TestClientAbortCancelsStream(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 100; i++ {
			if _, err := io.WriteString(w, "data: tick\n\n"); err != nil {
				return
			}
			http.NewResponseController(w).Flush()
			select {
			case <-time.After(20 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	})
	e := newEnv(t, ProxyConfig{}, autoProc(hooks{}), upstream)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/chat/completions", bytes.NewReader(chatBody("")))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	s := e.proc.next(t)
	s.wait(t)
	if status.Code(s.end) != codes.Canceled {
		t.Fatalf("processor stream ended with %v, want Canceled", s.end)
	}
}

// Adversarial knob AbortResponseAfter: the client sees a truncated body and the processor a cancel.
func TestAbortResponseAfter(t *testing.T) {
	e := newEnv(t, ProxyConfig{AbortResponseAfter: 40, Mode: mode("SEND", "NONE", "SEND", "STREAMED")}, autoProc(hooks{}))
	r := e.do("POST", "/v1/chat/completions", chatBody(`,"stream":true`))
	if !isReset(r) || len(r.body) != 40 {
		t.Fatalf("got %d bytes, err %v; want a reset after 40 bytes", len(r.body), r.err)
	}
	s := e.proc.next(t)
	s.wait(t)
	if status.Code(s.end) != codes.Canceled {
		t.Fatalf("processor stream ended with %v, want Canceled", s.end)
	}
}

// §9 (1.37+): the router's own 503 for an unreachable upstream goes through the response path.
func TestUpstreamUnreachable(t *testing.T) {
	dead := "http://" + resettingAddr(t)
	proc := startProc(t, autoProc(hooks{}))
	p, err := NewProxy(ProxyConfig{ExtProcAddr: proc.addr, UpstreamURL: dead, Mode: mode("SEND", "NONE", "SEND", "BUFFERED")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rec := &recorder{header: http.Header{}}
	p.ServeHTTP(rec, mustRequest(t, "POST", "/v1/chat/completions", chatBody("")))
	if rec.code != 503 || !strings.Contains(rec.body.String(), "upstream connect error") {
		t.Fatalf("got %d %q", rec.code, rec.body.String())
	}
	msgs := proc.next(t).wait(t)
	if !hasKind(msgs, "response_headers") || !hasKind(msgs, "response_body(eos)") {
		t.Fatalf("messages %v: the 503 should go through the processor", kinds(msgs))
	}
}

func TestNewProxyValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  ProxyConfig
		want string
	}{
		{"no upstream", ProxyConfig{}, "UpstreamURL is required"},
		{"bad scheme", ProxyConfig{UpstreamURL: "ftp://x"}, "scheme"},
		{"duplex without trailers", ProxyConfig{UpstreamURL: "http://x", Mode: &extprocfilterv3.ProcessingMode{ResponseBodyMode: modeDuplex}}, "requires response_trailer_mode SEND"},
		{"grpc body mode", ProxyConfig{UpstreamURL: "http://x", Mode: &extprocfilterv3.ProcessingMode{RequestBodyMode: extprocfilterv3.ProcessingMode_GRPC}}, "GRPC"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewProxy(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	p, err := NewProxy(ProxyConfig{UpstreamURL: "http://127.0.0.1:1", ExtProcAddr: "127.0.0.1:1"})
	if err != nil {
		t.Fatalf("an unreachable processor must not stop NewProxy: %v", err)
	}
	_ = p.Close()
}

// recorder is a minimal ResponseWriter + Flusher for calling ServeHTTP directly.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(c int) {
	if r.code == 0 {
		r.code = c
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return r.body.Write(b)
}
func (r *recorder) Flush() {}

func mustRequest(t *testing.T, method, path string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, "http://standin.test"+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// BenchmarkProxyExchange measures one LLM-shaped exchange through the stand-in with the default mode
// (request BUFFERED, response FULL_DUPLEX_STREAMED) and an echoing processor.
func BenchmarkProxyExchange(b *testing.B) {
	proc := startProc(b, autoProc(hooks{}))
	up := httptest.NewServer(NewFakeUpstream())
	defer up.Close()
	p, err := NewProxy(ProxyConfig{ExtProcAddr: proc.addr, UpstreamURL: up.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	srv := httptest.NewServer(p)
	defer srv.Close()
	body := chatBody(`,"stream":true,"pad":"` + strings.Repeat("x", 64<<10) + `"`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
