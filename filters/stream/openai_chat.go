package stream

import (
	"bytes"
	"encoding/json"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// The OpenAI Chat Completions normalizer turns what OpenAI-compatible servers
// actually send into the emission profile below, the one
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
