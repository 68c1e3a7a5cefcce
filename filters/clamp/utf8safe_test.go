package clamp

import (
	"testing"
	"unicode/utf8"
)

func TestRuneFloorCeil(t *testing.T) {
	tests := []struct {
		s           string
		k           int
		floor, ceil int
	}{
		{"aé", 2, 1, 3},                   // inside the 2-byte é
		{"a中b", 2, 1, 4},                  // inside the 3-byte 中
		{"a中b", 3, 1, 4},                  // still inside it
		{"a中b", 4, 4, 4},                  // on the boundary after it
		{"🙂", 1, 0, 4},                    // inside a 4-byte emoji
		{"🙂", 3, 0, 4},                    // its last continuation byte
		{"ab", 1, 1, 1},                   // ASCII: every offset is a boundary
		{"a\x80\x80b", 2, 2, 2},           // stray continuation bytes: no rune to protect
		{"\xe4\xb8", 1, 1, 1},             // truncated 中: invalid, cut anywhere
		{"\xf0\x9f\x99\x82\x80", 4, 4, 4}, // emoji followed by a stray continuation byte
		{"x", 5, 1, 1},
		{"x", -1, 0, 0},
	}
	for _, tt := range tests {
		if got := runeFloor(tt.s, tt.k); got != tt.floor {
			t.Errorf("runeFloor(%q, %d) = %d, want %d", tt.s, tt.k, got, tt.floor)
		}
		if got := runeCeil(tt.s, tt.k); got != tt.ceil {
			t.Errorf("runeCeil(%q, %d) = %d, want %d", tt.s, tt.k, got, tt.ceil)
		}
	}
}

func TestValidUTF8(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain é中🙂", "plain é中🙂"},
		{"a\xffb", "a\uFFFDb"},
		{"a\xff\xfe\xfdb", "a\uFFFDb"}, // one replacement per run
		{"\xe4\xb8", "\uFFFD"},         // truncated 中
		{"\uFFFD", "\uFFFD"},           // a real U+FFFD is valid text
		{"\xed\xa0\x80", "\uFFFD"},     // UTF-16 surrogate encoded in UTF-8
	}
	for _, tt := range tests {
		got := validUTF8(tt.in)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("validUTF8(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
