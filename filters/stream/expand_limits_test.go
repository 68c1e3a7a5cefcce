package stream

import (
	"bytes"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
)

// expInnerAlone is what the normalizer alone makes of body in chunks.
func expInnerAlone(d wire.Dialect, chunks [][]byte) []byte {
	n := expNewInner(d)()
	var out []byte
	for _, c := range chunks {
		out = append(out, n.Write(c)...)
	}
	return append(out, n.Close()...)
}

func expLimitRun(d wire.Dialect, c Continuer, l Limits, chunks [][]byte) ([]byte, Normalizer) {
	x := NewExpanding(d, expNewInner(d)(), expNewInner(d), c, nil)
	SetLimits(x, l)
	var out []byte
	for _, ch := range chunks {
		out = append(out, x.Write(ch)...)
	}
	return append(out, x.Close()...), x
}

// Review finding 11: the calls of one message were held without limit.
// Past the hold limit the expander hands on everything it held unchanged
// and passes the rest through: the client gets exactly what the normalizer
// alone makes of the stream, nothing dropped or reordered, and GaveUp says
// why. A phantom call past the limit reaches the client (fail open) and no
// continuation is asked for.
func TestExpandHoldLimit(t *testing.T) {
	big := strings.Repeat("x", 4000)
	for _, name := range []string{"get_weather", "expand_context"} {
		body := expOAIStream("c1", expOAIText("c1", "Looking. "),
			expOAICall("c1", 0, "call_1", name, `{"id":"sh_1","pad":"`+big+`"}`),
			expOAICall("c1", 1, "call_2", "get_time", `{"pad":"`+big+`"}`),
			expOAIEnd("c1", "tool_calls"))
		for cname, chunks := range gateChunkings([]byte(body)) {
			c := &expFake{t: t, bodies: []string{expOAIStream("c2", expOAIText("c2", "more"), expOAIEnd("c2", "stop"))}}
			out, x := expLimitRun(wire.OpenAIChat, c, Limits{MaxHold: 2048}, chunks)
			if want := expInnerAlone(wire.OpenAIChat, chunks); !bytes.Equal(out, want) {
				t.Fatalf("%s/%s: client got\n%s\nwant the normalizer's output\n%s", name, cname, out, want)
			}
			if r := GaveUp(x); r != GaveUpHold {
				t.Fatalf("%s/%s: GaveUp %q", name, cname, r)
			}
			if len(c.turns) != 0 {
				t.Fatalf("%s/%s: asked for a continuation after giving up", name, cname)
			}
		}
	}
	// Under the limit nothing changes: the phantom is resolved.
	body := expOAIStream("c1", expOAICall("c1", 0, "call_1", "expand_context", `{"id":"sh_1"}`), expOAIEnd("c1", "tool_calls"))
	c := &expFake{t: t, bodies: []string{expOAIStream("c2", expOAIText("c2", "more"), expOAIEnd("c2", "stop"))}}
	out, x := expLimitRun(wire.OpenAIChat, c, Limits{MaxHold: 1 << 20}, [][]byte{[]byte(body)})
	if len(c.turns) != 1 || bytes.Contains(out, []byte("expand_context")) || GaveUp(x) != "" {
		t.Fatalf("turns %d, GaveUp %q, out %s", len(c.turns), GaveUp(x), out)
	}
}

// One event larger than the event limit: it and everything after pass
// through unchanged.
func TestExpandEventLimit(t *testing.T) {
	huge := expOAIText("c1", strings.Repeat("y", 10000))
	body := expOAIStream("c1", expOAIText("c1", "a"), huge, expOAIText("c1", "b"), expOAIEnd("c1", "stop"))
	// The normalizer in front hands on whole events; a pass-through one lets
	// the upstream's chunks reach the expander's own decoder.
	chunks := antFixed(1000)([]byte(body))
	x := NewExpanding(wire.OpenAIChat, passNormalizer{}, expNewInner(wire.OpenAIChat), expNever{t}, nil)
	SetLimits(x, Limits{MaxEvent: 4096})
	var out []byte
	fed := 0
	for i, c := range chunks {
		out = append(out, x.Write(c)...)
		fed += len(c)
		// Once it gave up, nothing is held: the client has every byte fed.
		if !bytes.HasPrefix([]byte(body), out) || (GaveUp(x) != "" && len(out) != fed) {
			t.Fatalf("chunk %d: %d bytes fed, client has %d", i, fed, len(out))
		}
	}
	out = append(out, x.Close()...)
	if !bytes.Equal(out, []byte(body)) {
		t.Fatalf("client got\n%s\nwant\n%s", out, body)
	}
	if GaveUp(x) != GaveUpEvent {
		t.Fatalf("GaveUp %q", GaveUp(x))
	}
}

// Past the hold limit inside a continuation, the client's stream is ended
// well-formed from what is held (phantoms removed) and the continuation is
// read no further.
func TestExpandHoldLimitInContinuation(t *testing.T) {
	first := expOAIStream("c1", expOAIText("c1", "Let me look. "), expOAICall("c1", 0, "call_p", "expand_context", `{"id":"sh_1"}`), expOAIEnd("c1", "tool_calls"))
	big := strings.Repeat("z", 4000)
	second := expOAIStream("c2", expOAICall("c2", 0, "call_r", "get_weather", `{"pad":"`+big+`"}`), expOAIEnd("c2", "tool_calls"))
	f := &expFake{t: t, bodies: []string{second}}
	out, x := expLimitRun(wire.OpenAIChat, f, Limits{MaxHold: 2048}, [][]byte{[]byte(first)})
	if GaveUp(x) != GaveUpHold || f.closed != 1 {
		t.Fatalf("GaveUp %q, closed %d", GaveUp(x), f.closed)
	}
	if !bytes.Contains(out, []byte("get_weather")) || !bytes.Contains(out, []byte(big)) {
		t.Fatalf("the continuation's call is missing:\n%s", out)
	}
	if bytes.Contains(out, []byte("expand_context")) {
		t.Fatalf("phantom reached the client:\n%s", out)
	}
	if err := oaiCheckProfile(out); err != nil {
		t.Fatalf("profile: %v\n%s", err, out)
	}
	if _, err := oaiAccumulate(out); err != nil {
		t.Fatalf("accumulate: %v\n%s", err, out)
	}
}
