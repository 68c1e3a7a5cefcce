package clamp

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// cutInputs mix 1-, 2-, 3- and 4-byte runes, "\n" and "\r\n" line ends, so
// that every byte offset of them is some kind of boundary or non-boundary.
var cutInputs = []string{
	"ééééééééé",
	"中中中中中中",
	"🙂🙂🙂🙂🙂",
	"aé中🙂\nbé中🙂\r\nc🙂中é\n🙂",
	"line one\r\nline two\r\nline three\r\n",
	"\r\n\r\n\r\n",
	"x\ry\rz\n",
	"",
}

// refByteHead is the slow reference for the byte cut of cutHead: the longest
// prefix of whole runes within max bytes, minus a '\r' whose '\n' was cut.
func refByteHead(s string, max int) string {
	k := 0
	for i, r := range s {
		if i+utf8.RuneLen(r) > max {
			break
		}
		k = i + utf8.RuneLen(r)
	}
	if k < len(s) && k > 0 && s[k-1] == '\r' && s[k] == '\n' {
		k--
	}
	return s[:k]
}

// refByteTail is the slow reference for the byte cut of cutTail.
func refByteTail(s string, max int) string {
	for i := range s { // rune starts, in order
		if len(s)-i <= max {
			return s[i:]
		}
	}
	return ""
}

func TestCutHeadEveryOffset(t *testing.T) {
	for _, s := range cutInputs {
		lines := splitLines(s)
		for maxLines := 1; maxLines <= len(lines)+1; maxLines++ {
			byLines := strings.Join(lines[:min(maxLines, len(lines))], "")
			for maxBytes := 0; maxBytes <= len(s)+1; maxBytes++ {
				got := cutHead(s, maxBytes, maxLines)
				want := refByteHead(byLines, maxBytes)
				if got != want {
					t.Fatalf("cutHead(%q, %d, %d) = %q, want %q", s, maxBytes, maxLines, got, want)
				}
				if !utf8.ValidString(got) || len(got) > maxBytes || CountLines(got) > maxLines {
					t.Fatalf("cutHead(%q, %d, %d) = %q breaks a rune or a limit", s, maxBytes, maxLines, got)
				}
			}
		}
	}
}

func TestCutTailEveryOffset(t *testing.T) {
	for _, s := range cutInputs {
		lines := splitLines(s)
		for maxLines := 1; maxLines <= len(lines)+1; maxLines++ {
			byLines := strings.Join(lines[len(lines)-min(maxLines, len(lines)):], "")
			for maxBytes := 0; maxBytes <= len(s)+1; maxBytes++ {
				got := cutTail(s, maxBytes, maxLines)
				want := refByteTail(byLines, maxBytes)
				if got != want {
					t.Fatalf("cutTail(%q, %d, %d) = %q, want %q", s, maxBytes, maxLines, got, want)
				}
				if !utf8.ValidString(got) || len(got) > maxBytes || CountLines(got) > maxLines {
					t.Fatalf("cutTail(%q, %d, %d) = %q breaks a rune or a limit", s, maxBytes, maxLines, got)
				}
			}
		}
	}
}

func TestCutNoLimit(t *testing.T) {
	s := "a\nb\nc"
	if got := cutHead(s, math.MaxInt, math.MaxInt); got != s {
		t.Errorf("cutHead without limits = %q", got)
	}
	if got := cutTail(s, math.MaxInt, math.MaxInt); got != s {
		t.Errorf("cutTail without limits = %q", got)
	}
	if got := cutHead(s, 0, 5); got != "" {
		t.Errorf("cutHead with 0 bytes = %q", got)
	}
	if got := cutTail(s, 5, 0); got != "" {
		t.Errorf("cutTail with 0 lines = %q", got)
	}
}
