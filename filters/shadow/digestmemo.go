package shadow

import (
	"hash/maphash"
	"sync"
)

// digests remembers the ids and cache keys of contents seen recently.
// Every later turn of a conversation carries the same results, and each
// one's id (HMAC-SHA-256) and cache key (SHA-256) were a quarter of the CPU
// of a request whose results were all cached (issue 14); a seeded maphash
// of the same bytes costs a fraction of that.
//
// An entry is found by two 64-bit maphash sums, under seeds drawn at
// start, of everything the digest depends on (the kind, the secret, the
// tenant or strategy, the content): no caller can aim at another's entry
// without the seeds, and an accidental collision (2^-128) is far below the
// 128-bit ids themselves. Two generations of at most digestMemoEntries
// entries bound it (about 10 MB).
var digests = newDigestMemo(1 << 16)

const (
	memoID  = 'i'
	memoKey = 'k'
)

type digestMemo struct {
	mu       sync.Mutex
	seeds    [2]maphash.Seed
	cur, old map[[2]uint64]string
	cap      int
}

func newDigestMemo(entries int) *digestMemo {
	return &digestMemo{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, cur: map[[2]uint64]string{}, cap: entries}
}

// minMemoContent: smaller contents are hashed directly; the memo's own
// hashing and locking would cost as much.
const minMemoContent = 1024

func (m *digestMemo) get(kind byte, a, b string, content []byte, compute func() string) string {
	if len(content) < minMemoContent {
		return compute()
	}
	var k [2]uint64
	for i, seed := range m.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		_ = h.WriteByte(kind)
		writeField(&h, a)
		writeField(&h, b)
		_, _ = h.Write(content)
		k[i] = h.Sum64()
	}
	m.mu.Lock()
	v, ok := m.cur[k]
	if !ok {
		if v, ok = m.old[k]; ok {
			m.put(k, v)
		}
	}
	m.mu.Unlock()
	if ok {
		return v
	}
	v = compute()
	m.mu.Lock()
	m.put(k, v)
	m.mu.Unlock()
	return v
}

// writeField writes s with its length, so fields cannot run into each other.
func writeField(h *maphash.Hash, s string) {
	n := len(s)
	_, _ = h.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)})
	_, _ = h.WriteString(s)
}

func (m *digestMemo) put(k [2]uint64, v string) {
	if len(m.cur) >= m.cap {
		m.old, m.cur = m.cur, map[[2]uint64]string{}
	}
	m.cur[k] = v
}
