package wire

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// parseOpenAIChat finds tool results in a Chat Completions request
// (platform.openai.com/docs/api-reference/chat): messages with role "tool" (content a string or an
// array of text parts) and the deprecated role "function" (content a string).
// Assistant tool_calls / function_call supply the tool names.
func parseOpenAIChat(root node, c *Conversation) {
	c.ToolsPath = pathIf(root, "tools", "functions")
	mi := -1
	root.Get("messages").ForEach(func(_, msg node) bool {
		mi++
		base := "messages." + strconv.Itoa(mi)
		m := c.addMsg(msg, msg.Get("role").String())
		switch m.Role {
		case "user":
			m.Prompt = true
		case "system", "developer":
			if c.SystemPath == "" {
				c.SystemPath = base
			}
		case "assistant":
			c.assistantTurn(mi)
			msg.Get("tool_calls").ForEach(func(_, call node) bool {
				name, args := call.Get("function.name").String(), call.Get("function.arguments")
				if name == "" {
					name, args = call.Get("custom.name").String(), call.Get("custom.input")
				}
				c.Calls = append(c.Calls, ToolCall{Message: mi, ID: call.Get("id").String(), Name: name, Args: args.Raw, ArgsSpan: span(args)})
				return true
			})
			if fc := msg.Get("function_call"); fc.Exists() {
				name, args := fc.Get("name").String(), fc.Get("arguments")
				c.Calls = append(c.Calls, ToolCall{Message: mi, ID: name, Name: name, Args: args.Raw, ArgsSpan: span(args)})
			}
		case "tool":
			r := ToolResult{Message: mi, Path: base, CallID: msg.Get("tool_call_id").String()}
			if openAIContent(base, msg.Get("content"), &r) {
				r.Ordinal = len(c.Results)
				c.Results = append(c.Results, r)
			}
		case "function":
			// Legacy results pair with function_call by name.
			name := msg.Get("name").String()
			r := ToolResult{Message: mi, Path: base, CallID: name, ToolName: name}
			if openAIContent(base, msg.Get("content"), &r) {
				r.Ordinal = len(c.Results)
				c.Results = append(c.Results, r)
			}
		}
		return true
	})
	c.Messages = mi + 1
}

// openAIContent fills r from a tool message's content. It reports false when
// there is nothing to look at (null or missing content).
func openAIContent(base string, content node, r *ToolResult) bool {
	switch {
	case content.Type == gjson.String:
		r.Form = FormString
		r.Texts = append(r.Texts, textBlock(base+".content", content))
		return true
	case content.IsArray():
		r.Form = FormBlocks
		k := -1
		content.ForEach(func(_, part node) bool {
			k++
			if t := part.Get("text"); part.Get("type").String() == "text" && t.Type == gjson.String {
				r.Texts = append(r.Texts, textBlock(base+".content."+strconv.Itoa(k)+".text", t))
			} else {
				r.NonText++
			}
			return true
		})
		return true
	}
	return false
}
