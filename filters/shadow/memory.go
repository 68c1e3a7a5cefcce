package shadow

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"
)

// MemoryOptions configures NewMemory. Zero or negative values take the
// defaults.
type MemoryOptions struct {
	// OriginalTTL and CompressedTTL are the lifetimes of the two kinds,
	// counted from the last Put (Get does not extend them). Defaults 5 h
	// and 24 h.
	OriginalTTL, CompressedTTL time.Duration
	// MaxBytes caps the bytes the entries hold in memory: their keys, the
	// allocation behind each value (Go rounds it up to a size class) and
	// EntryOverhead per entry for the index; the least recently used
	// entries are evicted to stay under it, unverified tenants' first.
	// Default 256 MiB.
	MaxBytes int64
	// TenantMaxBytes caps one tenant's share: a tenant over it evicts its
	// own least recently used entries, never another tenant's (review
	// finding 17: one busy tenant flushed everyone's originals). 0 or more
	// than MaxBytes means MaxBytes (no per-tenant cap); toolproc's config
	// sets store.tenant_max_bytes.
	TenantMaxBytes int64
	// UnverifiedMaxBytes caps the share of a tenant that has not been
	// verified (see Verify): a tenant is whatever credential string a
	// client sends, and originals are stored before the provider has
	// checked it (review round 3, N5: five made-up keys evicted a real
	// tenant). 0 means min(TenantMaxBytes/4, DefaultUnverifiedMaxBytes).
	// All unverified tenants together keep at most a quarter of MaxBytes,
	// and they are evicted before any verified tenant.
	UnverifiedMaxBytes int64
	// VerifiedTTL is how long a Verify lasts (default OriginalTTL): a
	// tenant whose provider has not answered it with a success for that
	// long is unverified again for its new entries.
	VerifiedTTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// MemoryStats is a snapshot of a Memory's counters.
type MemoryStats struct {
	Entries     int    // live entries (some may have expired but not been removed yet)
	Bytes       int64  // accounted bytes of those entries
	Unverified  int64  // the part of Bytes held by unverified tenants
	Evictions   uint64 // entries removed to respect MaxBytes
	Expirations uint64 // entries removed because their TTL passed
}

// Memory is a process-local Store: per-kind TTLs, a byte cap with LRU
// eviction (Put and Get make an entry most recently used), expired entries
// removed lazily on Get and in TTL order on every Put. Values are copied in
// and out. It is safe for concurrent use.
//
// Entries of unverified tenants sit on their own LRU list, evicted before
// the verified tenants' list is touched; Verify moves a tenant's entries
// over.
type Memory struct {
	ttl                [2]time.Duration
	maxBytes           int64
	tenantMaxBytes     int64
	unverifiedMaxBytes int64
	unverifiedPool     int64
	verifiedTTL        time.Duration
	now                func() time.Time
	tenants            map[string]*tenantLRU

	mu         sync.Mutex
	entries    map[memKey]*memEntry
	lru        [2]memEntry // sentinels: [0] unverified, [1] verified; lruNext is the most recently used
	exp        [2]memEntry // sentinels per kind; expNext is the first to expire
	bytes      int64
	unverified int64 // bytes on lru[0]
	verified   map[string]time.Time
	closed     bool
	evicted    uint64
	expired    uint64
}

type memKey struct {
	tenant string
	kind   Kind
	key    string
}

// memEntry sits on two intrusive lists: the LRU list and its kind's expiry
// list. Because a kind's TTL is fixed, appending on every Put keeps the
// expiry list in expiry order.
type memEntry struct {
	k       memKey
	val     []byte // never mutated once stored; replaced on Put
	size    int64
	expires time.Time

	lruPrev, lruNext *memEntry
	expPrev, expNext *memEntry
	tenPrev, tenNext *memEntry // the tenant's own LRU list
}

// tenantLRU is one tenant's entries, most recently used first, and their
// accounted bytes.
type tenantLRU struct {
	head     memEntry // sentinel
	bytes    int64
	verified bool // its entries are on the verified LRU list
}

// NewMemory returns an empty in-memory store.
func NewMemory(opts MemoryOptions) *Memory {
	m := &Memory{
		ttl:      [2]time.Duration{orDefault(opts.OriginalTTL, DefaultOriginalTTL), orDefault(opts.CompressedTTL, DefaultCompressedTTL)},
		maxBytes: opts.MaxBytes,
		now:      opts.Now,
		entries:  make(map[memKey]*memEntry),
	}
	if m.maxBytes <= 0 {
		m.maxBytes = DefaultMaxBytes
	}
	m.tenantMaxBytes = opts.TenantMaxBytes
	if m.tenantMaxBytes <= 0 || m.tenantMaxBytes > m.maxBytes {
		m.tenantMaxBytes = m.maxBytes
	}
	m.unverifiedMaxBytes = opts.UnverifiedMaxBytes
	if m.unverifiedMaxBytes <= 0 {
		m.unverifiedMaxBytes = min(m.tenantMaxBytes/4, DefaultUnverifiedMaxBytes)
	}
	m.unverifiedMaxBytes = min(m.unverifiedMaxBytes, m.tenantMaxBytes)
	m.unverifiedPool = max(m.maxBytes/4, m.unverifiedMaxBytes)
	m.verifiedTTL = orDefault(opts.VerifiedTTL, m.ttl[0])
	m.tenants = make(map[string]*tenantLRU)
	m.verified = make(map[string]time.Time)
	if m.now == nil {
		m.now = time.Now
	}
	for i := range m.lru {
		m.lru[i].lruNext, m.lru[i].lruPrev = &m.lru[i], &m.lru[i]
	}
	for i := range m.exp {
		m.exp[i].expNext, m.exp[i].expPrev = &m.exp[i], &m.exp[i]
	}
	return m
}

// Put stores a copy of value. It fails with ErrTooLarge when the entry
// alone exceeds its tenant's share (the previous value of the key, if any,
// stays).
func (m *Memory) Put(ctx context.Context, tenant string, kind Kind, key string, value []byte) error {
	return m.Adopt(ctx, tenant, kind, key, bytes.Clone(value))
}

// Adopt implements Adopter: the value is kept as it is.
func (m *Memory) Adopt(_ context.Context, tenant string, kind Kind, key string, v []byte) error {
	ki, err := checkArgs(tenant, kind, key)
	if err != nil {
		return err
	}
	size := entrySize(tenant, kind, key, len(v))
	now := m.now()
	k := memKey{tenant, kind, key}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.sweep(now)
	t := m.tenants[tenant]
	verified := t != nil && t.verified || m.isVerified(tenant, now)
	quota := m.tenantMaxBytes
	if !verified {
		quota = m.unverifiedMaxBytes
	}
	if size > quota {
		return fmt.Errorf("%w: %d bytes, cap %d per tenant (verified=%v)", ErrTooLarge, size, quota, verified)
	}
	if old := m.entries[k]; old != nil {
		m.remove(old)
	}
	t = m.tenants[tenant] // remove may have dropped it
	if t == nil {
		t = &tenantLRU{verified: verified}
		t.head.tenNext, t.head.tenPrev = &t.head, &t.head
		m.tenants[tenant] = t
	}
	e := &memEntry{k: k}
	m.entries[k] = e
	e.val, e.size, e.expires = v, size, now.Add(m.ttl[ki])
	m.bytes += size
	e.lruInsertAfter(m.lruOf(t))
	if !t.verified {
		m.unverified += size
	}
	e.expInsertAfter(m.exp[ki].expPrev)
	t.bytes += size
	e.tenInsertAfter(&t.head)
	for t.bytes > quota {
		// The tenant pays for its own growth; the new entry fits alone.
		m.remove(t.head.tenPrev)
		m.evicted++
	}
	for m.unverified > m.unverifiedPool {
		// Unverified tenants together keep a bounded pool; the new entry
		// fits alone, so the loop stops before reaching it.
		m.remove(m.lru[0].lruPrev)
		m.evicted++
	}
	for m.bytes > m.maxBytes {
		// Unverified tenants' entries go first: a made-up credential must
		// not evict a tenant the provider has accepted.
		victim := m.lru[0].lruPrev
		if victim == &m.lru[0] || victim == e {
			victim = m.lru[1].lruPrev
		}
		m.remove(victim)
		m.evicted++
	}
	return nil
}

// EntryOverhead is what one entry costs the heap besides its key strings
// and value: the entry with its three list links, its index map slot and
// the string headers (measured on amd64, rounded up).
const EntryOverhead = 256

// entrySize is the bytes an entry is accounted for. The Go allocator
// gives a value above 32 KiB whole 8 KiB pages (runtime/sizeclasses.go):
// up to 8 KiB more than asked, a quarter of a 30 KB result, so the cap
// counts the pages. Smaller values waste at most one size class step,
// which EntryOverhead covers.
func entrySize(tenant string, kind Kind, key string, n int) int64 {
	if n > 32<<10 {
		n = (n + 8<<10 - 1) &^ (8<<10 - 1)
	}
	return int64(len(tenant)+len(kind)+len(key)+n) + EntryOverhead
}

// DefaultUnverifiedMaxBytes caps an unverified tenant's share unless
// MemoryOptions.UnverifiedMaxBytes says otherwise.
const DefaultUnverifiedMaxBytes = 16 << 20

// maxVerified bounds the verified-tenant set; past it, expired
// verifications are dropped, then arbitrary ones (they only lose their
// larger share until their next success).
const maxVerified = 1 << 16

// Verify records that the provider accepted a request of tenant (a 2xx
// answer): its entries move to the verified list and its share becomes
// TenantMaxBytes, for VerifiedTTL.
func (m *Memory) Verify(_ context.Context, tenant string) error {
	if _, err := checkArgs(tenant, Original, "-"); err != nil {
		return err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if _, ok := m.verified[tenant]; !ok && len(m.verified) >= maxVerified {
		for t, until := range m.verified {
			if !now.Before(until) {
				delete(m.verified, t)
			}
		}
		for t := range m.verified {
			if len(m.verified) < maxVerified {
				break
			}
			delete(m.verified, t)
		}
	}
	m.verified[tenant] = now.Add(m.verifiedTTL)
	t := m.tenants[tenant]
	if t == nil || t.verified {
		return nil
	}
	t.verified = true
	for e := t.head.tenPrev; e != &t.head; e = e.tenPrev {
		// Oldest first, each to the front: the tenant's order is kept.
		e.lruUnlink()
		e.lruInsertAfter(&m.lru[1])
		m.unverified -= e.size
	}
	return nil
}

// Verified reports whether tenant has been verified within VerifiedTTL.
func (m *Memory) Verified(tenant string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.isVerified(tenant, m.now())
}

func (m *Memory) isVerified(tenant string, now time.Time) bool {
	until, ok := m.verified[tenant]
	return ok && now.Before(until)
}

// lruOf is the LRU list a tenant's entries sit on.
func (m *Memory) lruOf(t *tenantLRU) *memEntry {
	if t != nil && t.verified {
		return &m.lru[1]
	}
	return &m.lru[0]
}

// Get returns a copy of the value, or ErrNotFound.
func (m *Memory) Get(_ context.Context, tenant string, kind Kind, key string) ([]byte, error) {
	if _, err := checkArgs(tenant, kind, key); err != nil {
		return nil, err
	}
	now := m.now()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	e := m.entries[memKey{tenant, kind, key}]
	if e == nil {
		m.mu.Unlock()
		return nil, ErrNotFound
	}
	if !now.Before(e.expires) {
		m.remove(e)
		m.expired++
		m.mu.Unlock()
		return nil, ErrNotFound
	}
	e.lruUnlink()
	e.lruInsertAfter(m.lruOf(m.tenants[tenant]))
	e.touchTenant(m.tenants[tenant])
	v := e.val
	m.mu.Unlock()
	// Stored slices are never written to, so the copy can run unlocked.
	out := make([]byte, len(v))
	copy(out, v)
	return out, nil
}

// Touch restarts the TTL of an entry and makes it the most recently used,
// or returns ErrNotFound.
func (m *Memory) Touch(_ context.Context, tenant string, kind Kind, key string) error {
	ki, err := checkArgs(tenant, kind, key)
	if err != nil {
		return err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	e := m.entries[memKey{tenant, kind, key}]
	if e == nil {
		return ErrNotFound
	}
	if !now.Before(e.expires) {
		m.remove(e)
		m.expired++
		return ErrNotFound
	}
	e.expires = now.Add(m.ttl[ki])
	e.lruUnlink()
	e.lruInsertAfter(m.lruOf(m.tenants[tenant]))
	e.touchTenant(m.tenants[tenant])
	e.expUnlink()
	e.expInsertAfter(m.exp[ki].expPrev)
	return nil
}

// Close drops every entry; later calls return ErrClosed. It is idempotent.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.entries = nil
	m.tenants = nil
	m.verified = nil
	for i := range m.lru {
		m.lru[i].lruNext, m.lru[i].lruPrev = &m.lru[i], &m.lru[i]
	}
	for i := range m.exp {
		m.exp[i].expNext, m.exp[i].expPrev = &m.exp[i], &m.exp[i]
	}
	m.bytes, m.unverified = 0, 0
	return nil
}

// Stats returns the current counters.
func (m *Memory) Stats() MemoryStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return MemoryStats{Entries: len(m.entries), Bytes: m.bytes, Unverified: m.unverified, Evictions: m.evicted, Expirations: m.expired}
}

// sweep removes the expired entries at the head of each expiry list.
func (m *Memory) sweep(now time.Time) {
	for i := range m.exp {
		head := &m.exp[i]
		for e := head.expNext; e != head && !now.Before(e.expires); e = head.expNext {
			m.remove(e)
			m.expired++
		}
	}
}

func (m *Memory) remove(e *memEntry) {
	e.lruUnlink()
	e.expUnlink()
	if t := m.tenants[e.k.tenant]; t != nil {
		if !t.verified {
			m.unverified -= e.size
		}
		e.tenPrev.tenNext, e.tenNext.tenPrev = e.tenNext, e.tenPrev
		e.tenPrev, e.tenNext = nil, nil
		t.bytes -= e.size
		if t.head.tenNext == &t.head {
			delete(m.tenants, e.k.tenant)
		}
	}
	delete(m.entries, e.k)
	m.bytes -= e.size
	e.val = nil
}

func (e *memEntry) tenInsertAfter(at *memEntry) {
	e.tenPrev, e.tenNext = at, at.tenNext
	at.tenNext.tenPrev = e
	at.tenNext = e
}

// touchTenant makes e its tenant's most recently used entry.
func (e *memEntry) touchTenant(t *tenantLRU) {
	if t == nil || e.tenPrev == nil {
		return
	}
	e.tenPrev.tenNext, e.tenNext.tenPrev = e.tenNext, e.tenPrev
	e.tenInsertAfter(&t.head)
}

func (e *memEntry) lruUnlink() {
	e.lruPrev.lruNext, e.lruNext.lruPrev = e.lruNext, e.lruPrev
	e.lruPrev, e.lruNext = nil, nil
}

func (e *memEntry) lruInsertAfter(at *memEntry) {
	e.lruPrev, e.lruNext = at, at.lruNext
	at.lruNext.lruPrev = e
	at.lruNext = e
}

func (e *memEntry) expUnlink() {
	e.expPrev.expNext, e.expNext.expPrev = e.expNext, e.expPrev
	e.expPrev, e.expNext = nil, nil
}

func (e *memEntry) expInsertAfter(at *memEntry) {
	e.expPrev, e.expNext = at, at.expNext
	at.expNext.expPrev = e
	at.expNext = e
}
