package history

import (
	"bytes"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// compactionStarts maps the index of every Anthropic assistant message
// holding a compaction block to the body offset where its last compaction
// block starts. With server-side compaction the Messages API drops every
// content block before a compaction block from the prompt
// (docs.anthropic.com, context management: compaction), so what the
// provider reads, and what the tiers must size, begins there. Other
// dialects have no such block (a Responses compaction item replaces the
// items it summarised in the client's own input), so the map is nil.
func compactionStarts(c *wire.Conversation) map[int]int {
	if c.Dialect != wire.Anthropic || !bytes.Contains(c.Body, []byte(`"compaction"`)) {
		return nil
	}
	var at map[int]int
	for m, msg := range c.Msgs {
		if !msg.Assistant || msg.Span.End > len(c.Body) || msg.Span.Start < 0 || msg.Span.Start >= msg.Span.End {
			continue
		}
		raw := c.Body[msg.Span.Start:msg.Span.End]
		if !bytes.Contains(raw, []byte(`"compaction"`)) {
			continue
		}
		gjson.GetBytes(raw, "content").ForEach(func(_, block gjson.Result) bool {
			if block.Get("type").String() == "compaction" {
				if at == nil {
					at = map[int]int{}
				}
				at[m] = msg.Span.Start + block.Index
			}
			return true
		})
	}
	return at
}
