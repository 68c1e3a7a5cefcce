package history

import (
	"crypto/sha256"
	"hash/maphash"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/memo"
)

// facts is what a summary reads from an old result's text: its line count,
// its key lines (at most maxErrorLines, more not shown), and whether it
// reads as a failure.
type facts struct {
	lines  int
	key    []string
	more   int
	failed bool
}

// factsOf reads them. full asks for everything a command's output gets
// (key lines and the failure verdict); otherwise only the key lines of an
// error result are read.
func factsOf(text string, full bool) facts {
	f := facts{lines: clamp.CountLines(text)}
	if full {
		f.key, f.more, f.failed = compress.KeyLinesFailed(text, maxErrorLines)
	} else {
		f.key, f.more = compress.KeyLines(text, maxErrorLines)
	}
	return f
}

// factCache remembers facts by text, because the same old results are
// summarised again on every later turn of a conversation: past the trigger
// every request carries them, and reading a 50 KB log for its key lines is
// the bulk of a tier rewrite. Up to two generations of 8 MiB of key lines.
var factCache = memo.New(8<<20, factsCost)

// factsCost is about what an entry holds.
func factsCost(f facts) int {
	size := 64
	for _, l := range f.key {
		size += len(l) + 16
	}
	return size
}

// cachedFacts returns the facts of text (n bytes), reading them on a miss.
// Texts below minCached are read every time: hashing them costs about as
// much. sum,
// when not nil, is text's shadow.Fingerprint: the key is made from its 32
// bytes, not from another pass over text (two seeded hashes of a 1 MB
// body's old results were 2 % of a new request's CPU, issue 23).
func cachedFacts(text func() string, n int, full bool, sum *[sha256.Size]byte) facts {
	const minCached = 2048
	if n < minCached {
		return factsOf(text(), full)
	}
	reading := byte('e') // the two readings differ
	if full {
		reading = 'f'
	}
	var k memo.Key
	if sum != nil {
		k = factCache.Key(func(h *maphash.Hash) {
			_ = h.WriteByte(reading - 'a' + 'A') // keyed by fingerprint: a key space of its own
			_, _ = h.Write(sum[:])
		})
	} else {
		k = factCache.KeyWith(func(h *maphash.Hash) { _ = h.WriteByte(reading) }, text())
	}
	return factCache.Get(k, func() facts { return factsOf(text(), full) })
}
