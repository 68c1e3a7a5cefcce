package wire

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// parseOpenAIResponses finds tool results in a Responses API request
// (platform.openai.com/docs/api-reference/responses). Results are input items: function_call_output,
// custom_tool_call_output and local_shell_call_output pair with their call
// item by call_id; an mcp_call item carries its own output. output is a
// string or an array of input_text / input_image / input_file parts.
// reasoning items (encrypted_content) and compaction items are opaque and
// never looked into. A string input has no tool results.
func parseOpenAIResponses(root node, c *Conversation) {
	c.ToolsPath = pathIf(root, "tools")
	c.SystemPath = pathIf(root, "instructions")
	mi := -1
	root.Get("input").ForEach(func(_, item node) bool {
		mi++
		base := "input." + strconv.Itoa(mi)
		typ, role := item.Get("type").String(), item.Get("role").String()
		m := c.addMsg(item, role)
		if role == "user" && (typ == "" || typ == "message") {
			m.Prompt = true
		}
		switch typ {
		case "function_call", "custom_tool_call", "local_shell_call":
			c.assistantTurn(mi)
			argsV := item.Get("arguments")
			if typ == "custom_tool_call" {
				argsV = item.Get("input")
			} else if typ == "local_shell_call" {
				argsV = item.Get("action")
			}
			args := argsV.Raw
			name := item.Get("name").String()
			if typ == "local_shell_call" {
				name = "local_shell"
			}
			c.Calls = append(c.Calls, ToolCall{Message: mi, ID: item.Get("call_id").String(), Name: name, Args: args, ArgsSpan: span(argsV)})
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			r := ToolResult{Message: mi, Path: base, CallID: item.Get("call_id").String()}
			if typ == "local_shell_call_output" && r.CallID == "" {
				r.CallID = item.Get("id").String()
			}
			if responsesOutput(base+".output", item.Get("output"), &r) {
				r.Ordinal = len(c.Results)
				c.Results = append(c.Results, r)
			}
		case "mcp_call":
			// The call and its result are one item.
			c.assistantTurn(mi)
			id := item.Get("id").String()
			argsV := item.Get("arguments")
			c.Calls = append(c.Calls, ToolCall{Message: mi, ID: id, Name: item.Get("name").String(), Args: argsV.Raw, ArgsSpan: span(argsV)})
			r := ToolResult{Message: mi, Path: base, CallID: id, IsError: item.Get("error").Exists() && item.Get("error").Type != gjson.Null}
			if out := item.Get("output"); out.Type == gjson.String {
				r.Form = FormString
				r.Texts = append(r.Texts, textBlock(base+".output", out))
				r.Ordinal = len(c.Results)
				c.Results = append(c.Results, r)
			}
		case "reasoning":
			c.assistantTurn(mi)
		default:
			switch role {
			case "assistant":
				c.assistantTurn(mi)
			case "system", "developer":
				if c.SystemPath == "" {
					c.SystemPath = base
				}
			}
		}
		return true
	})
	c.Messages = mi + 1
}

func responsesOutput(path string, out node, r *ToolResult) bool {
	switch {
	case out.Type == gjson.String:
		r.Form = FormString
		r.Texts = append(r.Texts, textBlock(path, out))
		return true
	case out.IsArray():
		r.Form = FormBlocks
		k := -1
		out.ForEach(func(_, part node) bool {
			k++
			t := part.Get("text")
			switch part.Get("type").String() {
			case "input_text", "output_text", "text":
				if t.Type == gjson.String {
					r.Texts = append(r.Texts, textBlock(path+"."+strconv.Itoa(k)+".text", t))
					return true
				}
			}
			r.NonText++
			return true
		})
		return true
	}
	return false
}
