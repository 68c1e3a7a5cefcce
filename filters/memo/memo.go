// Package memo remembers values computed from contents that come back on
// every turn of a conversation (an old tool result is carried by every
// later request), so that what is derived from them is not derived again.
//
// An entry is found by two 64-bit maphash sums of what the value depends
// on, under seeds drawn when the memo is made: a caller cannot aim at
// another caller's entry without knowing them, and an accidental collision
// (2^-128) is far below the 128-bit shadow ids toolproc hands out.
// Memory is bounded by two generations: when the current one reaches its
// cost cap it becomes the old one and the old one is dropped, so what a
// conversation keeps using stays while the rest ages out. A memo changes
// no output: it only saves recomputing a pure function.
package memo

import (
	"encoding/binary"
	"hash/maphash"
	"sync"
)

// Key identifies an entry.
type Key [2]uint64

// Memo is safe for concurrent use.
type Memo[V any] struct {
	mu       sync.Mutex
	seeds    [2]maphash.Seed
	cur, old map[Key]V
	used     int
	capacity int
	cost     func(V) int
}

// New returns a memo holding up to capacity units per generation, an
// entry costing cost(v) units (one each when cost is nil).
func New[V any](capacity int, cost func(V) int) *Memo[V] {
	if cost == nil {
		cost = func(V) int { return 1 }
	}
	return &Memo[V]{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, cur: map[Key]V{}, capacity: capacity, cost: cost}
}

// Key hashes what write writes, once under each seed.
func (m *Memo[V]) Key(write func(h *maphash.Hash)) Key {
	var k Key
	for i, seed := range m.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		write(&h)
		k[i] = h.Sum64()
	}
	return k
}

// KeyString is the key of s alone. Each seed hashes s in one pass:
// maphash.Comparable hashes a string as a map does, in a single call over
// all its bytes, where Hash and maphash.String feed it 128 bytes per call
// (hash/maphash's bufSize). For the long tool results this package keys,
// that is the difference between about 6 and 60 GB/s a seed, and keying
// every literal of a new 300 KB body by the slow path was 6 % of its CPU.
func (m *Memo[V]) KeyString(s string) Key {
	return Key{maphash.Comparable(m.seeds[0], s), maphash.Comparable(m.seeds[1], s)}
}

// KeyWith is the key of the short fields write writes, then of s (hashed
// as KeyString hashes it) and its length: for a value that depends on a
// long text and a few parameters.
func (m *Memo[V]) KeyWith(write func(h *maphash.Hash), s string) Key {
	var k Key
	for i, seed := range m.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		write(&h)
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], maphash.Comparable(seed, s))
		binary.LittleEndian.PutUint64(b[8:], uint64(len(s)))
		_, _ = h.Write(b[:])
		k[i] = h.Sum64()
	}
	return k
}

// Get returns the value remembered under k, or computes, remembers and
// returns it.
func (m *Memo[V]) Get(k Key, compute func() V) V {
	m.mu.Lock()
	v, ok := m.cur[k]
	if !ok {
		if v, ok = m.old[k]; ok {
			m.put(k, v)
		}
	}
	m.mu.Unlock()
	if ok {
		return v
	}
	v = compute()
	m.mu.Lock()
	m.put(k, v)
	m.mu.Unlock()
	return v
}

// Has reports whether k is remembered, keeping it for another generation
// when it is.
func (m *Memo[V]) Has(k Key) bool {
	_, ok := m.Lookup(k)
	return ok
}

// Lookup returns the value remembered under k, keeping it for another
// generation; ok is false when there is none.
func (m *Memo[V]) Lookup(k Key) (v V, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok = m.cur[k]; ok {
		return v, true
	}
	if v, ok = m.old[k]; ok {
		m.put(k, v)
	}
	return v, ok
}

// Add remembers v under k.
func (m *Memo[V]) Add(k Key, v V) {
	m.mu.Lock()
	m.put(k, v)
	m.mu.Unlock()
}

// Len is how many entries both generations hold.
func (m *Memo[V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.cur) + len(m.old)
}

func (m *Memo[V]) put(k Key, v V) {
	c := m.cost(v)
	if m.used+c > m.capacity {
		m.old, m.cur, m.used = m.cur, map[Key]V{}, 0
	}
	m.cur[k] = v
	m.used += c
}
