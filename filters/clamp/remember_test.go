package clamp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
)

// rememberBody is an OpenAI Chat or Anthropic request with the results
// the clamp treats differently: a file read over the limits (head and
// tail), a log over them (the Cutter), one under them whose size bounds
// cannot show it (many short escaped lines), a small one; lead shifts them
// all by an earlier turn, as the next request of a conversation would.
func rememberBody(t *testing.T, anthropic bool, lead int) []byte {
	t.Helper()
	read := strings.Repeat("    let total = items.iter().map(|i| i.price).sum::<u64>();\n", 1500)
	log := strings.Repeat("2026-03-01 10:00:01 INFO [http] GET /api/orders 200 \"ok\"\n", 1400)
	short := strings.Repeat("a\n", 1800) // 3,600 bytes, MaxLines's bound 3,601
	type res struct{ tool, args, text string }
	results := []res{
		{"Read", `{"file_path":"src/lib.rs"}`, read},
		{"Bash", `{"command":"tail -n 2000 app.log"}`, log},
		{"Bash", `{"command":"seq"}`, short},
		{"Bash", `{"command":"ls"}`, "a\nb\n"},
	}
	var msgs []any
	for i := range lead {
		msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprint("earlier turn ", i)})
		msgs = append(msgs, map[string]any{"role": "assistant", "content": "ok"})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": "go"})
	for i, r := range results {
		id := fmt.Sprint("call_", i)
		if anthropic {
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": r.tool, "input": json.RawMessage(r.args)}}},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": []any{
					map[string]any{"type": "text", "text": r.text}, map[string]any{"type": "text", "text": "exit 0"},
				}}}})
			continue
		}
		msgs = append(msgs,
			map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": id, "type": "function", "function": map[string]any{"name": r.tool, "arguments": r.args}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": r.text})
	}
	body, err := json.Marshal(map[string]any{"model": "m", "max_tokens": 100, "messages": msgs})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestMemoSameEdits: a clamp that remembers writes, on the first request
// and on later ones whose results sit elsewhere in the body, exactly the
// edits and change records of one that does not.
func TestMemoSameEdits(t *testing.T) {
	lim := Limits{MaxBytes: 51200, MaxLines: 2000, Keep: KeepHead}
	isRead := func(tool, _ string) bool { return tool == "Read" }
	cutter := func(text, _, _ string, aim int) (string, bool) {
		return text[:strings.LastIndexByte(text[:aim/2], '\n')+1] + "[cut]\n", true
	}
	filter := func(m *Memo) *Filter {
		f := NewFilter(lim).WithReadKeep(KeepHeadTail, isRead).WithCutter(cutter)
		if m != nil {
			f.WithMemo(m)
		}
		return f
	}
	for _, anthropic := range []bool{false, true} {
		m := NewMemo(8 << 20)
		d := wire.OpenAIChat
		if anthropic {
			d = wire.Anthropic
		}
		for _, lead := range []int{0, 0, 3, 7} {
			body := rememberBody(t, anthropic, lead)
			parse := func() *wire.Conversation {
				c, err := wire.Parse(d, body)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			wantE, wantC := filter(nil).Rewrite(parse())
			gotE, gotC := filter(m).Rewrite(parse())
			if len(wantC) < 2 {
				t.Fatalf("anthropic=%v lead=%d: %d results clamped, want the read and the log", anthropic, lead, len(wantC))
			}
			if !slices.EqualFunc(gotE, wantE, func(a, b wire.Edit) bool { return a.Span == b.Span && a.Raw == b.Raw }) {
				t.Fatalf("anthropic=%v lead=%d: remembered edits differ", anthropic, lead)
			}
			if !slices.EqualFunc(gotC, wantC, func(a, b pipeline.Change) bool { return a == b }) {
				t.Fatalf("anthropic=%v lead=%d: change records differ:\n%+v\n%+v", anthropic, lead, gotC, wantC)
			}
		}
		if m.m.Len() != 3 {
			t.Errorf("anthropic=%v: %d results remembered, want the three the bounds could not clear", anthropic, m.m.Len())
		}
	}
}

// FuzzMemo: for any result text, tool and limits, a clamp that remembers
// writes what one that does not writes, on the request that taught it and
// on a later one where the result sits elsewhere.
func FuzzMemo(f *testing.F) {
	fuzzSeeds(f, func(s string) {
		f.Add(s, "Read", uint16(300), uint8(10), uint8(2))
		f.Add(s, "Bash", uint16(40), uint8(3), uint8(1))
	})
	f.Fuzz(func(t *testing.T, text, tool string, maxBytes uint16, maxLines uint8, keep uint8) {
		lim := fuzzLimits(maxBytes, maxLines, keep)
		if lim.Validate() != nil {
			lim.MaxBytes, lim.MaxLines = max(lim.MaxBytes, MinMaxBytes), max(lim.MaxLines, MinMaxLines)
		}
		isRead := func(tool, _ string) bool { return tool == "Read" }
		cutter := func(text, _, _ string, aim int) (string, bool) {
			if len(text) < 2 {
				return "", false
			}
			return "[cut]" + text[len(text)/2:len(text)/2+1], true
		}
		m := NewMemo(1 << 20)
		for _, lead := range []string{"", "an earlier turn"} {
			msgs := []any{map[string]any{"role": "user", "content": lead + "go"},
				map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": tool, "arguments": "{}"}}}},
				map[string]any{"role": "tool", "tool_call_id": "c1", "content": text}}
			body, err := json.Marshal(map[string]any{"model": "m", "messages": msgs})
			if err != nil {
				return
			}
			run := func(m *Memo) ([]wire.Edit, []pipeline.Change) {
				c, err := wire.Parse(wire.OpenAIChat, body)
				if err != nil {
					t.Skip(err)
				}
				return NewFilter(lim).WithReadKeep(KeepHeadTail, isRead).WithCutter(cutter).WithMemo(m).Rewrite(c)
			}
			wantE, wantC := run(nil)
			gotE, gotC := run(m)
			if !slices.EqualFunc(gotE, wantE, func(a, b wire.Edit) bool { return a.Span == b.Span && a.Raw == b.Raw }) ||
				!slices.EqualFunc(gotC, wantC, func(a, b pipeline.Change) bool { return a == b }) {
				t.Fatalf("lead %q: the remembered clamp differs", lead)
			}
		}
	})
}
