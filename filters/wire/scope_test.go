package wire_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// Scope identifies a keyless caller's conversation: the same on every turn
// of it (whatever the client moves between turns), different for another
// first message or system prompt, nil without a user message.
func TestScope(t *testing.T) {
	scope := func(d wire.Dialect, body string) []byte {
		t.Helper()
		c, err := wire.Parse(d, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return c.Scope()
	}
	turn1 := `{"model":"claude","system":[{"type":"text","text":"You are an agent."}],"messages":[{"role":"user","content":[{"type":"text","text":"fix the build","cache_control":{"type":"ephemeral"}}]}]}`
	turn2 := `{"model":"claude", "system":[{"type":"text","text":"You are an agent.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"fix the build"}]},{"role":"assistant","content":[{"type":"text","text":"on it"}]},{"role":"user","content":"go on"}]}`
	other := strings.Replace(turn1, "fix the build", "fix the tests", 1)
	otherSystem := strings.Replace(turn1, "You are an agent.", "You are a reviewer.", 1)
	a, b := scope(wire.Anthropic, turn1), scope(wire.Anthropic, turn2)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("two turns of one conversation: %q vs %q", a, b)
	}
	if bytes.Equal(a, scope(wire.Anthropic, other)) || bytes.Equal(a, scope(wire.Anthropic, otherSystem)) {
		t.Fatal("another first message or system prompt has the same scope")
	}
	if s := scope(wire.Anthropic, `{"model":"claude","messages":[{"role":"assistant","content":"hi"}]}`); s != nil {
		t.Fatalf("no user message: %q", s)
	}
	// OpenAI Chat: the system message is one of the messages.
	chat := `{"model":"gpt-4o","messages":[{"role":"system","content":"You are an agent."},{"role":"user","content":"fix the build"}]}`
	chat2 := `{"model":"gpt-4o","messages":[{"role":"system","content":"You are an agent."},{"role":"user","content":[{"type":"text","text":"fix the build"}]},{"role":"assistant","content":"ok"}]}`
	if c1, c2 := scope(wire.OpenAIChat, chat), scope(wire.OpenAIChat, chat2); len(c1) == 0 || !bytes.Equal(c1, c2) {
		t.Fatalf("chat: %q vs %q", c1, c2)
	}
	for _, d := range wire.Dialects {
		if s := scope(d, string(wiretest.Request(d, "result"))); len(s) == 0 {
			t.Errorf("%s: a request with a user message has no scope", d)
		}
	}
}

// FuzzScope: any parsed body gives a scope without panicking, the same
// twice, and never longer than the body's text could make it.
func FuzzScope(f *testing.F) {
	seedAll(f, func(body []byte, d int) { f.Add(body, uint8(d)) })
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		c, err := wire.Parse(wire.Dialects[int(which)%len(wire.Dialects)], body)
		if err != nil {
			return
		}
		s := c.Scope()
		if !bytes.Equal(s, c.Scope()) {
			t.Fatal("scope not deterministic")
		}
		if len(s) > 2*len(body)+64 {
			t.Fatalf("scope of %d bytes from a %d-byte body", len(s), len(body))
		}
	})
}
