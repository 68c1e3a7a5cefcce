package shadow

import (
	"hash/maphash"

	"github.com/toolproc/toolproc/filters/memo"
)

// digests remembers the ids and cache keys of contents seen recently.
// Every later turn of a conversation carries the same results, and each
// one's id (HMAC-SHA-256) and cache key (SHA-256) were a quarter of the CPU
// of a request whose results were all cached (issue 14); a seeded maphash
// of the same bytes costs a fraction of that. The key covers everything
// the digest depends on (kind, secret, tenant or strategy, content). Up to
// two generations of 65,536 entries (about 10 MB).
var digests = memo.New[string](1<<16, nil)

const (
	memoID  = 'i'
	memoKey = 'k'
)

// minMemoContent: smaller contents are hashed directly; the memo's own
// hashing and locking would cost as much.
const minMemoContent = 1024

func digest(kind byte, a, b string, content []byte, compute func() string) string {
	if len(content) < minMemoContent {
		return compute()
	}
	k := digests.Key(func(h *maphash.Hash) {
		_ = h.WriteByte(kind)
		writeField(h, a)
		writeField(h, b)
		_, _ = h.Write(content)
	})
	return digests.Get(k, compute)
}

// writeField writes s with its length, so fields cannot run into each other.
func writeField(h *maphash.Hash, s string) {
	n := len(s)
	_, _ = h.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)})
	_, _ = h.WriteString(s)
}
