package stream

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
)

// benchChain is the full response chain extproc builds for an SSE stream:
// overflow gate → expander → normalizer.
func benchChain(d wire.Dialect) Normalizer {
	newInner := expNewInner(d)
	return NewOverflowGate(d, NewExpanding(d, newInner(), newInner, expNever{nil}, nil), &gateRec{refuse: true}, nil)
}

// benchStream is a stream of dialect d whose text is size bytes, in one
// event (huge) or in events of about 40 bytes of text (small).
func benchStream(d wire.Dialect, size int, huge bool) []byte {
	piece := size
	if !huge {
		piece = 40
	}
	var b strings.Builder
	switch d {
	case wire.Anthropic:
		b.WriteString(expAntStart("m"))
		b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		for n := 0; n < size; n += piece {
			b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + strings.Repeat("a", piece) + "\"}}\n\n")
		}
		b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
		b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	case wire.OpenAIResponses:
		b.WriteString("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"r\",\"status\":\"in_progress\",\"output\":[]}}\n\n")
		for n := 0; n < size; n += piece {
			b.WriteString("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"" + strings.Repeat("a", piece) + "\"}\n\n")
		}
		b.WriteString("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\",\"output\":[]}}\n\n")
	default:
		b.WriteString(expOAIChunk("c", `{"role":"assistant","content":""}`, ""))
		for n := 0; n < size; n += piece {
			b.WriteString(expOAIText("c", strings.Repeat("a", piece)))
		}
		b.WriteString(expOAIEnd("c", "stop"))
	}
	return []byte(b.String())
}

// Review finding 11: ns/byte of the whole chain must not grow with the
// size of one event (1 vs 16 MiB) or with the number of events.
func BenchmarkChainScaling(b *testing.B) {
	for _, d := range []wire.Dialect{wire.OpenAIChat, wire.Anthropic, wire.OpenAIResponses} {
		for _, huge := range []bool{true, false} {
			for _, size := range []int{1 << 20, 16 << 20} {
				body := benchStream(d, size, huge)
				shape := "small"
				if huge {
					shape = "huge"
				}
				b.Run(fmt.Sprintf("%v/%s/%dMiB", d, shape, size>>20), func(b *testing.B) {
					b.SetBytes(int64(len(body)))
					for b.Loop() {
						n := benchChain(d)
						for i := 0; i < len(body); i += 16 << 10 {
							n.Write(body[i:min(i+16<<10, len(body))])
						}
						n.Close()
					}
				})
			}
		}
	}
}
