package pipeline_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

var defaultClamp = clamp.Limits{MaxBytes: clamp.DefaultMaxBytes, MaxLines: clamp.DefaultMaxLines, Keep: clamp.KeepHead}

// fixtures lists every captured request body with what must be found in it.
var fixtures = []struct {
	file    string
	path    string
	results int
	calls   int
}{
	{"openai-chat-tool-results.request.json", "/v1/chat/completions", 1, 1},
	{"openai-chat-tool-call-stream.request.json", "/v1/chat/completions", 0, 0},
	{"openai-responses-function-call-output.request.json", "/v1/responses", 1, 1},
	{"openai-responses-function-call.request.json", "/v1/responses", 0, 0},
	{"anthropic-tool-result.request.json", "/v1/messages", 1, 1},
	{"anthropic-tool-use.request.json", "/v1/messages", 0, 0},
	{"gemini-function-response.request.json", "/v1beta/models/gemini-2.5-pro:generateContent", 1, 1},
}

func TestFixturesCoverEveryFile(t *testing.T) {
	files, _ := filepath.Glob("../wire/testdata/*.request.json")
	for _, f := range files {
		if !slices.ContainsFunc(fixtures, func(x struct {
			file    string
			path    string
			results int
			calls   int
		}) bool {
			return x.file == filepath.Base(f)
		}) {
			t.Errorf("%s has no row in the golden table", f)
		}
	}
}

// spans returns the byte ranges of every tool result value in body.
func spans(t *testing.T, ep wire.Endpoint, body []byte) []wire.Span {
	t.Helper()
	c, err := wire.ParseEndpoint(ep, body)
	if err != nil {
		t.Fatal(err)
	}
	return wiretest.ValueSpans(c)
}

func TestFixturesGolden(t *testing.T) {
	p := pipeline.New(clamp.NewFilter(defaultClamp))
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("../wire/testdata", fx.file))
			if err != nil {
				t.Fatal(err)
			}
			ep := wire.Detect(fx.path, body)
			c, err := wire.ParseEndpoint(ep, body)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Results) != fx.results || len(c.Calls) != fx.calls {
				t.Fatalf("found %d results, %d calls; want %d, %d", len(c.Results), len(c.Calls), fx.results, fx.calls)
			}
			// Real payloads are small: they must pass byte-identical.
			out, rep, err := p.RunEndpoint(ep, body)
			if err != nil || rep.Changed() || !bytes.Equal(out, body) {
				t.Fatalf("small fixture changed (err %v)", err)
			}
			if fx.results == 0 {
				return
			}
			// Inflate every result to ~300 KB and check the clamp lands there only.
			big := wiretest.LongOutput(300_000)
			var edits []wire.Edit
			for _, r := range c.Results {
				for _, tb := range r.Texts {
					edits = append(edits, wire.SetString(tb.Span, big))
				}
				for _, j := range r.JSON {
					edits = append(edits, wire.Edit{Span: j.Span, Raw: `{"output":` + string(wire.QuoteString(big)) + `}`})
				}
			}
			inflated, err := wire.Apply(body, edits)
			if err != nil {
				t.Fatal(err)
			}
			pairedBefore := wiretest.CheckPairing(ep.Dialect, inflated)
			out, rep, err = p.RunEndpoint(ep, inflated)
			if err != nil || len(rep.Changes) != fx.results {
				t.Fatalf("changes = %d, err %v", len(rep.Changes), err)
			}
			if pairedBefore == nil {
				if err := wiretest.CheckPairing(ep.Dialect, out); err != nil {
					t.Fatalf("rewrite broke pairing: %v", err)
				}
			}
			if !slices.EqualFunc(wiretest.Outside(inflated, spans(t, ep, inflated)), wiretest.Outside(out, spans(t, ep, out)), bytes.Equal) {
				t.Fatal("bytes outside the tool result values changed")
			}
			assertWithinLimits(t, ep, out, defaultClamp)
		})
	}
}

// TestEveryDialectClamped: a 300 KB result in each dialect's request shape
// comes out within both limits, with the provider's pairing rules intact.
func TestEveryDialectClamped(t *testing.T) {
	p := pipeline.New(clamp.NewFilter(defaultClamp))
	for _, d := range wire.Dialects {
		t.Run(string(d), func(t *testing.T) {
			body := wiretest.Request(d, "small result", wiretest.LongOutput(300_000), "another")
			if err := wiretest.CheckPairing(d, body); err != nil {
				t.Fatalf("test request itself is invalid: %v", err)
			}
			ep := wire.Detect(wiretest.Path(d), body)
			out, rep, err := p.RunEndpoint(ep, body)
			if err != nil || len(rep.Changes) != 1 || rep.Results != 3 {
				t.Fatalf("results %d changes %d err %v", rep.Results, len(rep.Changes), err)
			}
			if err := wiretest.CheckPairing(d, out); err != nil {
				t.Fatal(err)
			}
			assertWithinLimits(t, ep, out, defaultClamp)
			if len(out) > 150_000 {
				t.Fatalf("body still %d bytes", len(out))
			}
		})
	}
}

func assertWithinLimits(t *testing.T, ep wire.Endpoint, body []byte, lim clamp.Limits) {
	t.Helper()
	c, err := wire.ParseEndpoint(ep, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Results {
		var texts []string
		total := 0
		for _, tb := range r.Texts {
			texts = append(texts, tb.Text())
			total += len(tb.Text())
			if !utf8.ValidString(tb.Text()) {
				t.Fatal("invalid UTF-8")
			}
		}
		if _, rr := clamp.Apply(texts, lim); rr.Changed {
			t.Fatalf("result %d text still over the limits", r.Ordinal)
		}
		for _, j := range r.JSON {
			total += len(j.Raw)
			if _, jr := clamp.JSON(j.Raw, lim); jr.Changed {
				t.Fatalf("result %d JSON still over the limits: %.200s", r.Ordinal, j.Raw)
			}
		}
		// JSON blocks get at least 1 KiB for their structure even when the
		// text blocks spent the budget (clamp.Filter).
		if total > lim.MaxBytes+1024*len(r.JSON) {
			t.Fatalf("result %d has %d bytes", r.Ordinal, total)
		}
	}
}
