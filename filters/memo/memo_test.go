package memo

import (
	"fmt"
	"hash/maphash"
	"strings"
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

// TestKeyStringAndKeyWith: the one-pass keys are stable for the same
// input and differ when the text, a field, or where a field ends differs.
func TestKeyStringAndKeyWith(t *testing.T) {
	m := New[string](10, nil)
	long := strings.Repeat("tool output line\n", 1000)
	if m.KeyString(long) != m.KeyString(strings.Clone(long)) {
		t.Fatal("the same text got two keys")
	}
	if m.KeyString(long) == m.KeyString(long+"x") || m.KeyString("") == m.KeyString("a") {
		t.Fatal("two texts share a key")
	}
	with := func(field, text string) Key {
		return m.KeyWith(func(h *maphash.Hash) { _, _ = h.WriteString(field); _ = h.WriteByte(0) }, text)
	}
	keys := map[Key]string{}
	for _, c := range [][2]string{{"a", long}, {"b", long}, {"a", long + "x"}, {"a", ""}, {"", "a"}, {"ab", ""}} {
		k := with(c[0], c[1])
		if prev, ok := keys[k]; ok {
			t.Fatalf("%q and %q share a key", prev, c)
		}
		keys[k] = fmt.Sprint(c)
		if with(c[0], strings.Clone(c[1])) != k {
			t.Fatalf("%q got two keys", c)
		}
	}
	if other := New[string](10, nil); other.KeyString(long) == m.KeyString(long) {
		t.Fatal("two memos share seeds")
	}
}

// TestHasAndAdd: Add remembers, Has finds without computing, and an entry
// Has finds in the old generation is carried into the current one.
func TestHasAndAdd(t *testing.T) {
	m := New[struct{}](4, nil)
	k := m.KeyString("a literal")
	if m.Has(k) {
		t.Fatal("found before it was added")
	}
	m.Add(k, struct{}{})
	for i := range 4 { // fills the generation: k is in the old one now
		m.Add(m.KeyString(fmt.Sprint(i)), struct{}{})
	}
	if !m.Has(k) {
		t.Fatal("an entry of the old generation was not found")
	}
	for i := range 8 { // two more generations: kept only if Has carried it over
		if i == 4 && !m.Has(k) {
			t.Fatal("the entry Has found was dropped with its generation")
		}
		m.Add(m.KeyString(fmt.Sprint("x", i)), struct{}{})
	}
}
