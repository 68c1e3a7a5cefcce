package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// linkQuadratic is the old pairing, kept as the oracle: for each result the
// latest call with its id at or before it, and the assistant turns after it.
func linkQuadratic(c *Conversation) {
	for i := range c.Results {
		r := &c.Results[i]
		r.CallMessage = -1
		for j := len(c.Calls) - 1; j >= 0; j-- {
			call := c.Calls[j]
			if call.ID == r.CallID && call.Message <= r.Message {
				r.CallMessage, r.Args = call.Message, call.Args
				if r.ToolName == "" {
					r.ToolName = call.Name
				}
				break
			}
		}
		for _, a := range c.assistantAt {
			if a > r.Message {
				r.TurnsAgo++
			}
		}
	}
}

// The linear link agrees with the quadratic one on random conversations:
// reused ids, results before their call, calls and results in one message.
func TestLinkMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var a, b Conversation
		a.lastAssistant, b.lastAssistant = -2, -2
		msgs := rng.IntN(30) + 1
		for mi := range msgs {
			switch rng.IntN(3) {
			case 0:
				a.assistantTurn(mi)
				b.assistantTurn(mi)
				for range rng.IntN(3) {
					call := ToolCall{Message: mi, ID: fmt.Sprintf("c%d", rng.IntN(6)), Name: fmt.Sprintf("t%d", rng.IntN(4)), Args: fmt.Sprint(rng.IntN(9))}
					a.Calls, b.Calls = append(a.Calls, call), append(b.Calls, call)
				}
			default:
				for range rng.IntN(3) {
					res := ToolResult{Message: mi, CallID: fmt.Sprintf("c%d", rng.IntN(7))}
					if rng.IntN(5) == 0 {
						res.ToolName = "named"
					}
					a.Results, b.Results = append(a.Results, res), append(b.Results, res)
				}
			}
		}
		a.link()
		linkQuadratic(&b)
		for i := range a.Results {
			ra, rb := a.Results[i], b.Results[i]
			if ra.CallMessage != rb.CallMessage || ra.Args != rb.Args || ra.ToolName != rb.ToolName || ra.TurnsAgo != rb.TurnsAgo {
				t.Fatalf("result %d: linear %+v, oracle %+v", i, ra, rb)
			}
		}
	}
}

// pairsBody is an OpenAI Chat body of n small call/result pairs.
func pairsBody(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"gpt-4o","messages":[{"role":"user","content":"go"}`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_%d","content":"ok %d"}`, i, i, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// BenchmarkParseManyPairs: ns/byte must be flat from 1 MB to 16 MB (review
// finding 9: 16 MB of small pairs took 33 s with the quadratic link).
func BenchmarkParseManyPairs(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20, 16 << 20} {
		body := pairsBody(size)
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := Parse(OpenAIChat, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
