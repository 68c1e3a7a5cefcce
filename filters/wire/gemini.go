package wire

import (
	"strconv"
)

// parseGemini finds functionResponse parts in a generateContent request
// (ai.google.dev/api/generate-content). The REST API accepts camelCase and snake_case
// field names, so both are read. response must stay a JSON object; name and
// id pair it with the functionCall part of the preceding model turn (by id
// when present, else by name). thoughtSignature parts are never touched.
func parseGemini(root node, c *Conversation) {
	c.ToolsPath = pathIf(root, "tools")
	c.SystemPath = pathIf(root, "systemInstruction", "system_instruction")
	c.eachMessage(root.Get("contents"), "model", func(mi int, role string, msg node) {
		pk := -1
		msg.Get("parts").ForEach(func(_, part node) bool {
			pk++
			base := "contents." + strconv.Itoa(mi) + ".parts." + strconv.Itoa(pk)
			if key := pathIf(part, "functionCall", "function_call"); key != "" && role == "model" {
				fc := part.Get(key)
				name := fc.Get("name").String()
				id := fc.Get("id").String()
				if id == "" {
					id = name
				}
				args := fc.Get("args")
				c.Calls = append(c.Calls, ToolCall{Message: mi, ID: id, Name: name, Args: args.Raw, ArgsSpan: span(args)})
			}
			if part.Get("text").Exists() && role == "user" {
				c.Msgs[mi].Prompt = true
			}
			key := pathIf(part, "functionResponse", "function_response")
			if key == "" || role == "model" {
				return true
			}
			fr := part.Get(key)
			name := fr.Get("name").String()
			id := fr.Get("id").String()
			if id == "" {
				id = name
			}
			r := ToolResult{Message: mi, Path: base + "." + key, CallID: id, ToolName: name, Form: FormObject}
			if resp := fr.Get("response"); resp.IsObject() {
				r.JSON = append(r.JSON, jsonBlock(r.Path+".response", resp))
				// A response reporting an error by convention: {"error": ...}.
				r.IsError = resp.Get("error").Exists() && !resp.Get("output").Exists() && !resp.Get("result").Exists()
			}
			r.NonText += int(fr.Get("parts.#").Int())
			r.Ordinal = len(c.Results)
			c.Results = append(c.Results, r)
			return true
		})
	})
}
