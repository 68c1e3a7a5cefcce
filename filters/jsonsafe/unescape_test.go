package jsonsafe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// unescapeByRuns is Unescape as it was before the word-at-a-time copy: the
// text between escapes found with IndexByte and appended. Kept as the
// reference the fast one must match on any input, checked or not.
func unescapeByRuns(s string) string {
	k := strings.IndexByte(s, '\\')
	if k < 0 {
		return s
	}
	var out []byte
	for k >= 0 {
		out = append(out, s[:k]...)
		s = s[k:]
		if len(s) < 2 {
			break
		}
		switch c := s[1]; c {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'u':
			r, used := unicodeEscape(s)
			out = utf8.AppendRune(out, r)
			s = s[used:]
			k = strings.IndexByte(s, '\\')
			continue
		default:
			out = append(out, c)
		}
		s = s[2:]
		k = strings.IndexByte(s, '\\')
	}
	return string(append(out, s...))
}

// TestUnescape covers the word-at-a-time copy's edges: escapes at every
// offset of a word, runs shorter and longer than a word, a backslash or a
// cut \u at the very end (unchecked input), and surrogates.
func TestUnescape(t *testing.T) {
	cases := []string{
		``, `plain`, `\n`, `\\`, `a\`, `\u`, `\u12`, `ab\u00e9`, `\ud83d\ude00x`, `\ud800`, `\udc00\n`,
		`0123456\n`, `01234567\n`, `012345678\n`, `\n01234567`, `\n0123456789abcdef\t`,
		`src/a.go:12:\tif err != nil {\n\t\treturn \"x\"\n}\n`,
		strings.Repeat(`line of text\n`, 40) + `tail\`,
	}
	for i := range 17 {
		cases = append(cases, strings.Repeat("x", i)+`\"`+strings.Repeat("y", 16-i)+`\/`)
	}
	for _, s := range cases {
		if got, want := Unescape(s), unescapeByRuns(s); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzUnescape holds Unescape to the reference on any bytes: nothing
// promises they passed Check (a literal read from unchecked bytes).
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`a\nb`, `\u00e9\ud83d\ude00`, `x\`, `\u12`, `0123456789\"abcdef\\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Unescape(s), unescapeByRuns(s); got != want {
			t.Fatalf("Unescape(%q) = %q, want %q", s, got, want)
		}
	})
}

// BenchmarkUnescape decodes the literals of real tool outputs (the samples
// in ../compress/testdata, JSON-quoted as a request carries them): a line
// break escaped every few dozen bytes, tabs and quotes in code.
func BenchmarkUnescape(b *testing.B) {
	for _, name := range []string{"claude_read.txt", "pytest_failures.log", "grep_hits.txt", "git_patch.diff"} {
		raw, err := os.ReadFile(filepath.Join("..", "compress", "testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		q, _ := json.Marshal(string(raw))
		lit := string(q[1 : len(q)-1])
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(lit)))
			for b.Loop() {
				Unescape(lit)
			}
		})
	}
}
