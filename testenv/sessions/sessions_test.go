package sessions

import (
	"os"
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
	// Four sessions: a floor well under the corpus's (2.29× there).
	checkGoals(t, ss, 1.4)
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
			if tot.PairingErrors+tot.RecentChanged+tot.KeyLinesLost+tot.HeadChanged+tot.Errors != 0 || tot.Steps == 0 {
				t.Errorf("%s 1/%d: invariants broken or no step:\n%s", d, fraction, Summary(rs))
			}
			if fraction == 1 && tot.OutCostA > tot.RawCostA {
				t.Errorf("%s: flattened cost %.3f× raw", d, tot.OutCostA/tot.RawCostA)
			}
		}
	}
}

// TestSessionCorpus is the same over every session of the full corpus.
func TestSessionCorpus(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the corpus replay runs without -short and -race (make bench-sessions)")
	}
	if _, err := os.Stat(corpusFile); err != nil {
		t.Skip("no session corpus beside this checkout")
	}
	ss, err := Load(corpusFile)
	if err != nil {
		t.Fatal(err)
	}
	checkGoals(t, ss, 2.0)
}

// checkGoals replays ss in both dialects and two windows. minFit is the
// least ratio of turns that fit the overflowing window, rewritten to raw.
func checkGoals(t *testing.T, ss []Session, minFit float64) {
	cfg := extproc.DefaultConfig()
	for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat} {
		// The window the raw session just fills: tiers act at the default
		// shares and must cost no more than the raw session.
		fill, err := RunFraction(cfg, ss, d, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		// A window the raw session exhausts a third of the way in.
		over, err := RunFraction(cfg, ss, d, 0, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range [][]Result{fill, over} {
			tot := Totals(rs)
			if tot.PairingErrors+tot.RecentChanged+tot.KeyLinesLost+tot.HeadChanged+tot.Errors != 0 {
				t.Errorf("%s: invariants broken:\n%s", d, Summary(rs))
			}
			if tot.OutBytes >= tot.RawBytes {
				t.Errorf("%s: %d bytes rewritten, %d raw", d, tot.OutBytes, tot.RawBytes)
			}
		}
		f, o := Totals(fill), Totals(over)
		if c := f.OutCostA / f.RawCostA; c > 1.0 {
			t.Errorf("%s: cache-model cost %.3f× raw at the default shares\n%s", d, c, Summary(fill))
		}
		if f.Breaks-f.BreaksOffStep > f.Steps {
			t.Errorf("%s: %d prefix breaks at %d steps", d, f.Breaks-f.BreaksOffStep, f.Steps)
		}
		if float64(o.OutFit) < minFit*float64(o.RawFit) {
			t.Errorf("%s: %d turns fit rewritten, %d raw\n%s", d, o.OutFit, o.RawFit, Summary(over))
		}
		t.Logf("%s, window filled:\n%s", d, Summary(fill))
		t.Logf("%s, window overflowed:\n%s", d, Summary(over))
	}
}
