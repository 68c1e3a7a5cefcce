package testenv

import (
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
)

// TextOnlyModel plays seed 002's upstream: an OpenAI Chat endpoint that
// reads and writes only text. A request carrying tools, tool_choice, tool
// calls, tool or system messages, or two messages of one role in a row,
// gets a 400. Otherwise it answers with <invoke> text: first one call of
// get_weather, then, once that result is in the conversation, two calls in
// one answer (get_weather and get_time), then, with every result read, a
// final_answer block quoting them.
type TextOnlyModel struct {
	// MaxBody, when set, refuses longer request bodies with the
	// provider's context-length error: a small window.
	MaxBody int
}

// textResult finds a rendered tool result: the comment line and the text
// under it, up to the next comment or the end.
var textResult = regexp.MustCompile(`<!-- result of tool call \S+ \(([^)]*)\): (\w+) -->\n([^<]*)`)

// Script returns the FakeUpstream script.
func (m TextOnlyModel) Script() func(RecordedRequest) *ScriptedResponse {
	return func(req RecordedRequest) *ScriptedResponse {
		anthropic := req.Path == "/v1/messages"
		if req.Path != "/v1/chat/completions" && !anthropic || !gjson.ValidBytes(req.Body) {
			return nil
		}
		body := gjson.ParseBytes(req.Body)
		if reason := textOnlyViolation(body, anthropic); reason != "" {
			return errorResponse(400, "invalid_request_error", "text-only upstream: "+reason)
		}
		if m.MaxBody > 0 && len(req.Body) > m.MaxBody {
			e := OpenAIContextLength
			if anthropic {
				e = AnthropicPromptTooLong
			}
			r := jsonResponse([]byte(e.Body))
			r.Status = e.Status
			return r
		}
		msgs := body.Get("messages").Array()
		first := messageText(msgs[0])
		if !strings.Contains(first, "=== Tools ===") || !strings.Contains(first, "Tool: get_weather") {
			return errorResponse(400, "invalid_request_error", "text-only upstream: no tool instructions in the first user message")
		}
		var results []string
		for _, m := range msgs {
			if m.Get("role").String() != "user" {
				continue
			}
			for _, r := range textResult.FindAllStringSubmatch(messageText(m), -1) {
				results = append(results, r[1]+"="+strings.TrimSpace(r[3]))
			}
		}
		var text string
		switch len(results) {
		case 0:
			text = "Let me look.\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>"
		case 1:
			text = "<invoke name=\"get_weather\">\n<parameter name=\"city\">Rome</parameter>\n</invoke>\n" +
				"<invoke name=\"get_time\">\n<parameter name=\"zone\">Europe/Rome</parameter>\n</invoke>"
		default:
			text = "<invoke name=\"final_answer\">\n<parameter name=\"answer\">Results: " + strings.Join(results, "; ") + "</parameter>\n</invoke>"
		}
		if anthropic {
			return anthropicTextAnswer(body.Get("stream").Bool(), text)
		}
		return textAnswer(body.Get("stream").Bool(), text)
	}
}

// messageText is the text of a message: a string content, or its text
// blocks joined.
func messageText(m gjson.Result) string {
	c := m.Get("content")
	if c.Type == gjson.String {
		return c.String()
	}
	var b strings.Builder
	c.ForEach(func(_, blk gjson.Result) bool {
		b.WriteString(blk.Get("text").String())
		b.WriteByte('\n')
		return true
	})
	return b.String()
}

// textOnlyViolation says what a text-only upstream refuses in a request.
func textOnlyViolation(body gjson.Result, anthropic bool) string {
	for _, k := range []string{"tools", "tool_choice", "functions", "function_call", "system"} {
		if body.Get(k).Exists() {
			return k + " sent"
		}
	}
	for _, m := range body.Get("messages").Array() {
		bad := ""
		if !m.Get("content").IsArray() {
			continue
		}
		m.Get("content").ForEach(func(_, blk gjson.Result) bool {
			if t := blk.Get("type").String(); t != "text" && t != "image" {
				bad = t + " block sent"
			}
			return bad == ""
		})
		if bad != "" {
			return bad
		}
	}
	prev := ""
	for _, m := range body.Get("messages").Array() {
		role := m.Get("role").String()
		switch {
		case role != "user" && role != "assistant":
			return "role " + role + " sent"
		case m.Get("tool_calls").Exists():
			return "tool_calls sent"
		case role == prev:
			return "two " + role + " messages in a row"
		}
		prev = role
	}
	if prev != "user" {
		return "the conversation does not end with the user"
	}
	return ""
}

// textAnswer is a plain-text answer, as JSON or as SSE with the text cut
// into small pieces (inside the <invoke> tags too).
func textAnswer(stream bool, text string) *ScriptedResponse {
	if !stream {
		return jsonResponse(mustJSON(map[string]any{
			"id": "chatcmpl-text", "object": "chat.completion", "created": 1700000000, "model": "text-only-1",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		}))
	}
	chunk := func(delta map[string]any, finish any) []byte {
		return []byte("data: " + string(mustJSON(map[string]any{
			"id": "chatcmpl-text", "object": "chat.completion.chunk", "created": 1700000000, "model": "text-only-1",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})) + "\n\n")
	}
	events := [][]byte{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	for i := 0; i < len(text); i += 7 {
		events = append(events, chunk(map[string]any{"content": text[i:min(i+7, len(text))]}, nil))
	}
	events = append(events, chunk(map[string]any{}, "stop"), []byte("data: [DONE]\n\n"))
	return sseResponse(events)
}

// anthropicTextAnswer is a plain-text Anthropic answer, as JSON or as SSE
// with the text in small pieces.
func anthropicTextAnswer(stream bool, text string) *ScriptedResponse {
	if !stream {
		return jsonResponse(mustJSON(map[string]any{
			"id": "msg_text", "type": "message", "role": "assistant", "model": "text-only-1",
			"content":     []any{map[string]any{"type": "text", "text": text}},
			"stop_reason": "end_turn", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
		}))
	}
	ev := func(name string, data map[string]any) []byte {
		return []byte("event: " + name + "\ndata: " + string(mustJSON(data)) + "\n\n")
	}
	events := [][]byte{
		ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_text", "type": "message",
			"role": "assistant", "model": "text-only-1", "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}}),
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}),
	}
	for i := 0; i < len(text); i += 7 {
		events = append(events, ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": text[i:min(i+7, len(text))]}}))
	}
	events = append(events,
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}),
		ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 5}}),
		ev("message_stop", map[string]any{"type": "message_stop"}))
	return sseResponse(events)
}

// TextOnlyEchoModel is a text-only upstream that quotes: once the
// conversation holds a rendered tool result, it answers with that result's
// text word for word ("The page says: …"), as a model summarising a fetched
// page might. Without a result it asks for one with a fetch call. It
// checks requests as TextOnlyModel does, tool instructions excepted.
type TextOnlyEchoModel struct{}

// Script returns the FakeUpstream script.
func (TextOnlyEchoModel) Script() func(RecordedRequest) *ScriptedResponse {
	return func(req RecordedRequest) *ScriptedResponse {
		anthropic := req.Path == "/v1/messages"
		if req.Path != "/v1/chat/completions" && !anthropic || !gjson.ValidBytes(req.Body) {
			return nil
		}
		body := gjson.ParseBytes(req.Body)
		if reason := textOnlyViolation(body, anthropic); reason != "" {
			return errorResponse(400, "invalid_request_error", "text-only upstream: "+reason)
		}
		text := "<invoke name=\"fetch\">\n<parameter name=\"url\">https://example.com/</parameter>\n</invoke>"
		for _, m := range body.Get("messages").Array() {
			t := messageText(m)
			if k := strings.Index(t, "<!-- result of tool call "); m.Get("role").String() == "user" && k >= 0 {
				_, result, _ := strings.Cut(t[k:], "-->\n")
				text = "The page says:\n" + strings.TrimSpace(result)
			}
		}
		if anthropic {
			return anthropicTextAnswer(body.Get("stream").Bool(), text)
		}
		return textAnswer(body.Get("stream").Bool(), text)
	}
}
