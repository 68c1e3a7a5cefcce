package wire

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// parseAnthropic finds tool_result blocks in a Messages request
// (docs.anthropic.com/en/api/messages). A result's content is a string or an array of
// blocks; only text blocks are text, images and documents are kept as they
// are. tool_use blocks in assistant turns supply the tool names. thinking
// blocks, signatures and cache_control are never looked at, so never edited.
func parseAnthropic(root node, c *Conversation) {
	c.ToolsPath = pathIf(root, "tools")
	c.SystemPath = pathIf(root, "system")
	c.eachMessage(root.Get("messages"), "assistant", func(mi int, role string, msg node) {
		content := msg.Get("content")
		m := &c.Msgs[mi]
		if !content.IsArray() {
			m.Prompt = role == "user"
			return
		}
		base := "messages." + strconv.Itoa(mi) + ".content."
		bi := -1
		content.ForEach(func(_, block node) bool {
			bi++
			switch block.Get("type").String() {
			case "thinking", "redacted_thinking":
				if role == "assistant" {
					m.Thinking += len(block.Raw)
				}
			case "text", "image", "document":
				m.Prompt = m.Prompt || role == "user"
			case "tool_use", "server_tool_use":
				if role == "assistant" {
					in := block.Get("input")
					c.Calls = append(c.Calls, ToolCall{Message: mi, ID: block.Get("id").String(), Name: block.Get("name").String(), Args: in.Raw, ArgsSpan: span(in)})
				}
			case "tool_result":
				if role != "user" {
					return true
				}
				path := base + strconv.Itoa(bi)
				r := ToolResult{
					Message: mi,
					Path:    path,
					CallID:  block.Get("tool_use_id").String(),
					IsError: block.Get("is_error").Bool(),
				}
				if anthropicContent(path, block.Get("content"), &r) {
					r.Ordinal = len(c.Results)
					c.Results = append(c.Results, r)
				}
			}
			return true
		})
	})
}

func anthropicContent(path string, content node, r *ToolResult) bool {
	switch {
	case content.Type == gjson.String:
		r.Form = FormString
		r.Texts = append(r.Texts, textBlock(path+".content", content))
		return true
	case content.IsArray():
		r.Form = FormBlocks
		k := -1
		content.ForEach(func(_, block node) bool {
			k++
			if t := block.Get("text"); block.Get("type").String() == "text" && t.Type == gjson.String {
				r.Texts = append(r.Texts, textBlock(path+".content."+strconv.Itoa(k)+".text", t))
			} else {
				r.NonText++
			}
			return true
		})
		return true
	}
	return false
}
