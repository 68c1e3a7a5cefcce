// Package wiretest checks the tool call ↔ tool result rules each provider
// enforces (each provider's API reference), so tests can assert that a rewrite keeps a
// request acceptable rather than merely parseable.
package wiretest

import (
	"fmt"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// CheckPairing returns the first pairing rule body breaks for dialect d.
func CheckPairing(d wire.Dialect, body []byte) error {
	if !jsonsafe.Valid(body) {
		return fmt.Errorf("not valid JSON")
	}
	root := gjson.ParseBytes(body)
	switch d {
	case wire.OpenAIChat:
		return openAIChat(root)
	case wire.OpenAIResponses:
		return openAIResponses(root)
	case wire.Anthropic:
		return anthropic(root)
	case wire.Gemini:
		return gemini(root)
	case wire.Bedrock:
		return bedrock(root)
	}
	return fmt.Errorf("unknown dialect %q", d)
}

// openAIChat: every tool_calls id is answered by tool messages before the
// next non-tool message, and every tool message answers such a call; tool
// content is a string or a non-empty array of text parts.
func openAIChat(root gjson.Result) error {
	msgs := root.Get("messages").Array()
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Get("role").String() {
		case "tool":
			return fmt.Errorf("messages.%d: role 'tool' must be a response to a preceding message with 'tool_calls'", i)
		case "assistant":
			var want []string
			for _, c := range m.Get("tool_calls").Array() {
				want = append(want, c.Get("id").String())
			}
			if len(want) == 0 {
				continue
			}
			var got []string
			for i+1 < len(msgs) && msgs[i+1].Get("role").String() == "tool" {
				i++
				t := msgs[i]
				got = append(got, t.Get("tool_call_id").String())
				if err := openAIToolContent(i, t.Get("content")); err != nil {
					return err
				}
			}
			if !sameSet(want, got) {
				return fmt.Errorf("assistant tool_calls %v answered by tool messages %v", want, got)
			}
		}
	}
	return nil
}

func openAIToolContent(i int, c gjson.Result) error {
	switch {
	case c.Type == gjson.String:
		return nil
	case c.IsArray():
		parts := c.Array()
		if len(parts) == 0 {
			return fmt.Errorf("messages.%d.content: empty array", i)
		}
		for k, p := range parts {
			if p.Get("type").String() != "text" || p.Get("text").Type != gjson.String {
				return fmt.Errorf("messages.%d.content.%d: tool content parts must be text", i, k)
			}
		}
		return nil
	}
	return fmt.Errorf("messages.%d.content: must be a string or an array", i)
}

// anthropic: the message after an assistant turn with tool_use blocks is a
// user message that begins with exactly the matching tool_result blocks,
// and no tool_result appears without a tool_use in the previous message.
func anthropic(root gjson.Result) error {
	msgs := root.Get("messages").Array()
	var pending []string
	for i, m := range msgs {
		blocks := m.Get("content").Array()
		if m.Get("role").String() == "assistant" {
			if len(pending) > 0 {
				return fmt.Errorf("messages.%d: tool_use ids were found without tool_result blocks immediately after: %v", i-1, pending)
			}
			for _, b := range blocks {
				if b.Get("type").String() == "tool_use" {
					pending = append(pending, b.Get("id").String())
				}
			}
			continue
		}
		var got []string
		leading := true
		for k, b := range blocks {
			if b.Get("type").String() != "tool_result" {
				leading = false
				continue
			}
			if !leading {
				return fmt.Errorf("messages.%d.content.%d: tool_result blocks must come first", i, k)
			}
			got = append(got, b.Get("tool_use_id").String())
			if c := b.Get("content"); c.Exists() && c.Type != gjson.String && !c.IsArray() {
				return fmt.Errorf("messages.%d.content.%d.content: must be a string or an array", i, k)
			}
		}
		if !sameSet(pending, got) {
			return fmt.Errorf("messages.%d: tool_result ids %v do not match the previous tool_use ids %v", i, got, pending)
		}
		pending = nil
	}
	return nil
}

// openAIResponses: every call has exactly one output and every output has a
// call (unless previous_response_id keeps earlier items on the server).
func openAIResponses(root gjson.Result) error {
	calls, outs := map[string]int{}, map[string]int{}
	for i, it := range root.Get("input").Array() {
		id := it.Get("call_id").String()
		switch it.Get("type").String() {
		case "function_call", "custom_tool_call", "local_shell_call":
			calls[id]++
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			if calls[id] == 0 && !root.Get("previous_response_id").Exists() {
				return fmt.Errorf("input.%d: No tool call found for function call output with call_id %s", i, id)
			}
			outs[id]++
			if o := it.Get("output"); o.Type != gjson.String && !o.IsArray() {
				return fmt.Errorf("input.%d.output: must be a string or an array", i)
			}
		}
	}
	for id := range calls {
		if outs[id] == 0 {
			return fmt.Errorf("no tool output found for function call %s", id)
		}
	}
	return nil
}

// gemini: a model turn's functionCall parts are answered by the next turn's
// functionResponse parts, same count and names, each response an object.
func gemini(root gjson.Result) error {
	contents := root.Get("contents").Array()
	for i, c := range contents {
		var calls []string
		for _, p := range c.Get("parts").Array() {
			if fc := first(p, "functionCall", "function_call"); fc.Exists() {
				calls = append(calls, fc.Get("name").String())
			}
		}
		if len(calls) == 0 || c.Get("role").String() != "model" {
			continue
		}
		if i+1 == len(contents) {
			continue // the model's latest call: the client has not answered yet
		}
		var got []string
		for k, p := range contents[i+1].Get("parts").Array() {
			if fr := first(p, "functionResponse", "function_response"); fr.Exists() {
				got = append(got, fr.Get("name").String())
				if !fr.Get("response").IsObject() {
					return fmt.Errorf("contents.%d.parts.%d: functionResponse.response must be an object", i+1, k)
				}
			}
		}
		if !sameSet(calls, got) {
			return fmt.Errorf("contents.%d: the number of function response parts must equal the number of function call parts (%v vs %v)", i+1, got, calls)
		}
	}
	return nil
}

// bedrock: toolResult blocks for exactly the previous turn's toolUse ids,
// in one user message, each with non-empty content.
func bedrock(root gjson.Result) error {
	msgs := root.Get("messages").Array()
	for i, m := range msgs {
		if m.Get("role").String() != "assistant" {
			continue
		}
		var uses []string
		for _, b := range m.Get("content").Array() {
			if tu := b.Get("toolUse"); tu.Exists() {
				uses = append(uses, tu.Get("toolUseId").String())
			}
		}
		if len(uses) == 0 || i+1 == len(msgs) {
			continue
		}
		var got []string
		for k, b := range msgs[i+1].Get("content").Array() {
			if tr := b.Get("toolResult"); tr.Exists() {
				got = append(got, tr.Get("toolUseId").String())
				if len(tr.Get("content").Array()) == 0 {
					return fmt.Errorf("messages.%d.content.%d.toolResult: content cannot be empty", i+1, k)
				}
			}
		}
		if !sameSet(uses, got) {
			return fmt.Errorf("expected toolResult blocks at messages.%d.content for the following Ids: %v (got %v)", i+1, uses, got)
		}
	}
	if len(msgs) > 0 && !root.Get("toolConfig").Exists() {
		for _, m := range msgs {
			for _, b := range m.Get("content").Array() {
				if b.Get("toolUse").Exists() || b.Get("toolResult").Exists() {
					return fmt.Errorf("toolConfig field must be defined when using toolUse and toolResult content blocks")
				}
			}
		}
	}
	return nil
}

func first(v gjson.Result, keys ...string) gjson.Result {
	for _, k := range keys {
		if r := v.Get(k); r.Exists() {
			return r
		}
	}
	return gjson.Result{}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
