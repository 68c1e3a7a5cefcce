package shadow

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// FuzzCompressFilter: for any body the step never panics, keeps valid JSON
// valid and the provider's pairing intact, and every reference it writes
// can be expanded to the exact original from the store.
func FuzzCompressFilter(f *testing.F) {
	f.Add(string(wiretest.Request(wire.OpenAIChat, testLog(400))), uint8(0))
	f.Add(string(wiretest.Request(wire.Anthropic, testLog(300), "small")), uint8(1))
	f.Add(string(wiretest.Request(wire.Gemini, testLog(300))), uint8(3))
	f.Add(string(wiretest.Request(wire.Bedrock, "héllo 🙂\n"+testLog(300))), uint8(4))
	f.Add(`{"messages":[{"role":"tool","tool_call_id":"a","content":"\xff\xfe`+strings.Repeat("x\\n", 3000)+`"}]}`, uint8(0))
	f.Add(string(backgroundBody("uv run pytest tests/test_api.py", "b50b67f", testLog(300))), uint8(1))
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		d := wire.Dialects[int(which)%len(wire.Dialects)]
		store := NewMemory(MemoryOptions{})
		o := defaultOpts()
		o.MinBytes = 256
		o.Strategy = compress.Structural(compress.StructuralOptions{TargetBytes: 512})
		o.Fallback = compress.Simple(50)
		cf := NewCompressFilter(o, Env{Store: store, Tenant: "t"})
		out, _, err := pipeline.New(cf).Run(d, []byte(body))
		if err != nil {
			if string(out) != body {
				t.Fatal("error must return the input unchanged")
			}
			return
		}
		if gjson.Valid(body) && !gjson.ValidBytes(out) {
			t.Fatal("valid JSON became invalid")
		}
		if wiretest.CheckPairing(d, []byte(body)) == nil {
			if err := wiretest.CheckPairing(d, out); err != nil {
				t.Fatalf("pairing broken: %v", err)
			}
		}
		if utf8.ValidString(body) && !utf8.Valid(out) {
			t.Fatal("invalid UTF-8 introduced")
		}
		for _, id := range FindIDs(string(out)) {
			if strings.Contains(body, id) {
				continue // the input already carried it
			}
			v, err := store.Get(t.Context(), "t", Original, id)
			if err != nil {
				t.Fatalf("reference %s has no original: %v", id, err)
			}
			if ID("t", v) != id {
				t.Fatal("stored original does not hash to its id")
			}
		}
	})
}
