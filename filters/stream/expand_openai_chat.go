package stream

import (
	"bytes"
	"math"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// OpenAI Chat splice rules:
//
//   - the continuation's chunks get the first stream's id, created and
//     model: openai-go's ChatCompletionAccumulator refuses a chunk whose id
//     differs from the first one (AddChunk returns false and drops it), and
//     OpenAI's chunks all repeat one envelope (id, created, model).
//     The client asked one question and gets one completion;
//   - the role goes out once: once the client has it, a continuation's role
//     field is removed, and a chunk left with nothing (the normalizer's
//     role-only first delta) is dropped;
//   - tool_call indexes are kept as the continuation gives them: the client
//     got no tool call from a message that was continued (all its calls were
//     held, then dropped);
//   - usage is the last message's (the one the client's answer comes from).

// oaiLegacyKey is the call key of a legacy delta.function_call.
const (
	oaiLegacyKey  = math.MinInt64
	oaiNoIndexKey = math.MinInt64 + 1
)

type oaiExpCall struct {
	key     int64
	id      string
	name    string // the first name fragment
	cat     string // every name fragment, concatenated
	args    []byte
	phantom bool
}

type oaiExp struct {
	roleSent                    bool
	envID, envCreated, envModel string // raw tokens of the first stream's envelope
	haveEnv                     bool

	// The current message.
	text    []byte
	hasText bool
	holding bool
	held    []expHeld
	calls   []*oaiExpCall
	byKey   map[int64]*oaiExpCall
	errored bool
}

func (o *oaiExp) reset() {
	o.text, o.hasText, o.holding, o.held, o.calls, o.byKey, o.errored = nil, false, false, nil, nil, nil, false
}

func (o *oaiExp) event(x *expander, ev Event) {
	if !ev.HasData {
		// Comments keep the connection alive: never held.
		x.out = append(x.out, ev.Raw...)
		return
	}
	data := bytes.TrimSpace(ev.Data)
	if oaiIsDone(data) {
		if o.holding {
			o.held = append(o.held, expHeld{raw: ev.Raw, data: data, kind: "done", idx: -1})
			o.end(x)
			return
		}
		x.out = append(x.out, ev.Raw...)
		o.reset()
		return
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() || !jsonsafe.Valid(data) {
		o.put(x, expHeld{raw: ev.Raw, data: data, kind: "other", idx: -1})
		return
	}
	raw := ev.Raw
	if !x.cont && !o.haveEnv {
		if id := root.Get("id"); id.Type == gjson.String && id.Str != "" {
			o.haveEnv, o.envID = true, id.Raw
			if c := root.Get("created"); c.Type == gjson.Number {
				o.envCreated = c.Raw
			}
			if m := root.Get("model"); m.Type == gjson.String {
				o.envModel = m.Raw
			}
		}
	}
	if x.cont {
		d, changed, drop := o.splice(data)
		if drop {
			return
		}
		if changed {
			data, raw = d, nil
			root = gjson.ParseBytes(data)
		}
	}
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		o.errored = true
	}
	isCall, hasRole := false, false
	root.Get("choices").ForEach(func(_, ch gjson.Result) bool {
		delta := ch.Get("delta")
		if delta.Get("role").Exists() {
			hasRole = true
		}
		if c := delta.Get("content"); c.Type == gjson.String {
			o.text = append(o.text, c.Str...)
			o.hasText = o.hasText || c.Str != ""
		}
		if tc := delta.Get("tool_calls"); tc.IsArray() {
			tc.ForEach(func(_, e gjson.Result) bool {
				if e.IsObject() {
					isCall = true
					o.track(e)
				}
				return true
			})
		}
		if fc := delta.Get("function_call"); fc.IsObject() {
			isCall = true
			o.trackLegacy(fc)
		}
		return true
	})
	if isCall {
		o.holding = true
	}
	if raw == nil {
		raw = Encode(Data(data))
	}
	if !o.holding && hasRole {
		o.roleSent = true
	}
	o.put(x, expHeld{raw: raw, data: data, kind: "json", idx: -1})
}

// put sends an event, or holds it while the message holds.
func (o *oaiExp) put(x *expander, h expHeld) {
	if o.holding {
		o.held = append(o.held, h)
		return
	}
	x.out = append(x.out, h.raw...)
}

// splice rewrites a continuation chunk for the client's stream.
func (o *oaiExp) splice(data []byte) (out []byte, changed, drop bool) {
	out = data
	set := func(path, raw string) {
		if v := gjson.GetBytes(out, path); v.Exists() && v.Raw != raw && raw != "" {
			if d, err := sjson.SetRawBytes(out, path, []byte(raw)); err == nil {
				out, changed = d, true
			}
		}
	}
	if o.haveEnv {
		set("id", o.envID)
		set("created", o.envCreated)
		set("model", o.envModel)
	}
	if !o.roleSent {
		return out, changed, false
	}
	root := gjson.ParseBytes(out)
	choices := root.Get("choices")
	if !choices.IsArray() {
		return out, changed, false
	}
	n := 0
	choices.ForEach(func(_, _ gjson.Result) bool { n++; return true })
	for i := range n {
		p := "choices." + strconv.Itoa(i) + ".delta.role"
		if gjson.GetBytes(out, p).Exists() {
			if d, err := sjson.DeleteBytes(out, p); err == nil {
				out, changed = d, true
			}
		}
	}
	if changed && n == 1 && oaiEmptyChunk(gjson.ParseBytes(out)) {
		return out, changed, true
	}
	return out, changed, false
}

// oaiEmptyChunk: a one-choice chunk that tells a client nothing: every delta
// field null or "", no finish_reason, no usage, no error.
func oaiEmptyChunk(root gjson.Result) bool {
	if root.Get("usage").IsObject() || root.Get("error").Exists() {
		return false
	}
	ch := root.Get("choices.0")
	if fr := ch.Get("finish_reason"); fr.Exists() && fr.Type != gjson.Null {
		return false
	}
	empty := true
	ch.Get("delta").ForEach(func(_, v gjson.Result) bool {
		if v.Type != gjson.Null && !(v.Type == gjson.String && v.Str == "") {
			empty = false
		}
		return empty
	})
	return empty
}

func (o *oaiExp) call(key int64) *oaiExpCall {
	if o.byKey == nil {
		o.byKey = map[int64]*oaiExpCall{}
	}
	c := o.byKey[key]
	if c == nil {
		c = &oaiExpCall{key: key}
		o.byKey[key] = c
		o.calls = append(o.calls, c)
	}
	return c
}

func (o *oaiExp) fragment(c *oaiExpCall, id, name, args gjson.Result) {
	if id.Type == gjson.String && id.Str != "" && c.id == "" {
		c.id = id.Str
	}
	if name.Type == gjson.String && name.Str != "" {
		if c.name == "" {
			c.name = name.Str
		}
		c.cat += name.Str
		if name.Str == wire.ExpandToolName || c.cat == wire.ExpandToolName {
			c.phantom = true
		}
	}
	switch {
	case args.Type == gjson.String:
		c.args = append(c.args, args.Str...)
	case args.IsObject() || args.IsArray():
		c.args = append(c.args, expCompact([]byte(args.Raw))...)
	}
}

func (o *oaiExp) track(e gjson.Result) {
	key := int64(oaiNoIndexKey)
	if i := e.Get("index"); i.Type == gjson.Number {
		key = i.Int()
		if key == oaiLegacyKey || key == oaiNoIndexKey {
			key = -1
		}
	}
	c := o.call(key)
	if fn := e.Get("function"); fn.Exists() {
		o.fragment(c, e.Get("id"), fn.Get("name"), fn.Get("arguments"))
	} else {
		o.fragment(c, e.Get("id"), e.Get("custom.name"), e.Get("custom.input"))
	}
}

func (o *oaiExp) trackLegacy(fc gjson.Result) {
	c := o.call(oaiLegacyKey)
	o.fragment(c, gjson.Result{}, fc.Get("name"), fc.Get("arguments"))
}

func (o *oaiExp) phantoms() bool {
	for _, c := range o.calls {
		if c.phantom {
			return true
		}
	}
	return false
}

// end is the end of a message that held calls.
func (o *oaiExp) end(x *expander) {
	switch {
	case !o.phantoms():
		for _, h := range o.held {
			x.out = append(x.out, h.raw...)
		}
		o.reset()
	case o.errored:
		// The message failed: no continuation; the client gets the error
		// without the phantom calls.
		o.fail(x)
	default:
		t := o.turn()
		x.pending = &t
	}
}

func (o *oaiExp) streamEnd(x *expander) {
	if o.holding {
		o.end(x)
	}
}

func (o *oaiExp) continuation(*expander) { o.reset() }

// turn is the message as a request's assistant message, only the
// expand_context calls kept.
func (o *oaiExp) turn() wire.Turn {
	var t wire.Turn
	b := []byte(`{"role":"assistant","content":`)
	if o.hasText {
		b = append(b, expQuote(string(o.text))...)
	} else {
		b = append(b, "null"...)
	}
	var calls, legacy []byte
	for i, c := range o.calls {
		if !c.phantom {
			continue
		}
		args := string(c.args)
		if args == "" {
			args = "{}"
		}
		id := c.id
		if c.key == oaiLegacyKey {
			id = wire.ExpandToolName
			legacy = append(legacy, `,"function_call":{"name":`...)
			legacy = append(legacy, expQuote(wire.ExpandToolName)...)
			legacy = append(legacy, `,"arguments":`...)
			legacy = append(legacy, expQuote(args)...)
			legacy = append(legacy, '}')
		} else {
			if id == "" {
				id = NewCallID()
				c.id = id
			}
			if len(calls) > 0 {
				calls = append(calls, ',')
			}
			calls = append(calls, `{"id":`...)
			calls = append(calls, expQuote(id)...)
			calls = append(calls, `,"type":"function","function":{"name":`...)
			calls = append(calls, expQuote(wire.ExpandToolName)...)
			calls = append(calls, `,"arguments":`...)
			calls = append(calls, expQuote(args)...)
			calls = append(calls, `}}`...)
		}
		t.Calls = append(t.Calls, wire.NewExpandCall(id, gjson.Result{Type: gjson.String, Str: args}, i))
	}
	if len(calls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		b = append(b, calls...)
		b = append(b, ']')
	}
	if len(legacy) > 0 {
		b = append(b, legacy...)
	}
	t.Assistant = append(b, '}')
	return t
}

// fail ends the client's stream from the held message: phantom calls
// removed, the real ones re-indexed densely, the finish reason fitting.
func (o *oaiExp) fail(x *expander) {
	newIdx := map[int64]int{}
	real := 0
	for _, c := range o.calls {
		if !c.phantom && c.key != oaiLegacyKey {
			newIdx[c.key] = real
			real++
		}
	}
	legacyReal := o.byKey[oaiLegacyKey] != nil && !o.byKey[oaiLegacyKey].phantom
	sawDone := false
	for _, h := range o.held {
		switch h.kind {
		case "done":
			sawDone = true
			x.out = append(x.out, h.raw...)
		case "json":
			d, changed, drop := o.strip(h.data, newIdx, real > 0, legacyReal)
			switch {
			case drop:
			case changed:
				x.out = append(x.out, Encode(Data(d))...)
			default:
				x.out = append(x.out, h.raw...)
			}
		default:
			x.out = append(x.out, h.raw...)
		}
	}
	if !sawDone {
		x.out = append(x.out, oaiDoneEvent...)
	}
	o.reset()
}

// strip removes phantom calls from one held chunk.
func (o *oaiExp) strip(data []byte, newIdx map[int64]int, hasReal, legacyReal bool) (out []byte, changed, drop bool) {
	out = data
	root := gjson.ParseBytes(data)
	removed := false
	i := -1
	root.Get("choices").ForEach(func(_, ch gjson.Result) bool {
		i++
		base := "choices." + strconv.Itoa(i)
		delta := ch.Get("delta")
		if tc := delta.Get("tool_calls"); tc.IsArray() {
			var arr []byte
			n := 0
			tc.ForEach(func(_, e gjson.Result) bool {
				key := int64(oaiNoIndexKey)
				if idx := e.Get("index"); idx.Type == gjson.Number {
					key = idx.Int()
					if key == oaiLegacyKey || key == oaiNoIndexKey {
						key = -1
					}
				}
				if c := o.byKey[key]; c != nil && c.phantom {
					removed = true
					return true
				}
				raw := e.Raw
				if ni, ok := newIdx[key]; ok && e.Get("index").Type == gjson.Number && e.Get("index").Raw != strconv.Itoa(ni) {
					if d, err := sjson.Set(raw, "index", ni); err == nil {
						raw, changed = d, true
					}
				}
				if n > 0 {
					arr = append(arr, ',')
				}
				arr = append(arr, raw...)
				n++
				return true
			})
			var d []byte
			var err error
			if n == 0 {
				d, err = sjson.DeleteBytes(out, base+".delta.tool_calls")
			} else {
				d, err = sjson.SetRawBytes(out, base+".delta.tool_calls", append(append([]byte{'['}, arr...), ']'))
			}
			if err == nil && (removed || changed) {
				out, changed = d, true
			}
		}
		if fc := delta.Get("function_call"); fc.IsObject() && !legacyReal {
			if d, err := sjson.DeleteBytes(out, base+".delta.function_call"); err == nil {
				out, changed, removed = d, true, true
			}
		}
		if fr := ch.Get("finish_reason"); fr.Type == gjson.String {
			want := fr.Str
			switch {
			case hasReal:
				want = "tool_calls"
			case legacyReal:
				want = "function_call"
			case fr.Str == "tool_calls" || fr.Str == "function_call":
				want = "stop"
			}
			if want != fr.Str {
				if d, err := sjson.SetBytes(out, base+".finish_reason", want); err == nil {
					out, changed = d, true
				}
			}
		}
		return true
	})
	if removed && i == 0 && oaiEmptyChunk(gjson.ParseBytes(out)) {
		return out, changed, true
	}
	return out, changed, false
}

func (o *oaiExp) holds() bool { return o.holding }

func (o *oaiExp) release(x *expander) {
	for _, h := range o.held {
		x.out = append(x.out, h.raw...)
	}
	o.reset()
}
