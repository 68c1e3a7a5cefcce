package shadow

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Kind separates the two families of values a Store keeps. Each kind has
// its own TTL.
type Kind string

const (
	// Original is an uncompressed tool result, keyed by its shadow id.
	Original Kind = "original"
	// Compressed is a compressed result, keyed by CacheKey.
	Compressed Kind = "compressed"
)

// Default TTLs and byte cap.
const (
	DefaultOriginalTTL   = 5 * time.Hour
	DefaultCompressedTTL = 24 * time.Hour
	DefaultMaxBytes      = 256 << 20
)

// Limits on the arguments of Put and Get.
const (
	MaxTenantLen = 128
	MaxKeyLen    = 256
)

// Store keeps values per tenant. Implementations are safe for concurrent
// use. Get returns ErrNotFound (wrapped or bare) for missing, expired and
// other-tenant keys; any other error means the store could not answer.
// The value Get returns is the caller's own: the store neither keeps nor
// changes it afterwards, so a caller may read it in place (a cached
// compressed result is, CompressFilter.cached).
// Put on an existing key replaces the value and restarts its TTL.
type Store interface {
	Put(ctx context.Context, tenant string, kind Kind, key string, value []byte) error
	Get(ctx context.Context, tenant string, kind Kind, key string) ([]byte, error)
	Close() error
}

// Toucher is implemented by stores that can restart an entry's TTL without
// rewriting its value (Memory, Redis). Touch returns ErrNotFound when the
// entry is gone.
type Toucher interface {
	Touch(ctx context.Context, tenant string, kind Kind, key string) error
}

// Adopter is implemented by stores that can keep a value without copying
// it (Memory). Stores that copy or send what they are given need not.
type Adopter interface {
	// Adopt is Put of a value the caller hands over: nothing writes to it
	// afterwards, and it is not a view of a larger buffer the store would
	// pin while counting only the value.
	Adopt(ctx context.Context, tenant string, kind Kind, key string, value []byte) error
}

// PutOwned puts value, handing it over when owned and the store can take
// it (Adopter): a memory store then keeps the caller's buffer instead of a
// copy. The originals of a new request's results are most of what it
// puts: handing them over took a new 1 MB request from 3.3 to 2.3 MB
// allocated and 2 to 4 % of its CPU end to end (issue 23).
func PutOwned(ctx context.Context, s Store, tenant string, kind Kind, key string, value []byte, owned bool) error {
	if a, ok := s.(Adopter); ok && owned {
		return a.Adopt(ctx, tenant, kind, key, value)
	}
	return s.Put(ctx, tenant, kind, key, value)
}

// Keep makes sure value is stored under key with a fresh TTL, sending the
// value only when needed: it touches the entry when the store is a Toucher
// and puts value when the entry is missing or the store cannot touch. An
// existing entry is not rewritten, so the key must determine the value
// (shadow ids and cache keys do). A Touch error other than ErrNotFound is
// returned as is, without a Put.
//
// Use it for the original when a cached compressed result is reused: the
// compressed entry (24 h by default) outlives the original (5 h), and a
// reference whose original has expired cannot be expanded.
func Keep(ctx context.Context, s Store, tenant string, kind Kind, key string, value []byte) error {
	return KeepFunc(ctx, s, tenant, kind, key, func() ([]byte, bool) { return value, false })
}

// KeepFunc is Keep with the value made only when it is put: a result seen
// before is found by its id, and need not be decoded to be touched. value
// also says whether the caller hands the bytes over (PutOwned).
func KeepFunc(ctx context.Context, s Store, tenant string, kind Kind, key string, value func() (b []byte, owned bool)) error {
	if t, ok := s.(Toucher); ok {
		err := t.Touch(ctx, tenant, kind, key)
		if !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	b, owned := value()
	return PutOwned(ctx, s, tenant, kind, key, b, owned)
}

var (
	// ErrNotFound: no value for this tenant, kind and key (never stored,
	// expired, evicted, or stored by another tenant).
	ErrNotFound = errors.New("shadow: not found")
	// ErrInvalid: a malformed tenant, kind or key.
	ErrInvalid = errors.New("shadow: invalid argument")
	// ErrTooLarge: the entry alone exceeds the store's byte cap.
	ErrTooLarge = errors.New("shadow: entry larger than the store")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("shadow: store closed")
)

// kindIndex maps a Kind to 0 (Original) or 1 (Compressed).
func kindIndex(k Kind) (int, bool) {
	switch k {
	case Original:
		return 0, true
	case Compressed:
		return 1, true
	}
	return 0, false
}

// checkArgs validates tenant, kind and key. A tenant is 1..128 bytes of
// [A-Za-z0-9_.-] (what Tenant returns always is); a key is 1..256 bytes.
// Keeping ':' out of tenants keeps Redis keys of different tenants apart.
func checkArgs(tenant string, kind Kind, key string) (int, error) {
	ki, ok := kindIndex(kind)
	if !ok {
		return 0, fmt.Errorf("%w: kind %q", ErrInvalid, kind)
	}
	if tenant == "" || len(tenant) > MaxTenantLen {
		return 0, fmt.Errorf("%w: tenant length %d", ErrInvalid, len(tenant))
	}
	for i := 0; i < len(tenant); i++ {
		if c := tenant[i]; !isNameByte(c) && c != '.' && c != '-' {
			return 0, fmt.Errorf("%w: tenant has byte %#x", ErrInvalid, c)
		}
	}
	if key == "" || len(key) > MaxKeyLen {
		return 0, fmt.Errorf("%w: key length %d", ErrInvalid, len(key))
	}
	return ki, nil
}

// orDefault returns d when v is zero or negative.
func orDefault(v, d time.Duration) time.Duration {
	if v <= 0 {
		return d
	}
	return v
}

// Verifier is implemented by stores that give tenants the provider has
// accepted a larger share than the others (Memory, Redis): a tenant is
// whatever credential a client sends, and originals are stored before the
// provider has checked it. Verify is called when an answer for the tenant
// came back 2xx.
type Verifier interface {
	Verify(ctx context.Context, tenant string) error
}
