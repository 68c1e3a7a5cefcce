package stream

import (
	"math"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// OpenAI Responses stream repair (platform.openai.com/docs/api-reference/responses-streaming). What a client must be
// able to rely on, and the reason for each rule:
//
//   - output_index is dense in order of first appearance, re-mapped through
//     one table for every event that carries it (VS Code keys calls by it);
//     content_index is left alone;
//   - a function_call item gets its response.output_item.done before
//     response.completed: VS Code emits the call only there, so an upstream
//     that leaves it out loses the call. It is synthesized (with the
//     function_call_arguments.done before it if that is missing too) from
//     the added item and the accumulated arguments. Not before
//     response.incomplete or response.failed: arguments may be cut off there,
//     and VS Code would run the call. A missing call_id is filled in;
//   - the stream ends with one terminal event, response.completed,
//     response.incomplete or response.failed as the upstream sent it, or with
//     an error event; nothing goes out after it (OpenAI follows its error
//     event with response.failed: every SDK has stopped at the error by then);
//   - sequence_number stays dense from the first event's number when events
//     are dropped or synthesized;
//   - errors are errors to openai-go: its Stream ends with a StreamError on a
//     payload with a top-level "error" key, and only then (§2.1). So an error
//     event in the documented shape (code and message at the top) also gets
//     the nested "error" object OpenAI sends in practice, and "error":null on
//     any other event, which would fail the stream, is removed.
//
// A stream that breaks off before a terminal event ends with an error event,
// not response.failed: openai-go treats response.failed as an ordinary event,
// so only the error event reaches a Go caller as an error. It carries the
// documented fields (code, message, param: what VS Code reads) and the nested
// object (what the SDKs raise on). Open calls are not finished first, for the
// reason above.
//
// Events that need no change go out byte for byte, in the Write that
// completed them.

// respUnknownIndex is the table key for an event without a usable output_index.
const respUnknownIndex = math.MinInt64

// respEndedEarly is the error a client gets when the upstream body ended
// before a terminal event; synth sets its sequence_number.
const respEndedEarly = `{"type":"error","sequence_number":0,"code":"server_error","message":"upstream stream ended early",` +
	`"param":null,"error":{"type":"server_error","code":"server_error","message":"upstream stream ended early","param":null}}`

type respNormalizer struct {
	opts Options
	dec  Decoder
	out  []byte

	ended bool // a terminal or error event went out
	named bool // the upstream sends "event:" lines; synthesized events follow suit

	seqInit bool
	seqNext int64 // the sequence_number the next numbered event gets

	items map[int64]int // upstream output_index → client output_index
	calls []*respCall   // per client output_index; nil unless a function_call
}

// respCall is what is known of one function_call item.
type respCall struct {
	item      []byte // the item as sent in output_item.added (call_id filled)
	itemID    string
	callID    string
	args      []byte // accumulated argument deltas
	finalArgs string // from function_call_arguments.done
	argsDone  bool
	done      bool // output_item.done went out
}

func (c *respCall) arguments() string {
	if c.argsDone {
		return c.finalArgs
	}
	return string(c.args)
}

// NewOpenAIResponses returns the repair for an OpenAI Responses SSE stream.
func NewOpenAIResponses(opts Options) Normalizer {
	return &respNormalizer{opts: opts, named: true, items: map[int64]int{}}
}

func (r *respNormalizer) Write(p []byte) []byte {
	for _, ev := range r.dec.Feed(p) {
		r.event(ev)
	}
	return r.take()
}

func (r *respNormalizer) Close() []byte {
	if tail := r.dec.Flush(); tail != nil {
		r.event(*tail)
	}
	if !r.ended {
		r.ended = true
		r.synth("error", respEndedEarly)
	}
	return r.take()
}

func (r *respNormalizer) take() []byte {
	out := r.out
	r.out = nil
	return out
}

func (r *respNormalizer) event(ev Event) {
	if r.ended {
		return
	}
	if !ev.HasData {
		switch {
		case ev.Incomplete:
		case ev.Name == "error":
			r.out = append(r.out, antRaw(ev.Raw)...)
			r.ended = true
		default:
			// Comments, keep-alives, events without data (clients skip them).
			r.out = append(r.out, antRaw(ev.Raw)...)
		}
		return
	}
	root := gjson.ParseBytes(ev.Data)
	if !root.IsObject() || !jsonsafe.Valid(ev.Data) {
		// Not JSON ("[DONE]" from a compatible server, garbage): openai-go
		// would fail the stream on it. A missing terminal is handled at Close.
		return
	}
	r.named = ev.Name != ""
	kind := root.Get("type").Str
	if kind == "" || ev.Name == "error" {
		kind = ev.Name
	}
	e := respOut{ev: ev, data: ev.Data}
	if errKey := root.Get("error"); errKey.Exists() && kind != "error" {
		if errKey.Type != gjson.Null {
			kind = "error" // openai-go ends the stream on it: so do we
		} else if d, err := sjson.DeleteBytes(e.data, "error"); err == nil {
			// §2.1: openai-go fails the stream on "error":null as well.
			e.data, e.dirty = d, true
		}
	}
	switch kind {
	case "error":
		if !root.Get("error").Exists() {
			// The documented shape has code and message at the top; OpenAI
			// sends them nested too, and that nested object is what openai-go
			// (and openai-node, openai-python) raise on. Add it.
			nested := `{"code":` + respRawOr(root.Get("code")) + `,"message":` + respRawOr(root.Get("message")) +
				`,"param":` + respRawOr(root.Get("param")) + `}`
			e.setRaw("error", nested)
		}
		r.ended = true
	case "response.incomplete", "response.failed":
		r.ended = true
	case "response.completed":
		r.finishCalls()
		r.ended = true
	case "response.output_item.added":
		c := len(r.calls)
		r.calls = append(r.calls, nil)
		r.items[respIndexKey(root.Get("output_index"))] = c
		e.setIndex(root.Get("output_index"), c)
		if root.Get("item.type").Str == "function_call" {
			call := &respCall{itemID: root.Get("item.id").Str, callID: root.Get("item.call_id").Str}
			if call.callID == "" {
				call.callID = r.opts.callID()
				e.set("item.call_id", call.callID)
			}
			call.item = []byte(gjson.GetBytes(e.data, "item").Raw)
			r.calls[c] = call
		}
	default:
		oi := root.Get("output_index")
		if !oi.Exists() {
			break
		}
		key := respIndexKey(oi)
		c, ok := r.items[key]
		if !ok {
			// An item the upstream never announced: it still gets the next
			// dense index, so later items stay consistent.
			c = len(r.calls)
			r.calls = append(r.calls, nil)
			r.items[key] = c
		}
		e.setIndex(oi, c)
		r.track(kind, root, c, &e)
	}
	r.emit(e)
}

// track follows a function call's arguments and completion.
func (r *respNormalizer) track(kind string, root gjson.Result, c int, e *respOut) {
	call := r.calls[c]
	switch kind {
	case "response.function_call_arguments.delta":
		if call != nil && !call.done {
			call.args = append(call.args, root.Get("delta").Str...)
		}
	case "response.function_call_arguments.done":
		if args := root.Get("arguments"); call != nil && args.Type == gjson.String {
			call.finalArgs, call.argsDone = args.Str, true
		}
	case "response.output_item.done":
		if root.Get("item.type").Str != "function_call" {
			return
		}
		if id := root.Get("item.call_id"); id.Type != gjson.String || id.Str == "" {
			if call != nil {
				e.set("item.call_id", call.callID) // the one the added item had
			} else {
				e.set("item.call_id", r.opts.callID())
			}
		}
		if call != nil {
			if !root.Get("item.arguments").Exists() {
				e.set("item.arguments", call.arguments())
			}
			call.done = true
		}
	}
}

// finishCalls sends, before response.completed, the closing events of every
// function call the upstream left open.
func (r *respNormalizer) finishCalls() {
	for c, call := range r.calls {
		if call == nil || call.done {
			continue
		}
		call.done = true
		args := call.arguments()
		if !call.argsDone {
			d := []byte(`{"type":"response.function_call_arguments.done","sequence_number":0}`)
			d, _ = sjson.SetBytes(d, "item_id", call.itemID)
			d, _ = sjson.SetBytes(d, "output_index", c)
			d, _ = sjson.SetBytes(d, "arguments", args)
			r.synth("response.function_call_arguments.done", string(d))
		}
		item := call.item
		item, _ = sjson.SetBytes(item, "status", "completed")
		item, _ = sjson.SetBytes(item, "arguments", args)
		item, _ = sjson.SetBytes(item, "call_id", call.callID)
		d := []byte(`{"type":"response.output_item.done","sequence_number":0}`)
		d, _ = sjson.SetBytes(d, "output_index", c)
		d, _ = sjson.SetRawBytes(d, "item", item)
		r.synth("response.output_item.done", string(d))
	}
}

// respOut is an event on its way out: the original, and what changed.
type respOut struct {
	ev    Event
	data  []byte
	dirty bool
}

func (e *respOut) set(path string, v any) {
	if d, err := sjson.SetBytes(e.data, path, v); err == nil {
		e.data, e.dirty = d, true
	}
}

func (e *respOut) setRaw(path, raw string) {
	if d, err := sjson.SetRawBytes(e.data, path, []byte(raw)); err == nil {
		e.data, e.dirty = d, true
	}
}

// respRawOr is a field's JSON text, or null when it is missing.
func respRawOr(v gjson.Result) string {
	if !v.Exists() {
		return "null"
	}
	return v.Raw
}

// setIndex writes the client output_index unless the upstream's is already it.
func (e *respOut) setIndex(upstream gjson.Result, c int) {
	if upstream.Raw != strconv.Itoa(c) {
		e.set("output_index", c)
	}
}

// emit renumbers the event if need be and sends it.
func (r *respNormalizer) emit(e respOut) {
	if sn := gjson.GetBytes(e.data, "sequence_number"); sn.Exists() {
		if !r.seqInit {
			r.seqInit, r.seqNext = true, sn.Int()
		}
		if sn.Raw != strconv.FormatInt(r.seqNext, 10) {
			e.set("sequence_number", r.seqNext)
		}
		r.seqNext++
	}
	if !e.dirty && !e.ev.Incomplete {
		r.out = append(r.out, antRaw(e.ev.Raw)...)
		return
	}
	r.out = append(r.out, Encode(Event{Name: e.ev.Name, ID: e.ev.ID, Data: e.data, HasData: true})...)
}

// synth sends an event made here; data has a placeholder sequence_number.
func (r *respNormalizer) synth(typ, data string) {
	d, _ := sjson.SetBytes([]byte(data), "sequence_number", r.seqNext)
	r.seqInit = true
	r.seqNext++
	ev := Event{Data: d, HasData: true}
	if r.named {
		ev.Name = typ
	}
	r.out = append(r.out, Encode(ev)...)
}

// respIndexKey is the table key for an upstream output_index.
func respIndexKey(v gjson.Result) int64 {
	if v.Type != gjson.Number {
		return respUnknownIndex
	}
	return v.Int()
}
