package history

import (
	"testing"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

var fuzzDialects = []wire.Dialect{wire.OpenAIChat, wire.OpenAIResponses, wire.Anthropic, wire.Gemini, wire.Bedrock}

// FuzzTiers: any body, any dialect, a trigger low enough to act. The
// rewrite never panics, never produces invalid JSON, never drops, adds or
// re-pairs a result or a call, and is a pure function of its input.
func FuzzTiers(f *testing.F) {
	outs := results(9, 700, func(i int) bool { return i%2 == 0 })
	big := results(9, 5000, func(i int) bool { return i%2 == 0 })
	for i, d := range fuzzDialects {
		f.Add(uint8(i), wiretest.Request(d, outs...))
		f.Add(uint8(i), wiretest.Request(d, "x", "", "\xff\xfe", "line\n"))
		f.Add(uint8(i)|0x40, wiretest.Request(d, outs...))
		f.Add(uint8(i)|0x80, wiretest.Request(d, outs...))
		f.Add(uint8(i), wiretest.Request(d, big...))
		f.Add(uint8(i), append(wiretest.Request(d, big...), ' '))
	}
	f.Add(uint8(2), []byte(`{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Write","input":{"content":"`+string(make([]byte, 0))+`"}}]}]}`))
	f.Add(uint8(0), []byte(`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"x","arguments":"{\"content\":\"\\u00e9\\ud83d\\ude00`+"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"+`\"}"}}]},{"role":"tool","tool_call_id":"a","content":"x"}]}`))
	store := shadow.NewMemory(shadow.MemoryOptions{})
	f.Cleanup(func() { store.Close() })
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		d := fuzzDialects[int(which&0x3f)%len(fuzzDialects)]
		opts := Options{TriggerTokens: 64, TargetTokens: 16, KeepRecent: 1 + int(which&0x3f)%3, InputMinBytes: 64, Flatten: []string{FlattenOff, FlattenOld, FlattenAll}[int(which>>6)%3]}
		// The body's length picks the cost model and whether a small
		// window forces steps (the middle tier, keep_recent adapting).
		if len(body)%3 == 0 {
			opts.CostModel = CostAnthropic
		} else {
			opts.CostModel = CostNone
		}
		if len(body)%2 == 1 {
			opts.Window = func(string) int { return 1024 }
		}
		env := Env{Store: store, Tenant: "fuzz"}
		out, _, err := pipeline.New(New(opts, env)).Run(d, body)
		if err != nil {
			return // passed through unchanged by contract
		}
		if !jsonsafe.Valid(out) && jsonsafe.Valid(body) {
			t.Fatal("valid JSON in, invalid out")
		}
		before, err1 := wire.Parse(d, body)
		after, err2 := wire.Parse(d, out)
		if err1 != nil {
			return
		}
		if err2 != nil {
			t.Fatalf("the rewrite no longer parses: %v", err2)
		}
		if opts.Flatten != FlattenOff {
			checkFlattened(t, before, after)
		} else if len(before.Results) != len(after.Results) || len(before.Calls) != len(after.Calls) {
			t.Fatalf("results %d→%d, calls %d→%d", len(before.Results), len(after.Results), len(before.Calls), len(after.Calls))
		}
		for i := range before.Results {
			if opts.Flatten != FlattenOff {
				break
			}
			if before.Results[i].CallID != after.Results[i].CallID || before.Results[i].CallMessage != after.Results[i].CallMessage {
				t.Fatalf("result %d re-paired", i)
			}
		}
		for i := range before.Calls {
			if opts.Flatten != FlattenOff {
				break
			}
			if before.Calls[i].ID != after.Calls[i].ID || before.Calls[i].Name != after.Calls[i].Name {
				t.Fatalf("call %d changed identity", i)
			}
		}
		again, _, _ := pipeline.New(New(opts, env)).Run(d, body)
		if string(again) != string(out) {
			t.Fatal("not deterministic")
		}
	})
}

// checkFlattened: what is left after flattening is the conversation's
// later results in order, each still paired if it was, and every call left
// that had a result still has it.
func checkFlattened(t *testing.T, before, after *wire.Conversation) {
	t.Helper()
	j := 0
	for _, a := range after.Results {
		for j < len(before.Results) && before.Results[j].CallID != a.CallID {
			j++
		}
		if j == len(before.Results) {
			t.Fatalf("result %q appeared or moved", a.CallID)
		}
		if before.Results[j].CallMessage >= 0 && a.CallMessage < 0 {
			t.Fatalf("result %q lost its call", a.CallID)
		}
		j++
	}
	answered := map[string]bool{}
	for _, r := range before.Results {
		answered[r.CallID] = true
	}
	left := map[string]bool{}
	for _, r := range after.Results {
		left[r.CallID] = true
	}
	for _, c := range after.Calls {
		if answered[c.ID] && !left[c.ID] {
			t.Fatalf("call %q lost its result", c.ID)
		}
	}
}
