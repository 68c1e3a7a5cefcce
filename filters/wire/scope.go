package wire

import (
	"github.com/tidwall/gjson"
)

// scopeDepth bounds how deep Scope looks for text inside one message or
// system prompt (content → parts → text is three levels in every dialect).
const scopeDepth = 6

// Scope is what identifies a conversation from its own content, for
// callers that send no credential: the system prompt and every message up
// to and including the first one in which the user speaks, reduced to
// their roles and texts. Only the texts count, so the markers a client
// moves from turn to turn (Anthropic's cache_control, ids, whitespace) do
// not change it: every request of one conversation has the same scope.
// It is nil when the conversation has no user message.
func (c *Conversation) Scope() []byte {
	first := -1
	for i, m := range c.Msgs {
		if m.Prompt {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	var out []byte
	if c.SystemPath != "" && !isMessagePath(c.SystemPath) {
		out = append(out, "system\x00"...)
		out = appendTexts(out, c.top()(c.SystemPath), 0)
	}
	for _, m := range c.Msgs[:first+1] {
		if m.Span.End > len(c.Body) || m.Span.Start < 0 || m.Span.Start > m.Span.End {
			return nil
		}
		out = append(out, m.Role...)
		out = append(out, 0)
		out = appendTexts(out, gjson.ParseBytes(c.Body[m.Span.Start:m.Span.End]), 0)
	}
	return out
}

// isMessagePath: OpenAI's system prompt is one of the messages, which the
// loop over messages already reads.
func isMessagePath(p string) bool {
	return len(p) > 9 && p[:9] == "messages." || len(p) > 6 && p[:6] == "input."
}

// appendTexts appends every string under the keys "text" and "content"
// of v (and v itself when it is a string), each followed by a 0 byte, in
// document order.
func appendTexts(out []byte, v gjson.Result, depth int) []byte {
	switch {
	case v.Type == gjson.String:
		out = append(out, v.Str...)
		return append(out, 0)
	case depth >= scopeDepth:
		return out
	case v.IsArray():
		for _, e := range v.Array() {
			out = appendTexts(out, e, depth+1)
		}
	case v.IsObject():
		v.ForEach(func(k, e gjson.Result) bool {
			switch k.Str {
			case "text", "content", "parts":
				out = appendTexts(out, e, depth+1)
			}
			return true
		})
	}
	return out
}
