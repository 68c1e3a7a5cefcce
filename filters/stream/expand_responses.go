package stream

import (
	"bytes"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// OpenAI Responses splice rules:
//
//   - the continuation's response.created, response.in_progress and
//     response.queued are dropped: the client has its response already;
//   - output_index is shifted by the number of items the client already
//     got, so items stay dense across the splice;
//   - sequence_number is renumbered to continue the client's sequence (every
//     event that goes out is renumbered, so dropping held events never
//     leaves a gap);
//   - the terminal event's response.output gets the items the client got
//     from earlier messages in front, so it lists what the client saw;
//   - the terminal event's response.id is the continuation's: a client that
//     chains with previous_response_id must name the response whose context
//     holds the whole exchange (the first response ends at the phantom
//     call), and that is the last one;
//   - only response.completed is continued: a message that ends
//     response.incomplete, response.failed or with an error may hold torn
//     arguments, so its phantom calls are removed and it ends as it is.

type respExpItem struct {
	idx     int
	typ     string
	added   string // the item of output_item.added
	done    string // the item of output_item.done
	callID  string
	name    string
	args    []byte
	argsSet bool
	held    bool
	phantom bool
}

type respExp struct {
	delivered []string // per client output_index: the item the client has
	base      int      // output_index shift of the current stream
	seqInit   bool
	seqNext   int64

	// The current message.
	items   map[int]*respExpItem
	order   []*respExpItem
	holding bool
	held    []expHeld
	failed  bool
}

func (r *respExp) reset() {
	r.items, r.order, r.holding, r.held, r.failed = nil, nil, false, nil, false
}

func respExpTerminal(kind string) bool {
	return kind == "response.completed" || kind == "response.incomplete" || kind == "response.failed"
}

func (r *respExp) event(x *expander, ev Event) {
	if !ev.HasData {
		x.out = append(x.out, ev.Raw...)
		return
	}
	root := gjson.ParseBytes(ev.Data)
	if !root.IsObject() || !jsonsafe.Valid(ev.Data) {
		r.put(x, expHeld{raw: ev.Raw, name: ev.Name, id: ev.ID, data: ev.Data, kind: "other", idx: -1})
		return
	}
	kind := root.Get("type").Str
	if kind == "" || ev.Name == "error" {
		kind = ev.Name
	}
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		kind = "error"
	}
	h := expHeld{raw: ev.Raw, name: ev.Name, id: ev.ID, data: ev.Data, kind: kind, idx: -1}
	oi := root.Get("output_index")
	if x.cont {
		switch kind {
		case "response.created", "response.in_progress", "response.queued":
			return
		}
		if oi.Type == gjson.Number && r.base != 0 && oi.Int() >= 0 {
			if d, err := sjson.SetBytes(h.data, "output_index", oi.Int()+int64(r.base)); err == nil {
				h.data, h.raw = d, nil
			}
		}
		if respExpTerminal(kind) && r.base > 0 {
			h.data, h.raw = r.prefix(h.data), nil
		}
		root = gjson.ParseBytes(h.data)
		oi = root.Get("output_index")
	}
	if oi.Type == gjson.Number && oi.Int() >= 0 && oi.Int() < 1<<31 {
		h.idx = int(oi.Int())
	}
	var it *respExpItem
	if h.idx >= 0 {
		it = r.items[h.idx]
	}
	switch kind {
	case "response.output_item.added", "response.output_item.done":
		item := root.Get("item")
		if h.idx < 0 || !item.IsObject() {
			break
		}
		if it == nil {
			it = &respExpItem{idx: h.idx, typ: item.Get("type").Str}
			if r.items == nil {
				r.items = map[int]*respExpItem{}
			}
			r.items[h.idx] = it
			r.order = append(r.order, it)
			if it.typ == "function_call" {
				r.holding = true
			}
			it.held = r.holding
		}
		if it.typ == "function_call" {
			if c := item.Get("call_id").Str; c != "" {
				it.callID = c
			}
			if n := item.Get("name").Str; n != "" {
				it.name = n
			}
			if item.Get("name").Str == wire.ExpandToolName {
				it.phantom = true
			}
		}
		if kind == "response.output_item.added" {
			it.added = item.Raw
		} else {
			it.done = item.Raw
		}
		if !it.held {
			for len(r.delivered) <= h.idx {
				r.delivered = append(r.delivered, "")
			}
			r.delivered[h.idx] = item.Raw
			if !r.holding {
				r.send(x, h)
				return
			}
		}
	case "response.function_call_arguments.delta":
		if it != nil {
			it.args = append(it.args, root.Get("delta").Str...)
		}
	case "response.function_call_arguments.done":
		if it != nil {
			if a := root.Get("arguments"); a.Type == gjson.String {
				it.args, it.argsSet = []byte(a.Str), true
			}
		}
	case "response.completed", "response.incomplete", "response.failed", "error":
		if r.holding {
			r.failed = kind != "response.completed"
			r.held = append(r.held, h)
			r.end(x)
			return
		}
		r.send(x, h)
		r.reset()
		return
	}
	r.put(x, h)
}

func (r *respExp) put(x *expander, h expHeld) {
	if r.holding {
		r.held = append(r.held, h)
		return
	}
	r.send(x, h)
}

// send puts an event out: sequence_number continued, and never an
// expand_context call in a terminal event's output.
func (r *respExp) send(x *expander, h expHeld) {
	data, dirty := h.data, h.raw == nil
	if h.kind != "other" {
		if sn := gjson.GetBytes(data, "sequence_number"); sn.Exists() {
			if !r.seqInit {
				r.seqInit, r.seqNext = true, sn.Int()
			}
			if sn.Raw != strconv.FormatInt(r.seqNext, 10) {
				if d, err := sjson.SetBytes(data, "sequence_number", r.seqNext); err == nil {
					data, dirty = d, true
				}
			}
			r.seqNext++
		}
		if respExpTerminal(h.kind) && bytes.Contains(data, []byte(wire.ExpandToolName)) {
			if d, ok := r.stripOutput(data, nil); ok {
				data, dirty = d, true
			}
		}
	}
	if !dirty {
		x.out = append(x.out, h.raw...)
		return
	}
	x.out = append(x.out, Encode(Event{Name: h.name, ID: h.id, Data: data, HasData: true})...)
}

// prefix puts the items the client got from earlier messages in front of a
// terminal event's response.output.
func (r *respExp) prefix(data []byte) []byte {
	out := gjson.GetBytes(data, "response.output")
	if !out.IsArray() {
		return data
	}
	arr := []byte{'['}
	n := 0
	for _, it := range r.delivered[:min(r.base, len(r.delivered))] {
		if it == "" {
			continue
		}
		if n > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, it...)
		n++
	}
	out.ForEach(func(_, v gjson.Result) bool {
		if n > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, v.Raw...)
		n++
		return true
	})
	arr = append(arr, ']')
	if d, err := sjson.SetRawBytes(data, "response.output", arr); err == nil {
		return d
	}
	return data
}

// stripOutput removes expand_context function calls (and the calls whose
// call_id is in drop) from response.output.
func (r *respExp) stripOutput(data []byte, drop map[string]bool) ([]byte, bool) {
	out := gjson.GetBytes(data, "response.output")
	if !out.IsArray() {
		return data, false
	}
	arr := []byte{'['}
	n, removed := 0, false
	out.ForEach(func(_, v gjson.Result) bool {
		if v.Get("type").Str == "function_call" &&
			(v.Get("name").Str == wire.ExpandToolName || drop[v.Get("call_id").Str]) {
			removed = true
			return true
		}
		if n > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, v.Raw...)
		n++
		return true
	})
	if !removed {
		return data, false
	}
	arr = append(arr, ']')
	d, err := sjson.SetRawBytes(data, "response.output", arr)
	if err != nil {
		return data, false
	}
	return d, true
}

func (r *respExp) phantoms() bool {
	for _, it := range r.order {
		if it.phantom {
			return true
		}
	}
	return false
}

func (r *respExp) end(x *expander) {
	switch {
	case !r.phantoms():
		for _, h := range r.held {
			r.send(x, h)
		}
		r.reset()
	case r.failed:
		r.fail(x)
	default:
		t := r.turn()
		x.pending = &t
	}
}

func (r *respExp) streamEnd(x *expander) {
	if r.holding {
		r.end(x)
	}
}

func (r *respExp) continuation(x *expander) {
	// Events for the items the client has are theirs: they go out, only
	// the held items are dropped.
	for _, h := range r.held {
		if h.idx < 0 {
			continue
		}
		if it := r.items[h.idx]; it != nil && !it.held {
			r.send(x, h)
		}
	}
	r.base = len(r.delivered)
	r.reset()
}

// arguments is the call's final arguments text.
func (it *respExpItem) arguments() string {
	if a := gjson.Get(it.done, "arguments"); a.Type == gjson.String {
		return a.Str
	}
	if !it.argsSet && len(it.args) == 0 {
		if a := gjson.Get(it.added, "arguments"); a.Type == gjson.String && a.Str != "" {
			return a.Str
		}
	}
	return string(it.args)
}

// turn is the message's output items as request input items, without the
// calls other than expand_context.
func (r *respExp) turn() wire.Turn {
	var t wire.Turn
	arr := []byte{'['}
	add := func(item []byte) {
		if len(arr) > 1 {
			arr = append(arr, ',')
		}
		arr = append(arr, expCompact(item)...)
	}
	calls := 0
	for _, it := range r.order {
		if it.typ == "function_call" {
			calls++
			if !it.phantom {
				continue
			}
			item := it.done
			if item == "" {
				item = it.added
			}
			args := it.arguments()
			if args == "" {
				args = "{}"
			}
			if it.callID == "" {
				it.callID = NewCallID()
			}
			b := []byte(item)
			b, _ = sjson.SetBytes(b, "arguments", args)
			b, _ = sjson.SetBytes(b, "call_id", it.callID)
			b, _ = sjson.SetBytes(b, "status", "completed")
			add(b)
			t.Calls = append(t.Calls, wire.NewExpandCall(it.callID, gjson.Result{Type: gjson.String, Str: args}, calls-1))
			continue
		}
		if it.done != "" {
			add([]byte(it.done))
		}
	}
	t.Assistant = append(arr, ']')
	return t
}

// fail ends the client's stream from the held message: phantom items
// removed, the others re-indexed densely, the terminal's output without
// them.
func (r *respExp) fail(x *expander) {
	newIdx := map[int]int{}
	drop := map[string]bool{}
	next := len(r.delivered)
	for _, it := range r.order {
		if !it.held {
			continue
		}
		if it.phantom {
			if it.callID != "" {
				drop[it.callID] = true
			}
			continue
		}
		newIdx[it.idx] = next
		next++
	}
	sawEnd := false
	for _, h := range r.held {
		if h.idx >= 0 {
			if it := r.items[h.idx]; it != nil && it.held {
				if it.phantom {
					continue
				}
				if ni := newIdx[h.idx]; ni != h.idx {
					if d, err := sjson.SetBytes(h.data, "output_index", ni); err == nil {
						h.data, h.raw = d, nil
					}
				}
			}
		}
		if respExpTerminal(h.kind) {
			if d, ok := r.stripOutput(h.data, drop); ok {
				h.data, h.raw = d, nil
			}
		}
		if respExpTerminal(h.kind) || h.kind == "error" {
			sawEnd = true
		}
		r.send(x, h)
	}
	if !sawEnd {
		// Close came without a terminal event: end as the normalizer does.
		h := expHeld{data: []byte(respEndedEarly), kind: "error", idx: -1, name: "error"}
		r.send(x, h)
	}
	r.reset()
}

func (r *respExp) holds() bool { return r.holding }

func (r *respExp) release(x *expander) {
	for _, h := range r.held {
		if h.raw != nil && !x.cont {
			x.out = append(x.out, h.raw...)
		} else {
			r.send(x, h)
		}
	}
	r.reset()
}
