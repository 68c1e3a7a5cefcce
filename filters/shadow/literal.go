package shadow

import (
	"crypto/sha256"
	"strings"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/memo"
	"github.com/toolproc/toolproc/filters/wire"
)

// TextFacts is what the filters ask of a text value before they know
// they must read it: its SHA-256 (Fingerprint), its length and line count,
// and whether it starts as a reference does.
type TextFacts struct {
	Sum     [sha256.Size]byte
	Len     int
	Lines   int
	RefLike bool // starts with a reference's prefix (ParseReference decides)
}

// literals remembers the TextFacts of text blocks by their JSON string
// literal, as the body holds it. Every later request of a conversation
// carries its old results byte for byte, and decoding each of them to hash
// it for its id and cache key was a fifth of the CPU of a request whose
// results were all seen before (issue 23): a seeded hash of the literal
// finds its facts without decoding it. Up to two generations of 32,768
// entries (about 7 MB with the maps' own overhead).
var literals = memo.New[TextFacts](1<<15, nil)

// minMemoLiteral: shorter literals are decoded and hashed directly.
const minMemoLiteral = 1024

// FactsOf returns the facts of t's text, decoding t only when its literal
// was not seen recently. The same literal always decodes to the same
// text, so a fact remembered by the literal is the text's.
func FactsOf(t *wire.TextBlock) TextFacts {
	if len(t.Raw) < minMemoLiteral {
		return factsOfString(t.Text())
	}
	k := literals.KeyString(t.Raw)
	return literals.Get(k, func() TextFacts {
		text := t.Text()
		// The literal's hash stands in for the text's: SHA-256 directly,
		// not through fingerprint's memo, which would hash the text again.
		return textFacts(text, sha256.Sum256(ReadOnlyBytes(text)))
	})
}

// factsOfString is FactsOf for a text already decoded.
func factsOfString(text string) TextFacts { return textFacts(text, fingerprint(ReadOnlyBytes(text))) }

// textFacts is the facts of text whose SHA-256 is sum.
func textFacts(text string, sum [sha256.Size]byte) TextFacts {
	return TextFacts{Sum: sum, Len: len(text), Lines: clamp.CountLines(text), RefLike: strings.HasPrefix(text, refPrefix)}
}
