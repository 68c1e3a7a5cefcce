package wire

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// parseBedrock finds toolResult blocks in a Converse / ConverseStream request
// (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html). content is an array of {text}, {json}, {image},
// {document} or {video} blocks and must never become empty (Bedrock rejects
// an empty content, above all with status "error"). toolUseId pairs the
// result with the toolUse block of the previous assistant message.
func parseBedrock(root node, c *Conversation) {
	c.ToolsPath = pathIf(root, "toolConfig.tools")
	c.SystemPath = pathIf(root, "system")
	c.eachMessage(root.Get("messages"), "assistant", func(mi int, role string, msg node) {
		bi := -1
		msg.Get("content").ForEach(func(_, block node) bool {
			bi++
			base := "messages." + strconv.Itoa(mi) + ".content." + strconv.Itoa(bi)
			if tu := block.Get("toolUse"); tu.Exists() && role == "assistant" {
				in := tu.Get("input")
				c.Calls = append(c.Calls, ToolCall{Message: mi, ID: tu.Get("toolUseId").String(), Name: tu.Get("name").String(), Args: in.Raw, ArgsSpan: span(in)})
			}
			if block.Get("text").Exists() && role == "user" {
				c.Msgs[mi].Prompt = true
			}
			tr := block.Get("toolResult")
			if !tr.Exists() || role != "user" {
				return true
			}
			path := base + ".toolResult"
			r := ToolResult{
				Message: mi,
				Path:    path,
				CallID:  tr.Get("toolUseId").String(),
				IsError: tr.Get("status").String() == "error",
				Form:    FormBlocks,
			}
			k := -1
			tr.Get("content").ForEach(func(_, cb node) bool {
				k++
				cp := path + ".content." + strconv.Itoa(k)
				switch t, j := cb.Get("text"), cb.Get("json"); {
				case t.Type == gjson.String:
					r.Texts = append(r.Texts, textBlock(cp+".text", t))
				case j.Exists():
					r.JSON = append(r.JSON, jsonBlock(cp+".json", j))
				default:
					r.NonText++
				}
				return true
			})
			r.Ordinal = len(c.Results)
			c.Results = append(c.Results, r)
			return true
		})
	})
}
