package wire

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// Flatten renders the tool calls and tool results of consecutive messages
// (raw JSON, in order) as plain text, for gateways that reject structured
// tool history: the Vercel AI Gateway answers 400 "Invalid input" to
// Responses function_call items, some OpenAI-compatible servers reject
// role "tool". Every other message and block passes through byte for byte.
//
// Calls stay in the assistant's turn and results in the user's, so roles
// keep alternating; in OpenAI Chat and Responses, where every call and
// result is its own message or item, consecutive ones merge into one
// assistant and one user message. Responses reasoning items among them are
// dropped: they may only precede the call item they belong to, which is
// gone. Both sides are HTML comments naming the call id, a record rather
// than a syntax: models shown bracketed "[Tool Call: …]" text in earlier
// turns have been seen writing it instead of calling the tool.
//
// name resolves a result's tool name from its call id ("" when unknown).
// Flatten returns at least one message, or an error.
func Flatten(d Dialect, msgs [][]byte, name func(id string) string) ([][]byte, error) {
	f := flattener{d: d, name: name}
	for _, raw := range msgs {
		m := gjson.ParseBytes(raw)
		if !m.IsObject() {
			return nil, fmt.Errorf("flatten: message is not an object")
		}
		switch d {
		case OpenAIChat:
			f.chat(m)
		case OpenAIResponses:
			f.responses(m)
		case Anthropic:
			f.out = append(f.out, f.blocks(m, "content", f.anthropicBlock))
		case Bedrock:
			f.out = append(f.out, f.blocks(m, "content", f.bedrockBlock))
		case Gemini:
			f.out = append(f.out, f.gemini(m))
		default:
			return nil, fmt.Errorf("flatten: unknown dialect %q", d)
		}
	}
	f.flush()
	if len(f.out) == 0 {
		return nil, fmt.Errorf("flatten: nothing left to send")
	}
	for _, o := range f.out {
		if !jsonsafe.Valid(o) {
			return nil, fmt.Errorf("flatten: rendered an invalid message")
		}
	}
	return f.out, nil
}

// CallNote is how a flattened call reads: an HTML comment with the call id,
// the tool and its arguments on one line.
func CallNote(id, name, args string) string {
	return "<!-- earlier tool call " + commentSafe(id) + ": " + commentSafe(name) + " " + commentSafe(compactArgs(args)) + " -->"
}

// ResultNote is how a flattened result reads: a comment naming the call it
// answers, then the result's text as it was.
func ResultNote(id, name string, isError bool, text string) string {
	what := "result"
	if isError {
		what = "error result"
	}
	head := "<!-- " + what + " of earlier tool call " + commentSafe(id)
	if name != "" {
		head += " (" + commentSafe(name) + ")"
	}
	return head + " -->\n" + text
}

// commentSafe keeps a value from closing the comment early.
func commentSafe(s string) string {
	return strings.ReplaceAll(s, "-->", "-- >")
}

// compactArgs is a call's arguments on one line: OpenAI sends them as a
// JSON string holding JSON, the others as an object; anything else as is.
func compactArgs(args string) string {
	v := gjson.Parse(args)
	if v.Type == gjson.String {
		args = v.Str
		v = gjson.Parse(args)
	}
	if (v.IsObject() || v.IsArray()) && jsonsafe.ValidString(args) {
		return v.Get("@ugly").Raw
	}
	return args
}

type flattener struct {
	d    Dialect
	name func(id string) string
	out  [][]byte
	// pending is the merged message being built (Chat and Responses): its
	// role and the notes so far, plus any non-text parts to keep.
	pendingRole string
	pending     []string
	pendingKeep []string
}

func (f *flattener) lookup(id string) string {
	if f.name == nil {
		return ""
	}
	return f.name(id)
}

// add appends a note to the merged message of role, starting a new one
// when the role changes.
func (f *flattener) add(role, note string, keep ...string) {
	if f.pendingRole != role {
		f.flush()
		f.pendingRole = role
	}
	f.pending = append(f.pending, note)
	f.pendingKeep = append(f.pendingKeep, keep...)
}

func (f *flattener) flush() {
	if f.pendingRole == "" {
		return
	}
	text := QuoteString(strings.Join(f.pending, "\n\n"))
	var b bytes.Buffer
	switch f.d {
	case OpenAIResponses:
		b.WriteString(`{"type":"message","role":`)
		b.Write(QuoteString(f.pendingRole))
		b.WriteString(`,"content":`)
		if len(f.pendingKeep) > 0 {
			b.WriteString(`[{"type":"input_text","text":`)
			b.Write(text)
			b.WriteString(`},`)
			b.WriteString(strings.Join(f.pendingKeep, ","))
			b.WriteString(`]}`)
		} else {
			b.Write(text)
			b.WriteString(`}`)
		}
	default:
		b.WriteString(`{"role":`)
		b.Write(QuoteString(f.pendingRole))
		b.WriteString(`,"content":`)
		b.Write(text)
		b.WriteString(`}`)
	}
	f.out = append(f.out, b.Bytes())
	f.pendingRole, f.pending, f.pendingKeep = "", nil, nil
}

func (f *flattener) passThrough(m gjson.Result) {
	f.flush()
	f.out = append(f.out, []byte(m.Raw))
}

// chat: an assistant message keeps its text and fields, its tool_calls
// become notes in its content; tool and function messages become one user
// message.
func (f *flattener) chat(m gjson.Result) {
	switch role := m.Get("role").String(); {
	case role == "assistant" && (m.Get("tool_calls").IsArray() || m.Get("function_call").Exists()):
		var notes []string
		m.Get("tool_calls").ForEach(func(_, call gjson.Result) bool {
			fn := call.Get("function")
			if !fn.Exists() {
				fn = call.Get("custom")
				notes = append(notes, CallNote(call.Get("id").String(), fn.Get("name").String(), fn.Get("input").String()))
				return true
			}
			notes = append(notes, CallNote(call.Get("id").String(), fn.Get("name").String(), fn.Get("arguments").String()))
			return true
		})
		if fc := m.Get("function_call"); fc.Exists() {
			notes = append(notes, CallNote(fc.Get("name").String(), fc.Get("name").String(), fc.Get("arguments").String()))
		}
		f.flush()
		f.out = append(f.out, flatAssistant(m, strings.Join(notes, "\n")))
	case role == "tool":
		id := m.Get("tool_call_id").String()
		f.add("user", ResultNote(id, f.lookup(id), false, partsText(m.Get("content"))))
	case role == "function":
		n := m.Get("name").String()
		f.add("user", ResultNote(n, n, false, partsText(m.Get("content"))))
	default:
		f.passThrough(m)
	}
}

// flatAssistant rewrites an assistant message without its calls, every
// other field in its place; the notes follow the message's own text.
func flatAssistant(m gjson.Result, notes string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	sep := func() {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
	}
	content := func(v gjson.Result) {
		switch {
		case v.Type == gjson.String && v.Str != "":
			b.Write(QuoteString(v.Str + "\n\n" + notes))
		case v.IsArray():
			b.WriteByte('[')
			n := 0
			v.ForEach(func(_, p gjson.Result) bool {
				if n > 0 {
					b.WriteByte(',')
				}
				b.WriteString(p.Raw)
				n++
				return true
			})
			if n > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"type":"text","text":`)
			b.Write(QuoteString(notes))
			b.WriteString(`}]`)
		default:
			b.Write(QuoteString(notes))
		}
	}
	seen := false
	m.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "tool_calls", "function_call":
			return true
		case "content":
			seen = true
			sep()
			b.WriteString(k.Raw + ":")
			content(v)
			return true
		}
		sep()
		b.WriteString(k.Raw + ":" + v.Raw)
		return true
	})
	if !seen {
		sep()
		b.WriteString(`"content":`)
		content(gjson.Result{})
	}
	b.WriteByte('}')
	return b.Bytes()
}

// partsText is a content's text: a string, or the text of its parts.
func partsText(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	var parts []string
	eachElement(v, func(_, p gjson.Result) bool {
		if t := p.Get("text"); t.Type == gjson.String {
			parts = append(parts, t.Str)
		}
		return true
	})
	return strings.Join(parts, "\n")
}

// responses: call items become one assistant message, output items one
// user message (images and files of an output are kept as its parts),
// reasoning items among them are dropped; any other item stays.
func (f *flattener) responses(m gjson.Result) {
	id := m.Get("call_id").String()
	switch m.Get("type").String() {
	case "function_call":
		f.add("assistant", CallNote(id, m.Get("name").String(), m.Get("arguments").String()))
	case "custom_tool_call":
		f.add("assistant", CallNote(id, m.Get("name").String(), m.Get("input").String()))
	case "local_shell_call":
		f.add("assistant", CallNote(id, "local_shell", m.Get("action").Raw))
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		if id == "" {
			id = m.Get("id").String()
		}
		out := m.Get("output")
		f.add("user", ResultNote(id, f.lookup(id), false, partsText(out)), nonText(out, "input_text")...)
	case "reasoning":
	default:
		f.passThrough(m)
	}
}

// eachElement is ForEach over an array's elements only (gjson's ForEach
// also visits a lone string or an object's values, which must never become
// blocks).
func eachElement(v gjson.Result, fn func(_, p gjson.Result) bool) {
	if v.IsArray() {
		v.ForEach(fn)
	}
}

// nonText is the raw parts of a content array whose type is not textType
// (images, files, documents): a flattened result keeps them beside its text.
func nonText(v gjson.Result, textType string) []string {
	var keep []string
	eachElement(v, func(_, p gjson.Result) bool {
		if p.Get("type").String() != textType {
			keep = append(keep, p.Raw)
		}
		return true
	})
	return keep
}

// blocks rewrites m's content array block by block with conv (which
// returns the raw blocks to put in its place, or nil to keep it); every
// other field stays in its place.
func (f *flattener) blocks(m gjson.Result, key string, conv func(gjson.Result) []string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	m.ForEach(func(k, v gjson.Result) bool {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(k.Raw + ":")
		if k.Str != key || !v.IsArray() {
			b.WriteString(v.Raw)
			return true
		}
		b.WriteByte('[')
		n := 0
		v.ForEach(func(_, blk gjson.Result) bool {
			out := conv(blk)
			if out == nil {
				out = []string{blk.Raw}
			}
			for _, o := range out {
				if n > 0 {
					b.WriteByte(',')
				}
				b.WriteString(o)
				n++
			}
			return true
		})
		b.WriteByte(']')
		return true
	})
	b.WriteByte('}')
	return b.Bytes()
}

// anthropicBlock: tool_use becomes a text block, tool_result a text block
// followed by the images and documents it carried; a cache_control marker
// moves to the last block written, so the cached prefix ends where it did.
func (f *flattener) anthropicBlock(blk gjson.Result) []string {
	var out []string
	switch blk.Get("type").String() {
	case "tool_use":
		out = []string{textBlockRaw(CallNote(blk.Get("id").String(), blk.Get("name").String(), blk.Get("input").Raw))}
	case "tool_result":
		id := blk.Get("tool_use_id").String()
		content := blk.Get("content")
		out = append([]string{textBlockRaw(ResultNote(id, f.lookup(id), blk.Get("is_error").Bool(), partsText(content)))}, nonText(content, "text")...)
	default:
		return nil
	}
	if cc := blk.Get("cache_control"); cc.Exists() {
		last := out[len(out)-1]
		out[len(out)-1] = last[:len(last)-1] + `,"cache_control":` + cc.Raw + `}`
	}
	return out
}

func textBlockRaw(text string) string {
	return `{"type":"text","text":` + string(QuoteString(text)) + `}`
}

// bedrockBlock: toolUse becomes a text block, toolResult a text block
// followed by the images and documents it carried.
func (f *flattener) bedrockBlock(blk gjson.Result) []string {
	if tu := blk.Get("toolUse"); tu.Exists() {
		return []string{`{"text":` + string(QuoteString(CallNote(tu.Get("toolUseId").String(), tu.Get("name").String(), tu.Get("input").Raw))) + `}`}
	}
	tr := blk.Get("toolResult")
	if !tr.Exists() {
		return nil
	}
	id := tr.Get("toolUseId").String()
	var texts, keep []string
	eachElement(tr.Get("content"), func(_, p gjson.Result) bool {
		switch t, j := p.Get("text"), p.Get("json"); {
		case t.Type == gjson.String:
			texts = append(texts, t.Str)
		case j.Exists():
			texts = append(texts, resultJSONText(j))
		default:
			keep = append(keep, p.Raw)
		}
		return true
	})
	note := ResultNote(id, f.lookup(id), tr.Get("status").String() == "error", strings.Join(texts, "\n"))
	return append([]string{`{"text":` + string(QuoteString(note)) + `}`}, keep...)
}

// resultJSONText is a JSON result as text: its strings as they read (the
// output of a tool is usually one of them; with several, each under its
// key), then every other member as "key: value" on one line.
func resultJSONText(j gjson.Result) string {
	if !j.IsObject() {
		return CompactJSON(j)
	}
	var strs [][2]string
	var parts []string
	j.ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.String {
			strs = append(strs, [2]string{k.String(), v.Str})
		} else {
			parts = append(parts, k.String()+": "+CompactJSON(v))
		}
		return true
	})
	texts := make([]string, 0, len(strs)+len(parts))
	for _, kv := range strs {
		if len(strs) == 1 {
			texts = append(texts, kv[1])
		} else {
			texts = append(texts, kv[0]+":\n"+kv[1])
		}
	}
	return strings.Join(append(texts, parts...), "\n")
}

// CompactJSON writes a JSON value without insignificant whitespace, so it
// renders the same whatever the client's formatting.
func CompactJSON(v gjson.Result) string {
	if v.IsObject() || v.IsArray() {
		return v.Get("@ugly").Raw
	}
	return v.Raw
}

// gemini: functionCall and functionResponse parts become text parts, and a
// "function" role (older clients send results under it) becomes "user".
func (f *flattener) gemini(m gjson.Result) []byte {
	conv := func(p gjson.Result) []string {
		if key := gjsonPathIf(p, "functionCall", "function_call"); key != "" {
			fc := p.Get(key)
			id := fc.Get("id").String()
			if id == "" {
				id = fc.Get("name").String()
			}
			return []string{`{"text":` + string(QuoteString(CallNote(id, fc.Get("name").String(), fc.Get("args").Raw))) + `}`}
		}
		key := gjsonPathIf(p, "functionResponse", "function_response")
		if key == "" {
			return nil
		}
		fr := p.Get(key)
		id, name := fr.Get("id").String(), fr.Get("name").String()
		if id == "" {
			id = name
		}
		resp := fr.Get("response")
		isErr := resp.Get("error").Exists() && !resp.Get("output").Exists() && !resp.Get("result").Exists()
		return []string{`{"text":` + string(QuoteString(ResultNote(id, name, isErr, resultJSONText(resp)))) + `}`}
	}
	raw := f.blocks(m, "parts", conv)
	if m.Get("role").String() != "function" {
		return raw
	}
	// Rebuild with the role replaced, every other field in its place.
	var b bytes.Buffer
	b.WriteByte('{')
	gjson.ParseBytes(raw).ForEach(func(k, v gjson.Result) bool {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		if k.Str == "role" {
			b.WriteString(k.Raw + `:"user"`)
			return true
		}
		b.WriteString(k.Raw + ":" + v.Raw)
		return true
	})
	b.WriteByte('}')
	return b.Bytes()
}
