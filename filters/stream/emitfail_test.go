package stream

import (
	"errors"
	"io"
	"testing"

	"github.com/toolproc/toolproc/filters/overflow"
	"github.com/toolproc/toolproc/filters/wire"
)

// chunkedBody is a continuation (or replay) that would stream n events, one
// per Read; it counts its reads and its Close.
type chunkedBody struct {
	chunks []string
	reads  int
	closed int
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	if b.closed > 0 {
		return 0, errors.New("read after Close")
	}
	if b.reads >= len(b.chunks) {
		return 0, io.EOF
	}
	b.reads++
	return copy(p, b.chunks[b.reads-1]), nil
}

func (b *chunkedBody) Close() error { b.closed++; return nil }

// oaiSixtyChunks is a chat stream of 60 events: a role chunk, 57 text
// chunks, a stop and [DONE].
func oaiSixtyChunks(id string) []string {
	out := []string{expOAIChunk(id, `{"role":"assistant","content":null}`, "")}
	for len(out) < 58 {
		out = append(out, expOAIText(id, "word "))
	}
	return append(out, expOAIChunk(id, `{}`, "stop"), "data: [DONE]\n\n")
}

type oneBody struct {
	body  io.ReadCloser
	asked int
}

func (c *oneBody) Continue(wire.Turn) (io.ReadCloser, error) {
	c.asked++
	if c.asked > 1 {
		return nil, errTestRefused
	}
	return c.body, nil
}

// failingEmit accepts ok calls, then fails every later one (Envoy reset the
// stream: the client is gone).
func failingEmit(ok int) (emit func([]byte) error, calls *int) {
	n := 0
	return func([]byte) error {
		n++
		if n > ok {
			return errors.New("send: stream reset")
		}
		return nil
	}, &n
}

// Review finding 4: when emitting fails the expander stops reading the
// continuation at once and closes it, instead of pulling (and paying for)
// the whole answer nobody will see.
func TestExpandStopsWhenEmitFails(t *testing.T) {
	first := expOAIStream("c1", expOAICall("c1", 0, "call_phantom", "expand_context", `{"id":"sh_1"}`), expOAIEnd("c1", "tool_calls"))
	body := &chunkedBody{chunks: oaiSixtyChunks("c2")}
	c := &oneBody{body: body}
	emit, calls := failingEmit(3)
	x := NewExpanding(wire.OpenAIChat, expNewInner(wire.OpenAIChat)(), expNewInner(wire.OpenAIChat), c, emit)
	x.Write([]byte(first))
	x.Close()
	if c.asked != 1 {
		t.Fatalf("asked %d times", c.asked)
	}
	if body.closed != 1 {
		t.Fatalf("continuation closed %d times", body.closed)
	}
	// The emit that failed saw the output of one read; at most one more read
	// may happen after it.
	if body.reads > *calls+1 {
		t.Fatalf("%d of %d chunks read after emit failed on call %d", body.reads, len(body.chunks), *calls)
	}
	if *calls != 4 {
		t.Fatalf("emit called %d times after it failed", *calls)
	}
}

// An emit that fails before the continuation is asked for: no continuation
// is asked for at all.
func TestExpandNoContinuationWhenEmitFailed(t *testing.T) {
	first := expOAIStream("c1", expOAIText("c1", "Let me look. "), expOAICall("c1", 0, "call_phantom", "expand_context", `{"id":"sh_1"}`), expOAIEnd("c1", "tool_calls"))
	c := &oneBody{body: &chunkedBody{chunks: oaiSixtyChunks("c2")}}
	emit, _ := failingEmit(0)
	x := NewExpanding(wire.OpenAIChat, expNewInner(wire.OpenAIChat)(), expNewInner(wire.OpenAIChat), c, emit)
	x.Write([]byte(first))
	x.Close()
	if c.asked != 0 {
		t.Fatalf("asked for a continuation %d times for a client that is gone", c.asked)
	}
}

type bodyRec struct{ body io.ReadCloser }

func (r *bodyRec) Recover(overflow.Verdict) (io.ReadCloser, error) { return r.body, nil }

// The same for the overflow gate's replay.
func TestOverflowGateStopsWhenEmitFails(t *testing.T) {
	body := &chunkedBody{chunks: oaiSixtyChunks("r1")}
	emit, calls := failingEmit(3)
	g := NewOverflowGate(wire.OpenAIChat, gateNewInner(wire.OpenAIChat, false, true), &bodyRec{body}, emit)
	g.Write([]byte(sse("", gOROverflow)))
	g.Close()
	if body.closed != 1 {
		t.Fatalf("replay closed %d times", body.closed)
	}
	if body.reads > *calls+1 || *calls != 4 {
		t.Fatalf("%d of %d chunks read, emit called %d times", body.reads, len(body.chunks), *calls)
	}
}
