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
type TextOnlyModel struct{}

// textResult finds a rendered tool result: the comment line and the text
// under it, up to the next comment or the end.
var textResult = regexp.MustCompile(`<!-- result of tool call \S+ \(([^)]*)\): (\w+) -->\n([^<]*)`)

// Script returns the FakeUpstream script.
func (TextOnlyModel) Script() func(RecordedRequest) *ScriptedResponse {
	return func(req RecordedRequest) *ScriptedResponse {
		if req.Path != "/v1/chat/completions" || !gjson.ValidBytes(req.Body) {
			return nil
		}
		body := gjson.ParseBytes(req.Body)
		if reason := textOnlyViolation(body); reason != "" {
			return errorResponse(400, "invalid_request_error", "text-only upstream: "+reason)
		}
		msgs := body.Get("messages").Array()
		first := msgs[0].Get("content").String()
		if !strings.Contains(first, "=== Tools ===") || !strings.Contains(first, "Tool: get_weather") {
			return errorResponse(400, "invalid_request_error", "text-only upstream: no tool instructions in the first user message")
		}
		var results []string
		for _, m := range msgs {
			if m.Get("role").String() != "user" {
				continue
			}
			for _, r := range textResult.FindAllStringSubmatch(m.Get("content").String(), -1) {
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
		return textAnswer(body.Get("stream").Bool(), text)
	}
}

// textOnlyViolation says what a text-only upstream refuses in a request.
func textOnlyViolation(body gjson.Result) string {
	for _, k := range []string{"tools", "tool_choice", "functions", "function_call"} {
		if body.Get(k).Exists() {
			return k + " sent"
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
