package extproc

import (
	"bytes"
	"fmt"
	"testing"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// panicky is a stream transform that passes bytes through until it is told
// to panic: in Write from a given call on (a broken transform stays broken), or in Close.
type panicky struct {
	writes, panicAt int
	panicInClose    bool
}

func (p *panicky) Write(b []byte) []byte {
	p.writes++
	if p.panicAt > 0 && p.writes >= p.panicAt {
		panic("bug in a stream transform")
	}
	return b
}

func (p *panicky) Close() []byte {
	if p.panicInClose {
		panic("bug in a stream transform's Close")
	}
	return nil
}

// envoyRun plays one direction's body through handle the way Envoy sends
// it in mode, in n chunks, optionally ending with trailers, and returns
// the bytes Envoy forwards. Outside FULL_DUPLEX_STREAMED it enforces the
// one-answer-per-message rule (docs/envoy-notes.md §3.2).
func envoyRun(t *testing.T, x *exchange, mode extprocfilterv3.ProcessingMode_BodySendMode, body []byte, n int, req, trailers bool) []byte {
	t.Helper()
	var chunks [][]byte
	for i := range n {
		chunks = append(chunks, body[i*len(body)/n:(i+1)*len(body)/n])
	}
	var resps []*extprocv3.ProcessingResponse
	var out []byte
	for i, c := range chunks {
		eos := i == n-1 && !trailers
		var m *extprocv3.ProcessingRequest
		if req {
			m = reqBody(c, eos)
		} else {
			m = respBody(c, eos)
		}
		resps = append(resps, func() (r []*extprocv3.ProcessingResponse) {
			defer func() {
				if v := recover(); v != nil {
					t.Fatalf("panic escaped handle: %v", v)
				}
			}()
			return x.handle(m)
		}()...)
	}
	if trailers {
		tm := &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseTrailers{ResponseTrailers: &extprocv3.HttpTrailers{}}}
		if req {
			tm = &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestTrailers{RequestTrailers: &extprocv3.HttpTrailers{}}}
		}
		resps = append(resps, x.handle(tm)...)
	}
	if mode == modeDuplex {
		for _, r := range resps {
			sr := r.GetRequestBody().GetResponse().GetBodyMutation().GetStreamedResponse()
			if !req {
				sr = r.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse()
			}
			out = append(out, sr.GetBody()...)
		}
		return out
	}
	var bodyResps []*extprocv3.ProcessingResponse
	for _, r := range resps {
		if r.GetRequestBody() != nil || r.GetResponseBody() != nil {
			bodyResps = append(bodyResps, r)
		}
	}
	if len(bodyResps) != len(chunks) {
		t.Fatalf("%d body messages got %d answers", len(chunks), len(bodyResps))
	}
	return forwarded(chunks, bodyResps, req)
}

// Review finding 8: a recovered panic must leave the exchange passing
// through every byte it has not yet answered, in every mode, both ways.
func TestPanicFailsOpenInEveryMode(t *testing.T) {
	body := openAIBody(bigToolOutput()[:20_000])
	modes := []struct {
		name   string
		mode   extprocfilterv3.ProcessingMode_BodySendMode
		chunks int
	}{
		{"buffered", modeBuffered, 1},
		{"streamed", modeStreamed, 3},
		{"duplex", modeDuplex, 3},
	}
	for _, md := range modes {
		for _, trailers := range []bool{false, true} {
			if md.mode == modeBuffered && trailers {
				continue // BUFFERED delivers the whole body with end_of_stream
			}
			t.Run(fmt.Sprintf("request rewrite/%s/trailers=%v", md.name, trailers), func(t *testing.T) {
				s := testServer(t, "")
				x := newTestExchange(s)
				x.handle(reqHeaders("/v1/chat/completions", md.mode, md.mode))
				x.req.rewrite = func([]byte) ([]byte, bool, *extprocv3.ImmediateResponse) { panic("bug in a rewrite") }
				got := envoyRun(t, x, md.mode, body, md.chunks, true, trailers)
				if !bytes.Equal(got, body) {
					t.Fatalf("client sent %d bytes, upstream gets %d", len(body), len(got))
				}
			})
			for _, where := range []struct {
				name string
				p    func() *panicky
			}{
				{"first write", func() *panicky { return &panicky{panicAt: 1} }},
				{"second write", func() *panicky { return &panicky{panicAt: 2} }},
				{"close", func() *panicky { return &panicky{panicInClose: true} }},
			} {
				if md.chunks == 1 && where.name == "second write" {
					continue
				}
				t.Run(fmt.Sprintf("response transform %s/%s/trailers=%v", where.name, md.name, trailers), func(t *testing.T) {
					s := testServer(t, "")
					x := newTestExchange(s)
					x.handle(reqHeaders("/v1/chat/completions", md.mode, md.mode))
					x.resp.transform = where.p()
					got := envoyRun(t, x, md.mode, body, md.chunks, false, trailers)
					if !bytes.Equal(got, body) {
						t.Fatalf("upstream sent %d bytes, client gets %d", len(body), len(got))
					}
				})
			}
		}
	}
}

// The old net re-ran the transform that had panicked inside the deferred
// function: the second panic escaped and killed the process.
func TestPanicInTransformDoesNotEscape(t *testing.T) {
	s := testServer(t, "")
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex))
	x.resp.transform = &panicky{panicAt: 1}
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("panic escaped handle(): %v", v)
			}
		}()
		resps := x.handle(respBody([]byte("data: {}\n\n"), false))
		if len(resps) != 1 || string(resps[0].GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse().GetBody()) != "data: {}\n\n" {
			t.Fatalf("chunk not passed through: %v", resps)
		}
	}()
	// And the rest of the stream passes as it comes.
	resps := x.handle(respBody([]byte("data: [DONE]\n\n"), true))
	if string(resps[0].GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse().GetBody()) != "data: [DONE]\n\n" {
		t.Fatal("later chunk not passed through")
	}
}

// A FULL_DUPLEX error answer held for overflow recovery is released as the
// upstream sent it when recovery panics: headers answered once, body whole.
func TestPanicReleasesHeldErrorAnswer(t *testing.T) {
	s := testServer(t, "")
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeDuplex, modeDuplex))
	x.handle(reqBody(openAIBody(bigToolOutput()), true))
	if resps := x.handle(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
		ResponseHeaders: hdrs(":status", "400", "content-type", "application/json")}}); len(resps) != 0 || x.recovery.held == nil {
		t.Fatalf("error headers not held: %v", resps)
	}
	// A replay client without a base URL dereferences nil: a stand-in for
	// any bug on the recovery path.
	x.srv.replay = &ReplayClient{route: replayRoute{prefixes: []string{""}}}
	errBody := []byte(`{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	var headers int
	var got []byte
	for _, r := range x.handle(respBody(errBody, true)) {
		if h := r.GetResponseHeaders(); h != nil {
			headers++
			if h.GetResponse().GetHeaderMutation() != nil {
				t.Fatal("held headers changed")
			}
		}
		got = append(got, r.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse().GetBody()...)
	}
	if headers != 1 || !bytes.Equal(got, errBody) {
		t.Fatalf("headers answered %d times, body %q", headers, got)
	}
}
