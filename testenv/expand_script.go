package testenv

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
)

// ExpandModel scripts a model that uses expand_context the way a real one
// would: it asks to expand the shadow id it sees in a shortened tool
// result, and once given the original it answers by quoting the first line
// of it that contains Needle. With Always it asks again forever (the loop
// limit test). It speaks OpenAI Chat (/v1/chat/completions) and Anthropic
// Messages (/v1/messages), JSON or SSE as the request asks.
type ExpandModel struct {
	Needle string
	Always bool
	// Preamble is text the model says before its expand_context call.
	Preamble string
	// ForceID, when set, is the id the model asks for whatever it sees
	// (another tenant's id, say).
	ForceID string
}

// ExpandIntro is the text a continuation answer starts with.
const ExpandIntro = "From the full output: "

var shadowRef = regexp.MustCompile(`\[toolproc shadow_id=(sh_[0-9a-f]{32}) `)

// Script returns the FakeUpstream script.
func (m ExpandModel) Script() func(RecordedRequest) *ScriptedResponse {
	return func(req RecordedRequest) *ScriptedResponse {
		if !gjson.ValidBytes(req.Body) {
			return nil
		}
		body := gjson.ParseBytes(req.Body)
		stream := body.Get("stream").Bool()
		anthropic := req.Path == "/v1/messages"
		if !anthropic && req.Path != "/v1/chat/completions" {
			return nil
		}
		expanded, n := m.lastExpansion(body, anthropic)
		var text, id string
		switch {
		case expanded != "" && !m.Always:
			text = ExpandIntro + m.quote(expanded)
		default:
			if m.ForceID != "" {
				id = m.ForceID
			} else if sm := shadowRef.FindStringSubmatch(string(req.Body)); sm != nil {
				id = sm[1]
			} else if expanded == "" {
				text = "I saw no shortened tool result."
			}
			if id == "" && text == "" {
				id = "sh_00000000000000000000000000000000"
			}
		}
		callID := fmt.Sprintf("expand_%d", n)
		if anthropic {
			return m.anthropic(stream, text, id, "toolu_"+callID)
		}
		return m.openAI(stream, text, id, "call_"+callID)
	}
}

// lastExpansion returns the text of the expand_context result the request
// ends with ("" when it does not end with one) and how many expand results
// it carries.
func (m ExpandModel) lastExpansion(body gjson.Result, anthropic bool) (string, int) {
	msgs := body.Get("messages").Array()
	n := 0
	last := ""
	for i, msg := range msgs {
		isLast := i == len(msgs)-1
		if anthropic {
			msg.Get("content").ForEach(func(_, b gjson.Result) bool {
				if b.Get("type").String() == "tool_result" && strings.HasPrefix(b.Get("tool_use_id").String(), "toolu_expand_") {
					n++
					if isLast {
						last = contentText(b.Get("content"))
					}
				}
				return true
			})
			continue
		}
		if msg.Get("role").String() == "tool" && strings.HasPrefix(msg.Get("tool_call_id").String(), "call_expand_") {
			n++
			if isLast {
				last = contentText(msg.Get("content"))
			}
		}
	}
	return last, n
}

func contentText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.Str
	}
	var b strings.Builder
	c.ForEach(func(_, blk gjson.Result) bool {
		b.WriteString(blk.Get("text").String())
		return true
	})
	return b.String()
}

func (m ExpandModel) quote(original string) string {
	for line := range strings.SplitSeq(original, "\n") {
		if m.Needle != "" && strings.Contains(line, m.Needle) {
			return line
		}
	}
	return "(the needle is not in the original)"
}

func (m ExpandModel) openAI(stream bool, text, id, callID string) *ScriptedResponse {
	model := "gpt-4o-mini"
	args := `{"id":"` + id + `"}`
	if !stream {
		msg := map[string]any{"role": "assistant", "content": nilIfEmpty(text)}
		finish := "stop"
		if id != "" {
			msg["content"] = nilIfEmpty(m.Preamble)
			msg["tool_calls"] = []any{map[string]any{"id": callID, "type": "function",
				"function": map[string]any{"name": "expand_context", "arguments": args}}}
			finish = "tool_calls"
		}
		return jsonResponse(mustJSON(map[string]any{
			"id": "chatcmpl-expand", "object": "chat.completion", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		}))
	}
	chunk := func(delta map[string]any, finish any) []byte {
		return []byte("data: " + string(mustJSON(map[string]any{
			"id": "chatcmpl-expand", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})) + "\n\n")
	}
	events := [][]byte{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	if id == "" {
		events = append(events, chunk(map[string]any{"content": text}, nil), chunk(map[string]any{}, "stop"))
	} else {
		if m.Preamble != "" {
			events = append(events, chunk(map[string]any{"content": m.Preamble}, nil))
		}
		events = append(events,
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": callID, "type": "function",
				"function": map[string]any{"name": "expand_context", "arguments": ""}}}}, nil),
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
				"function": map[string]any{"arguments": args[:len(args)/2]}}}}, nil),
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
				"function": map[string]any{"arguments": args[len(args)/2:]}}}}, nil),
			chunk(map[string]any{}, "tool_calls"))
	}
	events = append(events, []byte("data: [DONE]\n\n"))
	return sseResponse(events)
}

func (m ExpandModel) anthropic(stream bool, text, id, callID string) *ScriptedResponse {
	model := "claude-sonnet-4-5"
	var content []any
	stop := "end_turn"
	if id == "" {
		content = []any{map[string]any{"type": "text", "text": text}}
	} else {
		if m.Preamble != "" {
			content = append(content, map[string]any{"type": "text", "text": m.Preamble})
		}
		content = append(content, map[string]any{"type": "tool_use", "id": callID, "name": "expand_context",
			"input": map[string]any{"id": id}})
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	if !stream {
		return jsonResponse(mustJSON(map[string]any{
			"id": "msg_expand", "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		}))
	}
	ev := func(name string, v map[string]any) []byte {
		return []byte("event: " + name + "\ndata: " + string(mustJSON(v)) + "\n\n")
	}
	events := [][]byte{ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_expand", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})}
	for i, c := range content {
		blk := c.(map[string]any)
		if blk["type"] == "text" {
			events = append(events,
				ev("content_block_start", map[string]any{"type": "content_block_start", "index": i,
					"content_block": map[string]any{"type": "text", "text": ""}}),
				ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": blk["text"]}}))
		} else {
			args := `{"id":"` + id + `"}`
			events = append(events,
				ev("content_block_start", map[string]any{"type": "content_block_start", "index": i,
					"content_block": map[string]any{"type": "tool_use", "id": callID, "name": "expand_context", "input": map[string]any{}}}),
				ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": args[:len(args)/2]}}),
				ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": args[len(args)/2:]}}))
		}
		events = append(events, ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
	}
	events = append(events,
		ev("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}}),
		ev("message_stop", map[string]any{"type": "message_stop"}))
	return sseResponse(events)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
