package shadow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolproc/toolproc/filters/shadow/redistest"
)

// Review round 3, N5 with the shared store: a tenant no answer has come
// back 2xx for writes within a small share, with a short TTL; Verify gives
// its entries their kind's TTL and lifts the share.
func TestRedisUnverifiedShare(t *testing.T) {
	srv := redistest.Start(t)
	raw := rawClient(t, srv.Addr())
	ctx := context.Background()
	r, err := NewRedis(RedisOptions{Addr: srv.Addr(), UnverifiedMaxBytes: 1 << 20, UnverifiedTTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tn := Tenant(map[string]string{"authorization": "Bearer made-up-key-0001"}, "")
	chunk := make([]byte, 300<<10)
	for i := range 3 {
		if err := r.Put(ctx, tn, Original, fmt.Sprint("k", i), chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Put(ctx, tn, Original, "k3", chunk); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("fourth 300 KiB entry of an unverified tenant with a 1 MiB share: %v, want ErrTooLarge", err)
	}
	key := "toolproc:{" + tn + "}:original:k0"
	if d := raw.PTTL(ctx, key).Val(); d > 10*time.Minute || d < 9*time.Minute {
		t.Fatalf("unverified entry TTL %v, want about 10m", d)
	}
	if err := r.Verify(ctx, tn); err != nil {
		t.Fatal(err)
	}
	if d := raw.PTTL(ctx, key).Val(); d < DefaultOriginalTTL-time.Minute {
		t.Fatalf("entry TTL after Verify %v, want about %v", d, DefaultOriginalTTL)
	}
	if err := r.Put(ctx, tn, Original, "k3", chunk); err != nil {
		t.Fatalf("verified tenant: %v", err)
	}
	// Another replica (its own cache) sees the verification in Redis.
	r2 := newTestRedis(t, RedisOptions{Addr: srv.Addr(), UnverifiedMaxBytes: 1 << 20})
	if err := r2.Put(ctx, tn, Original, "k4", append(chunk, chunk...)); err != nil {
		t.Fatalf("verified tenant on another replica: %v", err)
	}
}

// The review's repro B3 against Redis under memory pressure: five made-up
// keys write as much as they can; the verified victim's original survives
// (maxmemory-policy volatile-ttl evicts their short-lived entries first).
func TestRedisManyFakeTenantsEvictAnother(t *testing.T) {
	srv := redistest.Start(t)
	raw := rawClient(t, srv.Addr())
	ctx := context.Background()
	if err := raw.ConfigSet(ctx, "maxmemory", "48mb").Err(); err != nil {
		t.Fatal(err)
	}
	if err := raw.ConfigSet(ctx, "maxmemory-policy", "volatile-ttl").Err(); err != nil {
		t.Fatal(err)
	}
	r, err := NewRedis(RedisOptions{Addr: srv.Addr(), OpTimeout: 5 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	victim := Tenant(map[string]string{"authorization": "Bearer sk-real-victim-key-000000"}, "")
	orig := []byte("the victim's original")
	id := ID(victim, orig)
	if err := r.Put(ctx, victim, Original, id, orig); err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(ctx, victim); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 4<<20)
	refused := 0
	for k := range 5 {
		tk := Tenant(map[string]string{"authorization": fmt.Sprintf("Bearer made-up-key-%04d", k)}, "")
		for i := range 8 {
			v := append([]byte(fmt.Sprint(k, i)), big...)
			if err := r.Put(ctx, tk, Original, ID(tk, v), v); err != nil {
				refused++
			}
		}
	}
	if _, err := r.Get(ctx, victim, Original, id); err != nil {
		t.Fatalf("victim's original lost to made-up tenants: %v", err)
	}
	t.Logf("5 made-up tenants × 8 × 4 MiB under maxmemory 48mb: %d writes refused, victim's original kept", refused)
}
