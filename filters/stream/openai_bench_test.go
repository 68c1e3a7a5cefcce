package stream

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// oaiBenchStream builds a realistic 200-chunk answer: role, 120 text deltas,
// two calls of ~38 argument fragments each, finish, usage, [DONE]. shape
// picks the upstream: "openai" (already conforming: the pass-through path),
// "nim" (id and name repeated on every fragment: every event rewritten), or
// "xml" (the calls as <invoke> text from a text-only model).
func oaiBenchStream(shape string) (body []byte, events int) {
	var b strings.Builder
	head := `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1736870400,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_f9f4fb6dbf","choices":[{"index":0,"delta":`
	emit := func(delta, finish string) {
		b.WriteString(head + delta + `,"logprobs":null,"finish_reason":` + finish + "}]}\n\n")
		events++
	}
	str := func(s string) string {
		q, _ := json.Marshal(s)
		return string(q)
	}
	emit(`{"role":"assistant","content":null}`, "null")
	for i := range 120 {
		emit(`{"content":`+str(fmt.Sprintf("word%d, ", i))+`}`, "null")
	}
	content := strings.Repeat("package main\\n\\nfunc main() {}\\n", 6)
	for c, name := range []string{"write_file", "run_in_terminal"} {
		args := `{"path":"cmd/tool` + fmt.Sprint(c) + `/main.go","content":"` + content + `","mode":"0644"}`
		var frags []string
		for i := 0; i < len(args); i += 6 {
			frags = append(frags, args[i:min(i+6, len(args))])
		}
		frags = frags[:min(len(frags), 38)]
		frags[len(frags)-1] = args[6*(len(frags)-1):]
		if shape == "xml" {
			var x strings.Builder
			x.WriteString(`<invoke name="` + name + `"><parameter name="path">cmd/tool` + fmt.Sprint(c) + `/main.go</parameter><parameter name="content">`)
			x.WriteString(strings.Repeat("package main\n\nfunc main() {}\n", 6))
			x.WriteString(`</parameter><parameter name="mode">0644</parameter></invoke>`)
			text := x.String()
			for i := 0; i < len(text); i += len(text)/38 + 1 {
				emit(`{"content":`+str(text[i:min(i+len(text)/38+1, len(text))])+`}`, "null")
			}
			continue
		}
		id := fmt.Sprintf("call_bench%014d", c)
		for i, f := range frags {
			switch {
			case i == 0:
				emit(`{"tool_calls":[{"index":`+fmt.Sprint(c)+`,"id":"`+id+`","type":"function","function":{"name":"`+name+`","arguments":""}}]}`, "null")
				fallthrough
			case shape == "openai":
				emit(`{"tool_calls":[{"index":`+fmt.Sprint(c)+`,"function":{"arguments":`+str(f)+`}}]}`, "null")
			default: // nim
				emit(`{"tool_calls":[{"index":`+fmt.Sprint(c)+`,"id":"`+id+`","type":"function","function":{"name":"`+name+`","arguments":`+str(f)+`}}]}`, "null")
			}
		}
	}
	emit(`{}`, `"tool_calls"`)
	b.WriteString(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1736870400,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":400,"total_tokens":1400}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String()), events + 2
}

// BenchmarkOpenAIChatNormalizer feeds the stream in 512-byte reads, like
// Envoy body chunks, and reports the cost per SSE event.
func BenchmarkOpenAIChatNormalizer(b *testing.B) {
	for _, shape := range []string{"openai", "nim", "xml"} {
		body, events := oaiBenchStream(shape)
		b.Run(shape, func(b *testing.B) {
			opts := Options{XMLToolCalls: shape == "xml", IncludeUsage: true, NewCallID: oaiTestIDs()}
			if err := oaiCheckProfile(oaiRun(opts, body)); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				n := NewOpenAIChat(opts)
				for i := 0; i < len(body); i += 512 {
					n.Write(body[i:min(i+512, len(body))])
				}
				n.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
		})
	}
	// The floor: SSE decoding alone of the conforming stream.
	body, events := oaiBenchStream("openai")
	b.Run("sse-decode-only", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var d Decoder
			for i := 0; i < len(body); i += 512 {
				d.Feed(body[i:min(i+512, len(body))])
			}
			d.Flush()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
	})
}
