package shadow

import (
	"crypto/sha256"
	"unsafe"

	"github.com/toolproc/toolproc/filters/memo"
)

// fingerprints remembers the SHA-256 of contents seen recently. Every
// later turn of a conversation carries the same results, and hashing each
// one for its id and cache key was a quarter of the CPU of a request whose
// results were all cached (issue 14); a seeded maphash of the same bytes
// costs a fraction of that. Ids and cache keys are derived from the
// fingerprint (Keyring.ID, CacheKey) at a cost independent of the
// content's size. Up to two generations of 65,536 entries (about 7 MB).
var fingerprints = memo.New[[sha256.Size]byte](1<<16, nil)

// minMemoContent: smaller contents are hashed directly; the memo's own
// hashing and locking would cost as much.
const minMemoContent = 1024

// Fingerprint is SHA-256(content), remembered for contents of
// minMemoContent bytes or more: the identity a shadow id (IDOf) and a
// cache key derive from, which other caches of the same content may key by
// instead of hashing it again.
func Fingerprint(content []byte) [sha256.Size]byte { return fingerprint(content) }

// fingerprint is SHA-256(content), remembered for contents of
// minMemoContent bytes or more.
func fingerprint(content []byte) [sha256.Size]byte {
	if len(content) < minMemoContent {
		return sha256.Sum256(content)
	}
	// A view, not a copy: the key is computed before the call returns.
	k := fingerprints.KeyString(unsafe.String(unsafe.SliceData(content), len(content)))
	return fingerprints.Get(k, func() [sha256.Size]byte { return sha256.Sum256(content) })
}
