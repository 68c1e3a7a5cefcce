package shadow

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/url"
	"strings"
	"unsafe"
)

// Anonymous is the tenant of requests that carry no credential, or only a
// placeholder one (see placeholderCredentials). Every such caller would
// share it, so no original is ever stored under it (review finding 2):
// such callers get a tenant of their conversation instead
// (Keyring.ConversationTenant), or no references.
const Anonymous = "anonymous"

// ConversationTenantPrefix starts the tenants ConversationTenant derives,
// so they never meet a credential's.
const ConversationTenantPrefix = "conv-"

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

// Keyring derives tenants and shadow ids under one per-deployment secret.
// Both are HMAC-SHA-256 values: without the secret nobody can compute the
// id of a guessed content (expand_context would otherwise answer "did
// anyone send exactly this?"), nor reverse a tenant built from a
// low-entropy header such as an e-mail address. Replicas that share a store
// must share the secret (extproc keeps it in the store or reads it from the
// environment). The zero value uses an empty key: for tests only.
type Keyring struct {
	secret []byte
}

// NewKeyring returns a keyring for secret.
func NewKeyring(secret []byte) Keyring {
	return Keyring{secret: append([]byte(nil), secret...)}
}

// Tenant derives the tenant key from request headers (lower-case names): the
// configured header if set and present, else the first present of
// authorization, x-api-key, api-key and x-goog-api-key, else the "key" query
// parameter of the :path pseudo-header (Gemini's ?key=), else Anonymous.
// A value that is empty or a placeholder (IsPlaceholderCredential) counts
// as absent. An AWS SigV4 authorization header names its access key id,
// which is the caller; the rest of it (date, signature) changes on every
// request.
//
// The result is 32 lowercase hex chars of an HMAC over the header name and
// the value, so the credential never appears in it (nor in store keys or
// logs), and the same value under two different headers gives two
// different tenants.
func (k Keyring) Tenant(headers map[string]string, configured string) string {
	if name := strings.ToLower(strings.TrimSpace(configured)); name != "" {
		if v := strings.TrimSpace(headers[name]); v != "" {
			return k.tenantHash(name, v)
		}
	}
	for _, name := range CredentialHeaders {
		v := strings.TrimSpace(headers[name])
		if name == "authorization" {
			if akid, ok := SigV4AccessKey(v); ok {
				return k.tenantHash("aws-access-key-id", akid)
			}
		}
		if !IsPlaceholderCredential(v) {
			return k.tenantHash(name, v)
		}
	}
	if key := queryKey(headers[":path"]); !IsPlaceholderCredential(key) {
		return k.tenantHash("?key", key)
	}
	return Anonymous
}

// ConversationTenant is the tenant of a caller that sent no credential,
// derived from the conversation itself: an HMAC under the deployment
// secret of its scope (wire.Conversation.Scope: the system prompt and the
// messages up to the user's first). Every request of the conversation
// carries the same scope, so its references resolve on every turn; another
// conversation gets another tenant. Reading an original needs both the
// scope and the original's id, which is an HMAC of the original's bytes:
// whoever can start a conversation with the same prefix reaches, through
// the ids toolproc gives it, only the results it sent itself
// (docs/security.md, "Callers without a credential"). Empty scope: "".
func (k Keyring) ConversationTenant(scope []byte) string {
	if len(scope) == 0 {
		return ""
	}
	return ConversationTenantPrefix + k.tenantHash("conversation", string(scope))
}

// SigV4AccessKey returns the access key id of an AWS Signature Version 4
// authorization header ("AWS4-HMAC-SHA256 Credential=AKID/date/region/
// service/aws4_request, SignedHeaders=…, Signature=…"; AWS General
// Reference, "Signature Version 4 signing process").
func SigV4AccessKey(authorization string) (string, bool) {
	rest, ok := strings.CutPrefix(authorization, "AWS4-HMAC-SHA256")
	if !ok {
		return "", false
	}
	_, cred, ok := strings.Cut(rest, "Credential=")
	if !ok {
		return "", false
	}
	akid, _, ok := strings.Cut(cred, "/")
	akid = strings.TrimSpace(akid)
	return akid, ok && akid != ""
}

// IsSigV4 reports whether an authorization header is an AWS SigV4
// signature: the request body is part of what was signed.
func IsSigV4(authorization string) bool {
	return strings.HasPrefix(strings.TrimSpace(authorization), "AWS4-HMAC-SHA256")
}

// placeholderCredentials are keys clients send when the gateway, not the
// client, holds the real credential (OpenAI-compatible servers and SDKs
// require some value). Compared lower-case after an optional "Bearer ".
var placeholderCredentials = map[string]bool{
	"empty": true, "none": true, "null": true, "nil": true, "undefined": true, "dummy": true,
	"sk-dummy": true, "sk-xxx": true, "sk-1234": true, "sk-no-key-required": true, "no-key": true,
	"nokey": true, "no_key": true, "ollama": true, "lm-studio": true, "lmstudio": true, "vllm": true,
	"test": true, "fake": true, "placeholder": true, "key": true, "api-key": true, "apikey": true,
	"your-api-key": true, "your_api_key": true, "sk-your-api-key": true, "changeme": true,
	"not-needed": true, "not-used": true, "unused": true, "x": true, "-": true, "0": true,
}

// minCredentialLen: no provider issues keys this short (OpenAI, Anthropic
// and Gemini keys run to 39 characters and more), so anything shorter
// ("x", "abc", "none") is a placeholder too.
const minCredentialLen = 8

// IsPlaceholderCredential reports whether a credential value identifies
// nobody: empty, too short to be a real key, or a well-known placeholder.
func IsPlaceholderCredential(v string) bool {
	v = strings.TrimSpace(v)
	if len(v) >= 7 && strings.EqualFold(v[:7], "bearer ") {
		v = strings.TrimSpace(v[7:])
	}
	return len(v) < minCredentialLen || placeholderCredentials[strings.ToLower(v)]
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

func (k Keyring) tenantHash(name, value string) string {
	h := hmac.New(sha256.New, k.secret)
	h.Write([]byte("toolproc/tenant/v2\x00"))
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(value))
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:tenantHexLen/2])
}

// ID is the shadow id for content of a tenant: "sh_" + 32 lowercase hex
// chars (128 bits) of HMAC-SHA-256(secret, tenant 0x00 SHA-256(content)).
// It is deterministic across turns, restarts and replicas that share the
// secret. The HMAC covers the content's SHA-256, not the content itself:
// the same fingerprint keys the compression cache (CacheKey), so a result
// is hashed once, not once per digest (SHA-256 was a sixth of a new 1 MB
// request's rewrite); SHA-256's collision resistance keeps the id a PRF of
// the content.
func (k Keyring) ID(tenant string, content []byte) string {
	return k.id(tenant, fingerprint(content))
}

// IDOf is ID for a content whose Fingerprint is sum.
func (k Keyring) IDOf(tenant string, sum [sha256.Size]byte) string { return k.id(tenant, sum) }

func (k Keyring) id(tenant string, sum [sha256.Size]byte) string {
	h := hmac.New(sha256.New, k.secret)
	h.Write([]byte("toolproc/id/v3\x00"))
	h.Write([]byte(tenant))
	h.Write([]byte{0})
	h.Write(sum[:])
	var mac [sha256.Size]byte
	var out [IDLen]byte
	copy(out[:], IDPrefix)
	hex.Encode(out[len(IDPrefix):], h.Sum(mac[:0])[:idHexLen/2])
	return string(out[:])
}

// ReadOnlyBytes is s as a byte slice without a copy, for the hashes and
// store writes that only read it (a store copies what it keeps, unless
// PutOwned hands it a text that owns its buffer): a result's
// text is tens of kilobytes, and the copies were a measurable part of a
// request whose results were all cached. Never write to it.
func ReadOnlyBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// AuditRef is what an audit log may show of a shadow id: enough to match
// the lines of one result, useless as an expand_context argument (ids are
// bearer capabilities within their tenant).
func AuditRef(id string) string {
	sum := sha256.Sum256([]byte("toolproc/audit/v1\x00" + id))
	return hex.EncodeToString(sum[:6])
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
// this package (the reference format) and how the key is derived. Bump it
// when Reference changes so replicas of different versions never share
// incompatible entries. v2: the key covers the content's SHA-256.
const cacheFormat = "toolproc/cache/v2"

// CacheKey is the key of a compressed result in the cache: 64 lowercase hex
// chars of SHA-256 over a format version, strategy and the content's
// SHA-256. strategy must describe everything that decides the output (the
// strategy name and its options, e.g. "local budget=4096 keep=head+tail");
// it is length-prefixed, so no strategy/content split can collide with
// another.
func CacheKey(content []byte, strategy string) string {
	return cacheKey(fingerprint(content), strategy)
}

func cacheKey(sum [sha256.Size]byte, strategy string) string {
	h := sha256.New()
	h.Write([]byte(cacheFormat))
	h.Write([]byte{0})
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(strategy)))])
	h.Write([]byte(strategy))
	h.Write(sum[:])
	var key [sha256.Size]byte
	return hex.EncodeToString(h.Sum(key[:0]))
}
