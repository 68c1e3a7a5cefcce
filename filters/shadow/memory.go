package shadow

import (
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
	// MaxBytes caps the sum of len(tenant)+len(kind)+len(key)+len(value)
	// over all entries; the least recently used entries are evicted to stay
	// under it. Default 256 MiB.
	MaxBytes int64
	// TenantMaxBytes caps one tenant's share: a tenant over it evicts its
	// own least recently used entries, never another tenant's (review
	// finding 17: one busy tenant flushed everyone's originals). 0 or more
	// than MaxBytes means MaxBytes (no per-tenant cap); toolproc's config
	// sets store.tenant_max_bytes.
	TenantMaxBytes int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// MemoryStats is a snapshot of a Memory's counters.
type MemoryStats struct {
	Entries     int    // live entries (some may have expired but not been removed yet)
	Bytes       int64  // accounted bytes of those entries
	Evictions   uint64 // entries removed to respect MaxBytes
	Expirations uint64 // entries removed because their TTL passed
}

// Memory is a process-local Store: per-kind TTLs, a byte cap with LRU
// eviction (Put and Get make an entry most recently used), expired entries
// removed lazily on Get and in TTL order on every Put. Values are copied in
// and out. It is safe for concurrent use.
type Memory struct {
	ttl            [2]time.Duration
	maxBytes       int64
	tenantMaxBytes int64
	now            func() time.Time
	tenants        map[string]*tenantLRU

	mu      sync.Mutex
	entries map[memKey]*memEntry
	lru     memEntry    // sentinel; lru.lruNext is the most recently used
	exp     [2]memEntry // sentinels per kind; expNext is the first to expire
	bytes   int64
	closed  bool
	evicted uint64
	expired uint64
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
	head  memEntry // sentinel
	bytes int64
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
	m.tenants = make(map[string]*tenantLRU)
	if m.now == nil {
		m.now = time.Now
	}
	m.lru.lruNext, m.lru.lruPrev = &m.lru, &m.lru
	for i := range m.exp {
		m.exp[i].expNext, m.exp[i].expPrev = &m.exp[i], &m.exp[i]
	}
	return m
}

// Put stores a copy of value. It fails with ErrTooLarge when the entry
// alone exceeds MaxBytes (the previous value of the key, if any, stays).
func (m *Memory) Put(_ context.Context, tenant string, kind Kind, key string, value []byte) error {
	ki, err := checkArgs(tenant, kind, key)
	if err != nil {
		return err
	}
	size := int64(len(tenant) + len(kind) + len(key) + len(value))
	if size > m.tenantMaxBytes {
		return fmt.Errorf("%w: %d bytes, cap %d per tenant", ErrTooLarge, size, m.tenantMaxBytes)
	}
	v := make([]byte, len(value))
	copy(v, value)
	now := m.now()
	k := memKey{tenant, kind, key}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.sweep(now)
	if old := m.entries[k]; old != nil {
		m.remove(old)
	}
	e := &memEntry{k: k}
	m.entries[k] = e
	e.val, e.size, e.expires = v, size, now.Add(m.ttl[ki])
	m.bytes += size
	e.lruInsertAfter(&m.lru)
	e.expInsertAfter(m.exp[ki].expPrev)
	t := m.tenants[tenant]
	if t == nil {
		t = &tenantLRU{}
		t.head.tenNext, t.head.tenPrev = &t.head, &t.head
		m.tenants[tenant] = t
	}
	t.bytes += size
	e.tenInsertAfter(&t.head)
	for t.bytes > m.tenantMaxBytes {
		// The tenant pays for its own growth; the new entry fits alone.
		m.remove(t.head.tenPrev)
		m.evicted++
	}
	for m.bytes > m.maxBytes {
		// The new entry is the most recently used and fits alone, so the
		// loop stops before reaching it.
		m.remove(m.lru.lruPrev)
		m.evicted++
	}
	return nil
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
	e.lruInsertAfter(&m.lru)
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
	e.lruInsertAfter(&m.lru)
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
	m.lru.lruNext, m.lru.lruPrev = &m.lru, &m.lru
	for i := range m.exp {
		m.exp[i].expNext, m.exp[i].expPrev = &m.exp[i], &m.exp[i]
	}
	m.bytes = 0
	return nil
}

// Stats returns the current counters.
func (m *Memory) Stats() MemoryStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return MemoryStats{Entries: len(m.entries), Bytes: m.bytes, Evictions: m.evicted, Expirations: m.expired}
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
