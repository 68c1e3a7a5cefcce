package testenv

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

func upper(b []byte) []byte { return bytes.ToUpper(b) }

// kindsMatch compares a message list with want, literally or, failing that, as a regular expression.
func kindsMatch(got, want string) bool {
	return got == want || regexp.MustCompile("^"+want+"$").MatchString(got)
}

func filterKinds(msgs []*extprocv3.ProcessingRequest, prefix string) string {
	var out []string
	for _, k := range kinds(msgs) {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return strings.Join(out, ",")
}

// §3.2 for the request direction, with the whole client body read first (the default): what the
// processor is sent, and what the upstream receives.
func TestRequestBodyModes(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"héllo wörld 中文 🙂 and more text"}]}`)
	tests := []struct {
		name      string
		mode      string
		hooks     hooks
		wantKinds string
		wantBody  string
		wantCL    int64 // upstream content-length, -1 for chunked
		wantHdr   string
	}{
		{
			name: "NONE passes the body and keeps content-length",
			mode: "NONE",
			hooks: hooks{reqHeaders: func(*extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
				return headersResp(true, setHeaders("x-added", "headers"))
			}},
			wantKinds: "request_headers", wantBody: string(body), wantCL: int64(len(body)), wantHdr: "headers",
		},
		{
			name: "BUFFERED sends one message and applies header mutations to the held headers",
			mode: "BUFFERED",
			hooks: hooks{reqBody: func(b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
				if !b.GetEndOfStream() || !bytes.Equal(b.GetBody(), body) {
					return headersResp(true, nil) // wrong on purpose: the test fails with a spurious 500
				}
				return bodyResp(true, setHeaders("x-added", "body", "content-length", "2"), replaceBody("{}"))
			}},
			wantKinds: "request_headers,request_body(eos)", wantBody: "{}", wantCL: 2, wantHdr: "body",
		},
		{
			name: "STREAMED with the whole body before the headers response is one held-headers message",
			mode: "STREAMED",
			hooks: hooks{reqBody: func(b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
				return bodyResp(true, setHeaders("x-added", "body"), &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: upper(b.GetBody())}})
			}},
			wantKinds: "request_headers,request_body(eos)", wantBody: string(upper(body)), wantCL: -1, wantHdr: "body",
		},
		{
			name:      "FULL_DUPLEX_STREAMED echo",
			mode:      "FULL_DUPLEX_STREAMED",
			wantKinds: "request_headers,request_body,request_body,request_body,request_body,request_body(eos)",
			wantBody:  string(body), wantCL: -1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ProxyConfig{Mode: mode("SEND", tc.mode, "SKIP", "NONE"), RequestChunker: FixedChunks(20)}
			e := newEnv(t, cfg, autoProc(tc.hooks))
			mustStatus(t, e.do("POST", "/v1/chat/completions", body, "Content-Type", "application/json"), 200)
			msgs := e.proc.next(t).wait(t)
			if got := filterKinds(msgs, "request"); got != tc.wantKinds {
				t.Errorf("messages %s, want %s", got, tc.wantKinds)
			}
			if v, _ := headerValue(msgs[0].GetRequestHeaders().GetHeaders(), "content-length"); v != strconv.Itoa(len(body)) {
				t.Errorf("processor saw content-length %q, want the original", v)
			}
			up := e.up.Requests()[0]
			if string(up.Body) != tc.wantBody || up.ContentLength != tc.wantCL {
				t.Errorf("upstream got %q with content-length %d, want %q with %d", up.Body, up.ContentLength, tc.wantBody, tc.wantCL)
			}
			if got := up.Header.Get("X-Added"); got != tc.wantHdr {
				t.Errorf("upstream x-added = %q, want %q", got, tc.wantHdr)
			}
		})
	}
}

// §3.2 STREAMED pipelining on the request side: chunks arriving after the headers response go out
// without waiting for the previous chunk's response; each response replaces its own chunk; header
// mutations in chunk responses are ignored.
func TestRequestStreamedPipelining(t *testing.T) {
	gotChunk := make(chan string, 8)
	handler := func(s *procStream) error {
		if _, err := s.recv(); err != nil { // request_headers
			return err
		}
		_ = s.send(headersResp(true, nil))
		var pending []*extprocv3.HttpBody
		for {
			r, err := s.recv()
			if err != nil {
				return nil
			}
			b := r.GetRequestBody()
			if b == nil {
				continue
			}
			gotChunk <- string(b.GetBody())
			pending = append(pending, b)
			// Answer only once two chunks (or the end) are in: proves the second was pipelined.
			if len(pending) < 2 && !b.GetEndOfStream() {
				continue
			}
			for _, p := range pending {
				_ = s.send(bodyResp(true, setHeaders("x-ignored", "1"), &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: upper(p.GetBody())}}))
			}
			pending = nil
		}
	}
	cfg := ProxyConfig{Mode: mode("SEND", "STREAMED", "SKIP", "NONE"), StreamRequestBody: true, RequestChunker: FixedChunks(1 << 20)}
	e := newEnv(t, cfg, handler)
	pr, pw := io.Pipe()
	go func() {
		for _, part := range []string{`{"a":"one",`, `"b":"two",`, `"c":"three"}`} {
			_, _ = io.WriteString(pw, part)
			select {
			case <-gotChunk:
			case <-time.After(5 * time.Second):
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", e.url+"/v1/chat/completions", pr)
	mustStatus(t, e.send(req), 200)
	msgs := e.proc.next(t).wait(t)
	var sizes []string
	for _, b := range bodyMsgs(msgs, true) {
		sizes = append(sizes, strconv.Quote(string(b.GetBody())))
	}
	if len(sizes) < 3 {
		t.Fatalf("body messages %v, want one per client write", sizes)
	}
	up := e.up.Requests()[0]
	if want := `{"A":"ONE","B":"TWO","C":"THREE"}`; string(up.Body) != want || up.ContentLength != -1 {
		t.Errorf("upstream got %q (content-length %d), want %q chunked", up.Body, up.ContentLength, want)
	}
	if up.Header.Get("X-Ignored") != "" {
		t.Error("a header mutation in a STREAMED chunk response was applied")
	}
}

// §3.2 BUFFERED_PARTIAL: the body is cut once more than the limit is queued; that part is processed
// (with header mutations, the headers are still held) and the rest passes unprocessed.
func TestRequestBufferedPartial(t *testing.T) {
	sawPartial := make(chan struct{})
	hk := hooks{reqBody: func(b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
		close(sawPartial)
		return bodyResp(true, setHeaders("x-partial", strconv.Itoa(len(b.GetBody()))), replaceBody("[PARTIAL]"))
	}}
	cfg := ProxyConfig{Mode: mode("SEND", "BUFFERED_PARTIAL", "SKIP", "NONE"), BufferLimit: 20, StreamRequestBody: true, RequestChunker: FixedChunks(8)}
	e := newEnv(t, cfg, autoProc(hk))
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, "0123456789abcdefghijklmn") // 24 bytes: over the 20-byte limit
		select {
		case <-sawPartial:
		case <-time.After(5 * time.Second):
		}
		_, _ = io.WriteString(pw, "-the-rest")
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", e.url+"/raw", pr)
	mustStatus(t, e.send(req), 404) // not JSON, so not an LLM path: the fake upstream 404s it
	msgs := e.proc.next(t).wait(t)
	bm := bodyMsgs(msgs, true)
	if len(bm) != 1 || string(bm[0].GetBody()) != "0123456789abcdefghijklmn" || bm[0].GetEndOfStream() {
		t.Fatalf("body messages %v, want one 24-byte partial message without end_of_stream", bm)
	}
	up := e.up.Requests()[0]
	if string(up.Body) != "[PARTIAL]-the-rest" || up.Header.Get("X-Partial") != "24" || up.ContentLength != -1 {
		t.Fatalf("upstream got %q x-partial=%q content-length=%d", up.Body, up.Header.Get("X-Partial"), up.ContentLength)
	}
}

// §3.2 FULL_DUPLEX_STREAMED on the request: every chunk reaches the processor before it answers the
// headers; it then sends any number of streamed responses, injected as they come.
func TestRequestFullDuplex(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 10)
	handler := func(s *procStream) error {
		var all []byte
		for {
			r, err := s.recv()
			if err != nil {
				return nil
			}
			if b := r.GetRequestBody(); b != nil {
				all = append(all, b.GetBody()...)
				if b.GetEndOfStream() {
					break
				}
			}
		}
		// The whole body came before any answer: now headers first, then an M:N re-chunking.
		_ = s.send(headersResp(true, nil))
		_ = s.send(streamedResp(true, []byte("<"), false))
		_ = s.send(streamedResp(true, upper(all[:50]), false))
		_ = s.send(streamedResp(true, append(upper(all[50:]), '>'), true))
		s.drain()
		return nil
	}
	cfg := ProxyConfig{Mode: mode("SEND", "FULL_DUPLEX_STREAMED", "SKIP", "NONE"), RequestChunker: FixedChunks(30)}
	e := newEnv(t, cfg, handler)
	mustStatus(t, e.do("POST", "/v1/x", body), 404) // the fake upstream 404s unknown paths
	up := e.up.Requests()[0]
	if want := "<" + string(upper(body)) + ">"; string(up.Body) != want || up.ContentLength != -1 {
		t.Fatalf("upstream got %q (content-length %d)", up.Body, up.ContentLength)
	}
	if got := filterKinds(e.proc.next(t).wait(t), "request"); got != "request_headers,request_body,request_body,request_body,request_body(eos)" {
		t.Fatalf("messages %s", got)
	}
}

// §3.2 for the response direction, with the upstream streaming chunks.
func TestResponseBodyModes(t *testing.T) {
	chunks := [][]byte{[]byte("data: {\"a\":\"héllo\"}\n\n"), []byte("data: {\"b\":\"wörld\"}\n\n"), []byte("data: [DONE]\n\n")}
	whole := bytes.Join(chunks, nil)
	tests := []struct {
		name      string
		mode      string
		script    func(RecordedRequest) *ScriptedResponse
		hooks     hooks
		wantKinds string
		wantBody  string
		wantCL    string // client Content-Length header; "" = chunked
		wantHdr   string
	}{
		{
			name:      "NONE",
			mode:      "NONE",
			script:    func(RecordedRequest) *ScriptedResponse { return jsonResponse(whole) },
			wantKinds: "response_headers", wantBody: string(whole), wantCL: strconv.Itoa(len(whole)),
		},
		{
			name: "BUFFERED holds the headers for the body response",
			mode: "BUFFERED",
			script: func(RecordedRequest) *ScriptedResponse {
				return &ScriptedResponse{Chunks: chunks, ChunkDelay: 5 * time.Millisecond}
			},
			hooks: hooks{respBody: func(b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
				out := upper(b.GetBody())
				return bodyResp(false, setHeaders("x-added", "body", "content-length", strconv.Itoa(len(out))), &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: out}})
			}},
			wantKinds: "response_headers,response_body(eos)", wantBody: string(upper(whole)), wantCL: strconv.Itoa(len(whole)), wantHdr: "body",
		},
		{
			name: "STREAMED replaces chunk by chunk and ignores header mutations",
			mode: "STREAMED",
			script: func(RecordedRequest) *ScriptedResponse {
				return &ScriptedResponse{Chunks: chunks, ChunkDelay: 20 * time.Millisecond}
			},
			hooks: hooks{respBody: func(b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
				return bodyResp(false, setHeaders("x-added", "ignored"), &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: upper(b.GetBody())}})
			}},
			// The end of stream comes with the last chunk or as an empty chunk, depending on the read.
			wantKinds: `response_headers(,response_body){2,3},response_body\(eos\)`, wantBody: string(upper(whole)),
		},
		{
			name:   "STREAMED with the whole body before the headers response",
			mode:   "STREAMED",
			script: func(RecordedRequest) *ScriptedResponse { return jsonResponse(whole) },
			hooks: hooks{
				respHeaders: func(*extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
					time.Sleep(300 * time.Millisecond) // let the whole body arrive meanwhile
					return headersResp(false, nil)
				},
				respBody: func(b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
					return bodyResp(false, setHeaders("x-added", "body"), nil)
				},
			},
			wantKinds: "response_headers,response_body(eos)", wantBody: string(whole), wantHdr: "body",
		},
		{
			name: "FULL_DUPLEX_STREAMED re-chunks M:N",
			mode: "FULL_DUPLEX_STREAMED",
			script: func(RecordedRequest) *ScriptedResponse {
				return &ScriptedResponse{Chunks: chunks, ChunkDelay: 5 * time.Millisecond}
			},
			hooks: hooks{respBody: func(b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
				// Swallow everything until the end, then answer with one chunk (N:1).
				if !b.GetEndOfStream() {
					return nil
				}
				return streamedResp(false, []byte("data: [DONE]\n\n"), true)
			}},
			wantKinds: `response_headers(,response_body){2,3},response_body\(eos\)`, wantBody: "data: [DONE]\n\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ProxyConfig{Mode: mode("SKIP", "NONE", "SEND", tc.mode), ResponseChunker: FixedChunks(1 << 20)}
			e := newEnv(t, cfg, autoProc(tc.hooks))
			e.up.SetScript(tc.script)
			r := e.do("POST", "/v1/chat/completions", chatBody(""))
			mustStatus(t, r, 200)
			if string(r.body) != tc.wantBody {
				t.Errorf("client body %q, want %q", r.body, tc.wantBody)
			}
			if got := r.header.Get("Content-Length"); got != tc.wantCL {
				t.Errorf("client content-length %q, want %q", got, tc.wantCL)
			}
			if got := r.header.Get("X-Added"); got != tc.wantHdr {
				t.Errorf("client x-added %q, want %q", got, tc.wantHdr)
			}
			if got := filterKinds(e.proc.next(t).wait(t), "response"); !kindsMatch(got, tc.wantKinds) {
				t.Errorf("messages %s, want %s", got, tc.wantKinds)
			}
		})
	}
}

// §3.2 BUFFERED_PARTIAL on the response.
func TestResponseBufferedPartial(t *testing.T) {
	cfg := ProxyConfig{Mode: mode("SKIP", "NONE", "SEND", "BUFFERED_PARTIAL"), BufferLimit: 20, ResponseChunker: FixedChunks(1 << 20)}
	e := newEnv(t, cfg, autoProc(hooks{respBody: func(b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
		return bodyResp(false, setHeaders("x-partial", strconv.Itoa(len(b.GetBody()))), replaceBody("[partial]"))
	}}))
	e.up.SetScript(func(RecordedRequest) *ScriptedResponse {
		return &ScriptedResponse{Chunks: [][]byte{[]byte("0123456789abcdefghijklmn"), []byte("-rest")}, ChunkDelay: 30 * time.Millisecond}
	})
	r := e.do("POST", "/v1/chat/completions", chatBody(""))
	mustStatus(t, r, 200)
	if string(r.body) != "[partial]-rest" || r.header.Get("X-Partial") != "24" {
		t.Fatalf("client got %q x-partial=%q", r.body, r.header.Get("X-Partial"))
	}
	if got := filterKinds(e.proc.next(t).wait(t), "response"); got != "response_headers,response_body" {
		t.Fatalf("messages %s: only the partial body is processed", got)
	}
}

// §5: BUFFERED overflow is 413 on the request, 500 on the response, and a reset when the response
// headers already went out (header SKIP). STREAMED only applies backpressure.
func TestBufferLimit(t *testing.T) {
	big := []byte(`{"pad":"` + strings.Repeat("x", 100) + `"}`)
	tests := []struct {
		name       string
		mode       string
		reqBody    []byte
		respBody   []byte
		wantStatus int
		wantReset  bool
		details    string
	}{
		{"request BUFFERED", "SEND BUFFERED SEND NONE", big, nil, 413, false, "request_payload_too_large"},
		{"request STREAMED", "SEND STREAMED SEND NONE", big, nil, 200, false, ""},
		{"response BUFFERED", "SEND NONE SEND BUFFERED", chatBody(""), big, 500, false, "response_payload_too_large"},
		{"response BUFFERED, headers SKIP", "SEND NONE SKIP BUFFERED", chatBody(""), big, 0, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := strings.Fields(tc.mode)
			e := newEnv(t, ProxyConfig{Mode: mode(f[0], f[1], f[2], f[3]), BufferLimit: 64, RequestChunker: FixedChunks(16), ResponseChunker: FixedChunks(16)}, autoProc(hooks{}))
			if tc.respBody != nil {
				e.up.SetScript(func(RecordedRequest) *ScriptedResponse { return jsonResponse(tc.respBody) })
			}
			r := e.do("POST", "/v1/chat/completions", tc.reqBody)
			if tc.wantReset {
				if !isReset(r) {
					t.Fatalf("status %d err %v, want a reset", r.status, r.err)
				}
				return
			}
			mustStatus(t, r, tc.wantStatus)
			if got := r.header.Get(DetailsHeader); got != tc.details {
				t.Errorf("details %q, want %q", got, tc.details)
			}
		})
	}
}

// §3.2 FULL_DUPLEX_STREAMED trailers: the trailers message goes out as soon as trailers arrive; the
// processor ends its body with end_of_stream=false and answers the trailers last.
func TestFullDuplexTrailers(t *testing.T) {
	handler := func(s *procStream) error {
		var buf []byte
		for {
			r, err := s.recv()
			if err != nil {
				return nil
			}
			switch {
			case r.GetResponseHeaders() != nil:
				_ = s.send(headersResp(false, nil))
			case r.GetResponseBody() != nil:
				buf = append(buf, r.GetResponseBody().GetBody()...)
			case r.GetResponseTrailers() != nil:
				_ = s.send(streamedResp(false, upper(buf), false))
				hm := setHeaders("x-trailer-mut", "yes")
				_ = s.send(trailersResp(false, hm))
			}
		}
	}
	e := newEnv(t, ProxyConfig{Mode: mode("SKIP", "NONE", "SEND", "FULL_DUPLEX_STREAMED")}, handler)
	e.up.SetScript(func(RecordedRequest) *ScriptedResponse {
		return &ScriptedResponse{Chunks: [][]byte{[]byte("abc"), []byte("def")}, Trailer: http.Header{"X-Upstream-Trailer": {"t1"}}}
	})
	r := e.do("POST", "/v1/chat/completions", chatBody(""))
	mustStatus(t, r, 200)
	if string(r.body) != "ABCDEF" || r.trailer.Get("X-Upstream-Trailer") != "t1" || r.trailer.Get("X-Trailer-Mut") != "yes" {
		t.Fatalf("client got %q trailers %v", r.body, r.trailer)
	}
	msgs := e.proc.next(t).wait(t)
	if !hasKind(msgs, "response_trailers") {
		t.Fatalf("messages %v: no trailers message", kinds(msgs))
	}
	for _, b := range bodyMsgs(msgs, false) {
		if b.GetEndOfStream() {
			t.Fatal("a body message had end_of_stream although trailers followed")
		}
	}
}

// §3.2 FULL_DUPLEX_STREAMED without upstream trailers: only the processor's end_of_stream ends the
// response. A made-up trailers response is ignored; a processor that never ends the body is cut by
// the stream idle timeout, which resets the client.
func TestFullDuplexNeedsEndOfStream(t *testing.T) {
	handler := func(s *procStream) error {
		for {
			r, err := s.recv()
			if err != nil {
				return nil
			}
			switch {
			case r.GetResponseHeaders() != nil:
				_ = s.send(headersResp(false, nil))
			case r.GetResponseBody() != nil:
				_ = s.send(streamedResp(false, r.GetResponseBody().GetBody(), false)) // never end_of_stream
				_ = s.send(trailersResp(false, nil))                                  // made up: ignored
			}
		}
	}
	e := newEnv(t, ProxyConfig{Mode: mode("SKIP", "NONE", "SEND", "FULL_DUPLEX_STREAMED"), StreamIdleTimeout: time.Second}, handler)
	r := e.do("POST", "/v1/chat/completions", chatBody(""))
	if r.status != 200 || !isReset(r) || !bytes.Contains(r.body, []byte(AnswerText)) {
		t.Fatalf("status %d body %q err %v: want the echoed body then a reset", r.status, r.body, r.err)
	}
}

// Adversarial knob (§12.11): the final end_of_stream body message is sent twice.
func TestDuplicateFinalChunk(t *testing.T) {
	handler := func(s *procStream) error {
		ended := false
		for {
			r, err := s.recv()
			if err != nil {
				return nil
			}
			switch {
			case r.GetResponseHeaders() != nil:
				_ = s.send(headersResp(false, nil))
			case r.GetResponseBody() != nil && !ended:
				ended = r.GetResponseBody().GetEndOfStream()
				_ = s.send(streamedResp(false, r.GetResponseBody().GetBody(), ended))
			}
		}
	}
	e := newEnv(t, ProxyConfig{DuplicateFinalChunk: true, Mode: mode("SKIP", "NONE", "SEND", "FULL_DUPLEX_STREAMED")}, handler)
	mustStatus(t, e.do("POST", "/v1/chat/completions", chatBody("")), 200)
	n := 0
	for _, b := range bodyMsgs(e.proc.next(t).wait(t), false) {
		if b.GetEndOfStream() {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d end_of_stream messages, want 2", n)
	}
}

// §3.1: with send_body_without_waiting_for_header_response, STREAMED chunks go out before the headers
// response (and protocol_config says so); the processor still answers the headers first.
func TestSendBodyWithoutWaiting(t *testing.T) {
	handler := func(s *procStream) error {
		var chunks []*extprocv3.HttpBody
		for {
			r, err := s.recv()
			if err != nil {
				return nil
			}
			if b := r.GetRequestBody(); b != nil {
				chunks = append(chunks, b)
				if b.GetEndOfStream() {
					break
				}
			}
		}
		_ = s.send(headersResp(true, nil))
		for _, c := range chunks {
			_ = s.send(bodyResp(true, nil, &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: upper(c.GetBody())}}))
		}
		s.drain()
		return nil
	}
	cfg := ProxyConfig{Mode: mode("SEND", "STREAMED", "SKIP", "NONE"), SendBodyWithoutWaitingForHeaderResponse: true, RequestChunker: FixedChunks(10)}
	e := newEnv(t, cfg, handler)
	body := []byte(`{"model":"m","messages":[]}`)
	mustStatus(t, e.do("POST", "/v1/other", body), 404)
	msgs := e.proc.next(t).wait(t)
	if !msgs[0].GetProtocolConfig().GetSendBodyWithoutWaitingForHeaderResponse() {
		t.Error("protocol_config does not announce send_body_without_waiting_for_header_response")
	}
	if got := filterKinds(msgs, "request"); got != "request_headers,request_body,request_body,request_body(eos)" {
		t.Errorf("messages %s", got)
	}
	if up := e.up.Requests()[0]; string(up.Body) != string(upper(body)) {
		t.Errorf("upstream got %q", up.Body)
	}
}

// §3.2/§3.3: request trailers in BUFFERED mode. The trailers complete the body, which is sent without
// end_of_stream; the trailers message follows the body response; its mutation reaches the upstream.
func TestRequestTrailers(t *testing.T) {
	cfg := ProxyConfig{Mode: mode("SEND", "BUFFERED", "SKIP", "NONE")}
	cfg.Mode.RequestTrailerMode = extprocfilterv3.ProcessingMode_SEND
	e := newEnv(t, cfg, autoProc(hooks{reqTrailers: func(*extprocv3.HttpTrailers) *extprocv3.ProcessingResponse {
		return trailersResp(true, setHeaders("x-checksum", "rewritten"))
	}}))
	body := []byte(`{"model":"m"}`)
	req, _ := http.NewRequest("POST", e.url+"/v1/other", io.MultiReader(bytes.NewReader(body))) // unknown length: chunked
	req.Trailer = http.Header{"X-Checksum": {"orig"}}
	mustStatus(t, e.send(req), 404)
	msgs := e.proc.next(t).wait(t)
	if got := filterKinds(msgs, "request"); got != "request_headers,request_body,request_trailers" {
		t.Fatalf("messages %s", got)
	}
	if v, _ := headerValue(msgs[2].GetRequestTrailers().GetTrailers(), "x-checksum"); v != "orig" {
		t.Errorf("processor saw trailer %q", v)
	}
	up := e.up.Requests()[0]
	if string(up.Body) != string(body) || up.Trailer.Get("X-Checksum") != "rewritten" {
		t.Fatalf("upstream body %q trailers %v", up.Body, up.Trailer)
	}
}

// §4 CONTINUE_AND_REPLACE in a headers response: the body is replaced from the headers phase (no body
// message is sent even in BUFFERED), content-length goes, and :method may be set.
func TestContinueAndReplace(t *testing.T) {
	e := newEnv(t, ProxyConfig{Mode: mode("SEND", "BUFFERED", "SKIP", "NONE")}, autoProc(hooks{reqHeaders: func(*extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
		r := headersResp(true, setHeaders(":method", "PUT", "x-replaced", "1"))
		r.GetRequestHeaders().Response.Status = extprocv3.CommonResponse_CONTINUE_AND_REPLACE
		r.GetRequestHeaders().Response.BodyMutation = replaceBody(`{"replaced":true}`)
		return r
	}}))
	mustStatus(t, e.do("POST", "/v1/other", chatBody("")), 404)
	if got := filterKinds(e.proc.next(t).wait(t), "request"); got != "request_headers" {
		t.Fatalf("messages %s", got)
	}
	up := e.up.Requests()[0]
	if up.Method != "PUT" || string(up.Body) != `{"replaced":true}` || up.ContentLength != -1 || up.Header.Get("X-Replaced") != "1" {
		t.Fatalf("upstream %s %q content-length %d headers %v", up.Method, up.Body, up.ContentLength, up.Header)
	}
}
