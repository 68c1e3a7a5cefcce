package wire

import (
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// Edit replaces the raw JSON value at Span with Raw. Raw is a string so
// that what a filter wrote cannot change after it: the conversation's
// block takes it as its literal (Absorb) and Apply copies it, neither
// copying it first.
type Edit struct {
	Span Span
	Raw  string
	// Text is the string SetString was given: a later filter of the same
	// run reads it without decoding Raw (Absorb). Raw holds it with each
	// byte that starts no rune written as U+FFFD (QuoteString).
	Text    string
	HasText bool
	// spliced: an edit this package built to be spliced as it is (the
	// expand_context tool's insertion, ExpandToolEdit), checked by its
	// construction rather than by Apply: an insertion is not one JSON
	// value, and would have the whole new body checked.
	spliced bool
}

// SetString is the Edit that replaces a JSON string value with s.
func SetString(at Span, s string) Edit {
	q := QuoteString(s)
	// q is this call's own and goes no further: the string is its only
	// holder, as strings.Builder's is of its buffer.
	return Edit{Span: at, Raw: unsafe.String(unsafe.SliceData(q), len(q)), Text: s, HasText: true}
}

// WithSpan is e replacing the value at at instead: an edit remembered from
// an earlier request, for the same value in this one.
func (e Edit) WithSpan(at Span) Edit {
	e.Span = at
	return e
}

// decodedText is s with each byte that starts no rune replaced by U+FFFD,
// byte for byte as QuoteString replaces them.
func decodedText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// ErrBadEdit means a set of edits could not be applied safely.
var ErrBadEdit = errors.New("bad edit")

// Apply splices all edits into body in one pass and returns a new slice.
// Bytes outside the edited spans are copied unchanged, so key order,
// whitespace and unknown fields survive exactly. Overlapping or out-of-range
// edits are refused, and so is a result that is no longer valid JSON: a
// rewrite must never corrupt the request.
func Apply(body []byte, edits []Edit) ([]byte, error) {
	if len(edits) == 0 {
		return body, nil
	}
	sorted := slices.Clone(edits)
	slices.SortFunc(sorted, func(a, b Edit) int { return a.Span.Start - b.Span.Start })
	size, prev := len(body), 0
	for _, e := range sorted {
		if e.Span.Start < prev || e.Span.End < e.Span.Start || e.Span.End > len(body) {
			return nil, fmt.Errorf("%w: span %d-%d overlaps or is out of range", ErrBadEdit, e.Span.Start, e.Span.End)
		}
		prev = e.Span.End
		size += len(e.Raw) - (e.Span.End - e.Span.Start)
	}
	out := make([]byte, 0, size)
	prev = 0
	for _, e := range sorted {
		out = append(out, body[prev:e.Span.Start]...)
		out = append(out, e.Raw...)
		prev = e.Span.End
	}
	out = append(out, body[prev:]...)
	// Each edit replaces exactly one value of a valid body, so the output
	// is valid when every replacement is one valid value: checking the
	// edits is enough, and costs their size instead of the body's. Edits
	// that are not one value (flattened messages, a list of them) get the
	// whole output checked.
	if !allValues(sorted) && !jsonsafe.Valid(out) {
		return nil, fmt.Errorf("%w: result is not valid JSON", ErrBadEdit)
	}
	return out, nil
}

// QuoteString encodes s as a JSON string literal, byte for byte as
// encoding/json encodes it with HTML escaping off (FuzzQuoteString holds
// it to that): HTML characters are left alone (encoding/json would turn <
// into \u003c and change bytes for no reason), invalid UTF-8 becomes
// U+FFFD, so the literal is always valid. Written out because the encoder's
// reflection and buffer were a tenth of a request's CPU once the rest of
// the path stopped copying (issue 14).
func QuoteString(s string) []byte {
	return AppendString(make([]byte, 0, len(s)+len(s)/16+2), s)
}

// AppendString appends s to out as QuoteString writes it.
func AppendString(out []byte, s string) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		if i = jsonsafe.PlainASCII(s, i); i == len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			out = append(out, s[start:i]...)
			switch b {
			case '\\', '"':
				out = append(out, '\\', b)
			case '\b':
				out = append(out, '\\', 'b')
			case '\f':
				out = append(out, '\\', 'f')
			case '\n':
				out = append(out, '\\', 'n')
			case '\r':
				out = append(out, '\\', 'r')
			case '\t':
				out = append(out, '\\', 't')
			default:
				out = append(out, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			out = append(out, s[start:i]...)
			out = append(out, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			// JavaScript line terminators, escaped as encoding/json does.
			out = append(out, s[start:i]...)
			out = append(out, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

const hexDigits = "0123456789abcdef"

// allValues reports whether every edit's Raw is one valid JSON value.
func allValues(edits []Edit) bool {
	for _, e := range edits {
		if !e.HasText && !e.spliced && !jsonsafe.ValidString(e.Raw) {
			return false
		}
	}
	return true
}
