package shape

import (
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// chatMsg is one OpenAI Chat message of the rewritten array: the raw
// original (so unknown members pass through) and what replaces its
// content.
type chatMsg struct {
	role    string
	raw     string // the original message, or "" for one built here
	content string // raw JSON of the new content; "" keeps the original
	drop    []string
}

// textOnlyChat renders an OpenAI Chat request (see TextOnly).
func textOnlyChat(body []byte, o Options) ([]byte, Report, error) {
	var rep Report
	msgs := gjson.GetBytes(body, "messages").Array()
	var systems []string
	hasAssistant := false
	for _, m := range msgs {
		if m.Get("role").String() == "assistant" {
			hasAssistant = true
		}
	}
	var out []chatMsg
	// calls of the latest assistant turn that made any, by id, in order
	type call struct{ id, name string }
	var open []call
	answered := map[string]bool{}
	flushMissing := func() {
		// A call with no result: say so, so the model does not wait for it
		// (seed 002 §A.2.7).
		var b strings.Builder
		for _, c := range open {
			if answered[c.id] {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(resultHeader(c.id, c.name, statusMissing))
			b.WriteString("\n" + noResult)
			rep.Missing++
		}
		if b.Len() > 0 {
			out = append(out, chatMsg{role: "user", content: jsonStr(b.String())})
		}
		open, answered = nil, map[string]bool{}
	}
	for _, m := range msgs {
		role := m.Get("role").String()
		switch role {
		case "system", "developer":
			systems = append(systems, partsText(m.Get("content")))
			rep.SystemMessages++
			rep.SystemBytes += len(systems[len(systems)-1])
			continue
		case "tool", "function":
			id := m.Get("tool_call_id").String()
			name := ""
			found := false
			for _, c := range open {
				if c.id == id || role == "function" && c.name == m.Get("name").String() && !answered[c.id] {
					id, name, found = c.id, c.name, true
					break
				}
			}
			if !found || answered[id] {
				rep.Unmatched++ // a result for no call of the turn before: left out
				continue
			}
			answered[id] = true
			rep.Results++
			text := resultHeader(id, name, statusSuccess) + "\n" + partsText(m.Get("content"))
			out = append(out, chatMsg{role: "user", content: jsonStr(text)})
			continue
		}
		flushMissing()
		if role != "assistant" {
			out = append(out, chatMsg{role: role, raw: m.Raw})
			continue
		}
		calls := m.Get("tool_calls")
		fc := m.Get("function_call")
		if !calls.IsArray() && !fc.Exists() {
			out = append(out, chatMsg{role: role, raw: m.Raw})
			continue
		}
		var b strings.Builder
		if t := strings.TrimSpace(partsText(m.Get("content"))); t != "" {
			b.WriteString(t)
			b.WriteString("\n\n")
		}
		n := 0
		add := func(id, name, args string) {
			if n > 0 {
				b.WriteByte('\n')
			}
			renderInvoke(&b, name, args)
			open = append(open, call{id, name})
			rep.Calls++
			n++
		}
		calls.ForEach(func(_, c gjson.Result) bool {
			add(c.Get("id").String(), c.Get("function.name").String(), c.Get("function.arguments").String())
			return true
		})
		if fc.Exists() {
			add("", fc.Get("name").String(), fc.Get("arguments").String())
		}
		out = append(out, chatMsg{role: role, raw: m.Raw, content: jsonStr(b.String()), drop: []string{"tool_calls", "function_call"}})
	}
	flushMissing()

	// Tools and tool_choice become words.
	var tools []toolSpec
	gjson.GetBytes(body, "tools").ForEach(func(_, t gjson.Result) bool {
		f := t.Get("function")
		if !f.Exists() {
			f = t // legacy "functions" entries have no wrapper
		}
		if name := f.Get("name").String(); name != "" {
			tools = append(tools, toolSpec{name, f.Get("description").String(), wire.CompactJSON(f.Get("parameters"))})
		}
		return true
	})
	gjson.GetBytes(body, "functions").ForEach(func(_, f gjson.Result) bool {
		if name := f.Get("name").String(); name != "" {
			tools = append(tools, toolSpec{name, f.Get("description").String(), wire.CompactJSON(f.Get("parameters"))})
		}
		return true
	})
	rep.Tools = len(tools)
	tc := gjson.GetBytes(body, "tool_choice")
	choice := choiceInstruction(tc.String(), tc.Get("function.name").String())
	if fcall := gjson.GetBytes(body, "function_call"); choice == "" && fcall.Exists() {
		choice = choiceInstruction(fcall.String(), fcall.Get("name").String())
	}
	if len(tools) == 0 {
		choice = ""
	}

	inject := o.InjectSystem == InjectAlways || !hasAssistant
	toolText := ""
	if len(tools) > 0 {
		toolText = renderTools(tools)
	}
	first := -1
	for i, m := range out {
		if m.role == "user" && m.raw != "" {
			first = i
			break
		}
	}
	if (inject && len(systems) > 0) || toolText != "" {
		if !inject {
			systems = nil
		}
		if first < 0 {
			out = append([]chatMsg{{role: "user", content: `""`}}, out...)
			first = 0
		}
		out[first].content = prependBlock(out[first], systems, toolText)
	}
	if choice != "" {
		out = append(out, chatMsg{role: "user", content: jsonStr(choice)})
	}

	merged, n := mergeChat(out)
	rep.Merged = n
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range merged {
		if i > 0 {
			b.WriteByte(',')
		}
		raw, err := m.render()
		if err != nil {
			return body, Report{}, err
		}
		b.WriteString(raw)
	}
	b.WriteByte(']')
	res, err := sjson.SetRawBytes(body, "messages", []byte(b.String()))
	if err == nil {
		res, err = withoutKeys(res, "tools", "tool_choice", "parallel_tool_calls", "functions", "function_call")
	}
	if err != nil || !jsonsafe.Valid(res) {
		return body, Report{}, errInvalid
	}
	rep.Changed = string(res) != string(body)
	return res, rep, nil
}

// render writes one message: the original with its content replaced and
// its tool members dropped, or a new {"role","content"} object.
func (m chatMsg) render() (string, error) {
	if m.raw == "" {
		return `{"role":` + jsonStr(m.role) + `,"content":` + m.content + `}`, nil
	}
	raw := m.raw
	var err error
	for _, k := range m.drop {
		if gjson.Get(raw, k).Exists() {
			if raw, err = sjson.Delete(raw, k); err != nil {
				return "", err
			}
		}
	}
	if m.content != "" {
		if raw, err = sjson.SetRaw(raw, "content", m.content); err != nil {
			return "", err
		}
	}
	return raw, nil
}

// contentRaw is the message's content as raw JSON.
func (m chatMsg) contentRaw() gjson.Result {
	if m.content != "" {
		return gjson.Parse(m.content)
	}
	return gjson.Get(m.raw, "content")
}

// prependBlock puts the system block before the first user message's
// content: before a string, or as a new first text part of an array
// (images and other parts kept). The tag changes when the content already
// holds it (seed 002 §A.2.2, item 18).
func prependBlock(m chatMsg, systems []string, tools string) string {
	c := m.contentRaw()
	alt := strings.Contains(partsText(c), systemOpen)
	block := systemBlock(systems, tools, alt)
	if c.IsArray() {
		var b strings.Builder
		b.WriteString(`[{"type":"text","text":`)
		b.WriteString(jsonStr(strings.TrimSuffix(block, "\n\n")))
		b.WriteByte('}')
		c.ForEach(func(_, p gjson.Result) bool {
			b.WriteByte(',')
			b.WriteString(p.Raw)
			return true
		})
		b.WriteByte(']')
		return b.String()
	}
	text := c.String()
	if c.Type != gjson.String && c.Exists() && c.Type != gjson.Null {
		text = c.Raw
	}
	return jsonStr(block + text)
}

// mergeChat joins consecutive messages of one role: strict upstreams
// demand alternation, and the results of one turn arrive as several
// messages. Text joins with a blank line; array contents are concatenated.
func mergeChat(in []chatMsg) ([]chatMsg, int) {
	var out []chatMsg
	n := 0
	for _, m := range in {
		if len(out) > 0 && out[len(out)-1].role == m.role && (m.role == "user" || m.role == "assistant") {
			prev := &out[len(out)-1]
			prev.content = joinContent(prev.contentRaw(), m.contentRaw())
			n++
			continue
		}
		out = append(out, m)
	}
	return out, n
}

func joinContent(a, b gjson.Result) string {
	if a.IsArray() || b.IsArray() {
		var s strings.Builder
		s.WriteByte('[')
		first := true
		for _, c := range []gjson.Result{a, b} {
			if c.IsArray() {
				c.ForEach(func(_, p gjson.Result) bool {
					if !first {
						s.WriteByte(',')
					}
					first = false
					s.WriteString(p.Raw)
					return true
				})
				continue
			}
			if t := c.String(); t != "" {
				if !first {
					s.WriteByte(',')
				}
				first = false
				s.WriteString(`{"type":"text","text":` + jsonStr(t) + `}`)
			}
		}
		s.WriteByte(']')
		return s.String()
	}
	at, bt := a.String(), b.String()
	switch {
	case at == "":
		return jsonStr(bt)
	case bt == "":
		return jsonStr(at)
	}
	return jsonStr(at + "\n\n" + bt)
}
