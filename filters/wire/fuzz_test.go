package wire

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"
)

// FuzzParse: arbitrary bytes never panic; on valid input every text span
// decodes to the reported text, and replacing every text keeps the body
// valid JSON with the same number of results (pairing preserved).
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Add([]byte(`{"messages":[{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":"x"}]}]}`), false)
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"\u00e9"}]}]}`), true)
	f.Fuzz(func(t *testing.T, body []byte, anthropic bool) {
		d := OpenAIChat
		if anthropic {
			d = Anthropic
		}
		c, err := Parse(d, body)
		if err != nil {
			return
		}
		var edits []Edit
		for _, r := range c.Results {
			for _, tb := range r.Texts {
				lit := gjson.ParseBytes(body[tb.Span.Start:tb.Span.End])
				if lit.Type != gjson.String || lit.String() != tb.Text {
					t.Fatalf("span %v of %s is %q, want %q", tb.Span, tb.Path, body[tb.Span.Start:tb.Span.End], tb.Text)
				}
				edits = append(edits, SetString(tb.Span, "r"))
			}
		}
		out, err := Apply(body, edits)
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		c2, err := Parse(d, out)
		if err != nil {
			t.Fatalf("reparse: %v", err)
		}
		if len(c2.Results) != len(c.Results) || len(c2.Calls) != len(c.Calls) {
			t.Fatalf("results %d→%d, calls %d→%d", len(c.Results), len(c2.Results), len(c.Calls), len(c2.Calls))
		}
		for i := range c.Results {
			if c.Results[i].CallID != c2.Results[i].CallID || len(c.Results[i].Texts) != len(c2.Results[i].Texts) {
				t.Fatalf("result %d changed identity", i)
			}
		}
	})
}
