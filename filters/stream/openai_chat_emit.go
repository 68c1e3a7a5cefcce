package stream

import (
	"bytes"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// Emission: content and other deltas, the envelope, the finish and usage
// chunks, [DONE], and error chunks.

// emitText sends a content delta; rawString is a JSON string token. The
// current event's other delta fields (reasoning_content, refusal, ...) ride
// along on its first content delta.
func (n *oaiChat) emitText(rawString string) {
	b := make([]byte, 0, 16+len(rawString)+len(n.extras))
	b = append(b, `{"content":`...)
	b = append(b, rawString...)
	b = append(b, n.extras...)
	b = append(b, '}')
	n.extras = n.extras[:0]
	n.emitDelta(b)
}

// flushExtras sends the current event's other delta fields when no content
// delta took them.
func (n *oaiChat) flushExtras() {
	if len(n.extras) == 0 {
		return
	}
	b := append([]byte{'{'}, n.extras[1:]...)
	n.extras = n.extras[:0]
	n.emitDelta(append(b, '}'))
}

func (n *oaiChat) emitDelta(delta []byte) {
	n.ensureRole()
	n.appendChunk(string(delta), "", "")
}

func (n *oaiChat) ensureRole() {
	if !n.roleSent {
		n.roleSent = true
		n.appendChunk(oaiRoleDelta, "", "")
	}
}

// flushXML releases the text the XML scanner holds (the choice is ending).
func (n *oaiChat) flushXML() {
	if n.opts.XMLToolCalls {
		n.onPieces(n.xml.Flush())
	}
}

// reason is the finish_reason to send: "tool_calls" whenever a call went
// out (clients run tools only then), else the upstream's, else "stop".
func (n *oaiChat) reason(upstream string) string {
	switch {
	case n.nextOut > 0:
		return "tool_calls"
	case upstream == "" || upstream == "tool_calls":
		return "stop"
	}
	return upstream
}

// finish ends choice 0 on the upstream's finish_reason.
func (n *oaiChat) finish(usage string) {
	n.flushXML()
	n.flushExtras()
	n.pump(true)
	if n.cut {
		// finish_reason "length" in the middle of a call, typically: the
		// call is torn, say so before the finish chunk.
		n.end(oaiErrorChunk(oaiCutMessage, "upstream_error"))
		return
	}
	n.ensureRole()
	if usage != "" && !n.usageSent {
		n.usageSent = true
		n.heldUsage = ""
	} else {
		usage = ""
	}
	n.appendChunk("{}", n.reason(n.upFinish), usage)
	n.finished = true
	n.flushUsage()
}

// end closes the client stream: pending text and calls, an error chunk if
// there is an error (or the upstream was cut), the finish chunk, the usage
// chunk, [DONE]. Everything after is ignored.
func (n *oaiChat) end(errChunk []byte) {
	if n.ended {
		return
	}
	if !n.finished {
		n.flushXML()
		n.flushExtras()
		n.pump(true)
		if errChunk == nil && n.cut {
			errChunk = oaiErrorChunk(oaiCutMessage, "upstream_error")
		}
		n.ensureRole()
		if errChunk != nil {
			n.appendError(errChunk)
		}
		n.appendChunk("{}", n.reason(n.upFinish), "")
		n.finished = true
	} else if errChunk != nil {
		n.appendError(errChunk)
	}
	n.flushUsage()
	n.out = append(n.out, oaiDoneEvent...)
	n.ended = true
}

func (n *oaiChat) appendError(payload []byte) {
	n.out = append(n.out, "data: "...)
	n.out = append(n.out, payload...)
	n.out = append(n.out, "\n\n"...)
}

// learn records the envelope fields from chunks seen before the first
// emission.
func (n *oaiChat) learn(t *oaiTop) {
	if n.envFixed {
		return
	}
	if n.envID == "" && t.id.Type == gjson.String && t.id.Str != "" {
		n.envID = t.id.Raw // compared and reused as sent, escapes and all
	}
	if n.envCreated == "" && t.created.Type == gjson.Number {
		n.envCreated = t.created.Raw
	}
	if n.envModel == "" && t.model.Type == gjson.String {
		n.envModel = t.model.Raw
	}
}

func (n *oaiChat) fixEnvelope() {
	if n.envFixed {
		return
	}
	n.envFixed = true
	if n.envID == "" {
		n.envID = string(wire.AppendString(nil, "chatcmpl-"+n.opts.callID()[len("call_"):]))
	}
	if n.envCreated == "" {
		n.envCreated = "0"
	}
	if n.envModel == "" {
		n.envModel = `""`
	}
}

// appendChunk writes one chunk on the §3.7 template. delta "" makes a
// `choices:[]` chunk (usage); finish "" is null.
func (n *oaiChat) appendChunk(delta, finish, usage string) {
	n.fixEnvelope()
	b := n.out
	b = append(b, `data: {"id":`...)
	b = append(b, n.envID...)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = append(b, n.envCreated...)
	b = append(b, `,"model":`...)
	b = append(b, n.envModel...)
	if delta == "" {
		b = append(b, `,"choices":[]`...)
	} else {
		b = append(b, `,"choices":[{"index":0,"delta":`...)
		b = append(b, delta...)
		b = append(b, `,"finish_reason":`...)
		if finish == "" {
			b = append(b, "null"...)
		} else {
			b = wire.AppendString(b, finish)
		}
		b = append(b, "}]"...)
	}
	if usage != "" {
		b = append(b, `,"usage":`...)
		b = append(b, usage...)
	}
	n.out = append(b, "}\n\n"...)
}

// oaiEach calls fn for each element of an array (gjson's ForEach would also
// call it once for a scalar).
func oaiEach(arr gjson.Result, fn func(gjson.Result) bool) {
	if arr.IsArray() {
		arr.ForEach(func(_, v gjson.Result) bool { return fn(v) })
	}
}

func oaiKeyCount(obj gjson.Result) int {
	n := 0
	obj.ForEach(func(_, _ gjson.Result) bool {
		n++
		return true
	})
	return n
}

func oaiIsDone(data []byte) bool { return bytes.HasPrefix(data, []byte("[DONE]")) }

func oaiLooksJSON(data []byte) bool { return len(data) > 0 && data[0] == '{' }

// oaiAppendComment appends a comment-only event with "\n" line ends; an
// event with any other line, or no line, is left out.
func oaiAppendComment(dst, raw []byte) []byte {
	start := len(dst)
	for len(raw) > 0 {
		line, rest := cutLine(raw)
		raw = rest
		if len(line) == 0 {
			continue
		}
		if line[0] != ':' {
			return dst[:start]
		}
		dst = append(append(dst, line...), '\n')
	}
	if len(dst) == start {
		return dst
	}
	return append(dst, '\n')
}

// oaiErrorChunk is the error event openai-go, openai-node, the Vercel SDK
// and VS Code all report: a top-level "error" object.
func oaiErrorChunk(message, typ string) []byte {
	b := []byte(`{"error":{"message":`)
	b = wire.AppendString(b, message)
	b = append(b, `,"type":`...)
	b = wire.AppendString(b, typ)
	return append(b, "}}"...)
}

// oaiErrorFromValue builds the error chunk from an upstream "error" value:
// an object (OpenAI, OpenRouter, Anthropic shapes) or a string.
func oaiErrorFromValue(e gjson.Result) []byte {
	msg, typ := e.String(), "upstream_error"
	if e.IsObject() {
		msg = e.Get("message").String()
		if msg == "" {
			msg = e.Raw
		}
		if t := e.Get("type"); t.Type == gjson.String && t.Str != "" {
			typ = t.Str
		}
	}
	if msg == "" {
		msg = "upstream error"
	}
	b := oaiErrorChunk(msg, typ)
	if code := e.Get("code"); e.IsObject() && (code.Type == gjson.String || code.Type == gjson.Number) {
		b = append(b[:len(b)-2], `,"code":`...)
		b = append(b, code.Raw...)
		b = append(b, "}}"...)
	}
	return b
}

// oaiErrorFromEvent builds the error chunk from an `event: error` payload.
func oaiErrorFromEvent(data []byte) []byte {
	if jsonsafe.Valid(data) {
		root := gjson.ParseBytes(data)
		if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
			return oaiErrorFromValue(e)
		}
		if root.IsObject() {
			return oaiErrorFromValue(root)
		}
	}
	return oaiErrorChunk(string(data), "upstream_error")
}
