package stream

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"
)

// Reading one chat.completion.chunk, and deciding whether it already
// conforms to the emission profile (and can go out byte for byte).

// oaiTop holds a chunk's top-level fields, read in one pass (the first of
// repeated keys, as gjson.Get would).
type oaiTop struct {
	id, object, created, model, choices, usage, err gjson.Result
}

func oaiParseTop(data []byte) oaiTop {
	var t oaiTop
	gjson.ParseBytes(data).ForEach(func(k, v gjson.Result) bool {
		var dst *gjson.Result
		switch k.Str {
		case "id":
			dst = &t.id
		case "object":
			dst = &t.object
		case "created":
			dst = &t.created
		case "model":
			dst = &t.model
		case "choices":
			dst = &t.choices
		case "usage":
			dst = &t.usage
		case "error":
			dst = &t.err
		default:
			return true
		}
		if !dst.Exists() {
			*dst = v
		}
		return true
	})
	return t
}

// oaiChoice holds the fields of a choice, read in one pass.
type oaiChoice struct {
	index, delta, finish gjson.Result
}

func oaiParseChoice(c gjson.Result) oaiChoice {
	var ch oaiChoice
	if !c.IsObject() {
		return ch
	}
	c.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "index":
			if !ch.index.Exists() {
				ch.index = v
			}
		case "delta":
			if !ch.delta.Exists() {
				ch.delta = v
			}
		case "finish_reason":
			if !ch.finish.Exists() {
				ch.finish = v
			}
		}
		return true
	})
	return ch
}

// envelopeOK: the chunk carries this stream's id and a full envelope, so it
// may go out as it came.
func (n *oaiChat) envelopeOK(t *oaiTop) bool {
	return n.envID != "" && t.id.Type == gjson.String && t.id.Raw == n.envID && t.object.Str == oaiChunkObject &&
		t.created.Type == gjson.Number && t.model.Type == gjson.String && !t.err.Exists()
}

func (n *oaiChat) onChunk(ev *Event, data []byte) {
	top := oaiParseTop(data)
	if top.err.Exists() && top.err.Type != gjson.Null {
		n.end(oaiErrorFromValue(top.err))
		return
	}
	n.learn(&top)

	var c0 oaiChoice
	found, nChoices := false, 0
	oaiEach(top.choices, func(c gjson.Result) bool {
		nChoices++
		if !found {
			if ch := oaiParseChoice(c); !ch.index.Exists() || ch.index.Int() == 0 {
				c0, found = ch, true
			}
		}
		return true
	})
	usage := top.usage
	hasUsage := usage.IsObject()
	if !found || n.finished {
		// Nothing for choice 0 (a usage chunk, Azure's prompt_filter_results,
		// another choice), or choice 0 already finished (openai-go would
		// overwrite its finish_reason).
		if hasUsage {
			n.onUsage(ev, data, &top, nChoices)
		}
		return
	}

	if n.conforms(&top, c0, nChoices, hasUsage) {
		n.emitRaw(ev, data)
		return
	}

	delta := c0.delta
	n.extras = n.extras[:0]
	if !delta.IsObject() {
		delta = gjson.Result{}
	}
	delta.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "role", "content", "tool_calls":
		default:
			if v.Type != gjson.Null && !(v.Type == gjson.String && v.Str == "") {
				n.extras = append(n.extras, ',')
				n.extras = append(n.extras, k.Raw...)
				n.extras = append(n.extras, ':')
				n.extras = append(n.extras, v.Raw...)
			}
		}
		return true
	})
	if content := delta.Get("content"); content.Type == gjson.String && content.Str != "" {
		if n.opts.XMLToolCalls {
			n.onPieces(n.xml.Feed(content.Str))
		} else {
			n.emitText(content.Raw)
		}
	}
	n.flushExtras()
	oaiEach(delta.Get("tool_calls"), func(e gjson.Result) bool {
		n.onToolCall(e)
		return true
	})

	fr := c0.finish
	switch {
	case fr.Type == gjson.String && fr.Str == "error":
		// OpenRouter's way of saying the provider failed mid-stream.
		n.end(oaiErrorChunk("upstream finished with an error", "upstream_error"))
	case fr.Type == gjson.String && fr.Str != "":
		n.upFinish = fr.Str
		u := ""
		if hasUsage {
			u = usage.Raw
		}
		n.finish(u)
	case hasUsage:
		n.keepUsage(usage.Raw)
	}
}

// conforms reports whether a chunk for choice 0 can go out unchanged given
// the state, and if so updates the state as if it had been processed. Three
// shapes qualify: a text/role delta, an arguments fragment of the current
// call, and the finish chunk when nothing is pending.
func (n *oaiChat) conforms(top *oaiTop, c0 oaiChoice, nChoices int, hasUsage bool) bool {
	// learn ran first, so before the first emission envID is this stream's
	// first id too.
	if nChoices != 1 || c0.index.Type != gjson.Number || !n.envelopeOK(top) {
		return false
	}
	delta := c0.delta
	if !delta.IsObject() {
		return false
	}
	fr := c0.finish
	if fr.Exists() && fr.Type != gjson.Null {
		return fr.Type == gjson.String && n.conformingFinish(delta, fr.Str, hasUsage)
	}
	if hasUsage {
		return false
	}
	var role, content, calls gjson.Result
	delta.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "role":
			role = v
		case "content":
			content = v
		case "tool_calls":
			calls = v
		}
		return true
	})
	if calls.Exists() && calls.Type != gjson.Null {
		// Exactly one entry, or the general path (which also drops "[]").
		return calls.IsArray() && !role.Exists() && (content.Type == gjson.Null || !content.Exists()) &&
			n.conformingFragment(calls)
	}
	if role.Exists() && (role.Str != "assistant" || n.roleSent) {
		return false
	}
	switch content.Type {
	case gjson.Null:
	case gjson.String:
		if n.opts.XMLToolCalls && content.Str != "" &&
			(!n.xml.Idle() || strings.IndexByte(content.Str, '<') >= 0) {
			return false
		}
	default:
		return false
	}
	if !role.Exists() {
		n.ensureRole() // a role chunk first, then the event as it came
	}
	n.roleSent = true
	return true
}

// conformingFragment: `{"tool_calls":[{"index":i,"function":{"arguments":"…"}}]}`
// for the current call, already started under the same index, or the first
// delta of the next call when the current one is complete.
func (n *oaiChat) conformingFragment(calls gjson.Result) bool {
	if !n.roleSent {
		return false
	}
	var e gjson.Result
	count := 0
	oaiEach(calls, func(v gjson.Result) bool {
		e = v
		count++
		return count < 2
	})
	if count != 1 {
		return false
	}
	fn := e.Get("function")
	if !fn.IsObject() {
		return false
	}
	if oaiKeyCount(e) == 4 && oaiKeyCount(fn) == 2 {
		return n.conformingStart(e, fn)
	}
	if oaiKeyCount(e) != 2 || oaiKeyCount(fn) != 1 || n.cursor >= len(n.calls) {
		return false
	}
	idx, args := e.Get("index"), fn.Get("arguments")
	if idx.Type != gjson.Number || args.Type != gjson.String || args.Str == "" {
		return false
	}
	c := n.calls[n.cursor]
	if !c.started || c.done || len(c.held) > 0 || n.byIndex[idx.Int()] != c || int64(c.out) != idx.Int() || c.args.closed {
		return false
	}
	shape := c.args
	if shape.feed(args.Str); shape.scalar {
		return false
	}
	c.args = shape
	n.last = c
	return true
}

// conformingStart: `{"index":i,"id":"…","type":"function","function":{"name":"…","arguments":""}}`
// with i the next client index, a fresh id, and every earlier call complete.
func (n *oaiChat) conformingStart(e, fn gjson.Result) bool {
	idx, id, name, args := e.Get("index"), e.Get("id"), fn.Get("name"), fn.Get("arguments")
	if idx.Type != gjson.Number || idx.Int() != int64(n.nextOut) || e.Get("type").Str != "function" ||
		id.Type != gjson.String || id.Str == "" || n.byID[id.Str] != nil || n.usedIDs[id.Str] ||
		name.Type != gjson.String || name.Str == "" || args.Type != gjson.String || args.Str != "" ||
		n.byIndex[idx.Int()] != nil {
		return false
	}
	for _, c := range n.calls[n.cursor:] {
		if !c.started || len(c.held) > 0 || !c.args.closed {
			return false
		}
	}
	for _, c := range n.calls[n.cursor:] {
		c.done = true
	}
	c := n.newCall()
	n.cursor = len(n.calls) - 1
	c.upID, c.upIdx, c.hasIdx, c.name = id.Str, idx.Int(), true, name.Str
	n.setID(id.Str, c)
	n.setIndex(idx.Int(), c)
	if n.usedIDs == nil {
		n.usedIDs = map[string]bool{}
	}
	n.usedIDs[id.Str] = true
	c.out = n.nextOut
	n.nextOut++
	c.started = true
	n.last = c
	return true
}

// conformingFinish: `{"index":0,"delta":{},"finish_reason":X}` with every
// call complete and nothing held, X already what we would send.
func (n *oaiChat) conformingFinish(delta gjson.Result, reason string, hasUsage bool) bool {
	if !n.roleSent || !n.xml.Idle() || reason == "" || reason == "error" || (hasUsage && n.usageSent) {
		return false
	}
	if oaiKeyCount(delta) != 0 {
		return false
	}
	for _, c := range n.calls[n.cursor:] {
		if !c.started || len(c.held) > 0 || !c.args.closed {
			return false
		}
	}
	if want := n.reason(reason); want != reason {
		return false
	}
	for _, c := range n.calls[n.cursor:] {
		c.done = true
	}
	n.cursor = len(n.calls)
	n.upFinish = reason
	n.finished = true
	if hasUsage {
		n.usageSent = true
	}
	return true
}

// emitRaw writes an event that needs no change, byte for byte when its
// framing is already `data: <json>\n\n`.
func (n *oaiChat) emitRaw(ev *Event, data []byte) {
	n.fixEnvelope()
	if ev.Name == "" && !ev.Incomplete && len(ev.Raw) == len(data)+8 &&
		bytes.HasPrefix(ev.Raw, []byte("data: ")) && bytes.HasSuffix(ev.Raw, []byte("\n\n")) {
		n.out = append(n.out, ev.Raw...)
	} else {
		n.out = append(n.out, "data: "...)
		n.out = append(n.out, data...)
		n.out = append(n.out, "\n\n"...)
	}
	if n.finished && n.heldUsage != "" {
		n.flushUsage()
	}
}

// onUsage handles usage that comes outside choice 0: the usage chunk.
func (n *oaiChat) onUsage(ev *Event, data []byte, top *oaiTop, nChoices int) {
	if n.usageSent || !n.opts.IncludeUsage {
		return
	}
	if !n.finished {
		n.keepUsage(top.usage.Raw)
		return
	}
	if nChoices == 0 && top.choices.IsArray() && n.envelopeOK(top) {
		n.usageSent = true
		n.emitRaw(ev, data)
		return
	}
	n.keepUsage(top.usage.Raw)
	n.flushUsage()
}

func (n *oaiChat) keepUsage(raw string) {
	if !n.usageSent {
		n.heldUsage = raw
	}
}

func (n *oaiChat) flushUsage() {
	if n.heldUsage != "" && !n.usageSent && n.opts.IncludeUsage {
		n.usageSent = true
		n.appendChunk("", "", n.heldUsage)
	}
	n.heldUsage = ""
}
