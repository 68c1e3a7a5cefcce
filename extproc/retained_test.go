package extproc

import (
	"testing"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// Review finding 21: the client's body and the body sent upstream were
// kept for the whole answer (minutes for a long generation) in case a
// replay needed them. They go as soon as a 200 shows none can come.
func TestRequestBodiesReleasedOnceNoReplayCanNeedThem(t *testing.T) {
	respHeaders := func(ct string) *extprocv3.ProcessingRequest {
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
			ResponseHeaders: hdrs(":status", "200", "content-type", ct)}}
	}
	// A JSON answer to a request without references: nothing is kept.
	s := testServer(t, "store: {keyless_references: false}")
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex))
	x.handle(reqBody(openAIBody("small result"), true))
	if x.recovery.clientBody == nil || x.rewrite.upstreamBody == nil {
		t.Fatal("bodies not kept for recovery before the answer")
	}
	x.handle(respHeaders("application/json"))
	if x.recovery.clientBody != nil || x.rewrite.upstreamBody != nil {
		t.Fatal("request bodies still held after a 200 JSON answer")
	}

	// A stream: the overflow gate may still recover until the first real
	// event; then the client's body goes.
	x = newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex))
	x.handle(reqBody(openAIBody("small result"), true))
	x.handle(respHeaders("text/event-stream"))
	if x.recovery.clientBody == nil {
		t.Fatal("client body dropped while the gate can still recover")
	}
	x.handle(respBody([]byte(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`+"\n\n"), false))
	if x.recovery.clientBody != nil || x.rewrite.upstreamBody != nil {
		t.Fatal("request bodies still held after the gate decided")
	}
}

// Review finding 11: a JSON answer held whole for a rewrite in
// FULL_DUPLEX_STREAMED had no cap (100 MiB held). Past
// server.max_response_hold_bytes it passes through, every byte in order.
func TestResponseHoldIsCapped(t *testing.T) {
	s := testServer(t, "server: {max_response_hold_bytes: 4194304}")
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex))
	x.handle(reqBody(openAIBody("hi"), true))
	x.handle(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
		ResponseHeaders: hdrs(":status", "200", "content-type", "application/json")}})
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = ' '
	}
	var sent, forwarded int
	for i := range 20 {
		chunk[0] = byte('a' + i)
		sent += len(chunk)
		for _, r := range x.handle(respBody(chunk, i == 19)) {
			forwarded += len(r.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse().GetBody())
		}
		if len(x.resp.buf) > 4<<20+1<<20 {
			t.Fatalf("chunk %d: %d MiB held", i, len(x.resp.buf)>>20)
		}
	}
	if forwarded != sent {
		t.Fatalf("forwarded %d of %d bytes", forwarded, sent)
	}
}
