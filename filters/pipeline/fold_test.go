package pipeline_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// halve keeps the first half of every text longer than 40 bytes, as a
// compressor would shorten it.
type halve struct{}

func (halve) Name() string { return "halve" }
func (halve) Rewrite(c *wire.Conversation) ([]wire.Edit, []pipeline.Change) {
	var edits []wire.Edit
	var changes []pipeline.Change
	for i := range c.Results {
		r := &c.Results[i]
		for k := range r.Texts {
			t := r.Texts[k].Text()
			if len(t) <= 40 {
				continue
			}
			n := len(t) / 2
			for n > 0 && !utf8.RuneStart(t[n]) {
				n--
			}
			edits = append(edits, wire.SetString(r.Texts[k].Span, t[:n]))
			changes = append(changes, pipeline.Change{Filter: "halve", Ordinal: r.Ordinal})
		}
	}
	return edits, changes
}

// innerOutput shortens the "output" member inside JSON results (Gemini's
// functionResponse.response), an edit inside a block rather than of it.
type innerOutput struct{}

func (innerOutput) Name() string { return "inner" }
func (innerOutput) Rewrite(c *wire.Conversation) ([]wire.Edit, []pipeline.Change) {
	var edits []wire.Edit
	for i := range c.Results {
		for _, j := range c.Results[i].JSON {
			v := gjson.Get(j.Raw, "output")
			if v.Type != gjson.String || len(v.Str) < 20 || v.Index <= 0 {
				continue
			}
			at := wire.Span{Start: j.Span.Start + v.Index, End: j.Span.Start + v.Index + len(v.Raw)}
			edits = append(edits, wire.SetString(at, "short"))
		}
	}
	return edits, nil
}

// sequential is the pipeline as it was before edits were folded: splice
// and parse again after every filter. The folded run must give the same
// bytes.
func sequential(ep wire.Endpoint, body []byte, filters ...pipeline.Filter) ([]byte, error) {
	out := body
	for _, f := range filters {
		c, err := wire.ParseEndpoint(ep, out)
		if err != nil {
			return body, err
		}
		edits, _ := f.Rewrite(c)
		if out, err = wire.Apply(out, edits); err != nil {
			return body, err
		}
	}
	return out, nil
}

// FuzzFoldedEqualsSequential: folding each filter's edits into the parsed
// conversation and splicing once gives exactly what splicing and parsing
// after every filter gives, for every dialect and every order of filters
// that shorten texts, edit inside JSON results and clamp.
func FuzzFoldedEqualsSequential(f *testing.F) {
	long := strings.Repeat("héllo wörld line of output\n", 40)
	for k, d := range wire.Dialects {
		f.Add(wiretest.Request(d, long, "short", long+long), uint8(k), uint8(0))
		f.Add(wiretest.Request(d, long), uint8(k), uint8(5))
	}
	lim := clamp.Limits{MaxBytes: 600, MaxLines: 8}
	orders := [][]pipeline.Filter{
		{halve{}, clamp.NewFilter(lim)},
		{innerOutput{}, clamp.NewFilter(lim)},
		{clamp.NewFilter(lim), halve{}},
		{halve{}, halve{}, clamp.NewFilter(lim)},
		{innerOutput{}, halve{}, clamp.NewFilter(lim)},
		{halve{}, innerOutput{}, clamp.NewFilter(lim), halve{}},
	}
	f.Fuzz(func(t *testing.T, body []byte, dk, order uint8) {
		d := wire.Dialects[int(dk)%len(wire.Dialects)]
		filters := orders[int(order)%len(orders)]
		ep := wire.Endpoint{Dialect: d}
		want, werr := sequential(ep, body, filters...)
		got, _, gerr := pipeline.New(filters...).RunEndpoint(ep, body)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("errors differ: sequential %v, folded %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("folded run differs from the sequential one:\nfolded     %q\nsequential %q", got, want)
		}
	})
}
