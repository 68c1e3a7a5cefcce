package stream

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/toolproc/toolproc/filters/wire"
)

// XML tool calls (seed 002): a text-only upstream
// writes
//
//	<invoke name="TOOL"><parameter name="P">VALUE</parameter>…</invoke>
//
// in its answer. xmlScanner finds these blocks in text that arrives in
// pieces, holding back only what could still turn out to be a block: a tail
// that is a prefix of `<invoke name="`, or an opened block whose `</invoke>`
// has not arrived. Everything else is returned at once.
//
// Matching follows the seed's regular expressions
// `<invoke name="([^"]+)">(.*?)</invoke>` and
// `<parameter name="([^"]+)">(.*?)</parameter>` (non-greedy, across lines,
// the first closing tag ends the block), with one deliberate narrowing: an
// invoke name is 1–xmlMaxName bytes without `"`, `<`, `>` or line breaks,
// so a stray `<invoke name="` in prose is released as soon as it cannot be a
// tool name instead of being held until the next quote.

const (
	xmlOpen       = wire.TextCallOpen
	xmlClose      = `</invoke>`
	xmlParamOpen  = `<parameter name="`
	xmlParamClose = `</parameter>`
	// xmlMaxName bounds an invoke name (OpenAI's own limit is 64).
	xmlMaxName = 256
	// xmlMaxHold bounds an open block waiting for `</invoke>`; past it the
	// block is given up and released as text, so a runaway upstream cannot
	// make us buffer without limit.
	xmlMaxHold = 8 << 20
	// xmlFinalAnswer is the pseudo tool whose block is the answer text.
	xmlFinalAnswer = "final_answer"
)

type xmlPieceKind uint8

const (
	xmlText  xmlPieceKind = iota // plain text, Text == Raw
	xmlCall                      // a tool call: Name and Args
	xmlFinal                     // a final_answer block: Text is the answer
)

// xmlPiece is one run of scanned text. The Raw fields of all pieces, in
// order, rebuild exactly the text that was fed.
type xmlPiece struct {
	Kind xmlPieceKind
	Text string // xmlText: the text; xmlFinal: the answer
	Name string // xmlCall: the tool name
	Args string // xmlCall: the arguments, a compact JSON object
	Raw  string // the source text this piece stands for
}

// xmlScanner is the incremental parser. The zero value is ready to use.
type xmlScanner struct {
	buf       []byte // held text: empty, or a suffix that may still become a block
	name      string // non-empty while buf starts with a complete block head
	bodyStart int    // where the block body starts in buf (after the head)
	closeFrom int    // where to resume searching for `</invoke>` in buf
	// noClose: buf[:noClose] is known to hold no `</invoke>` that starts
	// there. A head given up at the hold limit hands it on to the next
	// head, whose search then resumes where the last one stopped: without
	// it every later head rescanned the whole held block, O(heads × hold).
	noClose int
	// maxHold bounds an open block (0: xmlMaxHold).
	maxHold int
}

// Idle reports whether nothing is held, so text without '<' would pass
// through Feed unchanged.
func (s *xmlScanner) Idle() bool { return len(s.buf) == 0 }

// Feed consumes text and returns the pieces it completed.
func (s *xmlScanner) Feed(text string) []xmlPiece {
	if text == "" {
		return nil
	}
	if len(s.buf) == 0 && strings.IndexByte(text, '<') < 0 {
		return []xmlPiece{{Kind: xmlText, Text: text, Raw: text}}
	}
	s.buf = append(s.buf, text...)
	return s.scan(nil, false)
}

// Flush ends the text: what is held is released as text (an unclosed
// `<invoke` is not a call) and the scanner is reset.
func (s *xmlScanner) Flush() []xmlPiece {
	out := s.scan(nil, true)
	*s = xmlScanner{}
	return out
}

func (s *xmlScanner) scan(out []xmlPiece, final bool) []xmlPiece {
	// Text is gathered here and becomes one piece before a block and at the
	// end: appending to a piece's string once per give-up was quadratic.
	var txt []byte
	flushText := func(out []xmlPiece) []xmlPiece {
		out = xmlAppendText(out, string(txt))
		txt = txt[:0]
		return out
	}
	for len(s.buf) > 0 {
		if s.name != "" {
			// buf opens with a complete head: look for the end of the block.
			i := bytes.Index(s.buf[s.closeFrom:], []byte(xmlClose))
			if i < 0 {
				if final {
					// No `</invoke>` anywhere after: no block can match here or later.
					txt = append(txt, s.buf...)
					s.buf, s.name, s.noClose = nil, "", 0
					return flushText(out)
				}
				if len(s.buf) > s.holdLimit() {
					// Give up on this head: its '<' is text, rescan after it.
					s.noClose = max(s.bodyStart, len(s.buf)-len(xmlClose)+1) - 1
					txt = append(txt, '<')
					s.buf, s.name = s.buf[1:], ""
					continue
				}
				// Resume where a split `</invoke>` could begin.
				s.closeFrom = max(s.bodyStart, len(s.buf)-len(xmlClose)+1)
				return flushText(out)
			}
			end := s.closeFrom + i
			raw := string(s.buf[:end+len(xmlClose)])
			out = flushText(out)
			out = append(out, xmlBlock(s.name, raw[s.bodyStart:end], raw))
			s.buf, s.name, s.noClose = s.buf[len(raw):], "", 0
			continue
		}
		// Text up to the next head, or up to a tail that may become one.
		p := 0
		for {
			i := bytes.IndexByte(s.buf[p:], '<')
			if i < 0 {
				txt = append(txt, s.buf...)
				s.buf, s.noClose = s.buf[:0], 0
				return flushText(out)
			}
			p += i
			name, headLen, more := xmlHead(s.buf[p:])
			if headLen > 0 {
				txt = append(txt, s.buf[:p]...)
				s.buf = s.buf[p:]
				s.noClose = max(0, s.noClose-p)
				s.name, s.bodyStart, s.closeFrom = name, headLen, max(headLen, s.noClose)
				break
			}
			if more {
				if final {
					txt = append(txt, s.buf...)
					s.buf = nil
				} else {
					txt = append(txt, s.buf[:p]...)
					s.buf = s.buf[p:]
				}
				s.noClose = 0
				return flushText(out)
			}
			p++
		}
	}
	return flushText(out)
}

func (s *xmlScanner) holdLimit() int {
	if s.maxHold > 0 {
		return s.maxHold
	}
	return xmlMaxHold
}

// xmlHead matches `<invoke name="NAME">` at the start of b. It returns the
// head's length when it matches, or more=true when b is a proper prefix of a
// head that could still match.
func xmlHead(b []byte) (name string, headLen int, more bool) {
	if len(b) < len(xmlOpen) {
		return "", 0, strings.HasPrefix(xmlOpen, string(b))
	}
	if string(b[:len(xmlOpen)]) != xmlOpen {
		return "", 0, false
	}
	rest := b[len(xmlOpen):]
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '"':
			if i == 0 {
				return "", 0, false // an empty name never matches
			}
			if i+1 == len(rest) {
				return "", 0, true // wait for the '>'
			}
			if rest[i+1] != '>' {
				return "", 0, false
			}
			return string(rest[:i]), len(xmlOpen) + i + 2, false
		case '<', '>', '\n', '\r':
			return "", 0, false
		}
		if i >= xmlMaxName {
			return "", 0, false
		}
	}
	return "", 0, len(rest) <= xmlMaxName
}

func xmlAppendText(out []xmlPiece, text string) []xmlPiece {
	if text == "" {
		return out
	}
	if n := len(out); n > 0 && out[n-1].Kind == xmlText {
		out[n-1].Text += text
		out[n-1].Raw = out[n-1].Text
		return out
	}
	return append(out, xmlPiece{Kind: xmlText, Text: text, Raw: text})
}

// xmlBlock turns one complete block into a call, or into answer text for
// the final_answer pseudo tool (its answer parameter, else its inner text).
func xmlBlock(name, body, raw string) xmlPiece {
	params := xmlParams(body)
	if name == xmlFinalAnswer {
		text := strings.TrimSpace(body)
		for _, p := range params {
			if p.name == "answer" {
				text = p.value
			}
		}
		return xmlPiece{Kind: xmlFinal, Text: text, Raw: raw}
	}
	args := make([]byte, 0, len(body)+2)
	args = append(args, '{')
	for i, p := range params {
		if i > 0 {
			args = append(args, ',')
		}
		args = wire.AppendString(args, p.name)
		args = append(args, ':')
		args = xmlAppendValue(args, p.value)
	}
	args = append(args, '}')
	return xmlPiece{Kind: xmlCall, Name: name, Args: string(args), Raw: raw}
}

type xmlParam struct{ name, value string }

// xmlParams lists the parameters of a block body in document order, values
// trimmed; a repeated name keeps its first position and its last value (as
// assigning into a Python dict does).
func xmlParams(body string) []xmlParam {
	var params []xmlParam
	var at map[string]int // name → position in params, linear in the count
	pos := 0
	for {
		i := strings.Index(body[pos:], xmlParamOpen)
		if i < 0 {
			return params
		}
		start := pos + i
		nameStart := start + len(xmlParamOpen)
		q := strings.IndexByte(body[nameStart:], '"')
		if q <= 0 || nameStart+q+1 >= len(body) || body[nameStart+q+1] != '>' {
			pos = start + 1
			continue
		}
		name := body[nameStart : nameStart+q]
		valueStart := nameStart + q + 2
		j := strings.Index(body[valueStart:], xmlParamClose)
		if j < 0 {
			return params // no later parameter can close either
		}
		value := strings.TrimSpace(body[valueStart : valueStart+j])
		pos = valueStart + j + len(xmlParamClose)
		if k, ok := at[name]; ok {
			params[k].value = value
			continue
		}
		if at == nil {
			at = map[string]int{}
		}
		at[name] = len(params)
		params = append(params, xmlParam{name, value})
	}
}

// xmlAppendValue types a parameter value: numbers, true/false/null, objects
// and arrays that parse as JSON keep their JSON type (compacted); anything
// else, JSON string literals included, is a string.
func xmlAppendValue(dst []byte, v string) []byte {
	if v != "" {
		switch c := v[0]; {
		case c == '{' || c == '[' || c == '-' || (c >= '0' && c <= '9') || v == "true" || v == "false" || v == "null":
			var buf bytes.Buffer
			if json.Compact(&buf, []byte(v)) == nil && utf8.Valid(buf.Bytes()) {
				return append(dst, buf.Bytes()...)
			}
		}
	}
	return wire.AppendString(dst, v)
}
