package extproc

import (
	"context"
	"fmt"
	"strings"
	"testing"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// oneMBRequest is a ~1 MB OpenAI Chat request with 20 tool results of ~50 KB,
// a few over the clamp's limits.
func oneMBRequest() []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-4o","messages":[{"role":"user","content":"go"}`)
	for i := range 20 {
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"bash","arguments":"{}"}}]}`, i)
		lines := 900
		if i%5 == 0 {
			lines = 2600
		}
		var r strings.Builder
		for j := range lines {
			fmt.Fprintf(&r, "src/pkg/file_%d.go:%d: héllo wörld 中文 result\n", i, j)
		}
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%d","content":%s}`, i, quote(r.String()))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkExchangeBuffered is one full request exchange (headers + 1 MB
// BUFFERED body + response headers) through the gRPC server in-process.
func BenchmarkExchangeBuffered(b *testing.B) {
	s := testServer(b, "")
	client := startGRPC(b, s)
	body := oneMBRequest()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		exchangeOnce(b, client, body)
	}
}

// BenchmarkRewriteRequest is the request pipeline alone on the same body.
func BenchmarkRewriteRequest(b *testing.B) {
	cfg := DefaultConfig()
	body := oneMBRequest()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, rep, err := RewriteBody(cfg, "", "/v1/chat/completions", body); err != nil || !rep.Changed() {
			b.Fatal("not rewritten", err)
		}
	}
}

// BenchmarkResponseEvent is the cost one SSE event pays to cross toolproc in
// FULL_DUPLEX_STREAMED: a response body message with one chat.completion
// chunk goes in, its streamed answer comes back, over a real gRPC stream.
// "passthrough" (stream.normalize off) is the floor set by gRPC itself;
// "normalized" adds the stream repair. The first event's round trip is the
// time-to-first-byte toolproc adds.
func BenchmarkResponseEvent(b *testing.B) {
	event := []byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"héllo wörld, some streamed text "},"finish_reason":null}]}` + "\n\n")
	for _, tc := range []struct{ name, config string }{
		{"passthrough", "profiles: {default: {stream: {normalize: false}}}"},
		{"normalized", ""},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := testServer(b, tc.config)
			client := startGRPC(b, s)
			stream, err := client.Process(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			for _, m := range []*extprocv3.ProcessingRequest{
				reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex),
				reqBody([]byte(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`), true),
				{Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: hdrs(":status", "200", "content-type", "text/event-stream")}},
			} {
				if err := stream.Send(m); err != nil {
					b.Fatal(err)
				}
				if _, err := stream.Recv(); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(event)))
			b.ReportAllocs()
			for b.Loop() {
				if err := stream.Send(respBody(event, false)); err != nil {
					b.Fatal(err)
				}
				if _, err := stream.Recv(); err != nil {
					b.Fatal(err)
				}
			}
			_ = stream.CloseSend()
		})
	}
}
