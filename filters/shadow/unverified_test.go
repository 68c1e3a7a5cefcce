package shadow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

// Review round 3, N5 (repro B3): a tenant is whatever credential string a
// client sends, and originals are stored before the provider has checked
// it. Five made-up keys, each writing 8 × 8 MiB, evicted a real tenant's
// original. Unverified tenants now get a small share and go first.
func TestReviewR3ManyFakeTenantsEvictAnother(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(MemoryOptions{TenantMaxBytes: 64 << 20})
	orig := []byte("tenant A's original")
	tA := Tenant(map[string]string{"authorization": "Bearer sk-real-victim-key-000000"}, "")
	idA := ID(tA, orig)
	if err := m.Put(ctx, tA, Original, idA, orig); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 8<<20)
	for k := range 5 {
		tk := Tenant(map[string]string{"authorization": fmt.Sprintf("Bearer made-up-key-%04d", k)}, "")
		for i := range 8 {
			v := append([]byte(fmt.Sprint(k, i)), big...)
			_ = m.Put(ctx, tk, Original, ID(tk, v), v)
		}
	}
	if _, err := m.Get(ctx, tA, Original, idA); err != nil {
		t.Fatalf("victim's original evicted by made-up tenants: %v", err)
	}
	if st := m.Stats(); st.Unverified > DefaultMaxBytes/4 {
		t.Fatalf("unverified tenants hold %d bytes, more than a quarter of the store", st.Unverified)
	}
}

// However many made-up keys write, a verified tenant's entries stay: the
// unverified tenants are evicted first and hold at most their pool.
func TestUnverifiedTenantsNeverEvictVerified(t *testing.T) {
	ctx := context.Background()
	const maxBytes = 64 << 20
	m := NewMemory(MemoryOptions{MaxBytes: maxBytes, TenantMaxBytes: 32 << 20})
	victim := testTenants[0]
	var ids []string
	for i := range 6 { // within the unverified share (8 MiB here)
		v := append([]byte(fmt.Sprint(i)), make([]byte, 1<<20)...)
		id := ID(victim, v)
		ids = append(ids, id)
		if err := m.Put(ctx, victim, Original, id, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Verify(ctx, victim); err != nil { // the provider answered 2xx
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for k := range 200 {
		fake := fmt.Sprintf("fake%04d", k)
		for i := range 20 { // 20 MiB each, over the unverified share
			_ = m.Put(ctx, fake, Original, fmt.Sprint("k", i), chunk)
		}
	}
	for _, id := range ids {
		if _, err := m.Get(ctx, victim, Original, id); err != nil {
			t.Fatalf("verified tenant's original evicted by 200 unverified tenants: %v", err)
		}
	}
	st := m.Stats()
	if st.Unverified > maxBytes/4 || st.Bytes > maxBytes {
		t.Fatalf("stats %+v: unverified pool over a quarter of %d", st, maxBytes)
	}
	t.Logf("200 made-up tenants × 20 MiB: %+v", st)
}

// An unverified tenant's share is small; Verify lifts it to
// TenantMaxBytes and moves its entries to the verified list.
func TestVerifyLiftsShareAndKeepsEntries(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(MemoryOptions{MaxBytes: 64 << 20, TenantMaxBytes: 16 << 20, UnverifiedMaxBytes: 2 << 20})
	tn := testTenants[0]
	if err := m.Put(ctx, tn, Original, "big", make([]byte, 3<<20)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("3 MiB entry of an unverified tenant with a 2 MiB share: %v, want ErrTooLarge", err)
	}
	if err := m.Put(ctx, tn, Original, "small", make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.Unverified != st.Bytes {
		t.Fatalf("entry of an unverified tenant not on the unverified list: %+v", st)
	}
	if err := m.Verify(ctx, tn); err != nil {
		t.Fatal(err)
	}
	if !m.Verified(tn) {
		t.Fatal("not verified after Verify")
	}
	if st := m.Stats(); st.Unverified != 0 {
		t.Fatalf("entries not moved on Verify: %+v", st)
	}
	if err := m.Put(ctx, tn, Original, "big", make([]byte, 3<<20)); err != nil {
		t.Fatalf("verified tenant, 3 MiB entry: %v", err)
	}
	if _, err := m.Get(ctx, tn, Original, "small"); err != nil {
		t.Fatalf("entry stored before Verify: %v", err)
	}
}

// Review finding 17 (repro B3), with the shipped per-tenant quota: one
// verified tenant writing 33 × 8 MiB does not evict another's original.
func TestReviewR3OneTenantEvictsAnother(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(MemoryOptions{TenantMaxBytes: 64 << 20})
	orig := []byte("tenant A's original")
	idA := ID("tenantA", orig)
	_ = m.Put(ctx, "tenantA", Original, idA, orig)
	_ = m.Verify(ctx, "tenantB")
	big := bytes.Repeat([]byte("x"), 8<<20)
	for i := range 33 {
		v := append([]byte(fmt.Sprint(i)), big...)
		_ = m.Put(ctx, "tenantB", Original, ID("tenantB", v), v)
	}
	if _, err := m.Get(ctx, "tenantA", Original, idA); err != nil {
		t.Fatalf("evicted by one tenant: %v", err)
	}
}
