// Package pipeline runs request filters over a parsed conversation. A filter
// sees the tool-exchange model and returns edits; the pipeline applies them
// in one splice and re-parses only when another filter follows.
package pipeline

import (
	"errors"
	"fmt"
	"slices"

	"github.com/toolproc/toolproc/filters/wire"
)

// Filter is one request rewrite step. It must be pure: same conversation,
// same edits (provider prompt caches depend on it).
type Filter interface {
	Name() string
	Rewrite(c *wire.Conversation) ([]wire.Edit, []Change)
}

// Change records what a filter did to one tool result.
type Change struct {
	Filter      string
	Ordinal     int
	CallID      string
	ToolName    string
	IsError     bool
	BytesBefore int
	BytesAfter  int
	LinesBefore int
	LinesAfter  int
	Detail      string // short, content-free description for logs
	// Irrecoverable: content was removed and no original was kept to
	// read it back (the text says so in-band).
	Irrecoverable bool
}

// Report summarises one run.
type Report struct {
	Dialect  wire.Dialect
	Model    string // the model the request names, "" when none
	Results  int    // tool results found
	Changes  []Change
	BytesIn  int
	BytesOut int
}

// Changed reports whether the body was rewritten.
func (r Report) Changed() bool { return len(r.Changes) > 0 }

// ErrInternal wraps a panic inside a filter. The caller passes the original
// body through; it must never reach the provider half-rewritten.
var ErrInternal = errors.New("internal filter error")

// Pipeline is an ordered list of filters. The zero value passes bodies
// through untouched.
type Pipeline struct {
	filters []Filter
}

// New returns a pipeline running filters in the given order.
func New(filters ...Filter) *Pipeline {
	return &Pipeline{filters: filters}
}

// Filters returns the filter names in run order.
func (p *Pipeline) Filters() []string {
	names := make([]string, len(p.filters))
	for i, f := range p.filters {
		names[i] = f.Name()
	}
	return names
}

// Run rewrites body. On any error it returns the original body unchanged
// together with the error, so callers can always forward what they got.
func (p *Pipeline) Run(d wire.Dialect, body []byte) ([]byte, Report, error) {
	return p.RunEndpoint(wire.Endpoint{Dialect: d}, body)
}

// RunEndpoint is Run with what the request path says (model, streaming).
func (p *Pipeline) RunEndpoint(ep wire.Endpoint, body []byte) (out []byte, rep Report, err error) {
	rep = Report{Dialect: ep.Dialect, BytesIn: len(body), BytesOut: len(body)}
	conv, err := wire.ParseEndpoint(ep, body)
	if err != nil {
		return body, rep, err
	}
	return p.RunConversation(conv)
}

// RunConversation runs the filters over a conversation already parsed from
// its body (conv.Body), which it must not have changed since. The body is
// parsed once: each filter's edits are folded into the conversation (a
// result's new text is what the next filter reads), and all of them are
// spliced into one new body at the end. Only when a filter's edit overlaps
// an earlier one without replacing it exactly (flattening whole messages
// after their results were edited) is the body spliced and parsed again
// before the next filter.
func (p *Pipeline) RunConversation(conv *wire.Conversation) (out []byte, rep Report, err error) {
	out, rep, _, err = p.RunConversationThen(conv, nil)
	return out, rep, err
}

// RunConversationThen is RunConversation with a last step: when every
// edit was folded into conv (the body was never spliced and parsed again
// meanwhile), last is called with the report so far and its edits of
// conv.Body, which must not overlap the filters', are spliced with theirs
// in the one copy; ran says whether it was called. The caller adds the
// expand_context tool this way: a second splice, after a walk of the new
// body's top level to find its tools list, was a tenth of a request whose
// results were all seen before (issue 23).
func (p *Pipeline) RunConversationThen(conv *wire.Conversation, last func(Report) []wire.Edit) (out []byte, rep Report, ran bool, err error) {
	body := conv.Body
	rep = Report{Dialect: conv.Dialect, BytesIn: len(body), BytesOut: len(body), Results: len(conv.Results), Model: conv.Model}
	defer func() {
		if v := recover(); v != nil {
			out, rep.Changes, rep.BytesOut, ran = body, nil, len(body), false
			err = fmt.Errorf("%w: %v", ErrInternal, v)
		}
	}()
	ep := wire.Endpoint{Dialect: conv.Dialect, Model: conv.Model, Stream: conv.Stream}
	base := body // what pending's spans point into
	pending := newPendingEdits()
	for i, f := range p.filters {
		edits, changes := f.Rewrite(conv)
		if len(edits) == 0 {
			continue
		}
		rep.Changes = append(rep.Changes, changes...)
		folded, held := pending.fold(conv, edits)
		if held {
			continue
		}
		// Edits the model cannot hold (whole messages rewritten): splice
		// what we have, and parse the result for the filters after this
		// one.
		all := pending.list()
		if !folded {
			all = append(all, edits...)
		}
		next, err := wire.Apply(base, all)
		if err != nil {
			rep.Changes = nil
			return body, rep, false, fmt.Errorf("%s: %w", f.Name(), err)
		}
		base, pending = next, newPendingEdits()
		if i < len(p.filters)-1 {
			if conv, err = wire.ParseEndpoint(ep, base); err != nil {
				rep.Changes = nil
				return body, rep, false, fmt.Errorf("%s: reparse: %w", f.Name(), err)
			}
		}
	}
	edits := pending.list()
	if last != nil && len(base) > 0 && len(base) == len(body) && &base[0] == &body[0] {
		edits, ran = append(edits, last(rep)...), true
	}
	out, err = wire.Apply(base, edits)
	if err != nil && ran {
		// The last step's edits are the caller's: they never cost the
		// filters' own.
		ran = false
		out, err = wire.Apply(base, pending.list())
	}
	if err != nil {
		rep.Changes = nil
		return body, rep, false, err
	}
	rep.BytesOut = len(out)
	return out, rep, ran, nil
}

// pendingEdits are the edits of the filters run so far, not yet spliced,
// by where they start.
type pendingEdits struct {
	byStart map[int]wire.Edit
}

func newPendingEdits() *pendingEdits { return &pendingEdits{byStart: map[int]wire.Edit{}} }

// fold adds a filter's edits and updates the conversation so the next
// filter reads the new values: a result's text or JSON block takes the
// edit's value, and an edit of exactly the span an earlier edit replaced
// supersedes it. folded is false, and nothing changed, when an edit
// overlaps a pending one any other way. held is false when an edit was
// folded but the model cannot show it to the next filter: it replaced
// something other than a result's block or one string value (flattened
// messages).
func (p *pendingEdits) fold(conv *wire.Conversation, edits []wire.Edit) (folded, held bool) {
	if len(p.byStart) > 0 {
		starts := make([]int, 0, len(p.byStart))
		for s := range p.byStart {
			starts = append(starts, s)
		}
		slices.Sort(starts)
		for _, e := range edits {
			k, _ := slices.BinarySearch(starts, e.Span.End)
			// Any pending edit starting before e ends, and ending after e
			// starts, overlaps it; only the identical span may.
			for j := k - 1; j >= 0; j-- {
				old := p.byStart[starts[j]]
				if old.Span.End <= e.Span.Start {
					break
				}
				if old.Span != e.Span {
					return false, false
				}
			}
		}
	}
	seen := make(map[int]bool, len(edits))
	for _, e := range edits {
		if seen[e.Span.Start] {
			return false, false // two edits of one start: let Apply refuse them
		}
		seen[e.Span.Start] = true
	}
	blocks := conv.BlocksByStart()
	held = true
	for _, e := range edits {
		p.byStart[e.Span.Start] = e
		inside := conv.InsideBlock(e.Span)
		if at, ok := blocks[e.Span.Start]; ok && !inside {
			conv.Absorb(at, e)
		} else if !e.HasText || inside {
			held = false
		}
	}
	return true, held
}

// list returns the pending edits.
func (p *pendingEdits) list() []wire.Edit {
	out := make([]wire.Edit, 0, len(p.byStart))
	for _, e := range p.byStart {
		out = append(out, e)
	}
	return out
}
