// Package stream repairs LLM response streams: an SSE codec that survives
// any chunking, per-dialect normalizers that make tool-call deltas
// well-formed for real clients, and the XML <invoke> tool-call parser for
// text-only upstreams. Like every filter it is pure: bytes in, bytes out.
package stream

import "bytes"

// Event is one server-sent event (WHATWG HTML §9.2 "event stream
// interpretation"): the lines up to and including the blank line that
// dispatches it.
type Event struct {
	// Name is the "event:" field ("" when absent: clients treat it as "message").
	Name string
	// Data is the "data:" lines joined with "\n"; HasData says any were present.
	Data    []byte
	HasData bool
	// ID is the "id:" field; Retry the raw "retry:" value. Both rare here.
	ID, Retry string
	// Raw holds the exact bytes received, terminator included, so an event
	// nobody changes goes out byte-identical.
	Raw []byte
	// Incomplete marks the bytes left over when the stream ended without the
	// blank line that would have dispatched them (openai-go drops such an event).
	Incomplete bool
}

// IsComment reports whether the event carries no field at all: only comment
// lines such as ": OPENROUTER PROCESSING", or keep-alive padding.
func (e *Event) IsComment() bool {
	return !e.HasData && e.Name == "" && e.ID == "" && e.Retry == ""
}

// Decoder splits a byte stream into events across arbitrary chunk
// boundaries: lines split anywhere, "\r\n" split between chunks, UTF-8 runes
// split between chunks (bytes are never decoded here), comments, event:
// lines and multi-line data.
type Decoder struct {
	buf     []byte
	started bool
	// Where the scan of the pending event stopped: every byte of buf before
	// scan has been looked at, and line is where its current line starts.
	// Resuming there keeps Feed linear in the bytes fed, however the
	// stream is chunked (review finding 11: rescanning the pending event on
	// every chunk made one 32 MiB event cost 30 s).
	scan, line int
}

// Feed consumes p and returns the events it completed.
func (d *Decoder) Feed(p []byte) []Event {
	d.buf = append(d.buf, p...)
	if !d.started && len(d.buf) > 0 {
		// A UTF-8 BOM may open the stream; it is not part of the first line.
		if bytes.HasPrefix(d.buf, bom) {
			d.buf = d.buf[len(bom):]
			d.started = true
		} else if len(d.buf) >= len(bom) || !bytes.HasPrefix(bom, d.buf) {
			d.started = true
		} else {
			return nil // could still be a BOM: wait for more bytes
		}
	}
	var events []Event
	pos := 0
	for {
		end, ok, scan, line := eventEnd(d.buf[pos:], d.scan, d.line)
		if !ok {
			d.scan, d.line = scan, line
			break
		}
		d.scan, d.line = 0, 0
		raw := d.buf[pos : pos+end]
		events = append(events, parseEvent(raw))
		pos += end
	}
	if pos > 0 {
		// Keep the tail in a fresh slice so returned Raw bytes stay valid.
		d.buf = append([]byte(nil), d.buf[pos:]...)
	}
	return events
}

// Flush returns what is left when the stream ends: nil, or one event marked
// Incomplete with the leftover bytes.
func (d *Decoder) Flush() *Event {
	if len(d.buf) == 0 {
		return nil
	}
	ev := parseEvent(d.buf)
	// A final "\r" could not be told from the start of "\r\n" while more
	// bytes might come; at the end it is a line terminator.
	complete := false
	if d.buf[len(d.buf)-1] == '\r' {
		probe := append(append([]byte(nil), d.buf...), '\n')
		end, ok, _, _ := eventEnd(probe, 0, 0)
		complete = ok && end == len(probe)
	}
	ev.Incomplete = !complete
	d.buf, d.scan, d.line = nil, 0, 0
	return &ev
}

// Buffered is the number of bytes held for an incomplete event.
func (d *Decoder) Buffered() int { return len(d.buf) }

var bom = []byte{0xEF, 0xBB, 0xBF}

// eventEnd finds the end of the first complete event in b: the position just
// after the blank line that dispatches it. Line terminators are "\r\n", "\n"
// or "\r"; a "\r" at the very end of b may be the first half of "\r\n", so
// it is not taken as a terminator until the next byte is known. The scan
// starts at from, inside the line that starts at lineStart (both 0 for a
// fresh event); when no event ends in b it returns where to resume.
func eventEnd(b []byte, from, lineStart int) (end int, ok bool, resume, resumeLine int) {
	for i := from; i < len(b); i++ {
		c := b[i]
		if c != '\n' && c != '\r' {
			// Skip to the next terminator at memchr speed.
			j := bytes.IndexAny(b[i:], "\r\n")
			if j < 0 {
				return 0, false, len(b), lineStart
			}
			i += j
			c = b[i]
		}
		next := i + 1
		if c == '\r' {
			if next == len(b) {
				return 0, false, i, lineStart
			}
			if b[next] == '\n' {
				next++
			}
		}
		if i == lineStart {
			// An empty line: dispatch. A stream that opens with blank lines
			// yields empty events, which IsComment reports and callers pass on.
			return next, true, 0, 0
		}
		lineStart = next
		i = next - 1
	}
	return 0, false, len(b), lineStart
}

func parseEvent(raw []byte) Event {
	ev := Event{Raw: raw}
	var data [][]byte
	for len(raw) > 0 {
		line, rest := cutLine(raw)
		raw = rest
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) {
		case "data":
			data = append(data, value)
			ev.HasData = true
		case "event":
			ev.Name = string(value)
		case "id":
			ev.ID = string(value)
		case "retry":
			ev.Retry = string(value)
		}
	}
	if ev.HasData {
		ev.Data = bytes.Join(data, []byte{'\n'})
	}
	return ev
}

// cutLine splits off the first line and its terminator.
func cutLine(b []byte) (line, rest []byte) {
	for i, c := range b {
		switch c {
		case '\n':
			return b[:i], b[i+1:]
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				return b[:i], b[i+2:]
			}
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}

// Encode writes an event in the canonical form every client parses: an
// optional "event:" line, one "data: " line per data line, a blank line.
// VS Code Copilot Chat reads each line as data, so OpenAI streams should be
// encoded with no Name (the OpenAI stream format: platform.openai.com/docs/api-reference/chat-streaming).
func Encode(ev Event) []byte {
	var b []byte
	if ev.Name != "" {
		b = append(b, "event: "...)
		b = append(b, ev.Name...)
		b = append(b, '\n')
	}
	if ev.ID != "" {
		b = append(b, "id: "...)
		b = append(b, ev.ID...)
		b = append(b, '\n')
	}
	if ev.HasData || ev.Name == "" {
		for _, line := range bytes.Split(ev.Data, []byte{'\n'}) {
			b = append(b, "data: "...)
			b = append(b, line...)
			b = append(b, '\n')
		}
	}
	return append(b, '\n')
}

// Data is a shorthand for an event carrying one data payload and no name.
func Data(payload []byte) Event { return Event{Data: payload, HasData: true} }

// Named is a shorthand for an event with a name and one data payload.
func Named(name string, payload []byte) Event {
	return Event{Name: name, Data: payload, HasData: true}
}
