package shadow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestMemoryStore(t *testing.T) {
	clk := newFakeClock()
	m := NewMemory(MemoryOptions{Now: clk.Now})
	defer m.Close()
	testStore(t, m, storeEnv{
		originalTTL:   DefaultOriginalTTL,
		compressedTTL: DefaultCompressedTTL,
		advance:       clk.Advance,
	})
	if st := m.Stats(); st.Bytes > DefaultMaxBytes || st.Expirations == 0 {
		t.Fatalf("stats after suite: %+v", st)
	}
}

func TestMemoryStoreRealClock(t *testing.T) {
	m := NewMemory(MemoryOptions{MaxBytes: 8 << 20})
	defer m.Close()
	testStore(t, m, storeEnv{})
}

// Each entry in the LRU tests is exactly 400 accounted bytes:
// tenant "t" (1) + "original" (8) + key "kN" (2) + value (133) +
// EntryOverhead (256).
const lruEntry = 400

func TestMemoryLRU(t *testing.T) {
	type op struct {
		get  bool
		key  string
		size int // accounted size for puts; 0 means lruEntry
	}
	put := func(key string) op { return op{key: key} }
	putN := func(key string, size int) op { return op{key: key, size: size} }
	get := func(key string) op { return op{get: true, key: key} }
	tests := []struct {
		name      string
		maxBytes  int64
		ops       []op
		present   []string
		evictions uint64
	}{
		{"under cap keeps all", 1200, []op{put("k1"), put("k2"), put("k3")}, []string{"k1", "k2", "k3"}, 0},
		{"overflow evicts least recently put", 1200, []op{put("k1"), put("k2"), put("k3"), put("k4")}, []string{"k2", "k3", "k4"}, 1},
		{"get refreshes", 1200, []op{put("k1"), put("k2"), put("k3"), get("k1"), put("k4")}, []string{"k1", "k3", "k4"}, 1},
		{"missed get changes nothing", 1200, []op{put("k1"), put("k2"), put("k3"), get("k9"), put("k4")}, []string{"k2", "k3", "k4"}, 1},
		{"put refreshes", 1200, []op{put("k1"), put("k2"), put("k3"), put("k1"), put("k4")}, []string{"k1", "k3", "k4"}, 1},
		{"big entry evicts several", 1200, []op{put("k1"), put("k2"), put("k3"), putN("k4", 1000)}, []string{"k4"}, 3},
		{"entry exactly the cap", 1200, []op{put("k1"), putN("k2", 1200)}, []string{"k2"}, 1},
		{"too large rejected, others kept", 1200, []op{put("k1"), putN("k2", 1201)}, []string{"k1"}, 0},
		{"growing overwrite evicts others", 1200, []op{put("k1"), put("k2"), put("k3"), get("k1"), putN("k1", 800)}, []string{"k1", "k3"}, 1},
		{"shrinking overwrite frees room", 1200, []op{put("k1"), putN("k2", 800), putN("k2", 400), put("k3")}, []string{"k1", "k2", "k3"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m := NewMemory(MemoryOptions{MaxBytes: tt.maxBytes, UnverifiedMaxBytes: tt.maxBytes})
			defer m.Close()
			_ = m.Verify(ctx, "t")
			sizes := map[string]int{}
			for _, o := range tt.ops {
				if o.get {
					_, _ = m.Get(ctx, "t", Original, o.key)
					continue
				}
				size := o.size
				if size == 0 {
					size = lruEntry
				}
				err := m.Put(ctx, "t", Original, o.key, bytes.Repeat([]byte{'v'}, size-11-EntryOverhead))
				if int64(size) > tt.maxBytes {
					if !errors.Is(err, ErrTooLarge) {
						t.Fatalf("Put of %d bytes: %v, want ErrTooLarge", size, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				sizes[o.key] = size
				if st := m.Stats(); st.Bytes > tt.maxBytes {
					t.Fatalf("after put %s: %d bytes > cap %d", o.key, st.Bytes, tt.maxBytes)
				}
			}
			st := m.Stats()
			var present []string
			var want int64
			for _, k := range []string{"k1", "k2", "k3", "k4", "k9"} {
				if _, err := m.Get(ctx, "t", Original, k); err == nil {
					present = append(present, k)
					want += int64(sizes[k])
				}
			}
			if !slices.Equal(present, tt.present) {
				t.Fatalf("present = %v, want %v", present, tt.present)
			}
			if st.Bytes != want || st.Entries != len(tt.present) || st.Evictions != tt.evictions {
				t.Fatalf("stats = %+v, want bytes %d entries %d evictions %d", st, want, len(tt.present), tt.evictions)
			}
		})
	}
}

func TestMemoryByteCapAcrossTenantsAndKinds(t *testing.T) {
	ctx := context.Background()
	const maxBytes = 64 << 10
	m := NewMemory(MemoryOptions{MaxBytes: maxBytes})
	defer m.Close()
	for _, tn := range testTenants[:2] {
		_ = m.Verify(ctx, tn)
	}
	v := bytes.Repeat([]byte{'x'}, 1000)
	for i := range 500 {
		tenant := testTenants[i%2]
		kind := []Kind{Original, Compressed}[i/2%2]
		if err := m.Put(ctx, tenant, kind, fmt.Sprintf("key-%d", i), v); err != nil {
			t.Fatal(err)
		}
		if st := m.Stats(); st.Bytes > maxBytes {
			t.Fatalf("after %d puts: %d bytes > cap", i+1, st.Bytes)
		}
	}
	st := m.Stats()
	if st.Evictions == 0 || st.Entries == 0 || st.Bytes < maxBytes-2000 {
		t.Fatalf("stats = %+v", st)
	}
	// The newest entries survived, the oldest did not.
	if _, err := m.Get(ctx, testTenants[1], Compressed, "key-499"); err != nil {
		t.Fatalf("newest entry: %v", err)
	}
	if _, err := m.Get(ctx, testTenants[0], Original, "key-0"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("oldest entry: %v, want ErrNotFound", err)
	}
}

func TestMemoryTTL(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		opts    MemoryOptions
		kind    Kind
		ttl     time.Duration
		refresh time.Duration // re-Put after this long (0: no refresh)
	}{
		{"default original 5h", MemoryOptions{}, Original, 5 * time.Hour, 0},
		{"default compressed 24h", MemoryOptions{}, Compressed, 24 * time.Hour, 0},
		{"configured original", MemoryOptions{OriginalTTL: time.Minute}, Original, time.Minute, 0},
		{"configured compressed", MemoryOptions{CompressedTTL: 2 * time.Minute}, Compressed, 2 * time.Minute, 0},
		{"negative means default", MemoryOptions{OriginalTTL: -1}, Original, 5 * time.Hour, 0},
		{"put restarts ttl", MemoryOptions{OriginalTTL: time.Hour}, Original, time.Hour, 40 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			tt.opts.Now = clk.Now
			m := NewMemory(tt.opts)
			defer m.Close()
			if err := m.Put(ctx, "t", tt.kind, "k", []byte("v")); err != nil {
				t.Fatal(err)
			}
			if tt.refresh > 0 {
				clk.Advance(tt.refresh)
				if err := m.Put(ctx, "t", tt.kind, "k", []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			// Gets do not extend the TTL.
			for _, step := range []time.Duration{tt.ttl / 2, tt.ttl/2 - time.Nanosecond} {
				clk.Advance(step)
				if _, err := m.Get(ctx, "t", tt.kind, "k"); err != nil {
					t.Fatalf("before the TTL: %v", err)
				}
			}
			clk.Advance(time.Nanosecond)
			if _, err := m.Get(ctx, "t", tt.kind, "k"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("at the TTL: %v, want ErrNotFound", err)
			}
			if st := m.Stats(); st.Entries != 0 || st.Bytes != 0 || st.Expirations != 1 {
				t.Fatalf("stats = %+v", st)
			}
		})
	}
}

func TestMemoryPutSweepsExpired(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	m := NewMemory(MemoryOptions{Now: clk.Now, OriginalTTL: time.Hour, CompressedTTL: 2 * time.Hour})
	defer m.Close()
	for i := range 10 {
		_ = m.Put(ctx, "t", Original, fmt.Sprint("o", i), []byte("v"))
		_ = m.Put(ctx, "t", Compressed, fmt.Sprint("c", i), []byte("v"))
		clk.Advance(time.Minute)
	}
	// Now at minute 61: o0 and o1 (put at minutes 0 and 1) have expired.
	clk.Advance(51 * time.Minute)
	_ = m.Put(ctx, "u", Original, "new", []byte("v"))
	if st := m.Stats(); st.Entries != 19 || st.Expirations != 2 {
		t.Fatalf("after first sweep: %+v, want 19 entries, 2 expirations", st)
	}
	// Minute 91: o2..o9 have expired too; u/new (minute 61) and every
	// compressed entry (2 h) have not.
	clk.Advance(30 * time.Minute)
	_ = m.Put(ctx, "u", Compressed, "new", []byte("v"))
	if st := m.Stats(); st.Entries != 12 || st.Expirations != 10 {
		t.Fatalf("after second sweep: %+v, want 12 entries, 10 expirations", st)
	}
}

func TestMemoryClose(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(MemoryOptions{})
	if err := m.Put(ctx, "t", Original, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Put(ctx, "t", Original, "k", []byte("v")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close: %v", err)
	}
	if _, err := m.Get(ctx, "t", Original, "k"); !errors.Is(err, ErrClosed) || errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Close: %v", err)
	}
	if st := m.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("stats after Close: %+v", st)
	}
}

func TestMemoryConcurrentEviction(t *testing.T) {
	// Small cap so eviction, expiry sweeps and Gets race each other.
	ctx := context.Background()
	clk := newFakeClock()
	m := NewMemory(MemoryOptions{MaxBytes: 4 << 10, OriginalTTL: time.Second, CompressedTTL: 2 * time.Second, Now: clk.Now})
	defer m.Close()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				key := fmt.Sprint("k", (i*13+w)%64)
				want := bytes.Repeat([]byte(key), 20)
				switch i % 4 {
				case 0:
					if err := m.Put(ctx, "t", Original, key, want); err != nil {
						t.Error(err)
						return
					}
				case 1:
					clk.Advance(10 * time.Millisecond)
				default:
					got, err := m.Get(ctx, "t", Original, key)
					if err == nil && !bytes.Equal(got, want) {
						t.Errorf("key %s: got %q", key, trim(got))
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if st := m.Stats(); st.Bytes > 4<<10 {
		t.Fatalf("stats = %+v", st)
	}
}

// countingStore counts Puts and can hide or break Touch.
type countingStore struct {
	Store
	puts     int
	touchErr error // returned by Touch when set
}

func (c *countingStore) Put(ctx context.Context, tenant string, kind Kind, key string, value []byte) error {
	c.puts++
	return c.Store.Put(ctx, tenant, kind, key, value)
}

type touchingStore struct{ *countingStore }

func (t touchingStore) Touch(ctx context.Context, tenant string, kind Kind, key string) error {
	if t.touchErr != nil {
		return t.touchErr
	}
	return t.Store.(Toucher).Touch(ctx, tenant, kind, key)
}

func TestKeep(t *testing.T) {
	ctx := context.Background()
	down := errors.New("store down")
	tests := []struct {
		name     string
		toucher  bool
		touchErr error
		preload  bool
		wantPuts int
		wantErr  error
	}{
		{"toucher, missing: put", true, nil, false, 1, nil},
		{"toucher, present: touch only", true, nil, true, 0, nil},
		{"no toucher, present: put", false, nil, true, 1, nil},
		{"no toucher, missing: put", false, nil, false, 1, nil},
		{"touch fails: no put", true, down, true, 0, down},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			m := NewMemory(MemoryOptions{Now: clk.Now, OriginalTTL: time.Hour})
			if tt.preload {
				_ = m.Put(ctx, "t", Original, "k", []byte("v"))
			}
			cs := &countingStore{Store: m, touchErr: tt.touchErr}
			var s Store = cs
			if tt.toucher {
				s = touchingStore{cs}
			}
			clk.Advance(50 * time.Minute)
			err := Keep(ctx, s, "t", Original, "k", []byte("v"))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Keep = %v, want %v", err, tt.wantErr)
			}
			if cs.puts != tt.wantPuts {
				t.Fatalf("puts = %d, want %d", cs.puts, tt.wantPuts)
			}
			if err == nil {
				clk.Advance(50 * time.Minute) // 100 min after preload, 50 after Keep
				if got, err := m.Get(ctx, "t", Original, "k"); err != nil || string(got) != "v" {
					t.Fatalf("after Keep: %q, %v", got, err)
				}
			}
		})
	}
}

// Review finding 17: after tenant B wrote far more than its share, tenant
// A's original from moments earlier was gone (one global LRU). A tenant
// over its cap now evicts its own oldest entries only.
func TestMemoryTenantQuota(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(MemoryOptions{MaxBytes: 64 << 20, TenantMaxBytes: 16 << 20})
	a, b := testTenants[0], testTenants[1]
	_, _ = m.Verify(ctx, a), m.Verify(ctx, b)
	idA := ID(a, []byte("a's secret original"))
	if err := m.Put(ctx, a, Original, idA, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 8<<20)
	for i := range 33 { // 264 MiB from tenant b
		if err := m.Put(ctx, b, Original, ID(b, []byte{byte(i)}), big); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Get(ctx, a, Original, idA); err != nil {
		t.Fatalf("tenant a's original evicted by tenant b: %v", err)
	}
	if st := m.Stats(); st.Bytes > 16<<20+1<<20+1024 {
		t.Fatalf("%d bytes held", st.Bytes)
	}
	// b keeps its newest entries.
	if _, err := m.Get(ctx, b, Original, ID(b, []byte{32})); err != nil {
		t.Fatalf("tenant b's newest entry: %v", err)
	}
	if err := m.Put(ctx, b, Original, "k", make([]byte, 17<<20)); !errors.Is(err, ErrTooLarge) {
		t.Fatal("an entry over the tenant cap must be refused")
	}
}

// TestPutOwned: a value handed over (PutOwned with owned, through the
// breaker too) is kept as it is, with no copy; any other value is copied,
// so a caller that changes its buffer afterwards changes nothing stored.
// The test writes to a handed-over buffer only to see which one the store
// kept: callers never do.
func TestPutOwned(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(MemoryOptions{})
	defer m.Close()
	tests := []struct {
		name     string
		store    Store
		owned    bool
		wantKept bool // the store kept the caller's buffer
	}{
		{"memory, owned", m, true, true},
		{"memory, not owned", m, false, false},
		{"breaker, owned", NewBreaker(m, 0), true, true},
		{"breaker, not owned", NewBreaker(m, 0), false, false},
		{"store without Adopt, owned", &countingStore{Store: m}, true, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprint("k", i)
			v := bytes.Repeat([]byte("x"), 4096)
			if err := PutOwned(ctx, tt.store, "t", Original, key, v, tt.owned); err != nil {
				t.Fatal(err)
			}
			v[0] = 'y'
			got, err := m.Get(ctx, "t", Original, key)
			if err != nil {
				t.Fatal(err)
			}
			if kept := got[0] == 'y'; kept != tt.wantKept {
				t.Fatalf("store kept the caller's buffer: %v, want %v", kept, tt.wantKept)
			}
			got[1] = 'z' // Get's value is the caller's own either way
			if again, _ := m.Get(ctx, "t", Original, key); again[1] != 'x' {
				t.Fatal("changing Get's value changed the store")
			}
		})
	}
}
