package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// auditSample: two days, an Anthropic model with a cache-friendly request
// and one the tiers rewrote (its cache writes), an unread answer, a model
// with no price, a compression decision, and lines that are not records.
var auditSample = strings.Join([]string{
	`{"time":"2026-11-01T10:00:00Z","kind":"exchange","dialect":"anthropic","profile":"default","model":"claude-sonnet-4-5","tenant":"t1","tiered":0,"tier_step":0,"bytes_removed":40000,"tokens_removed":10000,"usage":{"input":1000,"cache_read":90000,"cache_write":0,"output":500},"usage_outcome":"read"}`,
	`{"time":"2026-11-01T11:00:00Z","kind":"exchange","dialect":"anthropic","profile":"default","model":"claude-sonnet-4-5","tenant":"t1","tiered":3,"tier_step":1,"bytes_removed":200000,"tokens_removed":50000,"usage":{"input":1000,"cache_read":10000,"cache_write":40000,"output":500},"usage_outcome":"read"}`,
	`{"time":"2026-11-02T09:00:00Z","kind":"exchange","dialect":"openai_chat","profile":"default","model":"gpt-4o-2024-08-06","tenant":"t2","tokens_removed":0,"usage_outcome":"missing"}`,
	`{"time":"2026-11-02T09:30:00Z","kind":"exchange","dialect":"openai_chat","profile":"default","model":"my-finetune","tenant":"t2","tokens_removed":100,"usage":{"input":10,"cache_read":0,"cache_write":0,"output":5},"usage_outcome":"read"}`,
	`{"time":"2026-11-01T10:00:00Z","dialect":"anthropic","profile":"default","tenant":"t1","ordinal":0,"tool":"Bash","kind":"log","outcome":"compressed","bytes_before":50000,"bytes_after":10000}`,
	`{"time":"2026-11-01T10:00:00Z","dialect":"anthropic","profile":"default","tenant":"t1","ordinal":1,"tool":"Bash","outcome":"skipped_small","bytes_before":10,"bytes_after":10}`,
	`not json`,
	``,
}, "\n")

func TestBuild(t *testing.T) {
	a, err := Read(strings.NewReader(auditSample))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Exchanges) != 4 || a.Skipped != 1 {
		t.Fatalf("%d exchanges, %d skipped", len(a.Exchanges), a.Skipped)
	}
	rep := Build(a, DefaultPrices)
	if len(rep.Rows) != 3 || len(rep.Days) != 2 {
		t.Fatalf("%d rows, %d days", len(rep.Rows), len(rep.Days))
	}
	tot := rep.Total
	if tot.Requests != 4 || tot.Unread != 1 || tot.CacheWrite != 40000 || tot.Removed != 60100 {
		t.Fatalf("total %+v", tot)
	}
	if len(rep.Unpriced) != 1 || rep.Unpriced[0] != "my-finetune" {
		t.Fatalf("unpriced %v", rep.Unpriced)
	}
	// Sonnet: $3 in, $0.30 read, $3.75 write, $15 out per MTok.
	sonnet := rep.Rows[0]
	billed := (2000*3 + 100000*0.3 + 40000*3.75 + 1000*15) / 1e6
	// Without toolproc the conversation's first raw prompt (91,000 billed
	// + 10,000 removed) is all written; the second (51,000 + 50,000) re-reads
	// it and adds nothing: the tier step's 40,000 written tokens are
	// toolproc's cost, not the counterfactual's.
	cf := 101000*3.75/1e6 + 101000*0.3/1e6 + 1000*15/1e6
	if math.Abs(sonnet.Cost-billed) > 1e-9 || math.Abs(sonnet.Counterfactual-cf) > 1e-9 || math.Abs(sonnet.Savings-(cf-billed)) > 1e-9 {
		t.Fatalf("sonnet row %+v, want cost %v counterfactual %v", sonnet, billed, cf)
	}
	if s := sonnet.CacheReadShare(); math.Abs(s-100000.0/142000) > 1e-9 {
		t.Fatalf("cache-read share %v", s)
	}
	if len(rep.Tools) != 1 || rep.Tools[0].Tool != "Bash" || rep.Tools[0].BytesRemoved != 40000 {
		t.Fatalf("tools %+v", rep.Tools)
	}
}

func TestFormats(t *testing.T) {
	a, _ := Read(strings.NewReader(auditSample))
	rep := Build(a, DefaultPrices)
	for _, f := range Formats {
		var b bytes.Buffer
		if err := Write(&b, rep, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out := b.String()
		switch f {
		case "table":
			if !strings.Contains(out, "claude-sonnet-4-5") || !strings.Contains(out, "Counterfactual:") || !strings.Contains(out, "my-finetune") {
				t.Fatalf("table:\n%s", out)
			}
		case "csv":
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil || len(recs) != 1+3+1 || len(recs[0]) != len(header) || recs[4][0] != "total" {
				t.Fatalf("csv %v: %v", err, recs)
			}
		case "json":
			var back Report
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Total.Requests != 4 || back.Method == "" {
				t.Fatalf("json %v", err)
			}
		case "html":
			// Self-contained: no script, no external asset.
			if !strings.Contains(out, "<svg") || strings.Contains(out, "<script") || strings.Contains(out, "http") {
				t.Fatalf("html:\n%s", out)
			}
		}
	}
	if err := Write(&bytes.Buffer{}, rep, "xml"); err == nil {
		t.Fatal("unknown format accepted")
	}
}

func TestReadLongLine(t *testing.T) {
	in := strings.Repeat("x", MaxLine+10) + "\n" + strings.Split(auditSample, "\n")[0] + "\n"
	a, err := Read(strings.NewReader(in))
	if err != nil || a.Skipped != 1 || len(a.Exchanges) != 1 {
		t.Fatalf("err %v skipped %d exchanges %d", err, a.Skipped, len(a.Exchanges))
	}
}

func TestLoadPrices(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "prices.yaml")
	if err := os.WriteFile(p, []byte("- {match: claude-sonnet-4, input: 1, output: 2, cache_read: 0.1, cache_write: 1.25}\n- {match: my-finetune, input: 10, output: 20}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ps, err := LoadPrices(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := ps.For("claude-sonnet-4-5-20250929"); got.Input != 1 {
		t.Fatalf("override not applied: %+v", got)
	}
	if _, ok := ps.For("my-finetune"); !ok {
		t.Fatal("added entry missing")
	}
	if got, _ := ps.For("gpt-4o-mini-2024-07-18"); got.Input != 0.15 {
		t.Fatalf("longest match: %+v", got)
	}
	if err := os.WriteFile(p, []byte("- {match: x, input: -1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrices(p); err == nil {
		t.Fatal("negative price accepted")
	}
	if err := os.WriteFile(p, []byte("- {match: x, inptu: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrices(p); err == nil {
		t.Fatal("misspelt key accepted")
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(auditSample))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Read(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		rep := Build(a, DefaultPrices)
		for _, fm := range Formats {
			if err := Write(&bytes.Buffer{}, rep, fm); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestChainsInterleaved: two conversations of one tenant, interleaved,
// are followed apart by their raw prompt sizes.
func TestChainsInterleaved(t *testing.T) {
	cs := chains{}
	k := chainKey{"t", "m"}
	for _, step := range []struct{ raw, want int64 }{
		{1000, 0}, {50000, 1000}, // the second joins the first: it is larger
		{1200, 0}, // smaller than every open one: a new conversation
		{52000, 50000}, {1500, 1200},
	} {
		if got := cs.follow(k, step.raw); got != step.want {
			t.Fatalf("follow(%d) = %d, want %d", step.raw, got, step.want)
		}
	}
}
