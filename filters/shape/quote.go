package shape

import (
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// A tool result (a fetched page, a file, a command's output) or a user
// message may hold call syntax: `<invoke name="bash">…</invoke>`. Rendered
// as it is, a model that quotes the text writes a call, and the answer
// parser hands it to the agent, which runs it: the result chose the call
// (review round 3, U4). Inside such text the opening is shown with '‹'
// (U+2039) for '<', the substitution attr already makes in names: the
// model still reads what the text says, and no quotation of it, however
// exact, opens a call. The model's own earlier calls and the tool
// instructions keep the real syntax: they teach it.
var quotedCallOpen = "‹" + wire.TextCallOpen[1:]

// quoteCalls returns s with every call opening quoted, and a trailing
// start of one ("<inv" at the end of one text block, "oke name=…" at the
// start of the next, which the upstream reads as one text).
func quoteCalls(s string) string {
	if !hasCallText(s) {
		return s
	}
	s = strings.ReplaceAll(s, wire.TextCallOpen, quotedCallOpen)
	if k := strings.LastIndexByte(s, '<'); k >= 0 && strings.HasPrefix(wire.TextCallOpen, s[k:]) {
		s = s[:k] + "‹" + s[k+1:]
	}
	return s
}

// hasCallText reports whether s holds a call opening or ends with the start
// of one.
func hasCallText(s string) bool {
	if strings.Contains(s, wire.TextCallOpen) {
		return true
	}
	k := strings.LastIndexByte(s, '<')
	return k >= 0 && strings.HasPrefix(wire.TextCallOpen, s[k:])
}

// quotedContent is a user message's content (a string, or parts whose
// text parts carry "text") with quoteCalls applied to its text, as raw
// JSON; ok is false when nothing needed quoting, so the message passes
// byte for byte.
func quotedContent(c gjson.Result) (raw string, ok bool) {
	switch {
	case c.Type == gjson.String:
		if !hasCallText(c.String()) {
			return "", false
		}
		return jsonStr(quoteCalls(c.String())), true
	case c.IsArray():
		var b strings.Builder
		b.WriteByte('[')
		n := 0
		c.ForEach(func(_, p gjson.Result) bool {
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			part, changed := quotedTextPart(p)
			if changed {
				ok = true
			}
			b.WriteString(part)
			return true
		})
		b.WriteByte(']')
		return b.String(), ok
	}
	return "", false
}

// quotedTextPart is a content part (Chat) or block (Anthropic) with its
// "text" quoted when it is a text part that needs it.
func quotedTextPart(p gjson.Result) (string, bool) {
	t := p.Get("text")
	if p.Get("type").String() != "text" || t.Type != gjson.String || !hasCallText(t.String()) {
		return p.Raw, false
	}
	out, err := sjson.Set(p.Raw, "text", quoteCalls(t.String()))
	if err != nil {
		return p.Raw, false
	}
	return out, true
}
