package wire

import (
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// NoteEmptyAnswer puts note in an answer that says nothing: an OpenAI Chat
// message with no content and no tool call, an Anthropic message with no
// content block. That is what an answer whose only act was an
// expand_context call becomes once the call is stripped; a client must
// never get an empty success without a word (review finding 3). Other
// answers, and other dialects, come back unchanged.
func NoteEmptyAnswer(d Dialect, answer []byte, note string) ([]byte, bool) {
	if !jsonsafe.Valid(answer) {
		return answer, false
	}
	switch d {
	case OpenAIChat:
		msg := gjson.GetBytes(answer, "choices.0.message")
		if !msg.IsObject() || msg.Get("content").String() != "" || len(msg.Get("tool_calls").Array()) > 0 || msg.Get("function_call").Exists() {
			return answer, false
		}
		out, err := sjson.SetBytes(answer, "choices.0.message.content", note)
		return out, err == nil && jsonsafe.Valid(out)
	case Anthropic:
		content := gjson.GetBytes(answer, "content")
		if !content.IsArray() || len(content.Array()) > 0 {
			return answer, false
		}
		out, err := sjson.SetRawBytes(answer, "content", []byte(`[{"type":"text","text":`+string(QuoteString(note))+`}]`))
		return out, err == nil && jsonsafe.Valid(out)
	}
	return answer, false
}
