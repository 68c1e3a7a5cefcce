package clamp

import (
	"fmt"

	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
)

// Filter is the pipeline step that clamps every tool result, error results
// included (seed 001: tool errors obey the same limits).
type Filter struct {
	lim Limits
	// readKeep, when set, replaces lim.Keep for the results isRead says
	// came from reading a file: the end of a source file (its last
	// definitions, the line an agent asked about) matters as much as the
	// start, so a read is better cut in the middle than after the head.
	readKeep Keep
	isRead   func(toolName, args string) bool
	// cut, when set, cuts a result of one text block that the clamp must
	// cut and that is not a file read by what it reports, not by
	// position: a 200 KB pytest log reaches the model as its failures and
	// summary, not as its first passing tests (issue 23).
	cut Cutter
	// memo, when set, remembers each result's clamp by its bytes.
	memo *Memo
}

// minJSONBytes is the least a JSON block is given once text blocks used the
// budget: enough for its structure and a note.
const minJSONBytes = 1024

// NewFilter returns a clamp step with the given limits.
func NewFilter(lim Limits) *Filter { return &Filter{lim: lim} }

// WithReadKeep makes file reads (as isRead tells them by tool name and
// arguments) keep readKeep instead of the limits' Keep. An empty readKeep
// or a nil isRead leaves every result to the limits.
func (f *Filter) WithReadKeep(readKeep Keep, isRead func(toolName, args string) bool) *Filter {
	f.readKeep, f.isRead = readKeep, isRead
	return f
}

// WithCutter makes the clamp cut classifiable results with cut (see
// Cutter); nil leaves every result to the limits' Keep.
func (f *Filter) WithCutter(cut Cutter) *Filter {
	f.cut = cut
	return f
}

// WithMemo makes the clamp remember what it did to each result (see Memo);
// m must serve this configuration only.
func (f *Filter) WithMemo(m *Memo) *Filter {
	f.memo = m
	return f
}

// structural cuts r with the filter's Cutter when it is one text block
// over the limits and not a file read (reads keep readKeep: an edit quotes
// what the read showed). ok is false when it does not apply.
func (f *Filter) structural(r *wire.ToolResult, lim Limits, read bool) ([]wire.Edit, Report, bool) {
	if f.cut == nil || len(r.Texts) != 1 || len(r.JSON) != 0 || read {
		return nil, Report{}, false
	}
	text := r.Texts[0].Text()
	out, ok := StructuralText(text, r.ToolName, r.Args, lim, f.cut)
	if !ok {
		return nil, Report{}, false
	}
	rep := Report{Changed: true, BytesBefore: len(text), BytesAfter: len(out), LinesBefore: CountLines(text), LinesAfter: CountLines(out)}
	return []wire.Edit{wire.SetString(r.Texts[0].Span, out)}, rep, true
}

// limitsFor returns the limits one result is clamped under, and whether
// it is a file read.
func (f *Filter) limitsFor(r *wire.ToolResult) (Limits, bool) {
	lim := f.lim
	read := f.isRead != nil && f.isRead(r.ToolName, r.Args)
	if f.readKeep != "" && read {
		lim.Keep = f.readKeep
	}
	return lim, read
}

// clampOne clamps r: structurally when the Cutter applies, else by lim's
// Keep. keep names what was kept.
func (f *Filter) clampOne(r *wire.ToolResult, lim Limits, read bool) (e []wire.Edit, rep Report, keep string) {
	keep = string(lim.Keep)
	if keep == "" {
		keep = string(KeepHead)
	}
	e, rep, ok := f.structural(r, lim, read)
	if ok {
		return e, rep, "structural"
	}
	e, rep = Result(r, lim)
	return e, rep, keep
}

// Name implements pipeline.Filter.
func (f *Filter) Name() string { return "clamp" }

// Rewrite implements pipeline.Filter. Only values change: a string content
// stays a string, a block array keeps its length and its non-text blocks, a
// JSON value stays valid JSON of the same kind, and ids, names, status and
// cache_control are never touched.
func (f *Filter) Rewrite(c *wire.Conversation) ([]wire.Edit, []pipeline.Change) {
	var edits []wire.Edit
	var changes []pipeline.Change
	for i := range c.Results {
		r := &c.Results[i]
		if len(r.Texts) == 0 && len(r.JSON) == 0 || len(r.JSON) == 0 && surelyUnder(r.Texts, f.lim) {
			continue
		}
		lim, read := f.limitsFor(r)
		var (
			e    []wire.Edit
			rep  Report
			keep string
		)
		if f.memo == nil {
			e, rep, keep = f.clampOne(r, lim, read)
		} else {
			k := f.memo.key(r, lim, read, f.cut != nil)
			if c, ok := f.memo.m.Lookup(k); ok {
				e, rep, keep = c.editsFor(r), c.rep, c.keep
			} else {
				e, rep, keep = f.clampOne(r, lim, read)
				if c, ok := remember(r, e, rep, keep); ok {
					f.memo.m.Add(k, c)
				}
			}
		}
		edits = append(edits, e...)
		if !rep.Changed {
			continue
		}
		changes = append(changes, pipeline.Change{
			Filter:      f.Name(),
			Ordinal:     r.Ordinal,
			CallID:      r.CallID,
			ToolName:    r.ToolName,
			IsError:     r.IsError,
			BytesBefore: rep.BytesBefore,
			BytesAfter:  rep.BytesAfter,
			LinesBefore: rep.LinesBefore,
			LinesAfter:  rep.LinesAfter,
			Detail:      fmt.Sprintf("keep=%s blocks_replaced=%d", keep, rep.BlocksReplaced),
		})
	}
	return edits, changes
}

// Result clamps the text and JSON blocks of one tool result under lim and
// returns the edits and what changed. Text blocks share one budget; JSON
// blocks share what the text blocks left of it, never less than 1 KiB each
// (enough for their structure and a note). The overflow rungs use it with a
// per-result budget.
func Result(r *wire.ToolResult, lim Limits) ([]wire.Edit, Report) {
	if len(r.JSON) == 0 && surelyUnder(r.Texts, lim) {
		return nil, Report{} // nothing reads the sizes of an unchanged result
	}
	var edits []wire.Edit
	texts := make([]string, len(r.Texts))
	for k := range r.Texts {
		texts[k] = r.Texts[k].Text()
	}
	out, rep := Apply(texts, lim)
	for k := range out {
		if out[k] != texts[k] {
			edits = append(edits, wire.SetString(r.Texts[k].Span, out[k]))
		}
	}
	used := rep.BytesAfter
	for _, j := range r.JSON {
		jl := lim
		if jl.MaxBytes > 0 {
			jl.MaxBytes = max(jl.MaxBytes-used, minJSONBytes)
		}
		v, jr := JSON(j.Raw, jl)
		used += len(v)
		rep.BytesBefore += jr.BytesBefore
		rep.BytesAfter += jr.BytesAfter
		rep.LinesBefore = max(rep.LinesBefore, jr.LinesBefore)
		rep.LinesAfter = max(rep.LinesAfter, jr.LinesAfter)
		if jr.Changed {
			rep.Changed = true
			edits = append(edits, wire.Edit{Span: j.Span, Raw: v})
		}
	}
	return edits, rep
}

// surelyUnder reports, without decoding the texts, that they fit lim: their
// size bounds (wire.TextBlock.MaxLen, MaxLines) already do. Most results
// of most requests are small, and a request whose results all are is
// scanned, never decoded or copied (issue 14).
func surelyUnder(texts []wire.TextBlock, lim Limits) bool {
	bytes, lines := 0, 0
	for k := range texts {
		bytes += texts[k].MaxLen()
		lines += texts[k].MaxLines()
	}
	return bytes <= axis(lim.MaxBytes) && lines <= axis(lim.MaxLines)
}
