package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/toolproc/toolproc/filters/wire"
)

// Continuer resolves a turn whose tool calls include expand_context calls.
type Continuer interface {
	// Continue answers t's expand_context calls (looks the ids up, builds the
	// continuation request, replays it) and returns the upstream's next
	// answer: an SSE stream body of the same dialect. An error means no
	// continuation (store down, replay failed, loop limit reached): the
	// expander then ends the client's stream itself.
	Continue(t wire.Turn) (body io.ReadCloser, err error)
}

// The expander sits after a normalizer and keeps expand_context calls (the
// "phantom" calls toolproc answers itself) away from the client:
//
//   - everything passes through at once until the first tool-call event of a
//     message; from there the message's events are held until it ends
//     (events addressed to a block or item the client already has still pass:
//     they belong to text that streamed before the calls);
//   - at the end of the message, with no expand_context call held, the held
//     events go out unchanged, in order;
//   - with one, the message's turn is rebuilt in request form, everything
//     held is dropped and the Continuer is asked for the continuation; its
//     stream runs through a fresh normalizer and is spliced into the
//     client's stream (dialect rules in expand_openai_chat.go,
//     expand_anthropic.go, expand_responses.go), held and resolved the same
//     way, as often as the Continuer agrees;
//   - when the Continuer says no, the held events go out without the
//     phantom calls, re-indexed, with a finish that fits what remains.
//
// Continue and the reads of the continuation body block the Write or Close
// that reached the end of the message; that is the point of the exercise.

// expDialect is the per-dialect half of the expander.
type expDialect interface {
	// event handles one event of the current stream (already normalized).
	// It appends client bytes to x.out, holds, or, at the end of a message
	// that called expand_context, sets x.pending.
	event(x *expander, ev Event)
	// streamEnd is called when the current stream's normalizer closed: a
	// message still holding ends here.
	streamEnd(x *expander)
	// continuation prepares for the continuation stream: drops what is held,
	// keeps the client-side offsets.
	continuation(x *expander)
	// fail ends the client's stream from what is held, phantoms removed.
	fail(x *expander)
	// holds reports a message being held.
	holds() bool
	// release hands on everything held unchanged, in order, and forgets
	// the message (giving up, first stream only).
	release(x *expander)
}

// Defaults for what the expander may hold. The calls of one message are
// held until it ends; a runaway upstream must not make that unbounded.
const (
	// DefaultMaxHold bounds the bytes of one held message.
	DefaultMaxHold = 8 << 20
	// DefaultMaxEvent bounds one event (its bytes before its blank line).
	DefaultMaxEvent = 16 << 20
)

// Limits bound what a transform holds; zero fields mean the defaults.
type Limits struct {
	MaxHold, MaxEvent int
}

func (l Limits) hold() int {
	if l.MaxHold > 0 {
		return l.MaxHold
	}
	return DefaultMaxHold
}

func (l Limits) event() int {
	if l.MaxEvent > 0 {
		return l.MaxEvent
	}
	return DefaultMaxEvent
}

type expander struct {
	d        expDialect
	inner    Normalizer
	newInner func() Normalizer
	c        Continuer
	emit     func([]byte) error

	dec     Decoder // splits the current normalizer's output into events
	out     []byte
	cont    bool       // the current stream is a continuation
	pending *wire.Turn // a message ended calling expand_context
	done    bool       // the client's stream ended after a continuation (or its refusal)
	closed  bool
	gone    bool // emit failed: the client is gone, nothing more is read or asked

	limits   Limits
	holdSize int    // bytes of the events of the message being held
	passing  bool   // gave up: the current normalizer's output goes out as is
	noHold   bool   // gave up in a continuation: held events go out at once
	gaveUp   string // why it gave up
}

// SetLimits sets what an expander made by NewExpanding may hold (n is
// returned unchanged by anything else).
func SetLimits(n Normalizer, l Limits) {
	if x, ok := n.(*expander); ok {
		x.limits = l
	}
}

// GaveUp reports why the expander, or its current normalizer, gave up.
func (x *expander) GaveUp() string {
	if x.gaveUp != "" {
		return x.gaveUp
	}
	return GaveUp(x.inner)
}

// giveUp stops holding: everything held goes out in order. In the first
// stream the rest passes through untouched (phantom calls included: the
// client gets the upstream's answer as is). In a continuation the client's
// stream is a splice that only the dialect can keep well-formed, so its
// events still go through the dialect, but nothing is held any more.
func (x *expander) giveUp(reason string) {
	x.gaveUp = reason
	x.holdSize = 0
	x.d.release(x)
	if x.cont {
		x.noHold = true
		return
	}
	x.passing = true
}

// NewExpanding wraps the normalizer of one response stream of dialect d
// (wire.OpenAIChat, wire.Anthropic, wire.OpenAIResponses).
// newInner makes a fresh normalizer for each continuation stream.
// emit, when non-nil, receives continuation output as soon as it is
// produced (FULL_DUPLEX_STREAMED can send it immediately); when nil,
// continuation output is returned from the Write/Close call that triggered it.
// An emit error means the client is gone: the expander closes the
// continuation body at once, reads nothing more and asks for no further
// continuation (each one is a billed LLM call nobody will see).
//
// For another dialect, or without a Continuer, inner is returned as is.
func NewExpanding(d wire.Dialect, inner Normalizer, newInner func() Normalizer, c Continuer, emit func([]byte) error) Normalizer {
	var h expDialect
	switch d {
	case wire.OpenAIChat:
		h = &oaiExp{}
	case wire.Anthropic:
		h = &antExp{}
	case wire.OpenAIResponses:
		h = &respExp{}
	default:
		return inner
	}
	if inner == nil {
		return inner
	}
	return &expander{d: h, inner: inner, newInner: newInner, c: c, emit: emit}
}

func (x *expander) Write(p []byte) []byte {
	if x.closed || x.done {
		return nil
	}
	x.feed(x.inner.Write(p))
	x.settle()
	return x.take()
}

func (x *expander) Close() []byte {
	if x.closed {
		return nil
	}
	x.closed = true
	if x.done {
		x.inner.Close()
		return x.take()
	}
	x.feed(x.inner.Close())
	x.endStream()
	x.settle()
	return x.take()
}

func (x *expander) take() []byte {
	out := x.out
	x.out = nil
	return out
}

// feed runs the current normalizer's output through the dialect. Nothing
// after the end of a message that called expand_context is looked at: that
// stream is over for the client.
func (x *expander) feed(b []byte) {
	if len(b) == 0 {
		return
	}
	if x.passing {
		x.out = append(x.out, b...)
		return
	}
	for _, ev := range x.dec.Feed(b) {
		if x.passing {
			x.out = append(x.out, ev.Raw...)
			continue
		}
		if x.pending != nil || x.done {
			return
		}
		x.d.event(x, ev)
		if x.noHold && x.d.holds() {
			x.d.release(x)
		}
		if !x.d.holds() {
			x.holdSize = 0
			continue
		}
		if x.holdSize += len(ev.Raw); x.holdSize > x.limits.hold() && x.pending == nil && !x.done {
			x.giveUp(GaveUpHold)
		}
	}
	if !x.passing && !x.cont && x.pending == nil && !x.done && len(x.dec.pending()) > x.limits.event() {
		x.giveUp(GaveUpEvent)
	}
	if x.passing {
		// The incomplete event the decoder holds goes out too, in order.
		x.out = append(x.out, x.dec.pending()...)
		x.dec = Decoder{}
	}
}

// endStream handles the current normalizer's last bytes.
func (x *expander) endStream() {
	if x.passing {
		return
	}
	if tail := x.dec.Flush(); tail != nil && x.pending == nil && !x.done {
		x.d.event(x, *tail)
	}
	if x.pending == nil && !x.done {
		x.d.streamEnd(x)
	}
}

// flushEmit hands what is ready to emit, when there is one, so the client
// gets bytes in order: everything before the continuation first. It reports
// false once emitting failed.
func (x *expander) flushEmit() bool {
	if x.gone {
		return false
	}
	if x.emit != nil && len(x.out) > 0 {
		if err := x.emit(x.take()); err != nil {
			x.gone, x.done = true, true
			return false
		}
	}
	return true
}

// settle resolves pending turns: continuation after continuation until one
// ends without expand_context or the Continuer says no.
func (x *expander) settle() {
	for x.pending != nil && !x.done {
		t := *x.pending
		x.pending = nil
		if !x.flushEmit() {
			return
		}
		body, err := x.ask(t)
		var inner Normalizer
		if err == nil && body != nil && x.newInner != nil {
			inner = x.newInner()
		}
		if inner == nil {
			if body != nil {
				_ = body.Close()
			}
			x.d.fail(x)
			x.done = true
			x.flushEmit()
			return
		}
		x.d.continuation(x)
		x.cont = true
		x.dec = Decoder{}
		x.drain(inner, body)
		x.flushEmit()
		if x.pending == nil {
			x.done = true
		}
	}
}

// ask calls the Continuer; a panic there is a refusal, not a crash.
func (x *expander) ask(t wire.Turn) (body io.ReadCloser, err error) {
	if x.c == nil {
		return nil, errNoContinuer
	}
	defer func() {
		if recover() != nil {
			body, err = nil, errPanicked
		}
	}()
	return x.c.Continue(t)
}

// Refusals of ask: nobody to continue with, or the Continuer or Recoverer
// panicked (a refusal, not a crash).
var (
	errNoContinuer = errors.New("stream: no continuer")
	errPanicked    = errors.New("stream: continuer or recoverer panicked")
)

// drain reads a continuation body through its normalizer until it ends or
// its message calls expand_context again.
func (x *expander) drain(inner Normalizer, body io.ReadCloser) {
	defer func() { _ = body.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := safeRead(body, buf)
		if n > 0 {
			x.feed(inner.Write(buf[:n]))
			if !x.flushEmit() {
				return // the deferred Close ends the continuation upstream
			}
		}
		if x.pending != nil || x.done || err != nil {
			break
		}
	}
	if x.pending == nil && !x.done {
		x.feed(inner.Close())
		x.endStream()
	}
}

func safeRead(r io.Reader, buf []byte) (n int, err error) {
	defer func() {
		if recover() != nil {
			n, err = 0, io.ErrUnexpectedEOF
		}
	}()
	n, err = r.Read(buf)
	if n < 0 || n > len(buf) {
		n = 0
	}
	if n == 0 && err == nil {
		// A reader may return 0, nil; a few of those in a row are fine, but
		// never loop forever on one.
		n, err = r.Read(buf)
		if n <= 0 && err == nil {
			err = io.ErrNoProgress
		}
		if n < 0 || n > len(buf) {
			n = 0
		}
	}
	return n, err
}

// expHeld is one held event: the bytes the client would get if it goes out
// unchanged, its data as the client would get it, and what it is.
type expHeld struct {
	raw  []byte
	name string // the SSE event name
	id   string // the SSE id field
	data []byte
	kind string
	idx  int // the client block / output index it addresses, -1 if none
}

// expQuote is a JSON string token.
func expQuote(s string) []byte { return wire.QuoteString(s) }

// expCompact makes a JSON text one line (SSE data of the OpenAI profile);
// invalid input comes back as is.
func expCompact(b []byte) []byte {
	if !bytes.ContainsAny(b, "\r\n") {
		return b
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
