package shape

import (
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// textOnlyAnthropic renders an Anthropic Messages request (see TextOnly):
// the top-level system into the first user message, tool_use blocks into
// <invoke> text blocks, tool_result blocks into text blocks under their
// result comment (images inside a result kept after it), tools and
// tool_choice into words. A block's cache_control moves to the text block
// that replaces it, so the client's cache breakpoints stay where they were.
func textOnlyAnthropic(body []byte, o Options) ([]byte, Report, error) {
	var rep Report
	root := gjson.ParseBytes(body)
	var systems []string
	systemCC := "" // the breakpoint on the system prompt moves with it
	if sys := root.Get("system"); sys.Exists() {
		if t := partsText(sys); t != "" {
			systems = append(systems, t)
			rep.SystemMessages, rep.SystemBytes = 1, len(t)
		}
		sys.ForEach(func(_, b gjson.Result) bool {
			if cc := b.Get("cache_control"); cc.Exists() {
				systemCC = cc.Raw
			}
			return true
		})
	}
	msgs := root.Get("messages").Array()
	hasAssistant := false
	for _, m := range msgs {
		if m.Get("role").String() == "assistant" {
			hasAssistant = true
		}
	}
	type call struct{ id, name string }
	var open []call // the calls of the assistant turn before the current message
	type msgOut struct {
		role   string
		raw    string
		blocks []string // raw blocks of the new content; nil keeps the original
	}
	var out []msgOut
	for _, m := range msgs {
		role := m.Get("role").String()
		content := m.Get("content")
		if !content.IsArray() {
			if q, ok := quotedContent(content); ok && role != "assistant" {
				// User text is data: call syntax in it is quoted (quote.go).
				out = append(out, msgOut{role: role, raw: m.Raw, blocks: []string{textBlock(gjson.Parse(q).String(), "")}})
				open = nil
				continue
			}
			out = append(out, msgOut{role: role, raw: m.Raw})
			if role == "assistant" {
				open = nil
			}
			continue
		}
		var blocks []string
		changed := false
		answered := map[string]bool{}
		var text strings.Builder // consecutive text being built for the assistant
		var textCC string        // the cache_control of the last block folded into it
		flushText := func() {
			if text.Len() > 0 {
				blocks = append(blocks, textBlock(text.String(), textCC))
				text.Reset()
				textCC = ""
			}
		}
		var calls []call
		resultsEnd := -1 // where the blocks rendered from results end
		content.ForEach(func(_, b gjson.Result) bool {
			if t := b.Get("type").String(); t != "tool_result" && resultsEnd < 0 {
				resultsEnd = len(blocks)
			}
			switch b.Get("type").String() {
			case "tool_use":
				if role != "assistant" {
					// Out of place (only assistants call tools), but text all
					// the same: the upstream reads no tool_use block.
					// Quoted: a call on a user message is not one (quote.go).
					var one strings.Builder
					renderInvoke(&one, b.Get("name").String(), b.Get("input").Raw)
					blocks = append(blocks, textBlock(quoteCalls(one.String()), b.Get("cache_control").Raw))
					changed = true
					rep.Calls++
					return true
				}
				changed = true
				switch {
				case text.Len() > 0 && len(calls) == 0:
					text.WriteString("\n\n") // as the Chat rendering: text, a blank line, the calls
				case text.Len() > 0:
					text.WriteString("\n")
				}
				renderInvoke(&text, b.Get("name").String(), b.Get("input").Raw)
				if cc := b.Get("cache_control"); cc.Exists() {
					textCC = cc.Raw
				}
				calls = append(calls, call{b.Get("id").String(), b.Get("name").String()})
				rep.Calls++
			case "tool_result":
				changed = true
				id := b.Get("tool_use_id").String()
				name, found := "", false
				for _, c := range open {
					if c.id == id && !answered[id] {
						name, found = c.name, true
					}
				}
				if !found {
					rep.Unmatched++
					return true
				}
				answered[id] = true
				rep.Results++
				status := statusSuccess
				if b.Get("is_error").Bool() {
					status = statusError
				}
				cc := b.Get("cache_control").Raw
				res := b.Get("content")
				// Each block of the result goes one way: its text into the
				// rendered (and quoted) text, as partsText reads it, or the
				// block itself after it (images, documents). A block of
				// another type that holds text is rendered, not also sent:
				// sent as it is, its text would reach the model twice, the
				// second time with call syntax unquoted.
				var extra []string
				if res.IsArray() {
					res.ForEach(func(_, p gjson.Result) bool {
						if !isTextPart(p) {
							extra = append(extra, p.Raw)
						}
						return true
					})
				}
				t := resultHeader(id, name, status) + "\n" + quoteCalls(partsText(res))
				if len(extra) > 0 {
					blocks = append(blocks, textBlock(t, ""))
					blocks = append(blocks, extra...)
					if cc != "" {
						last := len(blocks) - 1
						if nb, err := sjson.SetRaw(blocks[last], "cache_control", cc); err == nil {
							blocks[last] = nb
						}
					}
				} else {
					blocks = append(blocks, textBlock(t, cc))
				}
			case "text":
				if role == "assistant" && (text.Len() > 0 || len(calls) > 0) {
					// Text after a call joins the rendered text.
					text.WriteString("\n")
					text.WriteString(b.Get("text").String())
					if cc := b.Get("cache_control"); cc.Exists() {
						textCC = cc.Raw
					}
					return true
				}
				if role == "assistant" {
					text.WriteString(b.Get("text").String())
					if cc := b.Get("cache_control"); cc.Exists() {
						textCC = cc.Raw
					}
					return true
				}
				// User text is data: call syntax in it is quoted (quote.go).
				q, quoted := quotedTextPart(b)
				changed = changed || quoted
				blocks = append(blocks, q)
			default:
				if role == "assistant" {
					flushText()
				}
				blocks = append(blocks, b.Raw)
			}
			return true
		})
		if role == "assistant" {
			flushText()
		}
		if role == "user" {
			// Calls of the turn before that got no result.
			var missing []string
			for _, c := range open {
				if !answered[c.id] {
					missing = append(missing, textBlock(resultHeader(c.id, c.name, statusMissing)+"\n"+noResult, ""))
					rep.Missing++
				}
			}
			if len(missing) > 0 {
				changed = true
				if resultsEnd < 0 {
					resultsEnd = len(blocks)
				}
				blocks = append(blocks[:resultsEnd:resultsEnd], append(missing, blocks[resultsEnd:]...)...)
			}
		}
		if role == "assistant" {
			open = calls
		} else {
			open = nil
		}
		if !changed {
			out = append(out, msgOut{role: role, raw: m.Raw})
			continue
		}
		if len(blocks) == 0 {
			// Nothing left (a lone result without its call): the message
			// goes, and its neighbours merge if they share a role.
			continue
		}
		out = append(out, msgOut{role: role, raw: m.Raw, blocks: blocks})
	}

	var tools []toolSpec
	root.Get("tools").ForEach(func(_, t gjson.Result) bool {
		if name := t.Get("name").String(); name != "" {
			tools = append(tools, toolSpec{name, t.Get("description").String(), wire.CompactJSON(t.Get("input_schema"))})
		}
		return true
	})
	rep.Tools = len(tools)
	tc := root.Get("tool_choice")
	choice := ""
	if len(tools) > 0 {
		choice = choiceInstruction(tc.Get("type").String(), tc.Get("name").String())
	}
	toolText := ""
	if len(tools) > 0 {
		toolText = renderTools(tools)
	}
	inject := o.InjectSystem == InjectAlways || !hasAssistant
	if !inject {
		systems = nil
	}

	// Build the messages: content arrays rewritten, same-role neighbours
	// merged (their blocks concatenated), the block on top of the first
	// user message, the choice instruction at the end.
	type built struct {
		role   string
		raw    string
		blocks []string
	}
	var msgsOut []built
	for _, m := range out {
		blocks := m.blocks
		if blocks == nil {
			c := gjson.Get(m.raw, "content")
			if c.IsArray() {
				c.ForEach(func(_, b gjson.Result) bool {
					blocks = append(blocks, b.Raw)
					return true
				})
			} else if c.Type == gjson.String {
				blocks = []string{textBlock(c.String(), "")}
				if c.String() == "" {
					blocks = nil
				}
			}
		}
		if n := len(msgsOut); n > 0 && msgsOut[n-1].role == m.role {
			msgsOut[n-1].blocks = append(msgsOut[n-1].blocks, blocks...)
			rep.Merged++
			continue
		}
		msgsOut = append(msgsOut, built{role: m.role, raw: m.raw, blocks: blocks})
	}
	if len(systems) > 0 || toolText != "" {
		first := -1
		for i, m := range msgsOut {
			if m.role == "user" {
				first = i
				break
			}
		}
		if first < 0 {
			msgsOut = append([]built{{role: "user", raw: `{"role":"user"}`}}, msgsOut...)
			first = 0
		}
		alt := false
		for _, b := range msgsOut[first].blocks {
			if strings.Contains(gjson.Get(b, "text").String(), systemOpen) {
				alt = true
			}
		}
		block := strings.TrimSuffix(systemBlock(systems, toolText, alt), "\n\n")
		cc := ""
		if len(systems) > 0 {
			cc = systemCC
		}
		msgsOut[first].blocks = append([]string{textBlock(block, cc)}, msgsOut[first].blocks...)
	}
	if choice != "" {
		if n := len(msgsOut); n > 0 && msgsOut[n-1].role == "user" {
			msgsOut[n-1].blocks = append(msgsOut[n-1].blocks, textBlock(choice, ""))
		} else {
			msgsOut = append(msgsOut, built{role: "user", raw: `{"role":"user"}`, blocks: []string{textBlock(choice, "")}})
		}
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range msgsOut {
		if i > 0 {
			b.WriteByte(',')
		}
		content := "[" + strings.Join(m.blocks, ",") + "]"
		raw, err := sjson.SetRaw(m.raw, "content", content)
		if err != nil {
			return body, Report{}, errInvalid
		}
		b.WriteString(raw)
	}
	b.WriteByte(']')
	res, err := sjson.SetRawBytes(body, "messages", []byte(b.String()))
	if err == nil {
		res, err = withoutKeys(res, "system", "tools", "tool_choice")
	}
	if err != nil || !jsonsafe.Valid(res) {
		return body, Report{}, errInvalid
	}
	rep.Changed = string(res) != string(body)
	return res, rep, nil
}

// textBlock is an Anthropic text block, with a cache_control when given.
func textBlock(text, cacheControl string) string {
	b := `{"type":"text","text":` + jsonStr(text)
	if cacheControl != "" {
		b += `,"cache_control":` + cacheControl
	}
	return b + "}"
}
