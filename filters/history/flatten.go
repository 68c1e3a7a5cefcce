package history

import (
	"bytes"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// flattenOld renders the old part of the conversation (the messages before
// cutMsg) as text: every message there holding tool calls or results is
// replaced by wire.Flatten's rendering, with the summaries' edits inside it
// folded in first. Only the old part changes, and it changes only when the
// cut moves, so the flattened prefix is as stable for the provider's cache
// as the summaries are.
//
// A call and its results are flattened together or not at all: a message
// is flattened only if every message linked to it through a call id lies
// before the cut (an orphan result would be rejected). It returns the
// edits to apply and how many messages it flattened; on any failure the
// summaries' edits come back unchanged.
func flattenOld(c *wire.Conversation, cutMsg int, edits []wire.Edit) ([]wire.Edit, int) {
	if cutMsg <= 0 || len(c.Body) == 0 || cutMsg > len(c.Msgs) {
		return edits, 0
	}
	ok := flattenable(c, cutMsg)
	runs := runsOf(c, cutMsg, ok)
	if len(runs) == 0 {
		return edits, 0
	}
	names := make(map[string]string, len(c.Calls))
	for _, call := range c.Calls {
		names[call.ID] = call.Name
	}
	lookup := func(id string) string { return names[id] }

	sorted := slices.Clone(edits)
	slices.SortFunc(sorted, func(a, b wire.Edit) int { return a.Span.Start - b.Span.Start })
	var out []wire.Edit
	next, flattened := 0, 0 // next: first sorted edit not yet placed
	for _, run := range runs {
		start, end := c.Msgs[run[0]].Span.Start, c.Msgs[run[len(run)-1]].Span.End
		for next < len(sorted) && sorted[next].Span.Start < start {
			if sorted[next].Span.End > start {
				return edits, 0 // an edit across a message boundary: never expected
			}
			out = append(out, sorted[next])
			next++
		}
		raws := make([][]byte, 0, len(run))
		for _, m := range run {
			sp := c.Msgs[m].Span
			var inner []wire.Edit
			for next < len(sorted) && sorted[next].Span.End <= sp.End && sorted[next].Span.Start >= sp.Start {
				e := sorted[next]
				inner = append(inner, wire.Edit{Span: wire.Span{Start: e.Span.Start - sp.Start, End: e.Span.End - sp.Start}, Raw: e.Raw})
				next++
			}
			if next < len(sorted) && sorted[next].Span.Start < sp.End {
				return edits, 0
			}
			raw, err := wire.Apply(c.Body[sp.Start:sp.End], inner)
			if err != nil {
				return edits, 0
			}
			raws = append(raws, raw)
		}
		flat, err := wire.Flatten(c.Dialect, raws, lookup)
		if err != nil {
			return edits, 0
		}
		out = append(out, wire.Edit{Span: wire.Span{Start: start, End: end}, Raw: string(bytes.Join(flat, []byte(",")))})
		flattened += len(run)
	}
	out = append(out, sorted[next:]...)
	return out, flattened
}

// FlattenBody renders every tool exchange of a request body as text, as
// Options.Flatten "all" does: for requests toolproc builds itself (an
// expand_context continuation) to a gateway that rejects structured tool
// history. Exchanges already flattened are text and stay as they are.
func FlattenBody(d wire.Dialect, body []byte) ([]byte, error) {
	c, err := wire.Parse(d, body)
	if err != nil {
		return nil, err
	}
	edits, _ := flattenOld(c, len(c.Msgs), nil)
	return wire.Apply(body, edits)
}

// flattenable marks the messages before cutMsg that may be flattened: those
// linked through call ids (a call message and the messages of its results,
// transitively) only to messages before the cut.
func flattenable(c *wire.Conversation, cutMsg int) []bool {
	parent := make([]int, len(c.Msgs))
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, r := range c.Results {
		if r.CallMessage >= 0 && r.CallMessage < len(c.Msgs) && r.Message < len(c.Msgs) {
			a, b := find(r.Message), find(r.CallMessage)
			if a != b {
				parent[a] = b
			}
		}
	}
	latest := make([]int, len(c.Msgs)) // per component root: its latest message
	for i := range c.Msgs {
		root := find(i)
		latest[root] = max(latest[root], i)
	}
	ok := make([]bool, cutMsg)
	for i := range ok {
		ok[i] = latest[find(i)] < cutMsg
	}
	return ok
}

// runsOf lists the runs of messages to flatten, in order. In OpenAI Chat
// and Responses every call and result is its own message, so consecutive
// ones form one run (they merge into one assistant and one user message),
// with the Responses reasoning items among them; elsewhere calls and
// results are blocks and each message is its own run.
func runsOf(c *wire.Conversation, cutMsg int, ok []bool) [][]int {
	structured := make([]bool, cutMsg)
	for _, call := range c.Calls {
		if call.Message < cutMsg {
			structured[call.Message] = ok[call.Message]
		}
	}
	for _, r := range c.Results {
		if r.Message < cutMsg {
			structured[r.Message] = ok[r.Message]
		}
	}
	merge := c.Dialect == wire.OpenAIChat || c.Dialect == wire.OpenAIResponses
	var runs [][]int
	var cur []int
	has := false
	end := func() {
		// Reasoning items after a run's last call or result belong to
		// what follows (perhaps a recent call): they stay.
		for len(cur) > 0 && !structured[cur[len(cur)-1]] {
			cur = cur[:len(cur)-1]
		}
		if has {
			runs = append(runs, cur)
		}
		cur, has = nil, false
	}
	for m := 0; m < cutMsg; m++ {
		switch {
		case structured[m] && !merge:
			runs = append(runs, []int{m})
		case structured[m]:
			cur = append(cur, m)
			has = true
		case merge && c.Dialect == wire.OpenAIResponses && isReasoning(c, m):
			cur = append(cur, m)
		default:
			end()
		}
	}
	end()
	return runs
}

func isReasoning(c *wire.Conversation, m int) bool {
	sp := c.Msgs[m].Span
	return c.Msgs[m].Assistant && gjson.GetBytes(c.Body[sp.Start:sp.End], "type").Str == "reasoning"
}
