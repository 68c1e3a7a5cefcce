package stream

import (
	"slices"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// Anthropic splice rules:
//
//   - the continuation's message_start (and a ping before it) is dropped:
//     Message.Accumulate replaces the whole message on each message_start,
//     losing the blocks the client already has;
//   - every content block index is shifted by the number of blocks the client
//     already got, so block starts stay dense across the splice;
//   - blocks the client got that are still open get their content_block_stop
//     before the continuation's first block (VS Code emits at the stop);
//   - message_delta and message_stop are the last message's: its stop reason
//     and cumulative usage are the answer's. message_start's usage (input
//     tokens) stays the first request's.

type antExpBlock struct {
	idx       int
	typ       string
	start     string // the content_block object of content_block_start
	text      []byte
	thinking  []byte
	signature []byte
	id, name  string
	input     []byte
	hasInput  bool
	held      bool
	phantom   bool
}

type antExp struct {
	delivered int          // content blocks the client has
	open      map[int]bool // client blocks started and not stopped
	base      int          // index shift of the current stream
	started   bool         // the current stream's message_start was seen

	// The current message.
	blocks  map[int]*antExpBlock
	order   []*antExpBlock
	holding bool
	held    []expHeld
	errored bool
}

func (a *antExp) reset() {
	a.blocks, a.order, a.holding, a.held, a.errored = nil, nil, false, nil, false
}

// antExpKind is the event type as anthropic-sdk-go dispatches it.
func antExpKind(ev Event, root gjson.Result) string {
	if ev.Name == "error" || ev.Name == "ping" {
		return ev.Name
	}
	if t := root.Get("type"); t.Type == gjson.String {
		return t.Str
	}
	return ev.Name
}

func (a *antExp) event(x *expander, ev Event) {
	if !ev.HasData {
		x.out = append(x.out, ev.Raw...)
		if ev.Name == "error" && a.holding {
			a.errored = true
		}
		return
	}
	root := gjson.ParseBytes(ev.Data)
	if !root.IsObject() || !jsonsafe.Valid(ev.Data) {
		a.put(x, expHeld{raw: ev.Raw, name: ev.Name, id: ev.ID, data: ev.Data, kind: "other", idx: -1})
		return
	}
	kind := antExpKind(ev, root)
	h := expHeld{raw: ev.Raw, name: ev.Name, id: ev.ID, data: ev.Data, kind: kind, idx: -1}
	idxRes := root.Get("index")
	if x.cont {
		if kind == "message_start" || (kind == "ping" && !a.started) {
			a.started = a.started || kind == "message_start"
			return
		}
		if idxRes.Type == gjson.Number && a.base != 0 && idxRes.Int() >= 0 {
			if d, err := sjson.SetBytes(h.data, "index", idxRes.Int()+int64(a.base)); err == nil {
				h.data, h.raw = d, nil
				root = gjson.ParseBytes(d)
				idxRes = root.Get("index")
			}
		}
	}
	if idxRes.Type == gjson.Number && idxRes.Int() >= 0 && idxRes.Int() < 1<<31 {
		h.idx = int(idxRes.Int())
	}
	if h.raw == nil {
		h.raw = Encode(Event{Name: h.name, ID: h.id, Data: h.data, HasData: true})
	}
	var b *antExpBlock
	if h.idx >= 0 {
		b = a.blocks[h.idx]
	}
	switch kind {
	case "message_start":
		a.started = true
	case "content_block_start":
		if h.idx < 0 || b != nil {
			break
		}
		cb := root.Get("content_block")
		b = &antExpBlock{idx: h.idx, typ: cb.Get("type").Str, start: cb.Raw}
		switch b.typ {
		case "tool_use":
			b.id, b.name = cb.Get("id").Str, cb.Get("name").Str
			b.phantom = b.name == wire.ExpandToolName
			a.holding = true
		case "text":
			b.text = append(b.text, cb.Get("text").Str...)
		case "thinking":
			b.thinking = append(b.thinking, cb.Get("thinking").Str...)
			b.signature = append(b.signature, cb.Get("signature").Str...)
		}
		if in := cb.Get("input"); in.Exists() {
			b.input = []byte(in.Raw)
		}
		if a.blocks == nil {
			a.blocks = map[int]*antExpBlock{}
		}
		a.blocks[h.idx] = b
		a.order = append(a.order, b)
		if a.holding {
			b.held = true
			break
		}
		a.delivered = max(a.delivered, h.idx+1)
		if a.open == nil {
			a.open = map[int]bool{}
		}
		a.open[h.idx] = true
		x.out = append(x.out, h.raw...)
		return
	case "content_block_delta":
		if b == nil {
			break
		}
		d := root.Get("delta")
		switch d.Get("type").Str {
		case "text_delta":
			b.text = append(b.text, d.Get("text").Str...)
		case "thinking_delta":
			b.thinking = append(b.thinking, d.Get("thinking").Str...)
		case "signature_delta":
			b.signature = append(b.signature, d.Get("signature").Str...)
		case "input_json_delta":
			if pj := d.Get("partial_json").Str; pj != "" {
				if !b.hasInput {
					b.input, b.hasInput = nil, true
				}
				b.input = append(b.input, pj...)
			}
		}
		if !a.holding {
			x.out = append(x.out, h.raw...)
			return
		}
	case "content_block_stop":
		if b != nil && !b.held && !a.holding {
			delete(a.open, h.idx)
			x.out = append(x.out, h.raw...)
			return
		}
	case "message_stop":
		if a.holding {
			a.held = append(a.held, h)
			a.end(x)
			return
		}
		x.out = append(x.out, h.raw...)
		a.reset()
		return
	case "error":
		if a.holding {
			a.errored = true
			a.held = append(a.held, h)
			a.end(x)
			return
		}
		x.out = append(x.out, h.raw...)
		a.reset()
		return
	}
	a.put(x, h)
}

func (a *antExp) put(x *expander, h expHeld) {
	if a.holding {
		a.held = append(a.held, h)
		return
	}
	x.out = append(x.out, h.raw...)
}

func (a *antExp) phantoms() bool {
	for _, b := range a.order {
		if b.phantom {
			return true
		}
	}
	return false
}

func (a *antExp) end(x *expander) {
	switch {
	case !a.phantoms():
		for _, h := range a.held {
			x.out = append(x.out, h.raw...)
		}
		a.reset()
	case a.errored:
		a.fail(x)
	default:
		t := a.turn()
		x.pending = &t
	}
}

func (a *antExp) streamEnd(x *expander) {
	if a.holding {
		a.end(x)
	}
}

func (a *antExp) continuation(x *expander) {
	// What the blocks the client has got while the calls were held is
	// theirs: it goes out, only the held blocks are dropped.
	for _, h := range a.held {
		if h.idx < 0 {
			continue
		}
		if b := a.blocks[h.idx]; b != nil && !b.held && (h.kind == "content_block_delta" || h.kind == "content_block_stop") && a.open[h.idx] {
			x.out = append(x.out, h.raw...)
			if h.kind == "content_block_stop" {
				delete(a.open, h.idx)
			}
		}
	}
	open := make([]int, 0, len(a.open))
	for i := range a.open {
		open = append(open, i)
	}
	slices.Sort(open)
	for _, i := range open {
		x.out = append(x.out, Encode(Named("content_block_stop", []byte(`{"type":"content_block_stop","index":`+strconv.Itoa(i)+`}`)))...)
	}
	a.open = nil
	a.base = a.delivered
	a.started = false
	a.reset()
}

// turn is the message as a request's assistant message: every block, the
// tool_use blocks only for expand_context.
func (a *antExp) turn() wire.Turn {
	var t wire.Turn
	content := []byte{'['}
	add := func(block []byte) {
		if len(content) > 1 {
			content = append(content, ',')
		}
		content = append(content, block...)
	}
	tools := 0
	for _, b := range a.order {
		switch b.typ {
		case "text":
			if len(b.text) > 0 {
				add(append(append([]byte(`{"type":"text","text":`), expQuote(string(b.text))...), '}'))
			}
		case "thinking":
			blk := []byte(`{"type":"thinking","thinking":`)
			blk = append(blk, expQuote(string(b.thinking))...)
			blk = append(blk, `,"signature":`...)
			blk = append(blk, expQuote(string(b.signature))...)
			add(append(blk, '}'))
		case "redacted_thinking":
			blk := []byte(`{"type":"redacted_thinking","data":`)
			blk = append(blk, expQuote(gjson.Get(b.start, "data").Str)...)
			add(append(blk, '}'))
		case "tool_use":
			tools++
			if !b.phantom {
				continue
			}
			input := b.inputObject()
			id := b.id
			if id == "" {
				id = "toolu_" + NewCallID()[len("call_"):]
				b.id = id
			}
			blk := []byte(`{"type":"tool_use","id":`)
			blk = append(blk, expQuote(id)...)
			blk = append(blk, `,"name":`...)
			blk = append(blk, expQuote(wire.ExpandToolName)...)
			blk = append(blk, `,"input":`...)
			blk = append(blk, input...)
			add(append(blk, '}'))
			t.Calls = append(t.Calls, wire.NewExpandCall(id, gjson.ParseBytes(input), tools-1))
		default:
			// Server tools and their results: the block as it started, with
			// the streamed input when there was one.
			if !jsonsafe.ValidString(b.start) || !gjson.Parse(b.start).IsObject() {
				continue
			}
			blk := []byte(b.start)
			if b.hasInput {
				if d, err := sjson.SetRawBytes(blk, "input", b.inputObject()); err == nil {
					blk = d
				}
			}
			add(expCompact(blk))
		}
	}
	content = append(content, ']')
	t.Assistant = append(append([]byte(`{"role":"assistant","content":`), content...), '}')
	return t
}

// inputObject is the block's input as a JSON object ({} when it is not one).
func (b *antExpBlock) inputObject() []byte {
	in := b.input
	if jsonsafe.Valid(in) && gjson.ParseBytes(in).IsObject() {
		return expCompact(in)
	}
	return []byte("{}")
}

// fail ends the client's stream from the held message: the phantom blocks
// removed, the others re-indexed densely, the stop reason fitting.
func (a *antExp) fail(x *expander) {
	newIdx := map[int]int{}
	next := a.delivered
	realTool := false
	for _, b := range a.order {
		if b.held && !b.phantom {
			newIdx[b.idx] = next
			next++
			if b.typ == "tool_use" {
				realTool = true
			}
		}
	}
	for _, h := range a.held {
		data, changed := h.data, false
		if h.idx >= 0 {
			if b := a.blocks[h.idx]; b != nil && b.held {
				if b.phantom {
					continue
				}
				if ni := newIdx[h.idx]; ni != h.idx {
					if d, err := sjson.SetBytes(data, "index", ni); err == nil {
						data, changed = d, true
					}
				}
			}
		}
		if h.kind == "message_delta" {
			r := gjson.GetBytes(data, "delta.stop_reason")
			want := ""
			switch {
			case realTool && (r.Type == gjson.Null || r.Str == "end_turn"):
				want = "tool_use"
			case !realTool && r.Str == "tool_use":
				want = "end_turn"
			}
			if want != "" {
				if d, err := sjson.SetBytes(data, "delta.stop_reason", want); err == nil {
					data, changed = d, true
				}
			}
		}
		if changed {
			name := h.name
			if name == "" {
				name = h.kind
			}
			x.out = append(x.out, Encode(Event{Name: name, ID: h.id, Data: data, HasData: true})...)
		} else {
			x.out = append(x.out, h.raw...)
		}
	}
	a.delivered = next
	a.reset()
}

func (a *antExp) holds() bool { return a.holding }

func (a *antExp) release(x *expander) {
	for _, h := range a.held {
		x.out = append(x.out, h.raw...)
	}
	a.reset()
}
