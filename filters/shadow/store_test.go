package shadow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// storeEnv tells the conformance suite what it may assume about a store.
type storeEnv struct {
	originalTTL, compressedTTL time.Duration
	// advance moves the store's clock forward (a fake clock, or a sleep for
	// Redis); nil skips the expiry subtest.
	advance func(time.Duration)
	// margin is added to every advance past a TTL (real clocks need one).
	margin time.Duration
	// ttlOf reports the remaining TTL of a stored key; nil skips that check.
	ttlOf func(t *testing.T, tenant string, kind Kind, key string) time.Duration
}

var testTenants = [2]string{
	Tenant(map[string]string{"authorization": "Bearer sk-tenant-a-0123456789"}, ""),
	Tenant(map[string]string{"x-api-key": "sk-tenant-b-0123456789"}, ""),
}

// testStore is the behaviour every Store must have.
func testStore(t *testing.T, s Store, env storeEnv) {
	ctx := context.Background()
	ta, tb := testTenants[0], testTenants[1]
	mustPut := func(t *testing.T, tenant string, kind Kind, key string, v []byte) {
		t.Helper()
		if err := s.Put(ctx, tenant, kind, key, v); err != nil {
			t.Fatalf("Put(%s, %s, %s): %v", tenant, kind, key, err)
		}
	}
	wantValue := func(t *testing.T, tenant string, kind Kind, key string, want []byte) {
		t.Helper()
		got, err := s.Get(ctx, tenant, kind, key)
		if err != nil {
			t.Fatalf("Get(%s, %s, %s): %v", tenant, kind, key, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Get(%s, %s, %s) = %q, want %q", tenant, kind, key, trim(got), trim(want))
		}
	}
	wantNotFound := func(t *testing.T, tenant string, kind Kind, key string) {
		t.Helper()
		got, err := s.Get(ctx, tenant, kind, key)
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(%s, %s, %s) = %q, %v; want ErrNotFound", tenant, kind, key, trim(got), err)
		}
	}

	// The caller owns what Get returns (Store's contract): writing to it
	// changes neither the store nor the next Get, so a reader may keep it
	// as a string without copying it (CompressFilter.cached).
	t.Run("get returns the caller's own", func(t *testing.T) {
		key := ID(ta, []byte("caller's own"))
		mustPut(t, ta, Compressed, key, []byte("test_log\nstructural\nkept"))
		got, err := s.Get(ctx, ta, Compressed, key)
		if err != nil || len(got) == 0 {
			t.Fatalf("Get: %q, %v", got, err)
		}
		for i := range got {
			got[i] = 'x'
		}
		wantValue(t, ta, Compressed, key, []byte("test_log\nstructural\nkept"))
	})

	t.Run("put get", func(t *testing.T) {
		values := []struct {
			name string
			v    []byte
		}{
			{"text", []byte("total 48\ndrwxr-xr-x  2 root root 4096 .\n")},
			{"empty", []byte{}},
			{"nil", nil},
			{"binary", []byte{0, 0xff, '\r', '\n', 0x80, 0}},
			{"8 KB", bytes.Repeat([]byte("0123456789abcdef"), 512)},
			{"1 MB", bytes.Repeat([]byte{'x'}, 1<<20)},
		}
		for _, kind := range []Kind{Original, Compressed} {
			for _, tt := range values {
				key := ID(ta, []byte("put get "+tt.name))
				mustPut(t, ta, kind, key, tt.v)
				want := tt.v
				if want == nil {
					want = []byte{}
				}
				wantValue(t, ta, kind, key, want)
			}
		}
	})

	t.Run("not found", func(t *testing.T) {
		wantNotFound(t, ta, Original, ID(ta, []byte("never stored")))
		wantNotFound(t, ta, Compressed, CacheKey([]byte("never stored"), "local"))
		wantNotFound(t, Anonymous, Original, "sh_00000000000000000000000000000000")
	})

	t.Run("overwrite", func(t *testing.T) {
		key := ID(ta, []byte("overwrite"))
		mustPut(t, ta, Original, key, []byte("first"))
		mustPut(t, ta, Original, key, []byte("second, longer"))
		wantValue(t, ta, Original, key, []byte("second, longer"))
		mustPut(t, ta, Original, key, []byte("3"))
		wantValue(t, ta, Original, key, []byte("3"))
	})

	t.Run("tenant isolation", func(t *testing.T) {
		content := []byte("secret tool output of tenant A")
		id := ID(ta, content)
		mustPut(t, ta, Original, id, content)
		ck := CacheKey(content, "local")
		mustPut(t, ta, Compressed, ck, []byte("compressed A"))
		// B knows the id (e.g. pasted into its own request): still not found.
		wantNotFound(t, tb, Original, id)
		wantNotFound(t, tb, Compressed, ck)
		wantNotFound(t, Anonymous, Original, id)
		// B's own entry under the same key does not disturb A's.
		mustPut(t, tb, Original, id, []byte("B"))
		wantValue(t, tb, Original, id, []byte("B"))
		wantValue(t, ta, Original, id, content)
		// The same content gets different ids per tenant in the first place.
		if ID(tb, content) == id {
			t.Fatal("two tenants share an id")
		}
	})

	t.Run("kinds separate", func(t *testing.T) {
		key := CacheKey([]byte("kinds"), "local")
		mustPut(t, ta, Original, key, []byte("orig"))
		wantNotFound(t, ta, Compressed, key)
		mustPut(t, ta, Compressed, key, []byte("comp"))
		wantValue(t, ta, Original, key, []byte("orig"))
		wantValue(t, ta, Compressed, key, []byte("comp"))
	})

	t.Run("values copied", func(t *testing.T) {
		key := ID(ta, []byte("copied"))
		in := []byte("immutable")
		mustPut(t, ta, Original, key, in)
		copy(in, "XXXXXXXXX")
		wantValue(t, ta, Original, key, []byte("immutable"))
		out, err := s.Get(ctx, ta, Original, key)
		if err != nil {
			t.Fatal(err)
		}
		copy(out, "YYYYYYYYY")
		wantValue(t, ta, Original, key, []byte("immutable"))
	})

	t.Run("invalid arguments", func(t *testing.T) {
		id := ID(ta, []byte("x"))
		tests := []struct {
			name   string
			tenant string
			kind   Kind
			key    string
		}{
			{"empty tenant", "", Original, id},
			{"tenant with colon", ta + ":original", Original, id},
			{"tenant with space", "a b", Original, id},
			{"long tenant", strings.Repeat("a", MaxTenantLen+1), Original, id},
			{"unknown kind", ta, Kind("summary"), id},
			{"empty kind", ta, "", id},
			{"empty key", ta, Original, ""},
			{"long key", ta, Original, strings.Repeat("k", MaxKeyLen+1)},
		}
		for _, tt := range tests {
			if err := s.Put(ctx, tt.tenant, tt.kind, tt.key, []byte("v")); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: Put error = %v, want ErrInvalid", tt.name, err)
			}
			if _, err := s.Get(ctx, tt.tenant, tt.kind, tt.key); !errors.Is(err, ErrInvalid) || errors.Is(err, ErrNotFound) {
				t.Errorf("%s: Get error = %v, want ErrInvalid", tt.name, err)
			}
		}
	})

	if env.ttlOf != nil {
		t.Run("ttl set per kind", func(t *testing.T) {
			key := ID(ta, []byte("ttl"))
			for _, tt := range []struct {
				kind Kind
				ttl  time.Duration
			}{{Original, env.originalTTL}, {Compressed, env.compressedTTL}} {
				mustPut(t, ta, tt.kind, key, []byte("v"))
				got := env.ttlOf(t, ta, tt.kind, key)
				if got > tt.ttl || got < tt.ttl-5*time.Second {
					t.Errorf("%s TTL = %v, want about %v", tt.kind, got, tt.ttl)
				}
			}
		})
	}

	if env.advance != nil {
		t.Run("ttl expiry", func(t *testing.T) {
			if env.compressedTTL <= env.originalTTL {
				t.Fatal("the suite expects compressed entries to outlive originals")
			}
			key := ID(ta, []byte("expiry"))
			mustPut(t, ta, Original, key, []byte("orig"))
			mustPut(t, ta, Compressed, key, []byte("comp"))
			env.advance(env.originalTTL + env.margin)
			wantNotFound(t, ta, Original, key)
			wantValue(t, ta, Compressed, key, []byte("comp"))
			env.advance(env.compressedTTL - env.originalTTL)
			wantNotFound(t, ta, Compressed, key)
			// A new Put after expiry works and starts a fresh TTL.
			mustPut(t, ta, Original, key, []byte("again"))
			wantValue(t, ta, Original, key, []byte("again"))
		})
	}

	if tc, ok := s.(Toucher); ok {
		t.Run("touch", func(t *testing.T) {
			key := ID(ta, []byte("touch"))
			if err := tc.Touch(ctx, ta, Original, key); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Touch of a missing key: %v, want ErrNotFound", err)
			}
			if err := tc.Touch(ctx, "", Original, key); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Touch with no tenant: %v, want ErrInvalid", err)
			}
			mustPut(t, ta, Original, key, []byte("v"))
			if err := tc.Touch(ctx, tb, Original, key); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Touch by another tenant: %v, want ErrNotFound", err)
			}
			if err := tc.Touch(ctx, ta, Compressed, key); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Touch of the other kind: %v, want ErrNotFound", err)
			}
			if err := tc.Touch(ctx, ta, Original, key); err != nil {
				t.Fatal(err)
			}
			wantValue(t, ta, Original, key, []byte("v"))
			if env.advance != nil && env.margin == 0 { // exact clock only
				step := env.originalTTL * 3 / 4
				env.advance(step)
				if err := tc.Touch(ctx, ta, Original, key); err != nil {
					t.Fatal(err)
				}
				env.advance(step) // 1.5 TTL after Put, 0.75 after Touch
				wantValue(t, ta, Original, key, []byte("v"))
				env.advance(step)
				wantNotFound(t, ta, Original, key)
				if err := tc.Touch(ctx, ta, Original, key); !errors.Is(err, ErrNotFound) {
					t.Fatalf("Touch of an expired key: %v, want ErrNotFound", err)
				}
			}
		})
	}

	t.Run("keep", func(t *testing.T) {
		key := ID(ta, []byte("keep"))
		if err := Keep(ctx, s, ta, Original, key, []byte("original")); err != nil {
			t.Fatal(err)
		}
		wantValue(t, ta, Original, key, []byte("original"))
		if err := Keep(ctx, s, ta, Original, key, []byte("original")); err != nil {
			t.Fatal(err)
		}
		wantValue(t, ta, Original, key, []byte("original"))
		wantNotFound(t, tb, Original, key)
	})

	t.Run("concurrent", func(t *testing.T) {
		// Every value is derived from its key, so any torn or crossed read
		// shows up as a mismatch.
		value := func(tenant string, i int) []byte {
			return bytes.Repeat([]byte(fmt.Sprintf("%s/%d;", tenant[:4], i)), 50+i%7)
		}
		const workers, ops, keys = 8, 200, 16
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				tenant := testTenants[w%2]
				for n := range ops {
					i := (n*7 + w) % keys
					key := fmt.Sprintf("concurrent-%d", i)
					kind := []Kind{Original, Compressed}[n%2]
					if n%3 == 0 {
						if err := s.Put(ctx, tenant, kind, key, value(tenant, i)); err != nil {
							errs <- err
							return
						}
						continue
					}
					got, err := s.Get(ctx, tenant, kind, key)
					if errors.Is(err, ErrNotFound) {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					if !bytes.Equal(got, value(tenant, i)) {
						errs <- fmt.Errorf("tenant %s key %s: got %q", tenant[:4], key, trim(got))
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func trim(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + fmt.Sprintf("…(%d bytes)", len(b))
	}
	return string(b)
}

// fakeClock is a settable clock for Memory.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
