package shadow

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/url"
	"strings"
)

// Anonymous is the tenant of requests that carry no identifying header.
// Every such caller shares it, so integrators may prefer not to emit shadow
// references for it at all.
const Anonymous = "anonymous"

// IDPrefix starts every shadow id.
const IDPrefix = "sh_"

// idHexLen is the number of hex chars after IDPrefix (128 bits).
const idHexLen = 32

// IDLen is the length of a shadow id.
const IDLen = len(IDPrefix) + idHexLen

// tenantHexLen is the length of a hashed tenant (128 bits).
const tenantHexLen = 32

// CredentialHeaders name the caller's credential in LLM APIs; Tenant
// consults them in this order when no configured header is present. Names
// are lower-case, as Envoy delivers them.
var CredentialHeaders = [...]string{"authorization", "x-api-key", "api-key", "x-goog-api-key"}

// Tenant derives the tenant key from request headers (lower-case names): the
// configured header if set and present, else the first present of
// authorization, x-api-key, api-key and x-goog-api-key, else the "key" query
// parameter of the :path pseudo-header (Gemini's ?key=), else Anonymous.
// A header whose value is empty or only spaces counts as absent.
//
// The result is 32 lowercase hex chars of a SHA-256 over a fixed domain
// label, the header name and the value, so the credential never appears in
// it (nor in store keys or logs), and the same value under two different
// headers gives two different tenants.
func Tenant(headers map[string]string, configured string) string {
	if name := strings.ToLower(strings.TrimSpace(configured)); name != "" {
		if v := strings.TrimSpace(headers[name]); v != "" {
			return tenantHash(name, v)
		}
	}
	for _, name := range CredentialHeaders {
		if v := strings.TrimSpace(headers[name]); v != "" {
			return tenantHash(name, v)
		}
	}
	if key := queryKey(headers[":path"]); key != "" {
		return tenantHash("?key", key)
	}
	return Anonymous
}

// queryKey returns the "key" query parameter of a request path, if any.
func queryKey(path string) string {
	i := strings.IndexByte(path, '?')
	if i < 0 {
		return ""
	}
	q, _ := url.ParseQuery(path[i+1:]) // keeps the well-formed pairs
	return strings.TrimSpace(q.Get("key"))
}

func tenantHash(name, value string) string {
	h := sha256.New()
	h.Write([]byte("toolproc/tenant/v1\x00"))
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(value))
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:tenantHexLen/2])
}

// ID is the shadow id for content of a tenant: "sh_" + 32 lowercase hex
// chars (128 bits) of SHA-256(tenant 0x00 content). It is deterministic
// across turns and replicas.
func ID(tenant string, content []byte) string {
	h := sha256.New()
	h.Write([]byte(tenant))
	h.Write([]byte{0})
	h.Write(content)
	var sum [sha256.Size]byte
	var out [IDLen]byte
	copy(out[:], IDPrefix)
	hex.Encode(out[len(IDPrefix):], h.Sum(sum[:0])[:idHexLen/2])
	return string(out[:])
}

// ValidID reports whether s is a well-formed shadow id: "sh_" followed by
// exactly 32 lowercase hex chars.
func ValidID(s string) bool {
	if len(s) != IDLen || !strings.HasPrefix(s, IDPrefix) {
		return false
	}
	for i := len(IDPrefix); i < len(s); i++ {
		if !isLowerHex(s[i]) {
			return false
		}
	}
	return true
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// cacheFormat names everything about the cached bytes that is decided by
// this package (the reference format). Bump it when Reference changes so
// replicas of different versions never share incompatible entries.
const cacheFormat = "toolproc/cache/v1"

// CacheKey is the key of a compressed result in the cache: 64 lowercase hex
// chars of SHA-256 over a format version, strategy and content. strategy
// must describe everything that decides the output (the strategy name and
// its options, e.g. "local budget=4096 keep=head+tail"); it is
// length-prefixed, so no strategy/content split can collide with another.
func CacheKey(content []byte, strategy string) string {
	h := sha256.New()
	h.Write([]byte(cacheFormat))
	h.Write([]byte{0})
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(strategy)))])
	h.Write([]byte(strategy))
	h.Write(content)
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}
