package promptcache

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
)

// conversation is an Anthropic request of n messages of 1,000 tokens each
// after a 2,000-token system prompt, with Claude Code's breakpoints (the
// system prompt and the newest message); message k says changed when
// changed[k].
func conversation(n int, changed map[int]bool) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"m","system":[{"type":"text","text":"` + strings.Repeat("s", 8000) + `","cache_control":{"type":"ephemeral"}}],"messages":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		text := strings.Repeat(string(rune('a'+i%26)), 4000)
		if changed[i] {
			text = strings.Repeat("z", 1000)
		}
		marker := ""
		if i == n-1 {
			marker = `,"cache_control":{"type":"ephemeral"}`
		}
		fmt.Fprintf(&b, `{"role":%q,"content":[{"type":"text","text":%q%s}]}`, role, text, marker)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func TestAnthropicGrowthReadsThePreviousTurn(t *testing.T) {
	var c Cache
	first := c.Charge(wire.Anthropic, Units(wire.Anthropic, conversation(10, nil)))
	if first.Read != 0 || first.Write == 0 {
		t.Fatalf("first request: %+v", first)
	}
	next := c.Charge(wire.Anthropic, Units(wire.Anthropic, conversation(12, nil)))
	// The breakpoint moved from message 9 to 11: the prefix through 9 is
	// read (the marker is not content), the two new messages written.
	if next.Read < first.Write-20 || next.Read > first.Write || next.Write < 2020 || next.Write > 2050 {
		t.Fatalf("second request: %+v after %+v", next, first)
	}
}

// After a change at message k, a request reads the longest prefix an
// earlier breakpoint wrote before k (each earlier turn wrote one at its
// newest message) only when that breakpoint is within Lookback units of one
// of its own; else only the system prompt's.
func TestAnthropicLookbackBound(t *testing.T) {
	const system, msg = 2016, 1015 // tokens, about
	for _, tc := range []struct {
		change    int
		unbounded bool
		through   int // the last message read back; -1: the system prompt only
	}{
		{change: 20, through: 19},                  // 12 units before the newest breakpoint
		{change: 2, through: -1},                   // 30 units before it: out of reach
		{change: 2, unbounded: true, through: 1},   // without the bound, turn 1's prefix
		{change: 21, unbounded: true, through: 19}, // turn 10's request ended at 19
	} {
		c := Cache{Unbounded: tc.unbounded}
		for n := 2; n <= 30; n += 2 {
			c.Charge(wire.Anthropic, Units(wire.Anthropic, conversation(n, nil)))
		}
		b := c.Charge(wire.Anthropic, Units(wire.Anthropic, conversation(32, map[int]bool{tc.change: true})))
		want := int64(system + msg*(tc.through+1))
		if b.Read < want-20 || b.Read > want+20 {
			t.Errorf("change at %d (unbounded %v): read %d, want about %d", tc.change, tc.unbounded, b.Read, want)
		}
	}
}

func TestAutomaticReadsLongestPrefix(t *testing.T) {
	var c Cache
	c.Charge(wire.OpenAIChat, Units(wire.OpenAIChat, []byte(`{"messages":[`+strings.Repeat(`{"role":"user","content":"`+strings.Repeat("x", 4096)+`"},`, 3)+`{"role":"user","content":"end"}]}`)))
	b := c.Charge(wire.OpenAIChat, Units(wire.OpenAIChat, []byte(`{"messages":[`+strings.Repeat(`{"role":"user","content":"`+strings.Repeat("x", 4096)+`"},`, 2)+`{"role":"user","content":"other"}]}`)))
	// Two messages of ~1,030 tokens match; OpenAI counts in steps of 128
	// past 1,024.
	if b.Read != 1024+(2*1033-1024)/128*128 {
		t.Fatalf("read %d", b.Read)
	}
}
