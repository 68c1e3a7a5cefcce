package wire_test

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

func seedExpand(f *testing.F) {
	seedAll(f, func(body []byte, d int) { f.Add(body, uint8(d)) })
	for d, dialect := range wire.Dialects {
		f.Add([]byte(`{}`), uint8(d))
		f.Add([]byte(` {"tools":[ ],"toolConfig":{}} `), uint8(d))
		f.Add([]byte(`{"tools":null,"toolConfig":null,"functions":[]}`), uint8(d))
		f.Add([]byte(`{"tools":[{"googleSearch":{}},{"function_declarations":[{"name":"a"}]}]}`), uint8(d))
		if out, _, err := wire.InjectExpandTool(dialect, wiretest.Request(dialect, "x")); err == nil {
			f.Add(out, uint8(d))
		}
	}
	for d, a := range []string{
		`{"choices":[{"message":{"tool_calls":[{"id":"c","type":"function","function":{"name":"expand_context","arguments":"{\"id\":\"sh_1\"}"}}]}}]}`,
		`{"output":[{"type":"function_call","call_id":"c","name":"expand_context","arguments":"{\"id\":\"sh_1\"}"}]}`,
		`{"content":[{"type":"tool_use","id":"t","name":"expand_context","input":{"id":"sh_1"}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"expand_context","args":{"id":"sh_1"}}}]}}]}`,
		`{"output":{"message":{"content":[{"toolUse":{"toolUseId":"t","name":"expand_context","input":{"id":"sh_1"}}}]}}}`,
	} {
		f.Add([]byte(a), uint8(d))
	}
}

// FuzzInjectExpandTool: arbitrary bytes never panic; an error leaves the
// body as it was; valid JSON in gives valid JSON out, with the input as a
// prefix-and-suffix around one insertion; injecting twice equals once.
func FuzzInjectExpandTool(f *testing.F) {
	seedExpand(f)
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		d := wire.Dialects[int(which)%len(wire.Dialects)]
		in := bytes.Clone(body)
		out, changed, err := wire.InjectExpandTool(d, body)
		if !bytes.Equal(body, in) {
			t.Fatal("input modified")
		}
		if err != nil || !changed {
			if !bytes.Equal(out, in) {
				t.Fatalf("changed=%v err=%v but body differs", changed, err)
			}
			return
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("invalid JSON out of valid input:\n%s", out)
		}
		// One insertion, or a null tools value replaced by the list.
		if _, removed, _ := splice(in, out); removed != "" && removed != "null" {
			t.Fatalf("removed %q:\n in %s\nout %s", removed, in, out)
		}
		again, changed2, err := wire.InjectExpandTool(d, out)
		if err != nil || changed2 || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: changed=%v err=%v\n in %s\nout %s", changed2, err, in, out)
		}
		if c, err := wire.Parse(d, out); err == nil && c.ToolsPath == "" {
			t.Fatalf("Parse sees no tools in %s", out)
		}
		if wiretest.CheckPairing(d, in) == nil {
			if err := wiretest.CheckPairing(d, out); err != nil {
				t.Fatalf("pairing broken: %v", err)
			}
		}
	})
}

// FuzzFindExpandCalls: arbitrary bytes never panic, and the calls found are
// a subset of the answer's tool calls, in order.
func FuzzFindExpandCalls(f *testing.F) {
	seedExpand(f)
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		d := wire.Dialects[int(which)%len(wire.Dialects)]
		calls, total, err := wire.FindExpandCalls(d, body)
		if err != nil {
			if len(calls) != 0 || total != 0 {
				t.Fatal("results with an error")
			}
			return
		}
		if len(calls) > total {
			t.Fatalf("%d expand calls of %d", len(calls), total)
		}
		for i, c := range calls {
			if c.Index >= total || (i > 0 && c.Index <= calls[i-1].Index) {
				t.Fatalf("bad index %d (total %d)", c.Index, total)
			}
		}
	})
}

// splice finds the one run of in that out replaced: out = in[:k] + added +
// in[len(in)-suffix:].
func splice(in, out []byte) (k int, removed, added string) {
	for k < len(in) && k < len(out) && in[k] == out[k] {
		k++
	}
	n := 0
	for n < len(in)-k && n < len(out)-k && in[len(in)-1-n] == out[len(out)-1-n] {
		n++
	}
	return k, string(in[k : len(in)-n]), string(out[k : len(out)-n])
}
