package history

import (
	"hash/maphash"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/memo"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
)

// The middle tier sits between whole and one line: when the results the
// tiers keep whole are themselves too large for the request to get back
// under its target, the older of them are compressed by the structural
// engine at Options.MiddleRatio (error lines, failing tests and run
// summaries verbatim, omissions marked in-band), with a reference to the
// original where the request can keep one. They are compressed in the same
// step, all at once, so the next turns share the step's prefix instead of
// each turn shortening one more result.

// DefaultMiddleRatio is Options.MiddleRatio's default.
const DefaultMiddleRatio = 4

// middleMinBytes: texts below it stay whole in the middle tier; a
// reference and a marker would eat what compressing them saves.
const middleMinBytes = 2048

// middleCache remembers compressed texts by (ratio, tool, arguments, text):
// once a result is in the middle tier every later request of the
// conversation compresses it again. Two generations of 16 MiB.
var middleCache = memo.New(16<<20, func(s string) int { return len(s) + 64 })

// middleBody is text compressed at ratio, or "" when the engine could not
// make it smaller.
func middleBody(text string, ratio float64, hint compress.Hint) string {
	if len(text) < middleMinBytes {
		return ""
	}
	k := middleCache.KeyWith(func(h *maphash.Hash) {
		_, _ = h.WriteString(strconv.FormatFloat(ratio, 'g', -1, 64))
		_ = h.WriteByte(0)
		_, _ = h.WriteString(hint.ToolName)
		_ = h.WriteByte(0)
		_, _ = h.WriteString(hint.Args)
		_ = h.WriteByte(0)
	}, text)
	return middleCache.Get(k, func() string {
		out, rep := compress.Structural(compress.StructuralOptions{TargetRatio: ratio}).Compress(text, hint)
		if !rep.Changed || len(out) >= len(text) {
			return ""
		}
		return out
	})
}

// middleGroup builds the middle-tier rewrite of one group's results and
// records in the group what it saves.
func (f *Filter) middleGroup(c *wire.Conversation, g *group) []rewrite {
	var out []rewrite
	g.midSaved = 0
	for i := g.first; i <= g.last; i++ {
		r := &c.Results[i]
		hint := compress.Hint{ToolName: r.ToolName, Args: r.Args}
		var rw rewrite
		before, after, linesBefore, linesAfter := 0, 0, 0, 0
		one := func(at wire.Span, text string) {
			body := middleBody(text, f.opts.MiddleRatio, hint)
			if body == "" {
				return
			}
			id, _ := f.ref(text)
			s := NotKeptMarker + body
			if id != "" {
				s = shadow.Reference(id, len(text), f.opts.Tool) + body
			}
			e := wire.SetString(at, s)
			if len(e.Raw) >= at.End-at.Start {
				return
			}
			rw.edits = append(rw.edits, e)
			rw.kept = append(rw.kept, keptValue{id: id, value: text})
			before += len(text)
			after += len(s)
			linesBefore += clamp.CountLines(text)
			linesAfter += clamp.CountLines(s)
			rw.saved += at.End - at.Start - len(e.Raw)
		}
		for _, t := range r.Texts {
			one(t.Span, t.Text())
		}
		// JSON results (Gemini's functionResponse.response, Bedrock's json
		// block) stay objects of the same shape: their long top-level
		// strings are compressed in place, each with its own reference.
		for _, j := range r.JSON {
			v := gjson.Parse(j.Raw)
			if !v.IsObject() {
				continue
			}
			v.ForEach(func(_, m gjson.Result) bool {
				if m.Type == gjson.String && len(m.Raw) >= middleMinBytes && m.Index > 0 && m.Index+len(m.Raw) <= len(j.Raw) {
					one(wire.Span{Start: j.Span.Start + m.Index, End: j.Span.Start + m.Index + len(m.Raw)}, m.Str)
				}
				return true
			})
		}
		if len(rw.edits) == 0 {
			continue
		}
		rw.change = resultChange(r, before, after, linesBefore, linesAfter, "middle")
		g.midSaved += rw.saved
		out = append(out, rw)
	}
	return out
}
