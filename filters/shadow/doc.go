// Package shadow keeps the originals of compressed tool results so a model
// can read them back through the injected expand_context tool.
//
// # Identifiers
//
//   - Tenant: the caller's scope, a 128-bit hex prefix of a domain-separated
//     SHA-256 of the header that identifies the caller (a configured header,
//     else authorization, x-api-key, api-key, x-goog-api-key, else a Gemini
//     "key" query parameter on :path), or "anonymous" when there is none.
//     The credential itself never leaves Tenant.
//   - Shadow id: "sh_" + 32 lowercase hex chars, the first 128 bits of
//     SHA-256(tenant || 0x00 || content). The same result of the same tenant
//     has the same id on every turn and on every replica; two tenants never
//     share an id for the same content.
//   - Cache key: 64 lowercase hex chars, SHA-256 over a format version, the
//     strategy description (name + options) and the content; it keys the
//     compressed-result cache so a result is compressed once.
//
// # Reference format
//
// A compressed result starts with exactly two ASCII lines:
//
//	[toolproc shadow_id=sh_0123456789abcdef0123456789abcdef original=48213 bytes; compressed below]
//	[call expand_context with {"id":"sh_0123456789abcdef0123456789abcdef"} to read the full original]
//
// followed by the compressed text. [Reference] writes them, [ParseReference]
// reads them back.
//
// # Stores
//
// [Store] keeps two kinds of values per tenant: originals (keyed by shadow
// id) and compressed results (keyed by [CacheKey]). [Memory] is the default,
// process-local store with per-kind TTLs and a byte cap with LRU eviction.
// [Redis] shares the same data between replicas, with per-kind key TTLs and
// short timeouts so an unreachable Redis fails fast. An entry written for
// one tenant is [ErrNotFound] for every other tenant.
//
// Store errors are never meant to fail a request: callers degrade to plain
// clamping (no reference is emitted when the original could not be stored).
package shadow
