package extproc

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// manyPairs is an OpenAI Chat body of n small call/result pairs.
func manyPairs(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"gpt-4o","messages":[{"role":"user","content":"go"}`)
	for i := range n {
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c%d","content":"ok"}`, i, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

var fuzzModes = []extprocfilterv3.ProcessingMode_BodySendMode{modeNone, modeStreamed, modeBuffered, modePartial, modeDuplex}

// FuzzExchange drives the exchange state machine with arbitrary modes,
// paths, bodies and chunkings, as Envoy would deliver them. It must never
// panic; outside FULL_DUPLEX_STREAMED every body message gets exactly one
// answer of the matching kind once the body has ended (Envoy fails the
// request on a missing, extra or mismatched answer, docs/envoy-notes.md §1);
// inside it, the answers end the body with end_of_stream; a whole valid
// JSON request leaves as valid JSON.
func FuzzExchange(f *testing.F) {
	f.Add(uint8(2), uint8(4), uint8(0), []byte(`{"messages":[{"role":"tool","tool_call_id":"a","content":"x\ny"}]}`), []byte("data: {\"choices\":[]}\n\ndata: [DONE]\n\n"), uint8(7))
	f.Add(uint8(1), uint8(1), uint8(1), openAIBody(bigToolOutput()[:9000]), []byte("event: message_start\ndata: {}\n\n"), uint8(3))
	f.Add(uint8(4), uint8(2), uint8(2), []byte(`not json`), []byte(`{"id":"x","object":"chat.completion"}`), uint8(1))
	// Error answers: held (FULL_DUPLEX) or rewritten whole (BUFFERED) for
	// overflow recovery; the replay URL has no listener here, so every
	// replay fails and the error must come out as it was.
	f.Add(uint8(2), uint8(4), uint8(12), openAIBody(bigToolOutput()[:9000]), []byte(`{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}`), uint8(5))
	f.Add(uint8(2), uint8(2), uint8(25), openAIBody(bigToolOutput()[:9000]), []byte(`{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}`), uint8(64))
	// Hostile shapes (review findings 1, 9, 16): nesting far past the depth
	// guard, ten thousand small call/result pairs, a duplicate key.
	f.Add(uint8(2), uint8(4), uint8(0), bytes.Repeat([]byte("["), 1_000_000), []byte("data: [DONE]\n\n"), uint8(63))
	f.Add(uint8(2), uint8(2), uint8(0), manyPairs(10_000), []byte(`{"id":"x","object":"chat.completion"}`), uint8(40))
	f.Add(uint8(1), uint8(4), uint8(0), []byte(`{"messages":[{"role":"tool","tool_call_id":"a","content":"x","content":"`+strings.Repeat("y\\n", 30_000)+`"}]}`), []byte("data: {}\n\n"), uint8(9))
	f.Add(uint8(2), uint8(4), uint8(0), openAIBody(bigToolOutput()[:9000]), append([]byte("data: "), bytes.Repeat([]byte("["), 200_000)...), uint8(17))
	paths := []string{"/v1/chat/completions", "/v1/messages", "/v1/responses", "/v1/models"}
	// One server for every run: building one per input made this target
	// crawl (about 1,100 inputs a minute). Its store keeps state between
	// runs, which only adds cases.
	s := testServer(f, "server: {replay_url: http://127.0.0.1:1, replay_timeout: 1s}\nprofiles: {default: {stream: {xml_tool_calls: true}}}")
	cts := []string{"text/event-stream", "application/json", "text/plain"}
	f.Fuzz(func(t *testing.T, reqSel, respSel, pathSel uint8, reqBody, respBody []byte, step uint8) {
		reqMode, respMode := fuzzModes[int(reqSel)%len(fuzzModes)], fuzzModes[int(respSel)%len(fuzzModes)]
		if reqMode == modeNone || reqMode == modePartial {
			reqMode = modeBuffered
		}
		path := paths[int(pathSel)%len(paths)]
		ct := cts[int(pathSel/4)%len(cts)]
		status := []string{"200", "200", "400", "413"}[int(pathSel/12)%4]
		n := int(step%64) + 1
		x := newTestExchange(s)

		x.handle(reqHeaders(path, reqMode, respMode, "authorization", "Bearer sk-fuzz-tenant-0123"))
		reqOut := sendBody(t, x, reqMode, reqBody, n, true, false)
		if reqMode == modeBuffered && jsonsafe.Valid(reqBody) && reqOut != nil && !jsonsafe.Valid(reqOut) {
			t.Fatalf("valid request JSON left invalid: %q", reqOut)
		}
		r := x.handle(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
			ResponseHeaders: hdrs(":status", status, "content-type", ct),
		}})
		deferred := len(r) == 0 && status != "200" && respMode == modeDuplex
		if !deferred && (len(r) != 1 || r[0].GetResponseHeaders() == nil) {
			t.Fatalf("response headers answered with %v", r)
		}
		if respMode != modeNone {
			sendBody(t, x, respMode, respBody, n, false, deferred)
		}
	})
}

// sendBody delivers body in chunks of n bytes (plus an empty final chunk
// when n is even) and checks the answers (deferredHeaders: a held error's
// headers answer comes first); it returns what Envoy would
// forward (nil when it cannot be reconstructed simply).
func sendBody(t *testing.T, x *exchange, mode extprocfilterv3.ProcessingMode_BodySendMode, body []byte, n int, req, deferredHeaders bool) []byte {
	t.Helper()
	var chunks [][]byte
	if mode == modeBuffered {
		chunks = [][]byte{body}
	} else {
		for i := 0; i < len(body); i += n {
			chunks = append(chunks, body[i:min(i+n, len(body))])
		}
		if n%2 == 0 || len(chunks) == 0 {
			chunks = append(chunks, nil)
		}
	}
	var answers []*extprocv3.ProcessingResponse
	for i, c := range chunks {
		var m *extprocv3.ProcessingRequest
		if req {
			m = reqBody(c, i == len(chunks)-1)
		} else {
			m = respBody(c, i == len(chunks)-1)
		}
		answers = append(answers, x.handle(m)...)
	}
	if deferredHeaders {
		// A held FULL_DUPLEX error answers its headers first, then its body.
		if len(answers) == 0 || answers[0].GetResponseHeaders() == nil {
			t.Fatalf("deferred headers never answered: %v", answers)
		}
		answers = answers[1:]
	}
	var out []byte
	sawEOS := false
	for _, a := range answers {
		br := a.GetResponseBody()
		if req {
			br = a.GetRequestBody()
		}
		if a.GetImmediateResponse() != nil {
			return nil
		}
		if br == nil {
			t.Fatalf("answer of the wrong kind: %v", a)
		}
		bm := br.GetResponse().GetBodyMutation()
		if sr := bm.GetStreamedResponse(); sr != nil {
			if mode != modeDuplex {
				t.Fatal("streamed_response outside FULL_DUPLEX_STREAMED is spurious")
			}
			if sawEOS {
				t.Fatal("data after end_of_stream")
			}
			out = append(out, sr.Body...)
			sawEOS = sr.EndOfStream
		} else if mode == modeDuplex {
			t.Fatal("FULL_DUPLEX_STREAMED answers must carry streamed_response")
		}
	}
	if mode == modeDuplex {
		if !sawEOS {
			t.Fatal("FULL_DUPLEX_STREAMED body never ended")
		}
		return out
	}
	if len(answers) != len(chunks) {
		t.Fatalf("%d body messages, %d answers", len(chunks), len(answers))
	}
	return forwarded(chunks, answers, req)
}
