package compress

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestStripANSIRepaintedLine: a line repainted in place reads as the
// terminal shows it; every other escape is only removed.
func TestStripANSIRepaintedLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\x1b[32mok\x1b[0m", "ok"},
		// minitest-reporters: its bar, sent back and erased, then the result.
		{"\x1b[32m=\x1b[0m\x1b[32m=\x1b[0m\x1b[0m\x1b[1000D\x1b[K\x1b[31m FAIL\x1b[0m Cart#test_sums (0.02s)", " FAIL Cart#test_sums (0.02s)"},
		// Back to the first column, the new text, then the old tail erased.
		{"downloading 10%\x1b[1Gdone\x1b[K", "done"},
		{"old text\x1b[2Knew", "new"},
		// Back fewer columns than the line holds: nothing is erased.
		{"12345\x1b[2D\x1b[K", "12345"},
		// Only the current line is ever cut.
		{"first\nsecond\x1b[1000D\x1b[Kthird", "first\nthird"},
		{"a\x1b[99999999D\x1b[Kb", "ab"}, // a count too long to be one is ignored
		{"héllo\x1b[1G\x1b[Kwörld", "wörld"},
	} {
		if got := stripANSI(tc.in); got != tc.want {
			t.Errorf("stripANSI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzStripANSI: the view keeps every line break (the plan reads views
// and lines by the same index) and never splits a rune of valid input.
func FuzzStripANSI(f *testing.F) {
	for _, s := range []string{"\x1b[32mok\x1b[0m", "bar\x1b[1000D\x1b[K FAIL x", "a\x1b[1Gb\x1b[K\nc\x1b[2Kd", "héllo\x1b[3D\x1b[Kx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := stripANSI(s)
		if strings.Count(got, "\n") != strings.Count(s, "\n") {
			t.Fatalf("line breaks %d -> %d", strings.Count(s, "\n"), strings.Count(got, "\n"))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from valid %q: %q", s, got)
		}
		if len(got) > len(s) {
			t.Fatalf("grew: %d -> %d", len(s), len(got))
		}
	})
}
