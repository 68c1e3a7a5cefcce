package history

import (
	"hash/maphash"
	"sync"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/compress"
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
// the bulk of a tier rewrite. The summary is a pure function of the text,
// so the cache changes no byte of any request.
//
// The key is two 64-bit maphash sums under seeds drawn at start: a caller
// cannot aim at another text's entry without knowing them, and an accidental
// collision (2^-128) is far below anything that matters. Memory is bounded
// by two generations of at most factCacheBytes of key lines each: when the
// current one fills, it becomes the old one and the old one is dropped, so
// what a conversation keeps using stays while the rest ages out.
var factCache = newFactMemo(8 << 20)

type factKey [2]uint64

type factMemo struct {
	mu         sync.Mutex
	seeds      [2]maphash.Seed
	cur, old   map[factKey]facts
	bytes, cap int
}

func newFactMemo(capBytes int) *factMemo {
	return &factMemo{
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		cur:   map[factKey]facts{},
		cap:   capBytes,
	}
}

// get returns the facts of text, reading them on a miss. Texts below
// minCached are read every time: hashing them costs about as much.
func (m *factMemo) get(text string, full bool) facts {
	const minCached = 2048
	if len(text) < minCached {
		return factsOf(text, full)
	}
	k := factKey{maphash.String(m.seeds[0], text), maphash.String(m.seeds[1], text)}
	if full {
		k[1] ^= 1 // the two readings differ
	}
	m.mu.Lock()
	f, ok := m.cur[k]
	if !ok {
		if f, ok = m.old[k]; ok {
			m.put(k, f)
		}
	}
	m.mu.Unlock()
	if ok {
		return f
	}
	f = factsOf(text, full)
	m.mu.Lock()
	m.put(k, f)
	m.mu.Unlock()
	return f
}

// put stores under the lock.
func (m *factMemo) put(k factKey, f facts) {
	size := 64
	for _, l := range f.key {
		size += len(l) + 16
	}
	if m.bytes+size > m.cap {
		m.old, m.cur, m.bytes = m.cur, map[factKey]facts{}, 0
	}
	m.cur[k] = f
	m.bytes += size
}
