package stream

import (
	"bytes"
	"io"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/overflow"
	"github.com/toolproc/toolproc/filters/wire"
)

// Recoverer is asked to recover from an overflow error that opened a 200 stream.
type Recoverer interface {
	// Recover compresses the request harder, replays it and returns the
	// replay's body: an SSE stream of the same dialect, whose own leading
	// events the caller has already checked. An error: no recovery; the
	// gate releases what it held.
	Recover(v overflow.Verdict) (body io.ReadCloser, err error)
}

// GateDecider is implemented by Recoverers that want to know when the gate
// has decided, either way: from then on no recovery can happen, and what
// was kept for it (the client's request body) can go (review finding 21).
type GateDecider interface {
	GateDecided()
}

// gateMaxHold bounds what the gate holds (and LeadingError reads) before it
// decides the stream does not open with an error.
const gateMaxHold = 64 << 10

// The overflow gate sits in front of a stream's normalizer chain. Some
// upstreams answer a request that no longer fits the context window with
// HTTP 200 and a stream whose first real event is the error
// (OpenAI Responses' response.failed event, OpenRouter's mid-stream error chunk, llama.cpp, Bedrock's exception events).
// As long as nothing has reached the client, the request can be compressed
// harder and replayed, and the client gets the replay's stream instead.
//
//   - The raw upstream bytes are decoded and held (inner sees nothing) while
//     only preamble events arrived: comments and empty events (every
//     dialect); an OpenAI chat chunk with no "error" key whose choices carry
//     only a role and empty content/refusal, no tool calls and no
//     finish_reason (choices:[] without usage too: Azure's filter-results
//     chunk); Anthropic message_start and ping; Responses response.created,
//     response.in_progress and response.queued. Gemini and other dialects
//     have no dialect preamble.
//   - The first other event decides. An overflow error
//     (overflow.ClassifyStreamEvent) asks the Recoverer: on ok the held
//     bytes and the rest of the upstream body are dropped and the replay
//     body runs through inner; on refusal, or for anything else, the held
//     bytes go to inner and every later Write passes straight to inner.
//   - Past gateMaxHold held bytes, or for a body that is not SSE at all (a
//     binary AWS event stream), the gate gives up and passes through.
//
// Recover and the reads of the replay body block the Write or Close that
// decided; that is the point of the exercise.

type gateState uint8

const (
	gateHolding   gateState = iota // only preamble so far
	gatePassing                    // decided: every Write goes to inner
	gateRecovered                  // the replay went through inner; upstream is ignored
)

type overflowGate struct {
	d     wire.Dialect
	inner Normalizer
	r     Recoverer
	emit  func([]byte) error

	state  gateState
	closed bool
	dec    Decoder
	held   []byte

	// onlyKeepAlive: every event so far was a keep-alive, all forwarded.
	onlyKeepAlive bool
	// seen counts the bytes of held events not yet forwarded; bomSkip is
	// the length of a BOM in front of them (-1: not looked at yet).
	seen, bomSkip int
	gaveUp        string
	decided       bool
}

// NewOverflowGate wraps inner (the stream's normalizer chain; nil means
// bytes pass unchanged) for a stream of dialect d. emit, when non-nil, gets
// the replay's output as it is produced (FULL_DUPLEX_STREAMED), as in
// NewExpanding; when nil, the replay's output is returned from the Write or
// Close that triggered it; an emit error (the client is gone) closes the
// replay body at once. A nil Recoverer disables recovery: inner (or a
// pass-through) is returned as is.
func NewOverflowGate(d wire.Dialect, inner Normalizer, r Recoverer, emit func([]byte) error) Normalizer {
	if inner == nil {
		inner = passNormalizer{}
	}
	if r == nil {
		return inner
	}
	return &overflowGate{d: d, inner: inner, r: r, emit: emit, onlyKeepAlive: true, bomSkip: -1}
}

// passNormalizer hands bytes on unchanged.
type passNormalizer struct{}

func (passNormalizer) Write(p []byte) []byte { return p }
func (passNormalizer) Close() []byte         { return nil }

func (g *overflowGate) Write(p []byte) []byte {
	if g.closed {
		return nil
	}
	switch g.state {
	case gatePassing:
		return g.inner.Write(p)
	case gateRecovered:
		return nil
	}
	if len(p) == 0 {
		return nil
	}
	g.held = append(g.held, p...)
	if notSSE(g.held) {
		return g.release()
	}
	var out []byte
	for _, ev := range g.dec.Feed(p) {
		g.seen += len(ev.Raw)
		if g.onlyKeepAlive && keepAlive(g.d, &ev) {
			out = append(out, g.forward()...)
			continue
		}
		g.onlyKeepAlive = false
		if gatePreamble(g.d, &ev) {
			continue
		}
		if g.emit != nil && len(out) > 0 {
			// A replay is emitted as it is read: what was forwarded goes first.
			if g.emit(out) != nil {
				g.state, g.held = gateRecovered, nil // the client is gone
				return nil
			}
			out = nil
		}
		return append(out, g.decide(&ev)...)
	}
	if len(g.held) > gateMaxHold {
		g.gaveUp = GaveUpHold
		return append(out, g.release()...)
	}
	return out
}

// forward hands the keep-alive events held so far (and a BOM before them)
// to inner at once. Keep-alives exist so that proxies and clients with idle
// timeouts of about a minute do not cut a stream the upstream is still
// queueing (OpenRouter sends ": OPENROUTER PROCESSING" comments while it
// waits for a provider); holding them until the first real event would
// defeat them. A comment or ping can never be the overflow error, and only
// ever leaves in upstream order: the first held event that is not a
// keep-alive stops forwarding until the gate decides.
func (g *overflowGate) forward() []byte {
	n := g.seen
	if g.bomSkip < 0 {
		g.bomSkip = 0
		if bytes.HasPrefix(g.held, bom) {
			g.bomSkip = len(bom)
		}
	}
	n += g.bomSkip
	g.bomSkip = 0
	g.seen = 0
	if n == 0 {
		return nil
	}
	ka := g.held[:n:n]
	g.held = append([]byte(nil), g.held[n:]...)
	return g.inner.Write(ka)
}

// keepAlive reports an event that only keeps the connection open: comments
// and empty events in every dialect, and Anthropic's ping
// (https://docs.anthropic.com/en/docs/build-with-claude/streaming#ping-events).
func keepAlive(d wire.Dialect, ev *Event) bool {
	if ev.IsComment() {
		return true
	}
	return d == wire.Anthropic && eventType(ev) == "ping" && !ev.Incomplete
}

func (g *overflowGate) Close() []byte {
	if g.closed {
		return nil
	}
	g.closed = true
	var out []byte
	if g.state == gateHolding {
		if tail := g.dec.Flush(); tail != nil && !gatePreamble(g.d, tail) {
			out = g.decide(tail)
		} else {
			out = g.release()
		}
	}
	return append(out, g.inner.Close()...)
}

// release hands everything held to inner and turns the gate into a
// pass-through.
func (g *overflowGate) release() []byte {
	g.settle()
	g.state = gatePassing
	g.dec = Decoder{}
	held := g.held
	g.held = nil
	if len(held) == 0 {
		return nil
	}
	return g.inner.Write(held)
}

// settle tells the Recoverer, once, that no recovery can happen any more.
func (g *overflowGate) settle() {
	if g.decided {
		return
	}
	g.decided = true
	if d, ok := g.r.(GateDecider); ok {
		d.GateDecided()
	}
}

// decide acts on the first meaningful event.
func (g *overflowGate) decide(ev *Event) []byte {
	v := overflow.ClassifyStreamEvent(ev.Name, ev.Data)
	if !v.Match() {
		return g.release()
	}
	body, err := g.ask(v)
	if err != nil || body == nil {
		if body != nil {
			safeClose(body)
		}
		return g.release()
	}
	return g.replay(body)
}

// ask calls the Recoverer; a panic there is a refusal, not a crash.
func (g *overflowGate) ask(v overflow.Verdict) (body io.ReadCloser, err error) {
	defer func() {
		if recover() != nil {
			body, err = nil, errPanicked
		}
	}()
	return g.r.Recover(v)
}

// replay runs the replay body through inner to EOF. A body that fails
// before its first byte is no replay: the held bytes are released instead,
// so the client at least sees the original error.
func (g *overflowGate) replay(body io.ReadCloser) []byte {
	defer safeClose(body)
	buf := make([]byte, 32<<10)
	var out []byte
	got := false
	for {
		n, err := safeRead(body, buf)
		if n > 0 {
			if !got {
				got = true
				g.state = gateRecovered
				g.held = nil
				g.dec = Decoder{}
				g.settle()
			}
			// A fresh slice per chunk: inner may return (and emit may keep)
			// the very bytes it was given.
			b := g.inner.Write(append([]byte(nil), buf[:n]...))
			if g.emit != nil {
				if len(b) > 0 && g.emit(b) != nil {
					// The client is gone: stop reading (the deferred Close
					// ends the replay upstream).
					return out
				}
			} else {
				out = append(out, b...)
			}
		}
		if err != nil {
			break
		}
	}
	if !got {
		return g.release()
	}
	return out
}

func safeClose(c io.Closer) {
	defer func() { _ = recover() }()
	_ = c.Close()
}

// notSSE reports a body whose first byte (after a possible BOM) cannot start
// an SSE stream: a control byte, as in AWS's binary event stream, whose
// frames open with a big-endian length.
func notSSE(b []byte) bool {
	if len(b) >= len(bom) && b[0] == bom[0] && b[1] == bom[1] && b[2] == bom[2] {
		b = b[len(bom):]
	}
	if len(b) == 0 {
		return false
	}
	c := b[0]
	return c < 0x20 && c != '\n' && c != '\r' && c != '\t'
}

// gatePreamble reports an event that says nothing yet: the stream could
// still open with an error after it.
func gatePreamble(d wire.Dialect, ev *Event) bool {
	if !ev.HasData && ev.Name == "" {
		return true // comment, keep-alive, empty event, lone id:/retry:
	}
	switch d {
	case wire.OpenAIChat:
		return (ev.Name == "" || ev.Name == "message") && oaiPreambleChunk(ev.Data)
	case wire.Anthropic:
		switch eventType(ev) {
		case "message_start", "ping":
			return true
		}
	case wire.OpenAIResponses:
		switch eventType(ev) {
		case "response.created", "response.in_progress", "response.queued":
			return true
		}
	}
	return false
}

// eventType is the SSE event name, or the data's "type" when the name is
// missing.
func eventType(ev *Event) string {
	if ev.Name != "" {
		return ev.Name
	}
	if t := gjson.GetBytes(ev.Data, "type"); t.Type == gjson.String {
		return t.Str
	}
	return ""
}

// oaiPreambleChunk reports a chat.completion.chunk that carries no content
// yet: no "error" key, and choices whose deltas hold only a role and empty
// fields (content "" or null, refusal null, tool_calls []), with no
// finish_reason; or choices:[] without usage.
func oaiPreambleChunk(data []byte) bool {
	if !jsonsafe.Valid(data) {
		return false
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() || root.Get("error").Exists() {
		return false
	}
	choices := root.Get("choices")
	if !choices.IsArray() {
		return false
	}
	list := choices.Array()
	if len(list) == 0 {
		return !isSet(root.Get("usage"))
	}
	for _, c := range list {
		if !c.IsObject() || isSet(c.Get("finish_reason")) {
			return false
		}
		delta := c.Get("delta")
		if !delta.Exists() || delta.Type == gjson.Null {
			continue
		}
		if !delta.IsObject() {
			return false
		}
		ok := true
		delta.ForEach(func(k, v gjson.Result) bool {
			if k.Str == "role" {
				return true
			}
			if isSet(v) {
				ok = false
			}
			return ok
		})
		if !ok {
			return false
		}
	}
	return true
}

// isSet reports a value other than null, "", [] or {}.
func isSet(v gjson.Result) bool {
	switch {
	case !v.Exists(), v.Type == gjson.Null:
		return false
	case v.Type == gjson.String:
		return v.Str != ""
	case v.IsArray(), v.IsObject():
		empty := true
		v.ForEach(func(_, _ gjson.Result) bool { empty = false; return false })
		return !empty
	}
	return true
}

// LeadingError reads the start of an SSE body (as a caller replaying a
// request does) and reports the verdict of its first meaningful event, by
// the gate's preamble rules; a stream that opens with content gives a
// NotOurs verdict. It reads at most 64 KiB. prefix is everything consumed,
// to be delivered in front of the rest if the stream is used. err is a read
// error met before a verdict (io.EOF is not an error).
func LeadingError(d wire.Dialect, body io.Reader) (v overflow.Verdict, prefix []byte, err error) {
	if body == nil {
		return overflow.Verdict{}, nil, nil
	}
	var dec Decoder
	buf := make([]byte, 32<<10)
	for len(prefix) < gateMaxHold {
		n, rerr := safeRead(body, buf[:min(len(buf), gateMaxHold-len(prefix))])
		if n > 0 {
			prefix = append(prefix, buf[:n]...)
			if notSSE(prefix) {
				return overflow.Verdict{}, prefix, nil
			}
			for _, ev := range dec.Feed(buf[:n]) {
				if !gatePreamble(d, &ev) {
					return overflow.ClassifyStreamEvent(ev.Name, ev.Data), prefix, nil
				}
			}
		}
		if rerr == io.EOF {
			if tail := dec.Flush(); tail != nil && !gatePreamble(d, tail) {
				return overflow.ClassifyStreamEvent(tail.Name, tail.Data), prefix, nil
			}
			return overflow.Verdict{}, prefix, nil
		}
		if rerr != nil {
			return overflow.Verdict{}, prefix, rerr
		}
	}
	return overflow.Verdict{}, prefix, nil
}

// GaveUp reports why the gate, or the chain behind it, stopped holding and
// passes the stream through ("" when none did).
func (g *overflowGate) GaveUp() string {
	if g.gaveUp != "" {
		return g.gaveUp
	}
	return GaveUp(g.inner)
}
