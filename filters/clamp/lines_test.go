package clamp

import (
	"strings"
	"testing"
)

func TestCountLines(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"a\n", 1},
		{"a\nb", 2},
		{"a\nb\n", 2},
		{"\n", 1},
		{"\n\n", 2},
		{"a\r\n", 1},
		{"a\r\nb\r\n", 2},
		{"a\r\nb", 2},
		{"\r", 1},
		{"a\rb", 1},
		{"a\r", 1},
		{"\r\n\r\n", 2},
		{"中\n🙂", 2},
	}
	for _, tt := range tests {
		if got := CountLines(tt.in); got != tt.want {
			t.Errorf("CountLines(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// splitLines is the obvious reference: every line with its terminator.
func splitLines(s string) []string {
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func TestLineEndAndStart(t *testing.T) {
	inputs := []string{"", "a", "a\n", "a\nb", "a\nb\n", "\n\n\n", "x\r\ny\r\nz", "one\ntwo\nthree\nfour\n"}
	for _, s := range inputs {
		lines := splitLines(s)
		if len(lines) != CountLines(s) {
			t.Fatalf("reference split of %q has %d lines, CountLines %d", s, len(lines), CountLines(s))
		}
		for n := 0; n <= len(lines)+1; n++ {
			k := min(n, len(lines))
			wantHead := strings.Join(lines[:k], "")
			if got := s[:lineEnd(s, n)]; got != wantHead {
				t.Errorf("first %d lines of %q = %q, want %q", n, s, got, wantHead)
			}
			wantTail := strings.Join(lines[len(lines)-k:], "")
			if got := s[lineStart(s, n):]; got != wantTail {
				t.Errorf("last %d lines of %q = %q, want %q", n, s, got, wantTail)
			}
		}
	}
}
