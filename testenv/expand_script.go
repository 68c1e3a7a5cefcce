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
// limit test). It speaks OpenAI Chat (/v1/chat/completions), Anthropic
// Messages (/v1/messages) and OpenAI Responses (/v1/responses), JSON or SSE
// as the request asks, and Gemini (…:generateContent) and Bedrock Converse
// (/model/<id>/converse) as JSON. A Gemini stream (…:streamGenerateContent)
// gets one SSE chunk with the same answer; it is only there so a request
// toolproc leaves alone still gets a 200.
type ExpandModel struct {
	Needle string
	Always bool
	// Preamble is text the model says before its expand_context call.
	Preamble string
	// ForceID, when set, is the id the model asks for whatever it sees
	// (another tenant's id, say).
	ForceID string
	// TextHistoryOnly plays a gateway that rejects structured tool history
	// (the Vercel AI Gateway's 400 "Invalid input" to function_call items):
	// a request carrying a tool call or result in its history gets a 400,
	// and earlier tool exchanges are read from their text rendering.
	TextHistoryOnly bool
}

// flatExpansion finds an expand_context result rendered as text (toolproc's
// tiers.flatten): the comment naming the call, then the result.
var flatExpansion = regexp.MustCompile(`<!-- result of earlier tool call (?:call_|toolu_)expand_\d+ \(expand_context\) -->\n`)

// ExpandIntro is the text a continuation answer starts with.
const ExpandIntro = "From the full output: "

var shadowRef = regexp.MustCompile(`\[toolproc shadow_id=(sh_[0-9a-f]{32}) `)

// tierRef finds the hint of a tool-history summary, as it sits in a JSON
// body: expand_context {\"id\":\"sh_…\"}.
var tierRef = regexp.MustCompile(`expand_context \{\\"id\\":\\"(sh_[0-9a-f]{32})\\"\}`)

// Dialects the script speaks.
const (
	scriptChat = iota
	scriptAnthropic
	scriptResponses
	scriptGemini
	scriptGeminiStream
	scriptBedrock
)

func scriptDialect(path string) (int, bool) {
	switch {
	case path == "/v1/chat/completions":
		return scriptChat, true
	case path == "/v1/messages":
		return scriptAnthropic, true
	case path == "/v1/responses":
		return scriptResponses, true
	case strings.HasPrefix(path, "/v1beta/models/") || strings.HasPrefix(path, "/v1/models/"):
		switch {
		case strings.HasSuffix(path, ":generateContent"):
			return scriptGemini, true
		case strings.HasSuffix(path, ":streamGenerateContent"):
			return scriptGeminiStream, true
		}
	case strings.HasPrefix(path, "/model/") && strings.HasSuffix(path, "/converse"):
		return scriptBedrock, true
	}
	return 0, false
}

// Script returns the FakeUpstream script.
func (m ExpandModel) Script() func(RecordedRequest) *ScriptedResponse {
	return func(req RecordedRequest) *ScriptedResponse {
		if !gjson.ValidBytes(req.Body) {
			return nil
		}
		body := gjson.ParseBytes(req.Body)
		stream := body.Get("stream").Bool()
		dialect, ok := scriptDialect(req.Path)
		if !ok {
			return nil
		}
		if m.TextHistoryOnly && structuredHistory(body, dialect) {
			return errorResponse(400, "invalid_request_error", "Invalid input: tool calls and results in the history")
		}
		expanded, n := m.lastExpansion(body, dialect)
		if m.TextHistoryOnly && n == 0 {
			expanded, n = flatLastExpansion(body, dialect)
		}
		var text, id string
		switch {
		case expanded != "" && !m.Always:
			text = ExpandIntro + m.quote(expanded)
		default:
			if m.ForceID != "" {
				id = m.ForceID
			} else if sm := shadowRef.FindStringSubmatch(string(req.Body)); sm != nil {
				id = sm[1]
			} else if sm := tierRef.FindStringSubmatch(string(req.Body)); sm != nil {
				id = sm[1]
			} else if expanded == "" {
				text = "I saw no shortened tool result."
			}
			if id == "" && text == "" {
				id = "sh_00000000000000000000000000000000"
			}
		}
		callID := fmt.Sprintf("expand_%d", n)
		switch dialect {
		case scriptAnthropic:
			return m.anthropic(stream, text, id, "toolu_"+callID)
		case scriptResponses:
			return m.responses(stream, text, id, "call_"+callID, n)
		case scriptGemini:
			return m.gemini(false, text, id)
		case scriptGeminiStream:
			return m.gemini(true, text, id)
		case scriptBedrock:
			return m.bedrock(text, id, "tooluse_"+callID)
		}
		return m.openAI(stream, body.Get("stream_options.include_usage").Bool(), text, id, "call_"+callID)
	}
}

// lastExpansion returns the text of the expand_context result the request
// ends with ("" when it does not end with one) and how many expand results
// it carries.
func (m ExpandModel) lastExpansion(body gjson.Result, dialect int) (string, int) {
	n := 0
	last := ""
	switch dialect {
	case scriptResponses:
		items := body.Get("input").Array()
		for i, it := range items {
			if it.Get("type").String() == "function_call_output" && strings.HasPrefix(it.Get("call_id").String(), "call_expand_") {
				n++
				if i == len(items)-1 {
					last = contentText(it.Get("output"))
				}
			}
		}
		return last, n
	case scriptGemini, scriptGeminiStream:
		contents := body.Get("contents").Array()
		for i, c := range contents {
			c.Get("parts").ForEach(func(_, p gjson.Result) bool {
				fr := p.Get("functionResponse")
				if !fr.Exists() {
					fr = p.Get("function_response")
				}
				if fr.Get("name").String() == "expand_context" {
					n++
					if i == len(contents)-1 {
						r := fr.Get("response.content")
						if !r.Exists() {
							r = fr.Get("response")
						}
						if r.Type == gjson.String {
							last = r.Str
						} else {
							last = r.Raw
						}
					}
				}
				return true
			})
		}
		return last, n
	case scriptBedrock:
		msgs := body.Get("messages").Array()
		for i, msg := range msgs {
			msg.Get("content").ForEach(func(_, b gjson.Result) bool {
				tr := b.Get("toolResult")
				if tr.Exists() && strings.HasPrefix(tr.Get("toolUseId").String(), "tooluse_expand_") {
					n++
					if i == len(msgs)-1 {
						last = contentText(tr.Get("content"))
					}
				}
				return true
			})
		}
		return last, n
	}
	anthropic := dialect == scriptAnthropic
	msgs := body.Get("messages").Array()
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

// structuredHistory reports a tool call or tool result anywhere in the
// request's history (Chat, Anthropic and Responses shapes).
func structuredHistory(body gjson.Result, dialect int) bool {
	found := false
	if dialect == scriptResponses {
		body.Get("input").ForEach(func(_, it gjson.Result) bool {
			t := it.Get("type").String()
			found = t == "function_call" || t == "function_call_output"
			return !found
		})
		return found
	}
	body.Get("messages").ForEach(func(_, msg gjson.Result) bool {
		role := msg.Get("role").String()
		found = role == "tool" || role == "function" || msg.Get("tool_calls").Exists()
		msg.Get("content").ForEach(func(_, b gjson.Result) bool {
			t := b.Get("type").String()
			found = found || t == "tool_use" || t == "tool_result"
			return !found
		})
		return !found
	})
	return found
}

// flatLastExpansion is lastExpansion for a history flattened into text:
// the expansion the last message carries, and how many the body has.
func flatLastExpansion(body gjson.Result, dialect int) (string, int) {
	key := "messages"
	if dialect == scriptResponses {
		key = "input"
	}
	list := body.Get(key).Array()
	n := 0
	for _, msg := range list {
		n += len(flatExpansion.FindAllStringIndex(contentText(msg.Get("content")), -1))
	}
	if len(list) == 0 {
		return "", n
	}
	text := contentText(list[len(list)-1].Get("content"))
	loc := flatExpansion.FindStringIndex(text)
	if loc == nil {
		return "", n
	}
	return text[loc[1]:], n
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

func (m ExpandModel) openAI(stream, includeUsage bool, text, id, callID string) *ScriptedResponse {
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
	if includeUsage {
		// stream_options.include_usage: one last chunk with no choices and
		// the usage (https://platform.openai.com/docs/api-reference/chat/create#chat-create-stream_options).
		events = append(events, []byte("data: "+string(mustJSON(map[string]any{
			"id": "chatcmpl-expand", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{}, "usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		}))+"\n\n"))
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

func (m ExpandModel) responses(stream bool, text, id, callID string, n int) *ScriptedResponse {
	model := "gpt-5-mini-2025-08-07"
	respID := fmt.Sprintf("resp_expand_%d", n)
	args := `{"id":"` + id + `"}`
	say := text
	if id != "" {
		say = m.Preamble
	}
	msgItem := func(status, t string) map[string]any {
		content := []any{}
		if status == "completed" {
			content = []any{map[string]any{"type": "output_text", "annotations": []any{}, "text": t}}
		}
		return map[string]any{"id": fmt.Sprintf("msg_expand_%d", n), "type": "message", "status": status,
			"role": "assistant", "content": content}
	}
	fcItem := func(status, a string) map[string]any {
		return map[string]any{"id": fmt.Sprintf("fc_expand_%d", n), "type": "function_call", "status": status,
			"arguments": a, "call_id": callID, "name": "expand_context"}
	}
	var output []any
	if say != "" {
		output = append(output, msgItem("completed", say))
	}
	if id != "" {
		output = append(output, fcItem("completed", args))
	}
	response := func(status string, out []any, usage any) map[string]any {
		return map[string]any{"id": respID, "object": "response", "created_at": 1760000000, "status": status,
			"error": nil, "incomplete_details": nil, "model": model, "output": out,
			"parallel_tool_calls": true, "tool_choice": "auto", "usage": usage}
	}
	usage := map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}
	if !stream {
		return jsonResponse(mustJSON(response("completed", output, usage)))
	}
	seq := 0
	var events [][]byte
	ev := func(kind string, v map[string]any) {
		v["type"] = kind
		v["sequence_number"] = seq
		seq++
		events = append(events, []byte("event: "+kind+"\ndata: "+string(mustJSON(v))+"\n\n"))
	}
	ev("response.created", map[string]any{"response": response("in_progress", []any{}, nil)})
	ev("response.in_progress", map[string]any{"response": response("in_progress", []any{}, nil)})
	idx := 0
	if say != "" {
		itemID := fmt.Sprintf("msg_expand_%d", n)
		part := func(t string) map[string]any {
			return map[string]any{"type": "output_text", "annotations": []any{}, "text": t}
		}
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": msgItem("in_progress", "")})
		ev("response.content_part.added", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0, "part": part("")})
		ev("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0,
			"delta": say, "logprobs": []any{}})
		ev("response.output_text.done", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0,
			"text": say, "logprobs": []any{}})
		ev("response.content_part.done", map[string]any{"item_id": itemID, "output_index": idx, "content_index": 0, "part": part(say)})
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": msgItem("completed", say)})
		idx++
	}
	if id != "" {
		itemID := fmt.Sprintf("fc_expand_%d", n)
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": fcItem("in_progress", "")})
		ev("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": idx, "delta": args[:len(args)/2]})
		ev("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": idx, "delta": args[len(args)/2:]})
		ev("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": idx, "arguments": args})
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": fcItem("completed", args)})
	}
	ev("response.completed", map[string]any{"response": response("completed", output, usage)})
	return sseResponse(events)
}

func (m ExpandModel) gemini(stream bool, text, id string) *ScriptedResponse {
	var parts []any
	if id == "" {
		parts = []any{map[string]any{"text": text}}
	} else {
		if m.Preamble != "" {
			parts = append(parts, map[string]any{"text": m.Preamble})
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": "expand_context", "args": map[string]any{"id": id}}})
	}
	answer := mustJSON(map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-2.5-pro",
	})
	if stream {
		return sseResponse([][]byte{[]byte("data: " + string(answer) + "\r\n\r\n")})
	}
	return jsonResponse(answer)
}

func (m ExpandModel) bedrock(text, id, callID string) *ScriptedResponse {
	var content []any
	stop := "end_turn"
	if id == "" {
		content = []any{map[string]any{"text": text}}
	} else {
		if m.Preamble != "" {
			content = append(content, map[string]any{"text": m.Preamble})
		}
		content = append(content, map[string]any{"toolUse": map[string]any{"toolUseId": callID, "name": "expand_context",
			"input": map[string]any{"id": id}}})
		stop = "tool_use"
	}
	return jsonResponse(mustJSON(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stop,
		"usage":      map[string]any{"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
		"metrics":    map[string]any{"latencyMs": 100},
	}))
}
