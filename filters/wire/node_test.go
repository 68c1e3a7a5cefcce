package wire

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// FuzzUnquote: for any string literal the JSON check accepts, unquote
// decodes what encoding/json decodes (for valid UTF-8; invalid bytes pass
// through here and are repaired on the way out by QuoteString).
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`""`, `"plain"`, `"a\nb\tc\"d\\e\/f"`, `"\u00e9\ud83d\ude00"`, `"\ud800x"`, `"\udc00"`, `"x\u0000y"`, `"\b\f\r"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' || jsonsafe.CheckString(lit, jsonsafe.Options{}) != nil || !utf8.ValidString(lit) {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatalf("encoding/json refused %q: %v", lit, err)
		}
		if got := unquote(lit); got != want {
			t.Fatalf("unquote(%q) = %q, encoding/json %q", lit, got, want)
		}
		// A text a block says it owns is not a view of its literal, and
		// its buffer (the literal's length and a word) is not much larger.
		b := TextBlock{Raw: lit}
		text := b.Text()
		if b.OwnsText() {
			if len(text) > 0 && within(text, lit) {
				t.Fatalf("OwnsText for a view of the literal %q", lit)
			}
			if n := len(text); len(lit)-2+8 > n+n/16+maxOwnedSlack {
				t.Fatalf("OwnsText for %d bytes decoded from %d", n, len(lit)-2)
			}
		}
	})
}

// within says whether s's bytes lie within outer's.
func within(s, outer string) bool {
	p, o := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(outer)))
	return p >= o && p < o+uintptr(len(outer))
}

// BenchmarkUnquote decodes a tool output's literal (a line break every
// ~60 bytes, some quotes and tabs), as a filter asking for a result's text
// does.
func BenchmarkUnquote(b *testing.B) {
	lit := string(QuoteString(strings.Repeat("src/pkg/server/handler.go:120:\tif err := h.store.Put(ctx, \"key\", value); err != nil {\n", 10000)))
	b.SetBytes(int64(len(lit)))
	for b.Loop() {
		_ = unquote(lit)
	}
}
