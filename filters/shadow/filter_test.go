package shadow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// testLog is a long passing run with one failure: structural compression
// keeps the failure and the summary and drops most passing lines.
func testLog(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "tests/test_mod.py::test_case_%05d PASSED [%d%%]\n", i, i*100/n)
	}
	b.WriteString("tests/test_api.py::test_login FAILED\nE   assert 401 == 200\ntests/test_api.py:42: AssertionError\n")
	b.WriteString("===== 1 failed, " + fmt.Sprint(n) + " passed in 3.21s =====\n")
	return b.String()
}

func defaultOpts() CompressOptions {
	return CompressOptions{
		Strategy: compress.Structural(compress.StructuralOptions{}),
		MinBytes: 4096,
		Clamp:    clamp.Limits{MaxBytes: 51200, MaxLines: 2000},
	}
}

func run(t *testing.T, f *CompressFilter, d wire.Dialect, body []byte) []byte {
	t.Helper()
	out, _, err := pipeline.New(f).Run(d, body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompressFilterReferencesAndStores(t *testing.T) {
	store := NewMemory(MemoryOptions{})
	orig := testLog(3000)
	body := wiretest.Request(wire.OpenAIChat, orig, "small result")
	f := NewCompressFilter(defaultOpts(), Env{Store: store, Tenant: "t1"})
	out := run(t, f, wire.OpenAIChat, body)
	c, err := wire.Parse(wire.OpenAIChat, out)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Results[0].Texts[0].Text()
	id, n, rest, ok := ParseReference(got)
	if !ok || n != len(orig) || id != ID("t1", []byte(orig)) {
		t.Fatalf("no reference for the original: %q", got[:min(200, len(got))])
	}
	if !strings.Contains(rest, "test_login FAILED") || len(got) >= len(orig) {
		t.Fatal("compressed text lost the failure or is not smaller")
	}
	if c.Results[1].Texts[0].Text() != "small result" {
		t.Fatal("small result changed")
	}
	v, err := store.Get(context.Background(), "t1", Original, id)
	if err != nil || string(v) != orig {
		t.Fatalf("original not stored: %v", err)
	}
	if _, err := store.Get(context.Background(), "t2", Original, id); !errors.Is(err, ErrNotFound) {
		t.Fatal("another tenant can read the original")
	}
	if f.Stats.References != 1 || f.Stats.CacheMisses != 1 {
		t.Fatalf("stats %+v", f.Stats)
	}
	if err := wiretest.CheckPairing(wire.OpenAIChat, out); err != nil {
		t.Fatal(err)
	}

	// The next turn: a cache hit gives the same bytes.
	f2 := NewCompressFilter(defaultOpts(), Env{Store: store, Tenant: "t1"})
	if out2 := run(t, f2, wire.OpenAIChat, body); string(out2) != string(out) {
		t.Fatal("second turn differs")
	}
	if f2.Stats.CacheHits != 1 {
		t.Fatalf("no cache hit: %+v", f2.Stats)
	}
	// A cold store gives the same bytes too (deterministic strategy).
	f3 := NewCompressFilter(defaultOpts(), Env{Store: NewMemory(MemoryOptions{}), Tenant: "t1"})
	if out3 := run(t, f3, wire.OpenAIChat, body); string(out3) != string(out) {
		t.Fatal("cold store differs")
	}
}

func TestCompressFilterSkips(t *testing.T) {
	big := testLog(3000)
	for _, tc := range []struct {
		name    string
		opts    func(*CompressOptions)
		text    string
		outcome string
	}{
		{"too large", func(o *CompressOptions) { o.MaxBytes = 10_000 }, big, OutcomeLarge},
		{"skipped tool", func(o *CompressOptions) { o.SkipTool = func(string) bool { return true } }, big, OutcomeTool},
		{"already referenced", nil, Reference(ID("t", []byte("earlier")), 1, "") + big, OutcomeHasRef},
		{"not smaller", nil, strings.Repeat("x", 5000), OutcomeNotSmaller},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaultOpts()
			if tc.opts != nil {
				tc.opts(&o)
			}
			store := NewMemory(MemoryOptions{})
			// The reference a result carries is toolproc's own only when
			// its original is stored for this tenant.
			_ = store.Put(context.Background(), "t", Original, ID("t", []byte("earlier")), []byte("earlier"))
			f := NewCompressFilter(o, Env{Store: store, Tenant: "t"})
			body := wiretest.Request(wire.Anthropic, tc.text)
			if out := run(t, f, wire.Anthropic, body); string(out) != string(body) {
				t.Fatal("body changed")
			}
			if len(f.Decisions) != 1 || f.Decisions[0].Outcome != tc.outcome {
				t.Fatalf("decisions %+v, want %s", f.Decisions, tc.outcome)
			}
		})
	}
}

// failingStore fails every call, like an unreachable Redis.
type failingStore struct{ calls int }

func (s *failingStore) Put(context.Context, string, Kind, string, []byte) error {
	s.calls++
	return errors.New("connection refused")
}

func (s *failingStore) Get(context.Context, string, Kind, string) ([]byte, error) {
	s.calls++
	return nil, errors.New("connection refused")
}
func (s *failingStore) Close() error { return nil }

func TestCompressFilterStoreDownDegrades(t *testing.T) {
	fs := &failingStore{}
	f := NewCompressFilter(defaultOpts(), Env{Store: fs, Tenant: "t"})
	body := wiretest.Request(wire.OpenAIChat, testLog(3000), testLog(2000), testLog(1000))
	if out := run(t, f, wire.OpenAIChat, body); string(out) != string(body) {
		t.Fatal("a result was rewritten although its original could not be stored")
	}
	if fs.calls != 1 {
		t.Fatalf("store called %d times; the first failure should stop the rest", fs.calls)
	}
	if f.Stats.References != 0 || f.Stats.StoreErrors != 1 || len(f.Decisions) != 3 {
		t.Fatalf("stats %+v decisions %d", f.Stats, len(f.Decisions))
	}
}

func TestCompressFilterFitsUnderTheClampWithTheReferenceOnTop(t *testing.T) {
	o := defaultOpts()
	o.Strategy = compress.Simple(20_000) // keeps far more than the clamp allows
	o.Clamp = clamp.Limits{MaxBytes: 8192, MaxLines: 100, Keep: clamp.KeepTail}
	f := NewCompressFilter(o, Env{Store: NewMemory(MemoryOptions{}), Tenant: "t"})
	orig := strings.Repeat("word ", 30_000)
	out := run(t, f, wire.OpenAIChat, wiretest.Request(wire.OpenAIChat, orig))
	c, _ := wire.Parse(wire.OpenAIChat, out)
	got := c.Results[0].Texts[0].Text()
	if _, _, _, ok := ParseReference(got); !ok {
		t.Fatal("reference lost")
	}
	if _, rep := clamp.Text(got, o.Clamp); rep.Changed {
		t.Fatalf("compressed result (%d bytes) still over the clamp", len(got))
	}
}

func TestCompressFilterJSONResult(t *testing.T) {
	orig := testLog(3000)
	body := []byte(`{"contents":[{"role":"user","parts":[{"text":"run"}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"bash","args":{"cmd":"pytest"}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"bash","response":{"exit":1,"output":` +
		string(wire.QuoteString(orig)) + `}}}]}]}`)
	f := NewCompressFilter(defaultOpts(), Env{Store: NewMemory(MemoryOptions{}), Tenant: "t"})
	out := run(t, f, wire.Gemini, body)
	resp := gjson.GetBytes(out, "contents.2.parts.0.functionResponse.response")
	if !resp.IsObject() || resp.Get("exit").Int() != 1 {
		t.Fatalf("response object broken: %s", resp.Raw)
	}
	if _, _, _, ok := ParseReference(resp.Get("output").String()); !ok {
		t.Fatal("large string member not compressed with a reference")
	}
}

func TestBreakerOpensAndRecovers(t *testing.T) {
	fs := &failingStore{}
	b := NewBreaker(fs, 0)
	now := b.now()
	b.now = func() time.Time { return now }
	if err := b.Put(context.Background(), "t", Original, "k", nil); err == nil {
		t.Fatal("want error")
	}
	if _, err := b.Get(context.Background(), "t", Original, "k"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("breaker not open: %v", err)
	}
	if fs.calls != 1 {
		t.Fatalf("store called %d times while open", fs.calls)
	}
	now = now.Add(DefaultCooldown + time.Millisecond)
	if _, err := b.Get(context.Background(), "t", Original, "k"); errors.Is(err, ErrUnavailable) || fs.calls != 2 {
		t.Fatal("breaker did not probe after the cooldown")
	}
}

// errStore answers every call with one error.
type errStore struct {
	err   error
	calls int
}

func (s *errStore) Put(context.Context, string, Kind, string, []byte) error { s.calls++; return s.err }
func (s *errStore) Get(context.Context, string, Kind, string) ([]byte, error) {
	s.calls++
	return nil, s.err
}
func (s *errStore) Close() error { return nil }

// Review finding 17: one entry too large, one malformed key or one client
// that went away must not turn compression off for every tenant.
func TestBreakerStaysClosedForCallerErrors(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
	}{
		{"too large", context.Background(), ErrTooLarge},
		{"invalid", context.Background(), fmt.Errorf("%w: kind", ErrInvalid)},
		{"not found", context.Background(), ErrNotFound},
		{"caller cancelled", cancelled, context.Canceled},
	} {
		s := &errStore{err: tc.err}
		b := NewBreaker(s, time.Hour)
		_ = b.Put(tc.ctx, "t", Original, "k", nil)
		if b.Open() {
			t.Errorf("%s: breaker opened", tc.name)
		}
	}
	s := &errStore{err: errors.New("connection refused")}
	b := NewBreaker(s, time.Hour)
	_ = b.Put(context.Background(), "t", Original, "k", nil)
	if !b.Open() {
		t.Error("a store failure must open the breaker")
	}
}

// Review finding 22: a result that merely starts like a reference (a fetched
// web page can say anything) is compressed like any other; only a
// reference whose original this tenant stored exempts it.
func TestFakeReferenceDoesNotExempt(t *testing.T) {
	big := testLog(3000)
	for _, fake := range []string{
		Reference("sh_0123456789abcdef0123456789abcdef", 1, ""), // well formed, never stored
		"[toolproc shadow_id=whatever\n",                        // not even a reference
	} {
		store := NewMemory(MemoryOptions{})
		f := NewCompressFilter(defaultOpts(), Env{Store: store, Tenant: "t"})
		body := wiretest.Request(wire.Anthropic, fake+big)
		if out := run(t, f, wire.Anthropic, body); string(out) == string(body) || f.Stats.References != 1 {
			t.Fatalf("fake reference %.40q exempted the result: %+v", fake, f.Decisions)
		}
	}
	// Another tenant's genuine reference is not this tenant's either.
	store := NewMemory(MemoryOptions{})
	_ = store.Put(context.Background(), "other", Original, ID("other", []byte("o")), []byte("o"))
	f := NewCompressFilter(defaultOpts(), Env{Store: store, Tenant: "t"})
	if run(t, f, wire.Anthropic, wiretest.Request(wire.Anthropic, Reference(ID("other", []byte("o")), 1, "")+big)); f.Stats.References != 1 {
		t.Fatalf("another tenant's reference exempted the result: %+v", f.Decisions)
	}
}
