// Package pipeline runs request filters over a parsed conversation. A filter
// sees the tool-exchange model and returns edits; the pipeline applies them
// in one splice and re-parses only when another filter follows.
package pipeline

import (
	"errors"
	"fmt"

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
	d := ep.Dialect
	rep = Report{Dialect: d, BytesIn: len(body), BytesOut: len(body)}
	defer func() {
		if v := recover(); v != nil {
			out, rep.Changes, rep.BytesOut = body, nil, len(body)
			err = fmt.Errorf("%w: %v", ErrInternal, v)
		}
	}()
	conv, err := wire.ParseEndpoint(ep, body)
	if err != nil {
		return body, rep, err
	}
	rep.Results = len(conv.Results)
	rep.Model = conv.Model
	out = body
	for i, f := range p.filters {
		edits, changes := f.Rewrite(conv)
		if len(edits) == 0 {
			continue
		}
		next, err := wire.Apply(out, edits)
		if err != nil {
			rep.Changes = nil
			return body, rep, fmt.Errorf("%s: %w", f.Name(), err)
		}
		out = next
		rep.Changes = append(rep.Changes, changes...)
		if i < len(p.filters)-1 {
			if conv, err = wire.ParseEndpoint(ep, out); err != nil {
				rep.Changes = nil
				return body, rep, fmt.Errorf("%s: reparse: %w", f.Name(), err)
			}
		}
	}
	rep.BytesOut = len(out)
	return out, rep, nil
}
