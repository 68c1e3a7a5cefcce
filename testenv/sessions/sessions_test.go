package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/wire"
)

// corpusFile is the full session corpus beside a development checkout; a
// clone without it runs the committed sample only.
const corpusFile = "../../../shared/sessions/sessions.jsonl"

// TestSessionSample replays the committed sessions (testdata/SOURCES.md)
// through the default profile and holds the tiers to their promises at the
// level of whole sessions.
func TestSessionSample(t *testing.T) {
	ss, err := Load("testdata/sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 4 {
		t.Fatalf("%d sessions in the sample", len(ss))
	}
	checkGoals(t, []string{"testdata/sample.jsonl"}, nil, goals{minFit: 2.5, maxFillCost: 0.90, maxOverCost: 1.0})
}

// TestSessionSampleFlattened: with tiers.flatten the old exchanges reach
// the provider as text; every call left is answered, every result left is
// called, the recent results are still results, and the key lines of the
// flattened ones are in the request.
func TestSessionSampleFlattened(t *testing.T) {
	ss, err := Load("testdata/sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cfg := extproc.DefaultConfig()
	cfg.Profiles[extproc.DefaultProfile].Tiers.Flatten = history.FlattenOld
	for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat} {
		for _, fraction := range []int{1, 3} {
			rs, err := RunFraction(cfg, ss, d, 0, fraction)
			if err != nil {
				t.Fatal(err)
			}
			tot := Totals(rs)
			if tot.PairingErrors+tot.RecentChanged+tot.NewestChanged+tot.KeyLinesLost+tot.HeadChanged+tot.Errors != 0 || tot.Steps == 0 {
				t.Errorf("%s 1/%d: invariants broken or no step:\n%s", d, fraction, Summary(rs))
			}
			if fraction == 1 && tot.OutCostA > tot.RawCostA {
				t.Errorf("%s: flattened cost %.3f× raw", d, tot.OutCostA/tot.RawCostA)
			}
		}
	}
}

// TestSessionCorpus is the same over every session of the full corpus
// (the tuning set), with a real agent's head where a session's own is a
// stub (heads/SOURCES.md), and issue 22's goals.
func TestSessionCorpus(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the corpus replay runs without -short and -race (make bench-sessions)")
	}
	if _, err := os.Stat(corpusFile); err != nil {
		t.Skip("no session corpus beside this checkout")
	}
	head, err := LoadHead("heads/openhands.json")
	if err != nil {
		t.Fatal(err)
	}
	checkGoals(t, []string{corpusFile}, head, goals{minFit: 2.5, maxFillCost: 0.90, maxOverCost: 1.0})
}

// TestSessionHeldOut replays the held-out sessions (corpus/, never tuned
// on): the invariants hold there too; the figures are logged, and
// reported by make bench-sessions. With 139 sessions it takes 10 to 20
// minutes of CPU, too long for every go test ./...: make heldout runs it.
func TestSessionHeldOut(t *testing.T) {
	if testing.Short() || raceEnabled || os.Getenv("TOOLPROC_HELDOUT") == "" {
		t.Skip("the held-out replay runs with TOOLPROC_HELDOUT=1, without -short and -race (make heldout)")
	}
	files, _ := filepath.Glob("corpus/*.jsonl.gz")
	if len(files) == 0 {
		t.Skip("no held-out sessions")
	}
	head, err := LoadHead("heads/openhands.json")
	if err != nil {
		t.Fatal(err)
	}
	// The test set proper: sources the tiers were never tuned on (Claude
	// Code, pi), held to issue 22's goals. The other mini-swe-agent file is
	// the same run as a tuning source: the invariants only.
	var fresh, sameRun []string
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "mini-swe-agent") {
			sameRun = append(sameRun, f)
		} else {
			fresh = append(fresh, f)
		}
	}
	for _, set := range []struct {
		files []string
		g     goals
	}{{fresh, goals{minFit: 2.5, maxFillCost: 0.90, maxOverCost: 1.0}}, {sameRun, goals{}}} {
		if len(set.files) == 0 {
			continue
		}
		checkGoals(t, set.files, head, set.g)
	}
}

// goals are the figures a replay must reach; zero fields are only logged.
type goals struct {
	// minFit is the least ratio of turns that fit the overflowing window,
	// rewritten to raw.
	minFit float64
	// maxFillCost and maxOverCost bound the cache-model cost (the
	// dialect's provider family's), rewritten to raw, at the window the raw session just fills and at
	// the one it overflows.
	maxFillCost, maxOverCost float64
}

// checkGoals replays the sessions of files in both dialects and two
// windows, one session in memory at a time (Each): the invariants always
// hold (pairing, recent and newest results, key lines, system prompt and
// first message, no step outside the window's emergency closer than a
// quarter window to the last), and g's figures are reached.
func checkGoals(t *testing.T, files []string, head *Head, g goals) {
	cfg := extproc.DefaultConfig()
	dialects := []wire.Dialect{wire.Anthropic, wire.OpenAIChat}
	// Per dialect: the window the raw session just fills, and one it
	// exhausts a third of the way in.
	fills, overs := make([][]Result, len(dialects)), make([][]Result, len(dialects))
	err := Each(files, head, func(s Session) error {
		for k, d := range dialects {
			fill, err := RunFraction(cfg, []Session{s}, d, 0, 1)
			if err != nil {
				return err
			}
			over, err := RunFraction(cfg, []Session{s}, d, 0, 3)
			if err != nil {
				return err
			}
			fills[k] = append(fills[k], fill...)
			overs[k] = append(overs[k], over...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, d := range dialects {
		fill, over := fills[k], overs[k]
		for _, rs := range [][]Result{fill, over} {
			tot := Totals(rs)
			if tot.PairingErrors+tot.RecentChanged+tot.NewestChanged+tot.KeyLinesLost+tot.HeadChanged+tot.Errors != 0 || tot.StepsTooClose != 0 {
				t.Errorf("%s: invariants broken:\n%s", d, Summary(rs))
			}
			if tot.OutBytes >= tot.RawBytes {
				t.Errorf("%s: %d bytes rewritten, %d raw", d, tot.OutBytes, tot.RawBytes)
			}
		}
		f, o := Totals(fill), Totals(over)
		// Each dialect is weighed by its provider family's cache model, the
		// one the tiers' cost_model auto plans with: Anthropic's for
		// Messages, OpenAI's for Chat.
		cost := func(r Result) float64 {
			if d == wire.Anthropic {
				return r.OutCostA / r.RawCostA
			}
			return r.OutCostO / r.RawCostO
		}
		if c := cost(f); g.maxFillCost > 0 && c > g.maxFillCost {
			t.Errorf("%s: cache-model cost %.3f× raw in the window the session fills\n%s", d, c, Summary(fill))
		}
		if c := cost(o); g.maxOverCost > 0 && c > g.maxOverCost {
			t.Errorf("%s: cache-model cost %.3f× raw in the window the session overflows\n%s", d, c, Summary(over))
		}
		if f.Breaks-f.BreaksOffStep > f.Steps {
			t.Errorf("%s: %d prefix breaks at %d steps", d, f.Breaks-f.BreaksOffStep, f.Steps)
		}
		if float64(o.OutFit) < g.minFit*float64(o.RawFit) {
			t.Errorf("%s: %d turns fit rewritten, %d raw\n%s", d, o.OutFit, o.RawFit, Summary(over))
		}
		t.Logf("%s, window filled:\n%s", d, Summary(fill))
		t.Logf("%s, window overflowed:\n%s", d, Summary(over))
	}
}
