package wiretest

import (
	"slices"

	"github.com/toolproc/toolproc/filters/wire"
)

// ValueSpans returns the byte ranges of every tool result value (text and
// JSON blocks) of a conversation, in body order.
func ValueSpans(c *wire.Conversation) []wire.Span {
	var s []wire.Span
	for _, r := range c.Results {
		for _, tb := range r.Texts {
			s = append(s, tb.Span)
		}
		for _, j := range r.JSON {
			s = append(s, j.Span)
		}
	}
	slices.SortFunc(s, func(a, b wire.Span) int { return a.Start - b.Start })
	return s
}

// Outside returns the pieces of body between the spans. Two bodies whose
// pieces are equal differ only inside tool result values: the property
// every rewrite must keep.
func Outside(body []byte, spans []wire.Span) [][]byte {
	var out [][]byte
	prev := 0
	for _, s := range spans {
		out = append(out, body[prev:s.Start])
		prev = s.End
	}
	return append(out, body[prev:])
}
