package shadow

import (
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// decoded reports whether t's text was decoded: until then MaxLen is the
// literal's length less its quotes, which a literal with escapes is
// longer than its text.
func decoded(t *wire.TextBlock) bool { return t.MaxLen() != len(t.Raw)-2 }

// TestFactsOfReadsALiteralOnce: a literal seen before gives its text's
// facts without being decoded, and they are the decoded text's.
func TestFactsOfReadsALiteralOnce(t *testing.T) {
	text := testLog(400) + "\tunique to TestFactsOfReadsALiteralOnce\n"
	body := wiretest.Request(wire.OpenAIChat, text)
	first := parseBlock(t, body)
	got := FactsOf(first)
	if want := factsOfString(text); got != want {
		t.Fatalf("facts %+v, want %+v", got, want)
	}
	again := parseBlock(t, body)
	if got2 := FactsOf(again); got2 != got {
		t.Fatalf("second reading %+v, want %+v", got2, got)
	}
	if decoded(again) {
		t.Fatal("a literal seen before was decoded again")
	}
	if !strings.HasPrefix(Reference("x", 1, "expand_context"), refPrefix) || got.RefLike {
		t.Fatal("RefLike wrong")
	}
}

// TestCachedResultIsNotDecoded: on the next turn a compressed result is
// found in the cache by its literal, and its text is never decoded.
func TestCachedResultIsNotDecoded(t *testing.T) {
	store := NewMemory(MemoryOptions{})
	orig := testLog(3000) + "\tunique to TestCachedResultIsNotDecoded\n"
	body := wiretest.Request(wire.OpenAIChat, orig)
	first := run(t, NewCompressFilter(defaultOpts(), Env{Store: store, Tenant: "t1"}), wire.OpenAIChat, body)

	f := NewCompressFilter(defaultOpts(), Env{Store: store, Tenant: "t1"})
	c, err := wire.Parse(wire.OpenAIChat, body)
	if err != nil {
		t.Fatal(err)
	}
	edits, _ := f.Rewrite(c)
	if len(edits) != 1 || f.Stats.CacheHits != 1 {
		t.Fatalf("edits %d, stats %+v", len(edits), f.Stats)
	}
	if decoded(&c.Results[0].Texts[0]) {
		t.Fatal("a cached result was decoded")
	}
	out, err := wire.Apply(body, edits)
	if err != nil || string(out) != string(first) {
		t.Fatalf("second turn differs: %v", err)
	}

	// With the original gone from the store, the hit puts it back: then
	// the text is read, and it is the original.
	cold := NewMemory(MemoryOptions{})
	ctx := t.Context()
	key := cacheKey(fingerprint([]byte(orig)), f.strategyDesc()+"|"+hintKey(f.hintOf(&c.Results[0])))
	cached, err := store.Get(ctx, "t1", Compressed, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := cold.Put(ctx, "t1", Compressed, key, cached); err != nil {
		t.Fatal(err)
	}
	g := NewCompressFilter(defaultOpts(), Env{Store: cold, Tenant: "t1"})
	c2, _ := wire.Parse(wire.OpenAIChat, body)
	if edits, _ := g.Rewrite(c2); len(edits) != 1 || g.Stats.CacheHits != 1 {
		t.Fatalf("cold original: edits %d, stats %+v", len(edits), g.Stats)
	}
	if v, err := cold.Get(ctx, "t1", Original, ID("t1", []byte(orig))); err != nil || string(v) != orig {
		t.Fatalf("original not put back: %v", err)
	}
}

func parseBlock(t *testing.T, body []byte) *wire.TextBlock {
	t.Helper()
	c, err := wire.Parse(wire.OpenAIChat, body)
	if err != nil || len(c.Results) != 1 || len(c.Results[0].Texts) != 1 {
		t.Fatalf("parse: %v", err)
	}
	return &c.Results[0].Texts[0]
}
