package clamp

import (
	"strings"
	"unicode/utf8"
)

// The seed cuts on UTF-16 code-unit boundaries so that no surrogate pair is
// broken (seed 001, "UTF-16 safety"). The Go equivalent is to cut only where a
// rune starts: the output is spliced into a JSON string, and half a character
// there is at best a U+FFFD and at worst a rejected request.

// straddle returns the start and size of the valid rune that begins before
// byte k and covers it, or size 0 when s[k] starts a rune or belongs to no
// valid rune (invalid bytes can be cut anywhere: there is no character to
// protect). It looks back at most utf8.UTFMax-1 bytes, so it is O(1).
func straddle(s string, k int) (start, size int) {
	if k <= 0 || k >= len(s) || utf8.RuneStart(s[k]) {
		return 0, 0
	}
	for j := k - 1; j >= 0 && j >= k-(utf8.UTFMax-1); j-- {
		if !utf8.RuneStart(s[j]) {
			continue
		}
		r, n := utf8.DecodeRuneInString(s[j:])
		if (r == utf8.RuneError && n <= 1) || j+n <= k {
			return 0, 0
		}
		return j, n
	}
	return 0, 0
}

// runeFloor returns the largest cut point <= k that splits no valid rune, so
// s[:runeFloor(s, k)] is the longest safe prefix of at most k bytes.
func runeFloor(s string, k int) int {
	if k <= 0 {
		return 0
	}
	if k >= len(s) {
		return len(s)
	}
	if j, n := straddle(s, k); n > 0 {
		return j
	}
	return k
}

// runeCeil returns the smallest cut point >= k that splits no valid rune, so
// s[runeCeil(s, k):] is the longest safe suffix of at most len(s)-k bytes.
func runeCeil(s string, k int) int {
	if k <= 0 {
		return 0
	}
	if k >= len(s) {
		return len(s)
	}
	if j, n := straddle(s, k); n > 0 {
		return j + n
	}
	return k
}

// validUTF8 returns s unchanged when it is valid UTF-8, and otherwise a copy
// in which every maximal run of invalid bytes is replaced by one U+FFFD.
//
// The clamp only repairs results it rewrites: a result under both limits is
// returned untouched (the caller then leaves the original JSON alone), but a
// clamped result is re-encoded by the caller, so every string in it must be
// valid. Repairing never adds or removes a '\n' (invalid bytes are never
// ASCII), so line counts are unaffected; byte counts may grow or shrink, which
// is why Apply repairs before it measures what to keep.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, string(utf8.RuneError))
}

// CutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a rune.
func CutUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	return s[:runeFloor(s, max(n, 0))]
}
