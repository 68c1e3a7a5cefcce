package shadow

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// ErrUnavailable is returned without calling the store while a Breaker is
// open.
var ErrUnavailable = errors.New("shadow: store unavailable (breaker open)")

// DefaultCooldown is how long a Breaker stays open after a failure.
const DefaultCooldown = 5 * time.Second

// Breaker fronts a Store that can go away (Redis): after a failure every
// call fails at once for a cooldown, then one call probes the store again.
// A dead store then costs one timeout per cooldown instead of one per tool
// result, which keeps requests inside Envoy's message_timeout while
// compression degrades to the clamp.
type Breaker struct {
	store     Store
	cooldown  time.Duration
	openUntil atomic.Int64 // unix nanos; 0 = closed
	now       func() time.Time
}

// NewBreaker wraps s; cooldown ≤ 0 means DefaultCooldown.
func NewBreaker(s Store, cooldown time.Duration) *Breaker {
	if cooldown <= 0 {
		cooldown = DefaultCooldown
	}
	return &Breaker{store: s, cooldown: cooldown, now: time.Now}
}

// Open reports whether calls are being refused now.
func (b *Breaker) Open() bool { return b.now().UnixNano() < b.openUntil.Load() }

// do runs call unless the breaker is open. Only failures of the store
// itself open it: an entry too large or malformed is the caller's problem,
// and a caller whose context ended (the client went away, the request's
// budget ran out) says nothing about the store; opening the breaker for
// those would turn compression off for every tenant (review finding 17).
func (b *Breaker) do(ctx context.Context, call func() error) error {
	if b.Open() {
		return ErrUnavailable
	}
	err := call()
	switch {
	case err == nil:
		b.openUntil.Store(0)
	case errors.Is(err, ErrNotFound):
		b.openUntil.Store(0)
	case errors.Is(err, ErrTooLarge), errors.Is(err, ErrInvalid), ctx.Err() != nil:
	default:
		b.openUntil.Store(b.now().Add(b.cooldown).UnixNano())
	}
	return err
}

// Put implements Store.
func (b *Breaker) Put(ctx context.Context, tenant string, kind Kind, key string, value []byte) error {
	return b.do(ctx, func() error { return b.store.Put(ctx, tenant, kind, key, value) })
}

// Adopt implements Adopter, handing value to the store when it can take
// it.
func (b *Breaker) Adopt(ctx context.Context, tenant string, kind Kind, key string, value []byte) error {
	return b.do(ctx, func() error { return PutOwned(ctx, b.store, tenant, kind, key, value, true) })
}

// Get implements Store.
func (b *Breaker) Get(ctx context.Context, tenant string, kind Kind, key string) (v []byte, err error) {
	err = b.do(ctx, func() error {
		v, err = b.store.Get(ctx, tenant, kind, key)
		return err
	})
	return v, err
}

// Touch implements Toucher; for a store that cannot touch it reports
// ErrNotFound so Keep falls back to Put.
func (b *Breaker) Touch(ctx context.Context, tenant string, kind Kind, key string) error {
	t, ok := b.store.(Toucher)
	if !ok {
		return ErrNotFound
	}
	return b.do(ctx, func() error { return t.Touch(ctx, tenant, kind, key) })
}

// Close implements Store.
func (b *Breaker) Close() error { return b.store.Close() }

// Verify implements Verifier; a store that does not tell tenants apart
// has nothing to record.
func (b *Breaker) Verify(ctx context.Context, tenant string) error {
	v, ok := b.store.(Verifier)
	if !ok {
		return nil
	}
	return b.do(ctx, func() error { return v.Verify(ctx, tenant) })
}

// Unwrap returns the store behind the breaker.
func (b *Breaker) Unwrap() Store { return b.store }
