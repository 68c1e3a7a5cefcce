package jsonsafe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

func TestCheck(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		in   string
		opts Options
		want error
	}{
		{`{}`, Options{}, nil},
		{` {"a":[1,2.5e-3,-0,true,false,null,"x\u00e9\n"]} `, Options{}, nil},
		{`"just a string"`, Options{}, nil},
		{`-12.5E+10`, Options{}, nil},
		{``, Options{}, ErrInvalid},
		{`{`, Options{}, ErrInvalid},
		{`{"a":1,}`, Options{}, ErrInvalid},
		{`[1,]`, Options{}, ErrInvalid},
		{`[1 2]`, Options{}, ErrInvalid},
		{`{"a" 1}`, Options{}, ErrInvalid},
		{`{"a":1]`, Options{}, ErrInvalid},
		{`[1}`, Options{}, ErrInvalid},
		{`01`, Options{}, ErrInvalid},
		{`1.`, Options{}, ErrInvalid},
		{`1e`, Options{}, ErrInvalid},
		{`"\x"`, Options{}, ErrInvalid},
		{`"\u12g4"`, Options{}, ErrInvalid},
		{"\"raw\ttab\"", Options{}, ErrInvalid},
		{`tru`, Options{}, ErrInvalid},
		{`{} {}`, Options{}, ErrInvalid},
		{"\xef\xbb\xbf{}", Options{}, ErrInvalid}, // a BOM is not JSON
		{deep(512), Options{}, nil},
		{deep(513), Options{}, ErrTooDeep},
		{deep(4), Options{MaxDepth: 3}, ErrTooDeep},
		{strings.Repeat("[", 1000), Options{}, ErrTooDeep},
		{strings.Repeat(`{"a":`, 600), Options{}, ErrTooDeep},
		{`{"a":1,"a":2}`, Options{}, nil},
		{`{"a":1,"a":2}`, Options{DuplicateKeys: true}, ErrDuplicateKey},
		{`{"content":"x","\u0063ontent":"y"}`, Options{DuplicateKeys: true}, ErrDuplicateKey},
		{`{"\ud83d\ude00":1,"😀":2}`, Options{DuplicateKeys: true}, ErrDuplicateKey},
		{`{"a":{"a":1},"b":{"a":2}}`, Options{DuplicateKeys: true}, nil},
		// Found by FuzzCheck: bytes that are not UTF-8 are compared as
		// they are (decodeKey says why that is safe), escapes are not.
		{"{\"\xa8\":0,\"\xff\":0}", Options{DuplicateKeys: true}, nil},
		{"{\"\xff\":0,\"\xff\":0}", Options{DuplicateKeys: true}, ErrDuplicateKey},
		{`{"\ufffd":0,"\ufffd":1}`, Options{DuplicateKeys: true}, ErrDuplicateKey},
		{`[{"a":1},{"a":1}]`, Options{DuplicateKeys: true}, nil},
		{manyKeys(100, -1), Options{DuplicateKeys: true}, nil},
		{manyKeys(100, 70), Options{DuplicateKeys: true}, ErrDuplicateKey},
		{manyKeys(100, 3), Options{DuplicateKeys: true}, ErrDuplicateKey},
	} {
		name := tc.in
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		if err := CheckString(tc.in, tc.opts); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("CheckString(%q) = %v, want %v", name, err, tc.want)
		}
		if err := Check([]byte(tc.in), tc.opts); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("Check(%q) = %v, want %v", name, err, tc.want)
		}
	}
}

// manyKeys is an object of n keys; dupAt ≥ 0 repeats key 0 at that place.
func manyKeys(n, dupAt int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		k := i
		if i == dupAt {
			k = 0
		}
		fmt.Fprintf(&b, `"k%d":%d`, k, i)
	}
	b.WriteByte('}')
	return b.String()
}

// The finding this package exists for: megabytes of '[' must be refused
// without recursion (gjson.ValidBytes overflows the 1 GB stack on this).
func TestHugeNestingIsCheapAndRefused(t *testing.T) {
	body := bytes.Repeat([]byte("["), 8_000_000)
	if err := Check(body, Options{}); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("Check = %v, want ErrTooDeep", err)
	}
	if Valid(body) {
		t.Fatal("Valid accepted 8 MB of '['")
	}
	if d := Depth(body, MaxDepth); d != MaxDepth+1 {
		t.Fatalf("Depth = %d, want it to stop at %d", d, MaxDepth+1)
	}
	// gjson's path lookups skip nested values iteratively: once the guard
	// has run, reading a field of a deep document is safe.
	doc := `{"model":"m","x":` + strings.Repeat("[", 2_000_000) + `}`
	if got := gjson.Get(doc, "model").String(); got != "m" {
		t.Fatalf("gjson.Get = %q", got)
	}
}

func TestDepth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`1`, 0}, {`[]`, 1}, {`{"a":[{}]}`, 3}, {`"[[[["`, 0}, {`["\"[[["]`, 1}, {`[[]][[[]]]`, 3},
	} {
		if got := Depth(tc.in, 100); got != tc.want {
			t.Errorf("Depth(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// hasDuplicateKey is the oracle: encoding/json's token stream. With
// skipReplaced, keys holding U+FFFD are not compared: encoding/json turns
// every byte that is not UTF-8 into U+FFFD, so "\xa8" and "\xff" are one key
// to it and two to Check, which leaves such bytes as they are (see
// decodeKey for why that is safe).
func hasDuplicateKey(b []byte, skipReplaced bool) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	type obj struct {
		seen      map[string]bool
		expectKey bool
	}
	var stack []*obj
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				if top != nil && top.seen != nil {
					top.expectKey = true
				}
				stack = append(stack, &obj{seen: map[string]bool{}, expectKey: true})
			case '[':
				if top != nil && top.seen != nil {
					top.expectKey = true
				}
				stack = append(stack, &obj{})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.seen != nil && top.expectKey {
				if skipReplaced && strings.ContainsRune(v, utf8.RuneError) {
					top.expectKey = false
					continue
				}
				if top.seen[v] {
					return true
				}
				top.seen[v] = true
				top.expectKey = false
				continue
			}
			if top != nil && top.seen != nil {
				top.expectKey = true
			}
		default:
			if top != nil && top.seen != nil {
				top.expectKey = true
			}
		}
	}
}

// FuzzCheck holds Check to encoding/json's verdict (iterative, so it is a
// safe oracle) within the depth limit, and to the token-stream oracle for
// duplicate keys.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"tool","content":"x"}]}`, `[1,2,{"a":null}]`, `"\ud83d\ude00"`,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, manyKeys(40, 33), `-0.5e+7`, `[[[[[[]]]]]]`,
		strings.Repeat("[", 600), strings.Repeat(`{"a":`, 30) + `1` + strings.Repeat("}", 30),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Check(b, Options{MaxDepth: 64, DuplicateKeys: true})
		// With a memo of checked literals, and every literal of two
		// bytes or more given to it: the same answer the first time
		// (literals checked) and the second (literals remembered).
		defer func(m int) { minLiteral = m }(minLiteral)
		minLiteral = 2
		memo := exactMemo{}
		for round := range 2 {
			if got := Check(b, Options{MaxDepth: 64, DuplicateKeys: true, Literals: memo}); !errors.Is(got, err) {
				t.Fatalf("round %d with a literal memo: %v, without: %v: %q", round, got, err, b)
			}
		}
		deep := Depth(b, 64) > 64
		std := json.Valid(b)
		switch {
		case errors.Is(err, ErrTooDeep):
			if !deep {
				t.Fatalf("ErrTooDeep for depth ≤ 64: %q", b)
			}
		case deep:
			// Deeper than the limit but not reported so: invalid before it.
			if err == nil {
				t.Fatalf("accepted a document deeper than the limit: %q", b)
			}
		case err == nil:
			if !std {
				t.Fatalf("accepted invalid JSON: %q", b)
			}
		case errors.Is(err, ErrDuplicateKey):
			// A duplicate may be reported before a later syntax error.
			if std && !hasDuplicateKey(b, false) {
				t.Fatalf("ErrDuplicateKey wrongly: %q", b)
			}
		case errors.Is(err, ErrInvalid):
			if std {
				t.Fatalf("refused valid JSON: %q", b)
			}
		}
		if err == nil && hasDuplicateKey(b, true) {
			t.Fatalf("missed a duplicate key: %q", b)
		}
		if (Check(b, Options{MaxDepth: 64}) == nil) != (std && !deep) {
			t.Fatalf("without duplicate checking: std=%v deep=%v %q", std, deep, b)
		}
	})
}

func benchBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"gpt-4o","messages":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"tool","tool_call_id":"call_%d","content":"line one\nline two \"quoted\" \u00e9 %s"}`, i, strings.Repeat("x", 200))
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// BenchmarkCheck: the guard runs on every request body, so it must stay a
// small fraction of a parse; ns/byte should be flat from 1 MB to 16 MB.
func BenchmarkCheck(b *testing.B) {
	for _, size := range []int{1 << 20, 16 << 20} {
		body := benchBody(size)
		for _, o := range []struct {
			name string
			opts Options
		}{{"syntax", Options{}}, {"dupkeys", Options{DuplicateKeys: true}}} {
			b.Run(fmt.Sprintf("%s/%dMB", o.name, size>>20), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					if err := Check(body, o.opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkCheckToolOutputs is the guard on a body of long tool outputs
// (file reads, logs), where strings dominate.
func BenchmarkCheckToolOutputs(b *testing.B) {
	line := `{"role":"tool","tool_call_id":"call_1","content":"` + strings.Repeat(`src/pkg/server/handler.go:120:\tif err := h.store.Put(ctx, key, value); err != nil {\n`, 400) + `"}`
	body := []byte(`{"model":"gpt-4o","messages":[` + strings.Repeat(line+",", 30) + line + `]}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := Check(body, Options{DuplicateKeys: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSkipPlain: the eight-byte skip stops exactly at the first quote,
// backslash or control byte, wherever it sits in a word, whatever follows
// it, and leaves high (UTF-8) bytes alone.
func TestSkipPlain(t *testing.T) {
	for _, special := range []byte{'"', '\\', 0x00, 0x01, 0x1f, '\n'} {
		for p := range 40 {
			b := []byte(strings.Repeat("aé€~ ", 10)[:40])
			for k := range b {
				if b[k] < 0x20 || b[k] == '"' || b[k] == '\\' {
					b[k] = 'x'
				}
			}
			b[p] = special
			for k := p + 1; k < len(b); k++ { // later specials must not move the answer
				if k%3 == 0 {
					b[k] = '"'
				}
			}
			if got := skipPlain(string(b), 0); got != p { // 40 bytes: five whole words
				t.Fatalf("special %#x at %d: skipPlain stopped at %d", special, p, got)
			}
		}
	}
	if got := skipPlain(strings.Repeat("é", 20), 0); got != 40 {
		t.Fatalf("UTF-8 run: stopped at %d, want 40", got)
	}
}

// TestEnds: the check records where large values end, at the depths asked,
// with the exact offsets, and nothing for small values, so a body of many
// tiny containers costs no map entry per container.
func TestEnds(t *testing.T) {
	long := strings.Repeat("x", 100)
	body := `{"a":[{"s":"` + long + `"},[],{"t":1}],"deep":[[[[[["` + long + `"]]]]]]}`
	ends := map[int]int{}
	if err := Check([]byte(body), Options{Ends: ends, EndsDepth: 2}); err != nil {
		t.Fatal(err)
	}
	for start, end := range ends {
		if end <= start || end > len(body) || Check([]byte(body[start:end]), Options{}) != nil {
			t.Fatalf("ends[%d] = %d: %q is not one value", start, end, body[start:end])
		}
	}
	for _, want := range []string{body, `[{"s":"` + long + `"},[],{"t":1}]`, `{"s":"` + long + `"}`, `"` + long + `"`} {
		start := strings.Index(body, want)
		if ends[start] != start+len(want) {
			t.Errorf("%.30q… at %d: recorded end %d, want %d", want, start, ends[start], start+len(want))
		}
	}
	if len(ends) != 6 { // the four above, "deep"'s list and its child at depth 2; nothing deeper, nothing small
		t.Errorf("recorded %d values, want 6: %v", len(ends), ends)
	}
	tiny := []byte(`{"messages":[` + strings.Repeat(`[],`, 300_000) + `[]]}`)
	ends = map[int]int{}
	if err := Check(tiny, Options{Ends: ends, EndsDepth: 4}); err != nil {
		t.Fatal(err)
	}
	if len(ends) > 2 {
		t.Fatalf("a body of tiny containers recorded %d of them", len(ends))
	}
}

// TestPlainASCII: the first byte a literal must escape or decode, found
// eight bytes at a time, is the one a byte loop finds, wherever it falls in
// a word and whatever follows it.
func TestPlainASCII(t *testing.T) {
	special := []byte{'"', '\\', 0x00, 0x1f, '\n', 0x7f + 1, 0xff, 0xe2}
	for n := 0; n <= 20; n++ {
		for at := -1; at < n; at++ {
			for _, c := range special {
				b := []byte(strings.Repeat("a~ ", 7)[:n])
				want := n
				if at >= 0 {
					b[at], want = c, at
					if at+1 < n {
						b[at+1] = '"' // a later special byte must not be the one found
					}
				}
				for from := 0; from <= min(at, 3); from++ {
					if got := PlainASCII(string(b), from); got != max(want, from) && at >= 0 {
						t.Fatalf("PlainASCII(%q, %d) = %d, want %d", b, from, got, want)
					}
				}
				if got := PlainASCII(string(b), 0); got != want {
					t.Fatalf("PlainASCII(%q, 0) = %d, want %d", b, got, want)
				}
			}
		}
	}
	if got := PlainASCII("x\x7fy", 0); got != 3 {
		t.Errorf("DEL is plain in a JSON string: got %d", got)
	}
}

// exactMemo is a LiteralMemo by the literal's bytes, and counts the checks
// it let run.
type exactMemo map[string]int

func (m exactMemo) Once(lit string, valid func() bool) bool {
	if _, ok := m[lit]; ok {
		return true
	}
	if !valid() {
		return false
	}
	m[lit]++
	return true
}

// TestLiteralsCheckedOnce: a long literal is checked the first time it is
// seen and skipped after; an invalid one is never remembered and always
// refused; one byte changed is a literal of its own, checked again; and
// the closing quote is found past escaped quotes and backslash runs.
func TestLiteralsCheckedOnce(t *testing.T) {
	long := strings.Repeat(`line with \"quotes\" and a path C:\\dir\\ \n`, 40)
	body := func(s string) []byte {
		return []byte(`{"messages":[{"role":"tool","content":"` + s + `"}],"x":"` + long + `\\"}`)
	}
	memo := exactMemo{}
	o := Options{DuplicateKeys: true, Literals: memo}
	for range 3 {
		if err := Check(body(long), o); err != nil {
			t.Fatal(err)
		}
	}
	if len(memo) != 2 {
		t.Fatalf("remembered %d literals, want the two long ones", len(memo))
	}
	for lit, checks := range memo {
		if checks != 1 {
			t.Fatalf("%.40q… checked %d times, want once", lit, checks)
		}
	}
	for _, bad := range []string{long[:100] + `\x` + long[100:], long[:100] + `\u12g4` + long[100:], long[:100] + `\t\n\u0000\` + "\x01" + long[100:], long[:len(long)-1]} {
		for range 2 {
			if err := Check(body(bad), o); !errors.Is(err, ErrInvalid) {
				t.Fatalf("an invalid long literal: %v", err)
			}
		}
	}
	changed := strings.Replace(long, "path", "pith", 1)
	if err := Check(body(changed), o); err != nil || memo[`"`+changed+`"`] != 1 {
		t.Fatalf("a changed literal: %v, checked %d times", err, memo[`"`+changed+`"`])
	}
	for _, c := range []struct {
		s    string
		want int
	}{{`abc"`, 3}, {`a\"b"`, 4}, {`a\\"`, 3}, {`a\\\"x"`, 6}, {`\"`, -1}, {`abc`, -1}, {`"`, 0}} {
		if got := stringEnd(c.s, 0); got != c.want {
			t.Errorf("stringEnd(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}
