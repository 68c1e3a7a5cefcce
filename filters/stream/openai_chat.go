package stream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// The OpenAI Chat Completions normalizer turns what OpenAI-compatible servers
// actually send into the emission profile of wire-formats.md §3.6, the one
// shape every client we know of assembles correctly (openai-go, openai-node,
// openai-python, the Vercel AI SDK, VS Code Copilot Chat):
//
//   - every event is `data: <one-line JSON>\n\n`, and `data: [DONE]\n\n`
//     comes last, exactly once;
//   - role "assistant" once, on the first chunk;
//   - tool calls indexed 0..n-1 in order of appearance, not interleaved, one
//     per chunk; the first delta of a call carries id, type, the full name
//     and arguments "", later ones only index and an arguments fragment;
//   - one finish chunk with an empty delta ("tool_calls" whenever a call was
//     emitted), then at most one usage chunk, then [DONE];
//   - an upstream error becomes an error chunk, the finish chunk, [DONE].
//
// Events that already conform go out byte for byte; only events that need a
// change are re-encoded, on the template of §3.7 with the upstream's id,
// created and model. Text is never held except, with XML tool calls, a tail
// that may still become an <invoke> block.
//
// Decisions on the open questions (each has a test):
//   - A stream whose first non-empty data event is neither JSON nor [DONE]
//     is not a chat stream: from there on it is passed through untouched,
//     and nothing is added. In a chat stream a data event that is not JSON,
//     or is empty, is dropped (openai-go would fail on it). Comment events
//     pass at once (keep-alives), re-framed with "\n"; other data-less
//     events are dropped. An upstream that sends nothing at all gets an
//     error chunk.
//   - A call whose first fragments come before its name is held until the
//     name arrives. A call whose name never arrives is dropped. Upstream
//     indexes and ids are only keys: a call is found by id, else by index,
//     else it is the call touched last; a repeated id under a new index, or
//     a new id under a used index, is a new call. Client ids are the
//     upstream's, or opts' when missing or already used.
//   - Interleaved calls: the current call stays current until its arguments
//     form a complete JSON value; fragments of other calls are held and
//     follow it.
//   - Arguments are forwarded as the upstream fragments them (held ones
//     concatenated), never split further, so no shorter prefix becomes valid
//     JSON (old Vercel SDKs stop at the first parsable prefix). Whatever
//     arrives for a call after its arguments formed a complete JSON value is
//     dropped; top-level scalar arguments go out whole at the end; a call
//     that got no arguments at all gets "{}".
//   - Text that arrives after tool calls (e.g. after an XML block) is still
//     sent as content when it arrives; that is legal before the finish chunk.
//   - The stream ends without finish_reason or [DONE]: both are added. If it
//     was cut (an unparseable partial event at the end, or a started call
//     whose arguments are not complete JSON), an error chunk saying so comes
//     before the finish chunk, so clients do not run a half-received call.
//   - Usage is sent once: on the finish chunk if the upstream put it there,
//     else as the `choices:[]` chunk after the finish chunk, and only when
//     the client asked for it (IncludeUsage), since old clients index
//     choices[0] on every chunk. Usage the upstream repeats on content chunks
//     is moved there too, the last value winning.
//   - Only choice 0 is forwarded (n>1 is out of scope, §3.6 rule 11).

// oaiChunkObject is the object field every streamed chunk carries.
const oaiChunkObject = "chat.completion.chunk"

const (
	oaiRoleDelta   = `{"role":"assistant","content":null}`
	oaiDoneEvent   = "data: [DONE]\n\n"
	oaiCutMessage  = "upstream stream ended before the response was complete"
	oaiNoneMessage = "upstream stream ended without sending any chunk"
)

type oaiMode uint8

const (
	oaiUndecided   oaiMode = iota // no data event yet
	oaiChatMode                   // normalizing
	oaiPassthrough                // not a chat stream: bytes out as they came
)

// NewOpenAIChat returns a Normalizer for a chat.completion.chunk SSE stream.
func NewOpenAIChat(opts Options) Normalizer {
	return &oaiChat{opts: opts}
}

type oaiChat struct {
	opts Options
	dec  Decoder
	mode oaiMode
	out  []byte

	// Envelope: learned from the first chunks, fixed at the first emission.
	envID, envCreated, envModel string // raw JSON tokens
	envFixed                    bool

	roleSent  bool
	finished  bool // the finish chunk went out
	ended     bool // [DONE] went out; everything after is ignored
	closed    bool
	cut       bool   // the upstream ended mid-event or mid-call
	upFinish  string // the upstream's finish_reason
	usageSent bool
	heldUsage string // raw usage object waiting for the finish chunk
	extras    []byte // meaningful non-content delta fields of the current event

	xml xmlScanner

	calls   []*oaiCall
	cursor  int // first call not done: the current one
	byID    map[string]*oaiCall
	byIndex map[int64]*oaiCall
	last    *oaiCall // the native call touched last
	nextOut int
	usedIDs map[string]bool
}

// oaiCall is one tool call as received, and how far it has been emitted.
type oaiCall struct {
	upID    string
	upIdx   int64
	hasIdx  bool
	name    string
	out     int    // the client-side index, once started
	held    []byte // argument text received but not emitted
	args    oaiJSONShape
	started bool // the first delta went out
	done    bool // no more deltas for this call
}

func (n *oaiChat) Write(p []byte) []byte {
	n.out = nil
	if n.ended || n.closed {
		return nil
	}
	// Output is about the size of the input; a fresh slice per call, since
	// the caller owns what we return.
	n.out = make([]byte, 0, len(p)+len(p)/4+64)
	for _, ev := range n.dec.Feed(p) {
		n.onEvent(&ev)
	}
	return n.out
}

func (n *oaiChat) Close() []byte {
	n.out = nil
	if n.closed {
		return nil
	}
	n.closed = true
	tail := n.dec.Flush()
	if n.ended {
		return nil
	}
	if tail != nil {
		switch {
		case n.mode == oaiPassthrough:
			n.out = append(n.out, tail.Raw...)
		case tail.HasData && len(bytes.TrimSpace(tail.Data)) > 0:
			// An unterminated last event whose JSON is whole is processed
			// (openai-go would drop it); a torn one means the stream was cut.
			d := bytes.TrimSpace(tail.Data)
			if oaiIsDone(d) || tail.Name == "error" || jsonsafe.Valid(d) ||
				(n.mode == oaiUndecided && !oaiLooksJSON(d)) {
				n.onEvent(tail)
			} else {
				n.mode = oaiChatMode
				n.cut = true
			}
		}
	}
	if n.mode == oaiPassthrough {
		return n.out
	}
	if n.mode == oaiUndecided {
		n.mode = oaiChatMode
		n.end(oaiErrorChunk(oaiNoneMessage, "upstream_error"))
		return n.out
	}
	n.end(nil)
	return n.out
}

func (n *oaiChat) onEvent(ev *Event) {
	if n.ended {
		return
	}
	if n.mode == oaiPassthrough {
		n.out = append(n.out, ev.Raw...)
		return
	}
	if !ev.HasData {
		// Comments (": OPENROUTER PROCESSING") keep connections alive: pass
		// them at once, framed with "\n". Other data-less events mean
		// nothing to a client.
		if !ev.Incomplete {
			n.out = oaiAppendComment(n.out, ev.Raw)
		}
		return
	}
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 {
		return // openai-go would fail to decode an empty data event
	}
	if n.mode == oaiUndecided {
		if ev.Name != "error" && !oaiIsDone(data) && !oaiLooksJSON(data) {
			n.mode = oaiPassthrough
			n.out = append(n.out, ev.Raw...)
			return
		}
		n.mode = oaiChatMode
	}
	switch {
	case oaiIsDone(data):
		n.end(nil)
		return
	case ev.Name == "error":
		n.end(oaiErrorFromEvent(data))
		return
	case !oaiLooksJSON(data) || !jsonsafe.Valid(data):
		return
	}
	if bytes.ContainsAny(data, "\r\n") {
		var buf bytes.Buffer
		_ = json.Compact(&buf, data) // valid, checked above
		data = buf.Bytes()
	}
	n.onChunk(ev, data)
}

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

// onPieces emits what the XML scanner made of assistant text.
func (n *oaiChat) onPieces(pieces []xmlPiece) {
	for _, p := range pieces {
		switch p.Kind {
		case xmlText, xmlFinal:
			if p.Text != "" {
				n.emitText(string(xmlAppendJSONString(nil, p.Text)))
			}
		case xmlCall:
			c := n.newCall()
			c.name = p.Name
			c.args.feed(p.Args)
			c.held = append(c.held, p.Args...)
			n.pump(false)
		}
	}
}

// onToolCall routes one upstream tool_calls entry to its call.
func (n *oaiChat) onToolCall(e gjson.Result) {
	if !e.IsObject() {
		return
	}
	c := n.resolve(e)
	if c.done {
		return // a fragment for a call already finished
	}
	fn := e.Get("function")
	if name := fn.Get("name"); name.Type == gjson.String && name.Str != "" && c.name == "" {
		c.name = name.Str
	}
	switch args := fn.Get("arguments"); {
	case c.args.closed:
		// The arguments are already a complete JSON value: anything more
		// would make them invalid (old Vercel SDKs even stop reading here).
	case args.Type == gjson.String:
		c.args.feed(args.Str)
		c.held = append(c.held, args.Str...)
	case args.IsObject() || args.IsArray():
		// Some servers send the arguments as a JSON value, not a string.
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(args.Raw)) == nil {
			c.args.feed(buf.String())
			c.held = append(c.held, buf.Bytes()...)
		}
	}
	n.pump(false)
}

// resolve finds the call an entry belongs to: by id, else by index, else
// the call touched last. Upstream indexes are keys only (they may start at
// 1, be -1, sparse, or missing); client indexes are assigned on emission.
func (n *oaiChat) resolve(e gjson.Result) *oaiCall {
	id := e.Get("id")
	idx := e.Get("index")
	hasIdx := idx.Type == gjson.Number
	i := idx.Int()
	if id.Type == gjson.String && id.Str != "" {
		if c := n.byID[id.Str]; c != nil {
			// The same id under a new index is a server reusing ids.
			if !(hasIdx && c.hasIdx && c.upIdx != i && n.byIndex[i] == nil) {
				if hasIdx {
					n.setIndex(i, c)
				}
				n.last = c
				return c
			}
		} else if c := n.byIndex[i]; hasIdx && c != nil && c.upID == "" {
			c.upID = id.Str // the id came after the first fragment
			n.setID(id.Str, c)
			n.last = c
			return c
		}
		c := n.newCall()
		c.upID = id.Str
		n.setID(id.Str, c)
		if hasIdx {
			c.upIdx, c.hasIdx = i, true
			n.setIndex(i, c)
		}
		n.last = c
		return c
	}
	if hasIdx {
		if c := n.byIndex[i]; c != nil {
			n.last = c
			return c
		}
		c := n.newCall()
		c.upIdx, c.hasIdx = i, true
		n.setIndex(i, c)
		n.last = c
		return c
	}
	// No id, no index (Google): the current call, unless this entry names
	// a new call after the current one completed.
	name := e.Get("function.name").Str
	if l := n.last; l != nil && (name == "" || l.name == "" || !l.args.closed) {
		return l
	}
	c := n.newCall()
	n.last = c
	return c
}

func (n *oaiChat) setID(id string, c *oaiCall) {
	if n.byID == nil {
		n.byID = map[string]*oaiCall{}
	}
	n.byID[id] = c
}

func (n *oaiChat) setIndex(i int64, c *oaiCall) {
	if n.byIndex == nil {
		n.byIndex = map[int64]*oaiCall{}
	}
	n.byIndex[i] = c
}

func (n *oaiChat) newCall() *oaiCall {
	c := &oaiCall{}
	n.calls = append(n.calls, c)
	return c
}

// pump emits what can be emitted, in order: the current call's start and
// held arguments; then, once its arguments are complete and a later call
// exists, the next call. With force (the end of the choice) every call is
// finished: nameless ones dropped, never-started ones with torn arguments
// dropped, argument-less ones given "{}".
func (n *oaiChat) pump(force bool) {
	for n.cursor < len(n.calls) {
		c := n.calls[n.cursor]
		if !c.started {
			if c.name == "" || (force && c.args.incomplete()) {
				if !force {
					return
				}
				if c.args.incomplete() {
					n.cut = true
				}
				c.done = true
				n.cursor++
				continue
			}
			n.startCall(c)
		}
		// Top-level scalar arguments ("12" sent as "1", "2") have valid
		// prefixes: they go out whole at the end (§3.6 rule 8).
		if len(c.held) > 0 && (force || !c.args.scalar) {
			n.emitArgs(c, c.held)
			c.held = c.held[:0]
		}
		if force {
			if !c.args.started {
				n.emitArgs(c, []byte("{}"))
			} else if c.args.incomplete() {
				n.cut = true
			}
		} else if !c.args.closed || n.cursor == len(n.calls)-1 {
			return
		}
		c.done = true
		n.cursor++
	}
}

func (n *oaiChat) startCall(c *oaiCall) {
	id := c.upID
	if id == "" || n.usedIDs[id] {
		id = n.opts.callID()
	}
	if n.usedIDs == nil {
		n.usedIDs = map[string]bool{}
	}
	n.usedIDs[id] = true
	c.out = n.nextOut
	n.nextOut++
	c.started = true
	b := make([]byte, 0, 96+len(id)+len(c.name))
	b = append(b, `{"tool_calls":[{"index":`...)
	b = strconv.AppendInt(b, int64(c.out), 10)
	b = append(b, `,"id":`...)
	b = xmlAppendJSONString(b, id)
	b = append(b, `,"type":"function","function":{"name":`...)
	b = xmlAppendJSONString(b, c.name)
	b = append(b, `,"arguments":""}}]}`...)
	n.emitDelta(b)
}

func (n *oaiChat) emitArgs(c *oaiCall, frag []byte) {
	b := make([]byte, 0, 64+len(frag))
	b = append(b, `{"tool_calls":[{"index":`...)
	b = strconv.AppendInt(b, int64(c.out), 10)
	b = append(b, `,"function":{"arguments":`...)
	b = xmlAppendJSONString(b, string(frag))
	b = append(b, `}}]}`...)
	n.emitDelta(b)
}

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
		n.envID = string(xmlAppendJSONString(nil, "chatcmpl-"+n.opts.callID()[len("call_"):]))
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
			b = xmlAppendJSONString(b, finish)
		}
		b = append(b, "}]"...)
	}
	if usage != "" {
		b = append(b, `,"usage":`...)
		b = append(b, usage...)
	}
	n.out = append(b, "}\n\n"...)
}

// oaiJSONShape follows the nesting of a JSON text fed in pieces, enough to
// tell a complete value from a torn one without parsing it.
type oaiJSONShape struct {
	depth   int
	inStr   bool
	esc     bool
	started bool // a non-space byte arrived
	closed  bool // the top-level object, array or string ended
	scalar  bool // the top level is a number, true, false or null (or junk)
}

func (s *oaiJSONShape) feed(text string) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.depth == 0 {
					s.closed = true
				}
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || s.closed {
			continue
		}
		if !s.started && c != '{' && c != '[' && c != '"' {
			s.scalar = true
		}
		s.started = true
		switch c {
		case '"':
			s.inStr = true
		case '{', '[':
			s.depth++
		case '}', ']':
			if s.depth--; s.depth <= 0 {
				s.depth = 0
				s.closed = true
			}
		}
	}
}

// incomplete: inside a string or an unclosed object/array.
func (s *oaiJSONShape) incomplete() bool { return s.inStr || s.depth > 0 }

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
	b = xmlAppendJSONString(b, message)
	b = append(b, `,"type":`...)
	b = xmlAppendJSONString(b, typ)
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
