package shadow

import (
	"context"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/compress"
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

// getCounter counts the store's Gets of compressed results.
type getCounter struct {
	*Memory
	gets int
}

func (g *getCounter) Get(ctx context.Context, tenant string, kind Kind, key string) ([]byte, error) {
	if kind == Compressed {
		g.gets++
	}
	return g.Memory.Get(ctx, tenant, kind, key)
}

// TestFinishedEditRemembered: a result given a reference before in this
// process gets the same edit again without the store's compressed copy,
// still has its original touched (put back when the store lost it), and
// is never another tenant's edit.
func TestFinishedEditRemembered(t *testing.T) {
	orig := testLog(3000) + "\tunique to TestFinishedEditRemembered\n"
	body := wiretest.Request(wire.OpenAIChat, orig)
	store := &getCounter{Memory: NewMemory(MemoryOptions{})}
	first := run(t, NewCompressFilter(defaultOpts(), Env{Store: store, Tenant: "t1"}), wire.OpenAIChat, body)

	// Another store, empty: the edit is remembered, the original put back.
	cold := &getCounter{Memory: NewMemory(MemoryOptions{})}
	f := NewCompressFilter(defaultOpts(), Env{Store: cold, Tenant: "t1"})
	if again := run(t, f, wire.OpenAIChat, body); string(again) != string(first) {
		t.Fatal("the remembered edit differs")
	}
	if cold.gets != 0 || f.Stats.CacheHits != 1 || f.Stats.References != 1 {
		t.Fatalf("compressed gets %d, stats %+v", cold.gets, f.Stats)
	}
	if v, err := cold.Get(t.Context(), "t1", Original, ID("t1", []byte(orig))); err != nil || string(v) != orig {
		t.Fatalf("original not put back: %v", err)
	}

	// Another tenant: its own reference, from its own store.
	g := NewCompressFilter(defaultOpts(), Env{Store: cold, Tenant: "t2"})
	other := run(t, g, wire.OpenAIChat, body)
	if string(other) == string(first) || !strings.Contains(string(other), ID("t2", []byte(orig))) || cold.gets != 1 {
		t.Fatalf("tenant t2 got t1's edit, or none of its own (compressed gets %d)", cold.gets)
	}
}

// modelStrategy stands for a model's summary (compress.LLM): a
// ContextCompressor whose answers may differ from one call to the next.
type modelStrategy struct{ compress.Strategy }

func (modelStrategy) CompressContext(context.Context, string, compress.Hint) (string, compress.Report, error) {
	return "", compress.Report{}, nil
}

// TestModelSummariesNotRemembered: only deterministic strategies' edits
// are kept in the process; a model's are the store's to share.
func TestModelSummariesNotRemembered(t *testing.T) {
	opts := defaultOpts()
	if !NewCompressFilter(opts, Env{}).memoizable() {
		t.Fatal("the structural strategy's edits are not remembered")
	}
	opts.Fallback = modelStrategy{opts.Strategy}
	if NewCompressFilter(opts, Env{}).memoizable() {
		t.Fatal("a model's summaries are remembered in the process")
	}
}
