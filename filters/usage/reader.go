package usage

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// DefaultMaxObject caps the bytes of one usage object the Reader copies to
// parse. Real ones are a few hundred bytes (Anthropic's with its
// server_tool_use and cache_creation breakdowns is the largest, ~400).
const DefaultMaxObject = 16 << 10

// maxFrame bounds one AWS event-stream message (Bedrock ConverseStream);
// the format itself caps a message at 16 MiB.
const maxFrame = 16 << 20

// Reader watches an answer go by and keeps the usage it carries. Write
// observes a chunk and returns at once; the chunk is neither kept nor
// changed. It is one linear pass: a JSON tokenizer that only tracks string
// state, the keys of the enclosing containers (a fixed-size stack) and, when
// a usage object opens at a place the dialect puts one, a bounded copy of
// that object, parsed with gjson when it closes.
//
// Framings: a JSON document (or Gemini's JSON array stream), SSE (each
// event's data lines are one document; other lines are skipped), and the
// AWS event stream (Bedrock ConverseStream: each message's payload is one
// document; https://docs.aws.amazon.com/AmazonS3/latest/API/RESTSelectObjectAppendix.html
// describes the prelude/headers/payload/CRC layout).
type Reader struct {
	dialect wire.Dialect
	framing framing
	max     int

	u     Usage
	found bool
	// Dropped counts usage objects larger than the cap (not read).
	dropped int

	tok tokenizer

	// SSE line state.
	lineStart bool
	prefix    int  // bytes of "data:" matched at the line start
	inData    bool // inside a data line's value
	skipLine  bool // inside a line that is not data
	lastCR    bool // the previous byte was \r

	// Event-stream state.
	prelude [12]byte
	have    int // prelude bytes read
	skip    int // header bytes left to skip
	payload int // payload bytes left
	trailer int // message CRC bytes left
	// Claude on Bedrock (InvokeModelWithResponseStream): each event's
	// payload is {"bytes":"<base64 of a Messages stream event>"}, kept up
	// to maxChunk to be decoded whole; a larger one (a long text delta)
	// cannot hold usage and is skipped.
	frame     []byte
	frameLong bool
	gaveUp    bool
	gaveWhy   string
	messages  int
}

type framing int

const (
	framingJSON framing = iota
	framingSSE
	framingEventStream
)

// NewReader returns a reader for an answer of dialect d with the response
// content type ct. maxObject caps the copy of one usage object (0: the
// default).
func NewReader(d wire.Dialect, ct string, maxObject int) *Reader {
	if maxObject <= 0 {
		maxObject = DefaultMaxObject
	}
	r := &Reader{dialect: d, max: maxObject, lineStart: true}
	ct = strings.ToLower(strings.TrimSpace(ct))
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		r.framing = framingSSE
	case strings.HasPrefix(ct, "application/vnd.amazon.eventstream"):
		r.framing = framingEventStream
	}
	r.tok.reset()
	return r
}

// Usage returns the bill read so far and whether any usage object was seen.
func (r *Reader) Usage() (Usage, bool) { return r.u, r.found }

// Dropped is how many usage objects were too large to read.
func (r *Reader) Dropped() int { return r.dropped }

// GaveUp is non-empty when the framing could not be followed (a corrupt
// event-stream prelude); the rest of the answer was not read.
func (r *Reader) GaveUp() string { return r.gaveWhy }

// Write observes one chunk of the answer.
func (r *Reader) Write(p []byte) {
	if r.gaveUp {
		return
	}
	switch r.framing {
	case framingSSE:
		r.writeSSE(p)
	case framingEventStream:
		r.writeEventStream(p)
	default:
		r.feed(p)
	}
}

func (r *Reader) feed(p []byte) {
	t := &r.tok
	for i := 0; i < len(p); i++ {
		if t.inStr && t.strLong && !t.esc && !t.capturing {
			// Inside a string too long to be a key, outside any usage
			// object: only its end matters (most of a body's bytes are
			// such strings).
			for i < len(p) && p[i] != '"' && p[i] != '\\' {
				i++
			}
			if i == len(p) {
				break
			}
		}
		if obj := t.step(p[i], r.max); obj != nil {
			r.take(obj)
		}
	}
	if r.tok.overflow {
		r.tok.overflow = false
		r.dropped++
	}
}

func (r *Reader) take(obj []byte) {
	if merge(&r.u, r.dialect, obj) {
		r.found = true
	}
}

// writeSSE feeds the values of data lines to the tokenizer. A blank line
// ends an event, so the tokenizer starts afresh for the next one: a
// malformed event cannot desynchronise the rest of the stream. A raw line
// break cannot occur inside a JSON string, so lines are cut without
// looking at JSON state (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
func (r *Reader) writeSSE(p []byte) {
	const data = "data:"
	for i := 0; i < len(p); {
		if r.inData {
			// The rest of a data line goes to the tokenizer in one slice.
			j := indexEOL(p[i:])
			if j < 0 {
				r.feed(p[i:])
				return
			}
			r.feed(p[i : i+j])
			i += j
		}
		c := p[i]
		i++
		if c == '\n' && r.lastCR {
			r.lastCR = false // the \n of a \r\n
			continue
		}
		if c == '\n' || c == '\r' {
			if r.lineStart {
				r.tok.reset() // a blank line: the event is over
			}
			r.lineStart, r.prefix, r.inData, r.skipLine = true, 0, false, false
			r.lastCR = c == '\r'
			continue
		}
		r.lastCR = false
		switch {
		case r.skipLine:
		case r.prefix < len(data) && c == data[r.prefix]:
			r.lineStart = false
			r.prefix++
			if r.prefix == len(data) {
				r.inData = true
			}
		default:
			r.lineStart = false
			r.skipLine = true
		}
	}
}

// indexEOL is the index of the first \r or \n in p, -1 if none.
func indexEOL(p []byte) int {
	n := bytes.IndexByte(p, '\n')
	if n < 0 {
		n = len(p)
	}
	if r := bytes.IndexByte(p[:n], '\r'); r >= 0 {
		return r
	}
	if n == len(p) {
		return -1
	}
	return n
}

// maxChunk bounds the payload of one InvokeModelWithResponseStream event
// kept to decode: base64 of a message_start or message_delta event is
// under 2 KiB.
const maxChunk = 64 << 10

func (r *Reader) chunk(p []byte) {
	if r.frameLong || len(r.frame)+len(p) > maxChunk {
		r.frameLong, r.frame = true, r.frame[:0]
		return
	}
	r.frame = append(r.frame, p...)
}

// endChunk decodes a complete InvokeModelWithResponseStream payload and
// reads the Messages event inside it
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html).
func (r *Reader) endChunk() {
	frame, long := r.frame, r.frameLong
	r.frame, r.frameLong = r.frame[:0], false
	if long {
		return
	}
	b64 := gjson.GetBytes(frame, "bytes")
	if b64.Type != gjson.String {
		r.feed(frame) // a Converse-shaped payload after all
		return
	}
	ev, err := base64.StdEncoding.DecodeString(b64.Str)
	if err != nil {
		return
	}
	r.tok.reset()
	r.feed(ev)
	r.tok.reset()
}

// writeEventStream follows the AWS event-stream framing: a 12-byte prelude
// (total length, headers length, prelude CRC), the headers, the payload and
// a 4-byte message CRC. Each payload is one JSON document (Bedrock's
// metadata event carries {"usage":{…},"metrics":{…}}). CRCs are not checked:
// the client does that; this only reads.
func (r *Reader) writeEventStream(p []byte) {
	for len(p) > 0 {
		switch {
		case r.skip > 0:
			n := min(r.skip, len(p))
			r.skip -= n
			p = p[n:]
		case r.payload > 0:
			n := min(r.payload, len(p))
			if r.dialect == wire.Anthropic {
				r.chunk(p[:n])
			} else {
				r.feed(p[:n])
			}
			r.payload -= n
			p = p[n:]
			if r.payload == 0 {
				r.trailer = 4
				if r.dialect == wire.Anthropic {
					r.endChunk()
				}
			}
		case r.trailer > 0:
			n := min(r.trailer, len(p))
			r.trailer -= n
			p = p[n:]
		default:
			n := copy(r.prelude[r.have:], p)
			r.have += n
			p = p[n:]
			if r.have < len(r.prelude) {
				return
			}
			r.have = 0
			total := int(binary.BigEndian.Uint32(r.prelude[0:4]))
			headers := int(binary.BigEndian.Uint32(r.prelude[4:8]))
			if total > maxFrame || total < 16 || headers > total-16 {
				r.gaveUp, r.gaveWhy = true, "bad_frame"
				return
			}
			r.messages++
			r.tok.reset()
			r.skip = headers
			r.payload = total - 16 - headers
			if r.payload == 0 {
				r.trailer = 4
			}
		}
	}
}
