package wire_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// FuzzParse covers every dialect parser in one target (the dialect is part
// of the input); the per-dialect targets below fuzz one parser each.
func FuzzParse(f *testing.F) {
	seedAll(f, func(body []byte, d int) { f.Add(body, uint8(d)) })
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		checkParse(t, wire.Dialects[int(which)%len(wire.Dialects)], body)
	})
}

func FuzzParseOpenAIChat(f *testing.F)      { fuzzDialect(f, wire.OpenAIChat) }
func FuzzParseOpenAIResponses(f *testing.F) { fuzzDialect(f, wire.OpenAIResponses) }
func FuzzParseAnthropic(f *testing.F)       { fuzzDialect(f, wire.Anthropic) }
func FuzzParseGemini(f *testing.F)          { fuzzDialect(f, wire.Gemini) }
func FuzzParseBedrock(f *testing.F)         { fuzzDialect(f, wire.Bedrock) }

func fuzzDialect(f *testing.F, d wire.Dialect) {
	seedAll(f, func(body []byte, _ int) { f.Add(body) })
	f.Fuzz(func(t *testing.T, body []byte) { checkParse(t, d, body) })
}

func seedAll(f *testing.F, add func(body []byte, d int)) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		for d := range len(wire.Dialects) {
			add(b, d)
		}
	}
	for d, dialect := range wire.Dialects {
		add(wiretest.Request(dialect, "a\nb", "é🙂"), d)
	}
}

// checkParse: arbitrary bytes never panic; on valid input every span decodes
// to the reported value, and replacing every result value keeps the body
// valid JSON with the same results, and keeps the provider's pairing rules
// whenever the input kept them.
func checkParse(t *testing.T, d wire.Dialect, body []byte) {
	c, err := wire.Parse(d, body)
	if err != nil {
		return
	}
	var edits []wire.Edit
	for _, r := range c.Results {
		for _, tb := range r.Texts {
			lit := gjson.ParseBytes(body[tb.Span.Start:tb.Span.End])
			if lit.Type != gjson.String || lit.String() != tb.Text() {
				t.Fatalf("span %v of %s is %q, want %q", tb.Span, tb.Path, body[tb.Span.Start:tb.Span.End], tb.Text())
			}
			edits = append(edits, wire.SetString(tb.Span, "r"))
		}
		for _, j := range r.JSON {
			if string(body[j.Span.Start:j.Span.End]) != j.Raw {
				t.Fatalf("JSON span %v of %s is wrong", j.Span, j.Path)
			}
			edits = append(edits, wire.Edit{Span: j.Span, Raw: `{"output":"r"}`})
		}
	}
	out, err := wire.Apply(body, edits)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	c2, err := wire.Parse(d, out)
	if err != nil {
		t.Fatalf("reparse: %v", err)
	}
	if len(c2.Results) != len(c.Results) || len(c2.Calls) != len(c.Calls) {
		t.Fatalf("results %d→%d, calls %d→%d", len(c.Results), len(c2.Results), len(c.Calls), len(c2.Calls))
	}
	for i := range c.Results {
		a, b := c.Results[i], c2.Results[i]
		// Gemini infers IsError from keys inside the response object, which
		// a JSON rewrite may change; elsewhere the flag is its own field.
		errFlagKept := a.IsError == b.IsError || len(a.JSON) > 0
		if a.CallID != b.CallID || a.ToolName != b.ToolName || !errFlagKept || len(a.Texts) != len(b.Texts) || len(a.JSON) != len(b.JSON) {
			t.Fatalf("result %d changed identity", i)
		}
	}
	if wiretest.CheckPairing(d, body) == nil {
		if err := wiretest.CheckPairing(d, out); err != nil {
			t.Fatalf("rewrite broke pairing: %v", err)
		}
	}
}
