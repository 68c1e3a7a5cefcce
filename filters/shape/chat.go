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
			text := resultHeader(id, name, statusSuccess) + "\n" + quoteCalls(partsText(m.Get("content")))
			out = append(out, chatMsg{role: "user", content: jsonStr(text)})
			continue
		}
		flushMissing()
		if role != "assistant" {
			// Only the assistant calls tools: tool_calls or function_call on
			// any other message is not a call of this conversation (review
			// round 3, N3), and a text-only upstream must get none.
			// Their text is data: call syntax in it is quoted (quote.go).
			content, _ := quotedContent(m.Get("content"))
			out = append(out, chatMsg{role: role, raw: m.Raw, content: content, drop: []string{"tool_calls", "function_call"}})
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
// Each run of one role is joined once, in one pass over its contents: a
// run of n messages costs O(its bytes), not O(n × its bytes) (review
// round 3, N2).
func mergeChat(in []chatMsg) ([]chatMsg, int) {
	var out []chatMsg
	n := 0
	for i := 0; i < len(in); {
		m := in[i]
		j := i + 1
		if m.role == "user" || m.role == "assistant" {
			for j < len(in) && in[j].role == m.role {
				j++
			}
		}
		if j-i > 1 {
			contents := make([]gjson.Result, 0, j-i)
			for _, r := range in[i:j] {
				contents = append(contents, r.contentRaw())
			}
			m.content = joinContents(contents)
			n += j - i - 1
		}
		out = append(out, m)
		i = j
	}
	return out, n
}

// joinContents is the content of a run of messages joined in order, the
// same as joining them two at a time: strings with a blank line between
// the non-empty ones; once an array content appears the result is an
// array, the text before it one text part, and every later string its own
// text part.
func joinContents(cs []gjson.Result) string {
	var pending strings.Builder // the joined strings before the first array
	var parts strings.Builder   // the array's parts, comma-separated
	isArray := false
	addPart := func(raw string) {
		if parts.Len() > 0 {
			parts.WriteByte(',')
		}
		parts.WriteString(raw)
	}
	for _, c := range cs {
		if c.IsArray() {
			if !isArray {
				isArray = true
				if pending.Len() > 0 {
					addPart(`{"type":"text","text":` + jsonStr(pending.String()) + `}`)
				}
			}
			c.ForEach(func(_, p gjson.Result) bool {
				addPart(p.Raw)
				return true
			})
			continue
		}
		t := c.String()
		if t == "" {
			continue
		}
		if isArray {
			addPart(`{"type":"text","text":` + jsonStr(t) + `}`)
			continue
		}
		if pending.Len() > 0 {
			pending.WriteString("\n\n")
		}
		pending.WriteString(t)
	}
	if isArray {
		return "[" + parts.String() + "]"
	}
	return jsonStr(pending.String())
}
