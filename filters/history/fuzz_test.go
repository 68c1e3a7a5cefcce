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
	for i, d := range fuzzDialects {
		f.Add(uint8(i), wiretest.Request(d, outs...))
		f.Add(uint8(i), wiretest.Request(d, "x", "", "\xff\xfe", "line\n"))
	}
	f.Add(uint8(2), []byte(`{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Write","input":{"content":"`+string(make([]byte, 0))+`"}}]}]}`))
	f.Add(uint8(0), []byte(`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"x","arguments":"{\"content\":\"\\u00e9\\ud83d\\ude00`+"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"+`\"}"}}]},{"role":"tool","tool_call_id":"a","content":"x"}]}`))
	store := shadow.NewMemory(shadow.MemoryOptions{})
	f.Cleanup(func() { store.Close() })
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		d := fuzzDialects[int(which)%len(fuzzDialects)]
		opts := Options{TriggerTokens: 64, TargetTokens: 16, KeepRecent: 1 + int(which)%3, InputMinBytes: 64}
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
		if len(before.Results) != len(after.Results) || len(before.Calls) != len(after.Calls) {
			t.Fatalf("results %d→%d, calls %d→%d", len(before.Results), len(after.Results), len(before.Calls), len(after.Calls))
		}
		for i := range before.Results {
			if before.Results[i].CallID != after.Results[i].CallID || before.Results[i].CallMessage != after.Results[i].CallMessage {
				t.Fatalf("result %d re-paired", i)
			}
		}
		for i := range before.Calls {
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
