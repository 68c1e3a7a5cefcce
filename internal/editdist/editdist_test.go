package editdist

import "testing"

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"max_byte", "max_bytes", 1},
		{"stratgy", "strategy", 1},
		{"max_bytes", "max_lines", 3},
		{"kitten", "sitting", 3},
		{"", "abc", 3},
		{"abc", "", 3},
	} {
		if got := Levenshtein(tc.a, tc.b); got != tc.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
