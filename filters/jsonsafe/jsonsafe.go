// Package jsonsafe checks JSON from untrusted sources before any recursive
// code sees it. gjson's validator (and every tree walk written as a
// recursion) uses one stack frame per nesting level, and Go kills a process
// whose goroutine stack passes 1 GB with "fatal error: stack overflow",
// which recover cannot catch: a few megabytes of '[' would take toolproc
// down. Check is an iterative validator with an explicit, bounded stack, so
// its cost is linear in the input and its memory is bounded by the depth
// limit. It also finds duplicate object keys, which toolproc and the
// provider would read differently (gjson takes the first occurrence;
// Python's json and Go's encoding/json take the last).
package jsonsafe

import (
	"errors"
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// MaxDepth is the default nesting limit: far beyond any LLM request or
// answer (they nest a dozen levels), far below what recursion can afford.
const MaxDepth = 512

var (
	// ErrInvalid: not one well-formed JSON value (RFC 8259).
	ErrInvalid = errors.New("jsonsafe: not valid JSON")
	// ErrTooDeep: arrays and objects nested past the limit.
	ErrTooDeep = errors.New("jsonsafe: JSON nested too deep")
	// ErrDuplicateKey: an object names the same key twice.
	ErrDuplicateKey = errors.New("jsonsafe: duplicate key in a JSON object")
)

// Options tune Check; the zero value means MaxDepth and duplicates allowed.
type Options struct {
	MaxDepth      int
	DuplicateKeys bool // report ErrDuplicateKey
	// Ends, when set, receives where values end (the index after their
	// last byte) by where they start: the arrays and objects nested at most
	// EndsDepth deep (the top-level value is depth 0), and the strings among
	// their values, that are longer than 64 bytes. A reader that walks the
	// checked body afterwards skips them without reading them again.
	Ends      map[int]int
	EndsDepth int
	// Literals, when set, is given every string value of MinLiteral bytes
	// or more, its quotes included, found by its closing quote alone; it
	// checks the literal only when it has not seen the same bytes pass
	// before. Every later request of a conversation carries its old tool
	// results byte for byte, and checking them again was a quarter of the
	// CPU of a request whose results were all seen before (issue 23).
	Literals LiteralMemo
}

// LiteralMemo remembers the string literals found valid.
type LiteralMemo interface {
	// Once returns valid(), or true without calling it when lit, byte for
	// byte, was found valid before.
	Once(lit string, valid func() bool) bool
}

// MinLiteral is the shortest string value Options.Literals is given: a
// shorter one is checked as fast as it would be hashed.
const MinLiteral = 1024

// minLiteral is MinLiteral, lowered by the tests to reach short literals.
var minLiteral = MinLiteral

// Valid reports whether b is one valid JSON value nested at most MaxDepth
// deep. It is the drop-in for gjson.ValidBytes on untrusted bytes.
func Valid(b []byte) bool { return check(view(b), Options{}) == nil }

// ValidString is Valid for a string.
func ValidString(s string) bool { return check(s, Options{}) == nil }

// Check reports why b is not acceptable, or nil: ErrTooDeep before
// ErrInvalid when the nesting limit is passed first (a body of a million
// '[' is "too deep", not merely "invalid").
func Check(b []byte, o Options) error { return check(view(b), o) }

// CheckString is Check for a string.
func CheckString(s string, o Options) error { return check(s, o) }

// Depth returns the deepest nesting of arrays and objects in b, counting
// brackets outside strings, without validating anything else; it stops
// counting at limit+1. It is for callers that only need the bound.
func Depth[T ~string | ~[]byte](b T, limit int) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i+1)
			if i < 0 {
				return deepest
			}
		case '[', '{':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest
				}
			}
		case ']', '}':
			depth--
		}
	}
	return deepest
}

// skipString returns the index of the closing quote of the string whose
// body starts at i, or -1 when it does not end.
func skipString[T ~string | ~[]byte](b T, i int) int {
	for ; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// minRecorded is the size past which Options.Ends records a value: a
// smaller one is as quickly scanned as looked up, and recording every
// value would let a body of many tiny containers ("[[],[],…]") cost a map
// entry per few bytes.
const minRecorded = 64

// frame is one open container. keys is where its keys start in the shared
// key list; set replaces the linear search once an object is large.
type frame struct {
	object bool
	keys   int
	set    map[string]struct{}
	start  int
}

// smallObject is how many keys are compared pairwise before a set is built.
const smallObject = 16

func check(b string, o Options) error {
	limit := o.MaxDepth
	if limit <= 0 {
		limit = MaxDepth
	}
	var stack []frame
	var keys []string // decoded keys of the open objects, when checking duplicates
	i := skipWS(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return ErrInvalid
		}
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) >= limit {
				return ErrTooDeep
			}
			stack = append(stack, frame{object: c == '{', keys: len(keys), start: i})
			i = skipWS(b, i+1)
			closer := byte(']')
			if c == '{' {
				closer = '}'
			}
			if i < len(b) && b[i] == closer {
				// An empty container is never recorded (see minRecorded).
				stack = stack[:len(stack)-1]
				i++
				goto after
			}
			if c == '{' {
				var err error
				if i, err = objectKey(b, i, o.DuplicateKeys, &stack[len(stack)-1], &keys); err != nil {
					return err
				}
			}
			continue
		case '"':
			end := -1
			if o.Literals != nil {
				// The closing quote is the first one an even run of
				// backslashes precedes; whether the bytes between are
				// valid is the memo's question.
				if e := stringEnd(b, i+1); e-i >= minLiteral {
					start := i
					if o.Literals.Once(b[start:e+1], func() bool { return skipValidString(b, start+1) == e }) {
						end = e
					} else {
						return ErrInvalid
					}
				}
			}
			if end < 0 {
				end = skipValidString(b, i+1)
			}
			if end < 0 {
				return ErrInvalid
			}
			if o.Ends != nil && end-i > minRecorded && len(stack) <= o.EndsDepth+1 {
				o.Ends[i] = end + 1
			}
			i = end + 1
		case 't':
			if !hasLiteral(b, i, "true") {
				return ErrInvalid
			}
			i += 4
		case 'f':
			if !hasLiteral(b, i, "false") {
				return ErrInvalid
			}
			i += 5
		case 'n':
			if !hasLiteral(b, i, "null") {
				return ErrInvalid
			}
			i += 4
		default:
			end := skipNumber(b, i)
			if end < 0 {
				return ErrInvalid
			}
			i = end
		}
	after:
		// A value ended at i: close containers, or find the next value.
		for {
			i = skipWS(b, i)
			if len(stack) == 0 {
				if i != len(b) {
					return ErrInvalid
				}
				return nil
			}
			if i >= len(b) {
				return ErrInvalid
			}
			top := &stack[len(stack)-1]
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
				if top.object {
					var err error
					if i, err = objectKey(b, i, o.DuplicateKeys, top, &keys); err != nil {
						return err
					}
				}
			case ']', '}':
				if (b[i] == '}') != top.object {
					return ErrInvalid
				}
				if o.Ends != nil && len(stack) <= o.EndsDepth+1 && i+1-top.start > minRecorded {
					o.Ends[top.start] = i + 1
				}
				keys = keys[:top.keys]
				stack = stack[:len(stack)-1]
				i++
				continue
			default:
				return ErrInvalid
			}
			break
		}
	}
}

// objectKey reads `"key" :` at i and returns where the value starts.
func objectKey(b string, i int, dups bool, f *frame, keys *[]string) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return 0, ErrInvalid
	}
	end := skipValidString(b, i+1)
	if end < 0 {
		return 0, ErrInvalid
	}
	if dups {
		k := decodeKey(b[i+1 : end])
		if f.set != nil {
			if _, seen := f.set[k]; seen {
				return 0, ErrDuplicateKey
			}
			f.set[k] = struct{}{}
		} else {
			own := (*keys)[f.keys:]
			for _, prev := range own {
				if prev == k {
					return 0, ErrDuplicateKey
				}
			}
			if len(own) >= smallObject {
				f.set = make(map[string]struct{}, 2*smallObject)
				for _, prev := range own {
					f.set[prev] = struct{}{}
				}
				f.set[k] = struct{}{}
			}
		}
		if f.set == nil {
			*keys = append(*keys, k)
		}
	}
	i = skipWS(b, end+1)
	if i >= len(b) || b[i] != ':' {
		return 0, ErrInvalid
	}
	return skipWS(b, i+1), nil
}

// decodeKey returns the key as the provider's JSON reader sees it: escapes
// resolved, so "content" and "\u0063ontent" are the same key. Bytes that are
// not UTF-8 stay as they are, so "\xa8" and "\xff" are two keys here where a
// reader that replaces them (encoding/json, a WHATWG TextDecoder) sees
// U+FFFD twice; RFC 8259 §8.1 leaves such text to each reader. That twin
// cannot hide a member toolproc reads: every name toolproc looks up is
// ASCII, and no key holding such a byte equals one under either reading.
func decodeKey(raw string) string { return Unescape(raw) }

// Unescape decodes the body of a JSON string literal (quotes excluded)
// that Check accepted. Without escapes it returns s itself, no copy.
// Invalid surrogate escapes become U+FFFD, as encoding/json decodes them;
// bytes that are not UTF-8 pass through as they are.
func Unescape(s string) string {
	k := strings.IndexByte(s, '\\')
	if k < 0 {
		return s
	}
	// No escape decodes to more bytes than it takes (\uXXXX to at most
	// three, a surrogate pair of twelve to four) but a cut "\u" at the very
	// end (three for two), so len(s) plus a word of slack holds the text
	// and the eight-byte stores below, which never run ahead of the input
	// (n <= i).
	out := make([]byte, len(s)+8)
	n := copy(out, s[:k])
	i := k
	p := unsafe.Pointer(unsafe.StringData(s))
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// One loop copies the runs eight bytes at a time and decodes the
	// escape that ends each: a tool output escapes a line break every few
	// dozen bytes, where a call per run (IndexByte and memmove, or a
	// helper's loop) cost more than the run (issue 23's CPU goal).
	for {
		for i+8 <= len(s) {
			x := *(*uint64)(unsafe.Add(p, i)) // little-endian, unaligned: amd64 and arm64 allow it
			_ = out[n+7]                      // the store below stays inside out
			*(*uint64)(unsafe.Pointer(&out[n])) = x
			q := x ^ (ones * '\\')
			if hit := (q - ones) &^ q & highs; hit != 0 {
				z := bits.TrailingZeros64(hit) / 8
				i, n = i+z, n+z
				goto escape
			}
			i, n = i+8, n+8
		}
		for i < len(s) && s[i] != '\\' {
			out[n] = s[i]
			i, n = i+1, n+1
		}
		if i == len(s) {
			break
		}
	escape: // s[i] is a backslash
		if i+1 == len(s) {
			out[n] = '\\'
			n++
			break
		}
		switch c := s[i+1]; c {
		case 'n':
			out[n] = '\n'
		case 't':
			out[n] = '\t'
		case 'r':
			out[n] = '\r'
		case 'b':
			out[n] = '\b'
		case 'f':
			out[n] = '\f'
		case 'u':
			r, used := unicodeEscape(s[i:])
			n += utf8.EncodeRune(out[n:], r)
			i += used
			continue
		default: // '"', '\\', '/'
			out[n] = c
		}
		n, i = n+1, i+2
	}
	return unsafe.String(unsafe.SliceData(out), n)
}

// unicodeEscape decodes the \uXXXX escape (and its low surrogate, when it
// is the high half of a pair) at the start of s; used is how many bytes it
// took.
func unicodeEscape(s string) (r rune, used int) {
	if len(s) < 6 {
		return utf8.RuneError, len(s)
	}
	r = rune(hex4(s[2:6]))
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if pair := utf16.DecodeRune(r, rune(hex4(s[8:12]))); pair != utf8.RuneError {
			return pair, 12
		}
	}
	return utf8.RuneError, 6
}

func hex4(h string) int {
	n := 0
	for i := range 4 {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int(c-'A'+10)
		}
	}
	return n
}

func skipWS(b string, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func hasLiteral(b string, i int, lit string) bool {
	if len(b)-i < len(lit) {
		return false
	}
	for j := 0; j < len(lit); j++ {
		if b[i+j] != lit[j] {
			return false
		}
	}
	return true
}

// stringEnd returns the index of the quote that closes a string whose
// body starts at i, by its quotes and backslashes alone (the quote no odd
// run of backslashes escapes), or -1. Each backslash is counted once: the
// runs before two candidate quotes do not overlap.
func stringEnd(b string, i int) int {
	for from := i; ; {
		k := strings.IndexByte(b[from:], '"')
		if k < 0 {
			return -1
		}
		q := from + k
		j := q
		for j > i && b[j-1] == '\\' {
			j--
		}
		if (q-j)%2 == 0 {
			return q
		}
		from = q + 1
	}
}

// skipValidString returns the index of the closing quote of a string whose
// body starts at i, or -1 when it is not a valid JSON string (raw control
// characters, bad escapes, no end).
func skipValidString(b string, i int) int {
	for i < len(b) {
		// Eight plain bytes at a time: tool outputs are long runs with
		// neither quote, backslash nor control byte, and this keeps the
		// guard near memory speed (issue 14's scan-only path).
		if i = skipPlain(b, i); i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i
		case c < 0x20:
			return -1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 {
					return -1
				}
				for j := i + 2; j < i+6; j++ {
					if !isHex(b[j]) {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		default:
			i++
		}
	}
	return -1
}

// skipPlain returns the index of the first '"', '\\' or control byte at or
// after i, testing eight bytes at a time with the classic SWAR tests for a
// zero byte and a byte less than n (Hacker's Delight, ch. 6): borrows only
// run upward, so the lowest flagged byte is a true one. Fewer than eight
// bytes left are returned to the caller's byte loop.
func skipPlain(b string, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	p := unsafe.Pointer(unsafe.StringData(b))
	for ; i+8 <= len(b); i += 8 {
		x := *(*uint64)(unsafe.Add(p, i)) // little-endian, unaligned: amd64 and arm64 allow it
		q := x ^ (ones * '"')
		s := x ^ (ones * '\\')
		hit := ((q - ones) &^ q) | ((s - ones) &^ s) | ((x - ones*0x20) &^ x)
		if hit &= highs; hit != 0 {
			return i + bits.TrailingZeros64(hit)/8
		}
	}
	return i
}

// PlainASCII returns the index of the first byte of s at or after i that a
// JSON string literal cannot hold as it is, or that needs decoding: a
// quote, a backslash, a control byte or any byte of a multi-byte
// character; len(s) when there is none. Eight bytes at a time, as
// skipPlain: quoting a compressed result was a byte loop (issue 23).
func PlainASCII(s string, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if i < 0 {
		i = 0
	}
	p := unsafe.Pointer(unsafe.StringData(s))
	for ; i+8 <= len(s); i += 8 {
		x := *(*uint64)(unsafe.Add(p, i)) // little-endian, unaligned: amd64 and arm64 allow it
		q := x ^ (ones * '"')
		b := x ^ (ones * '\\')
		// The lowest flagged byte is a true one (see skipPlain); a high
		// bit flags itself.
		if hit := (((q - ones) &^ q) | ((b - ones) &^ b) | ((x - ones*0x20) &^ x) | x) & highs; hit != 0 {
			return i + bits.TrailingZeros64(hit)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return i
		}
	}
	return len(s)
}

// view is b as a string without a copy, for the read-only scans here:
// nothing keeps it past the call, and callers do not change b meanwhile.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// skipNumber returns the index after the number at i, or -1.
func skipNumber(b string, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b string, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
