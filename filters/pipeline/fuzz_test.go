package pipeline_test

import (
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
)

// FuzzRun: the request pipeline never panics on arbitrary bytes, returns
// the input unchanged on error, and its output is valid JSON whenever the
// input was, with every tool result within the limits.
func FuzzRun(f *testing.F) {
	f.Add([]byte(anthropicBody), true)
	f.Add([]byte(`{"messages":[{"role":"tool","tool_call_id":"a","content":"a\nb\nc\nd\ne\nf\r\ng"}]}`), false)
	f.Add([]byte(`{"messages":[{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":"héllo\n"},{"type":"image_url"},{"type":"text","text":"🙂🙂🙂🙂"}]}]}`), false)
	f.Add([]byte("{\"messages\":[{\"role\":\"tool\",\"content\":\"\xff\xfe\"}]}"), false)
	lim := clamp.Limits{MaxBytes: 300, MaxLines: 5}
	p := pipeline.New(clamp.NewFilter(lim))
	f.Fuzz(func(t *testing.T, body []byte, anthropic bool) {
		d := wire.OpenAIChat
		if anthropic {
			d = wire.Anthropic
		}
		out, rep, err := p.Run(d, body)
		if err != nil {
			if string(out) != string(body) {
				t.Fatal("error must return the input unchanged")
			}
			return
		}
		if gjson.ValidBytes(body) && !gjson.ValidBytes(out) {
			t.Fatalf("valid input became invalid JSON: %q", out)
		}
		if !rep.Changed() && string(out) != string(body) {
			t.Fatal("unchanged report but different bytes")
		}
		c, err := wire.Parse(d, out)
		if err != nil {
			t.Fatalf("output does not parse: %v", err)
		}
		// The expand_context tool added in the same splice is the tool
		// added to the output after it, byte for byte.
		if conv, err := wire.Parse(d, body); err == nil {
			var added bool
			one, _, ran, err := p.RunConversationThen(conv, func(pipeline.Report) []wire.Edit {
				e, ok, err := conv.ExpandToolEdit()
				if added = ok && err == nil; !added {
					return nil
				}
				return []wire.Edit{e}
			})
			want, changed, werr := wire.InjectExpandTool(d, out)
			switch {
			case err != nil || !ran:
				t.Fatalf("with the tool: ran %v, err %v", ran, err)
			case added != (changed && werr == nil) || added && string(one) != string(want) || !added && string(one) != string(out):
				t.Fatalf("the tool added in the splice (%v) differs from the tool added after it (%v, %v):\n%s\n%s", added, changed, werr, one, want)
			}
		}
		for _, r := range c.Results {
			var texts []string
			for _, tb := range r.Texts {
				texts = append(texts, tb.Text())
			}
			if _, rr := clamp.Apply(texts, lim); rr.Changed {
				t.Fatalf("result %d still over the limits after the pipeline", r.Ordinal)
			}
			for _, s := range texts {
				if !utf8.ValidString(s) && utf8.Valid(body) {
					t.Fatal("invalid UTF-8 in output")
				}
			}
		}
	})
}
