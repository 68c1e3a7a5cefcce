package stream

import (
	"crypto/rand"
)

// Normalizer repairs one upstream response stream of one dialect. It is fed
// the upstream body as it arrives and returns what the client should get
// now; it holds back only what must be held (an incomplete event, text that
// could still become an <invoke> block, a tool call whose name has not
// arrived). It never blocks and never panics; on input it cannot make sense
// of it passes bytes through.
type Normalizer interface {
	// Write consumes upstream bytes and returns client bytes (possibly none).
	Write(p []byte) []byte
	// Close is called once when the upstream body ended, cleanly or not. It
	// returns the bytes that end the client stream well-formed: pending
	// material, a finish chunk, an error chunk, [DONE], message_stop, ...
	Close() []byte
}

// Options tune the normalizers. The zero value is valid.
type Options struct {
	// XMLToolCalls turns <invoke name="..."><parameter name="...">...</parameter></invoke>
	// blocks in assistant text into tool calls (text-only upstreams, seed 002).
	XMLToolCalls bool
	// IncludeUsage is true when the client asked stream_options.include_usage.
	IncludeUsage bool
	// NewCallID makes tool call ids for calls that have none (XML calls, calls
	// an upstream sent without id). Nil means NewCallID below.
	NewCallID func() string
}

func (o Options) callID() string {
	if o.NewCallID != nil {
		return o.NewCallID()
	}
	return NewCallID()
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// NewCallID returns "call_" + 24 random alphanumerics, the shape OpenAI's
// own ids have (seed 002 §A.2.4).
func NewCallID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	out := make([]byte, 0, 29)
	out = append(out, "call_"...)
	for _, c := range b {
		out = append(out, idAlphabet[int(c)%len(idAlphabet)])
	}
	return string(out)
}

// Reasons a transform gives up. A transform that gives up hands on
// everything it held unchanged and in order, and passes every later byte
// through untouched: the client gets the upstream's stream as is, which is
// always better than a process holding an unbounded answer in memory.
const (
	// GaveUpHold: more bytes held back than the hold limit allows.
	GaveUpHold = "hold_limit"
	// GaveUpEvent: one event larger than the event limit.
	GaveUpEvent = "event_too_large"
)

// GaveUp reports why n (or a transform it wraps) gave up and passes the
// stream through; "" when it did not, or cannot. The caller counts it once
// per stream, after Close (passthrough_total{reason=...}).
func GaveUp(n Normalizer) string {
	if g, ok := n.(interface{ GaveUp() string }); ok {
		return g.GaveUp()
	}
	return ""
}
