package memo

import (
	"fmt"
	"hash/maphash"
	"testing"
)

func keyOf(m *Memo[string], s string) Key {
	return m.Key(func(h *maphash.Hash) { _, _ = h.WriteString(s) })
}

// TestMemo: a value is computed once and then remembered, different inputs
// get different keys, and the two generations bound what is held.
func TestMemo(t *testing.T) {
	m := New[string](10, nil)
	calls := 0
	get := func(s string) string {
		return m.Get(keyOf(m, s), func() string { calls++; return "v:" + s })
	}
	first, again := get("a"), get("a") // computed, then remembered
	if first != "v:a" || again != "v:a" || calls != 1 {
		t.Fatalf("got %q then %q, computed %d times; want v:a twice, computed once", first, again, calls)
	}
	if keyOf(m, "a") == keyOf(m, "b") {
		t.Fatal("two inputs share a key")
	}
	if other := New[string](10, nil); keyOf(other, "a") == keyOf(m, "a") {
		t.Fatal("two memos share seeds")
	}
	for i := range 100 {
		get(fmt.Sprint(i))
	}
	if n := m.Len(); n > 20 {
		t.Fatalf("holds %d entries past two generations of 10", n)
	}
	calls = 0
	get("99") // in the current generation
	if calls != 0 {
		t.Fatal("a recent entry was dropped")
	}
}
