package stream

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// Anthropic Messages stream repair (docs.anthropic.com/en/docs/build-with-claude/streaming, synthesis rules in
// §3.6). What a client must be able to rely on, and the reason for each rule:
//
//   - every event carries an "event:" line: anthropic-sdk-go dispatches on the
//     SSE event name and silently skips nameless events (§2.1), so a data-only
//     stream from a gateway would assemble into nothing;
//   - exactly one message_start, first: Message.Accumulate replaces the whole
//     message on each one, losing the blocks already assembled;
//   - content_block_start.index equals the number of blocks started so far,
//     and deltas and stops address started blocks (Accumulate errors out
//     otherwise); upstream indexes are re-mapped through one table;
//   - every block gets its content_block_stop before message_delta (VS Code
//     emits a tool call at the stop), then message_delta, then message_stop;
//   - stop_reason agrees with the blocks sent: end_turn or none after a
//     tool_use block becomes tool_use, tool_use without one becomes end_turn,
//     other reasons (max_tokens, pause_turn, refusal, ...) are kept;
//   - a tool_use block has an id ("toolu_" + 24 alphanumerics if missing) and
//     an input object ({} if missing);
//   - an upstream error event ends the client stream, as Anthropic's own
//     mid-stream errors do: nothing after it goes out;
//   - a stream cut before message_delta ends with its open blocks stopped and
//     an api_error event, and no message_stop, so the client sees an error
//     instead of a clean but partial message. One that lacks only
//     message_stop is whole (message_delta carried the stop reason and the
//     final usage) and gets its message_stop.
//
// Events that need no change go out byte for byte, in the Write that
// completed them.

// antUnknownIndex is the table key for a block event without a usable index.
const antUnknownIndex = math.MinInt64

// antEndedEarly is the error a client gets when the upstream body ended
// before the message was complete.
const antEndedEarly = `{"type":"error","error":{"type":"api_error","message":"upstream stream ended early: the message is incomplete"}}`

type antNormalizer struct {
	opts Options
	dec  Decoder
	out  []byte

	started   bool // message_start went out
	deltaSent bool // message_delta went out: no more content blocks
	ended     bool // message_stop or error went out: nothing follows

	blocks  map[int64]int // upstream block index → client block index
	open    []bool        // per client block: started and not yet stopped
	toolUse bool          // a tool_use block went out

	outputTokens int64 // message_start's usage, for a synthesized message_delta

	xmlBlocks []*antXML // upstream text blocks read for <invoke> calls (XMLToolCalls)
}

// NewAnthropic returns the repair for an Anthropic Messages SSE stream.
func NewAnthropic(opts Options) Normalizer {
	return &antNormalizer{opts: opts, blocks: map[int64]int{}}
}

func (a *antNormalizer) Write(p []byte) []byte {
	for _, ev := range a.dec.Feed(p) {
		a.event(ev)
	}
	return a.take()
}

func (a *antNormalizer) Close() []byte {
	if tail := a.dec.Flush(); tail != nil {
		a.event(*tail)
	}
	if !a.ended {
		a.ended = true
		if !a.deltaSent {
			a.xmlEndAll()
		}
		if a.deltaSent {
			a.out = append(a.out, Encode(Named("message_stop", []byte(`{"type":"message_stop"}`)))...)
		} else {
			a.closeBlocks()
			a.out = append(a.out, Encode(Named("error", []byte(antEndedEarly)))...)
		}
	}
	return a.take()
}

// antRaw returns an event's bytes to pass on unchanged, but with lone "\r"
// line ends made "\n": the SDKs split lines with bufio.Scanner, which knows
// only "\n" and "\r\n". The Responses normalizer uses it too.
func antRaw(raw []byte) []byte {
	i := bytes.IndexByte(raw, '\r')
	if i < 0 {
		return raw
	}
	var out []byte
	for ; i < len(raw); i++ {
		if raw[i] == '\r' && (i+1 == len(raw) || raw[i+1] != '\n') {
			if out == nil {
				out = append([]byte(nil), raw...)
			}
			out[i] = '\n'
		}
	}
	if out == nil {
		return raw
	}
	return out
}

func (a *antNormalizer) take() []byte {
	out := a.out
	a.out = nil
	return out
}

// antKnown lists the event types whose payload the normalizer reads.
var antKnown = map[string]bool{
	"message_start": true, "message_delta": true, "message_stop": true,
	"content_block_start": true, "content_block_delta": true, "content_block_stop": true,
}

func (a *antNormalizer) event(ev Event) {
	if a.ended {
		return
	}
	if !ev.HasData {
		switch {
		case ev.Incomplete:
			// A trailing fragment with no data carries nothing worth finishing.
			if ev.Name == "error" {
				a.out = append(a.out, Encode(Event{Name: "error"})...)
				a.ended = true
			}
		case ev.Name == "error":
			a.out = append(a.out, antRaw(ev.Raw)...)
			a.ended = true
		case !antKnown[ev.Name]:
			// Comments, keep-alives, pings without data, unknown events.
			a.out = append(a.out, antRaw(ev.Raw)...)
		}
		return
	}
	root := gjson.ParseBytes(ev.Data)
	if !root.IsObject() || !jsonsafe.Valid(ev.Data) {
		// Not JSON: the Go SDK would fail the whole stream on it.
		return
	}
	// Like the SDK: the name decides for error and ping, the payload's type
	// for everything else (it is what the event union decodes).
	kind := ev.Name
	if kind != "error" && kind != "ping" {
		if t := root.Get("type"); t.Type == gjson.String {
			kind = t.Str
		}
	}
	e := antOut{ev: ev, name: ev.Name, data: ev.Data}
	if e.name == "" && kind != "" {
		e.name = kind // §2.1: nameless events are skipped by the Go SDK
	}
	if antKnown[kind] && !root.Get("type").Exists() {
		e.set("type", kind)
	}
	switch kind {
	case "message_start":
		if a.started {
			return
		}
		a.started = true
		a.outputTokens = root.Get("message.usage.output_tokens").Int()
	case "content_block_start":
		a.ensureStarted()
		if a.deltaSent || !root.Get("content_block").IsObject() {
			return
		}
		key := antIndexKey(root.Get("index"))
		if a.opts.XMLToolCalls && root.Get("content_block.type").Str == "text" {
			a.xmlStart(key, root.Get("content_block.text").String())
			return
		}
		if c, ok := a.blocks[key]; ok && a.open[c] {
			// The upstream reused an open block's index: that block can no
			// longer be addressed, so it ends here.
			a.stopBlock(c)
		}
		c := len(a.open)
		a.open = append(a.open, true)
		a.blocks[key] = c
		e.setIndex(root.Get("index"), c)
		if root.Get("content_block.type").Str == "tool_use" {
			a.toolUse = true
			if id := root.Get("content_block.id"); id.Type != gjson.String || id.Str == "" {
				e.set("content_block.id", a.newID("toolu_"))
			}
			if !root.Get("content_block.input").IsObject() {
				// Missing, or a string some translators send: the SDK appends
				// the input_json_delta fragments to it.
				e.setRaw("content_block.input", "{}")
			}
		}
	case "content_block_delta", "content_block_stop":
		a.ensureStarted()
		if x := a.xmlBlock(antIndexKey(root.Get("index"))); x != nil {
			if kind == "content_block_stop" {
				a.xmlEnd(x)
			} else {
				a.xmlDelta(x, root, e)
			}
			return
		}
		c, ok := a.blocks[antIndexKey(root.Get("index"))]
		if !ok || !a.open[c] {
			return // a block never started, or already stopped
		}
		e.setIndex(root.Get("index"), c)
		if kind == "content_block_stop" {
			a.open[c] = false
		}
	case "message_delta":
		a.ensureStarted()
		a.xmlEndAll()
		a.closeBlocks()
		if r := a.stopReason(root.Get("delta.stop_reason")); r != "" {
			e.set("delta.stop_reason", r)
		}
		a.deltaSent = true
	case "message_stop":
		a.ensureStarted()
		if !a.deltaSent {
			a.xmlEndAll()
			a.closeBlocks()
			a.synthDelta()
		}
		a.ended = true
	case "error":
		// Named so, whatever the upstream named it: the SDK raises errors by
		// event name.
		e.name = "error"
		a.ended = true
	}
	a.emit(e)
}

// antOut is an event on its way out: the original, and what changed.
type antOut struct {
	ev    Event
	name  string
	data  []byte
	dirty bool
}

func (e *antOut) set(path string, v any) {
	if d, err := sjson.SetBytes(e.data, path, v); err == nil {
		e.data, e.dirty = d, true
	}
}

func (e *antOut) setRaw(path, raw string) {
	if d, err := sjson.SetRawBytes(e.data, path, []byte(raw)); err == nil {
		e.data, e.dirty = d, true
	}
}

// setIndex writes the client index unless the upstream's is already it.
func (e *antOut) setIndex(upstream gjson.Result, c int) {
	if upstream.Raw != strconv.Itoa(c) {
		e.set("index", c)
	}
}

func (a *antNormalizer) emit(e antOut) {
	if !e.dirty && e.name == e.ev.Name && !e.ev.Incomplete {
		a.out = append(a.out, antRaw(e.ev.Raw)...)
		return
	}
	a.out = append(a.out, Encode(Event{Name: e.name, ID: e.ev.ID, Data: e.data, HasData: true})...)
}

// stopReason returns the stop reason to write instead of r, or "" to keep r.
func (a *antNormalizer) stopReason(r gjson.Result) string {
	switch {
	case a.toolUse && (r.Type == gjson.Null || (r.Type == gjson.String && r.Str == "end_turn")):
		// gjson reports a missing field as Null too.
		return "tool_use"
	case !a.toolUse && r.Type == gjson.String && r.Str == "tool_use":
		return "end_turn"
	}
	return ""
}

// antStartTemplate is the message_start sent when the upstream sent none.
const antStartTemplate = `{"type":"message_start","message":{"id":"","type":"message","role":"assistant","model":"",` +
	`"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}`

// ensureStarted sends a message_start if the upstream skipped it: clients
// take the message's id and role from it (Accumulate takes the whole message
// from it).
func (a *antNormalizer) ensureStarted() {
	if a.started {
		return
	}
	a.started = true
	data, _ := sjson.SetBytes([]byte(antStartTemplate), "message.id", a.newID("msg_"))
	a.out = append(a.out, Encode(Named("message_start", data))...)
}

func (a *antNormalizer) stopBlock(c int) {
	a.open[c] = false
	data := `{"type":"content_block_stop","index":` + strconv.Itoa(c) + `}`
	a.out = append(a.out, Encode(Named("content_block_stop", []byte(data)))...)
}

// closeBlocks stops every open block, in index order.
func (a *antNormalizer) closeBlocks() {
	for c, open := range a.open {
		if open {
			a.stopBlock(c)
		}
	}
}

// synthDelta sends the message_delta the upstream left out.
func (a *antNormalizer) synthDelta() {
	reason := "end_turn"
	if a.toolUse {
		reason = "tool_use"
	}
	data := `{"type":"message_delta","delta":{"stop_reason":"` + reason + `","stop_sequence":null},"usage":{"output_tokens":` +
		strconv.FormatInt(a.outputTokens, 10) + `}}`
	a.out = append(a.out, Encode(Named("message_delta", []byte(data)))...)
	a.deltaSent = true
}

// newID makes an Anthropic-shaped id ("toolu_…", "msg_…") from the call id
// generator, whose ids are "call_" + 24 alphanumerics.
func (a *antNormalizer) newID(prefix string) string {
	id := strings.TrimPrefix(a.opts.callID(), "call_")
	if id == "" {
		id = strings.TrimPrefix(NewCallID(), "call_")
	}
	return prefix + id
}

// antIndexKey is the table key for an upstream block index.
func antIndexKey(r gjson.Result) int64 {
	if r.Type != gjson.Number {
		return antUnknownIndex
	}
	return r.Int()
}
