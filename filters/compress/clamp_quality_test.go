package compress

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/clamp"
)

// TestQualityKeylessClamp measures what a request without references gets:
// the clamp at its defaults (51,200 bytes, 2,000 lines) on every output
// over them, cut structurally where it can classify the output (Cut, as
// clamp.structural does) against the head-only clamp, test set and tuning
// set apart: the committed sessions and fixture logs in any clone, with the shared corpus
// and sessions when they sit beside the repository. Failing tests and summaries are held at 99% on the tuning set.
func TestQualityKeylessClamp(t *testing.T) {
	if raceEnabled {
		t.Skip("figures come from the run without -race")
	}
	recs := committedRecords(t)
	recs = append(recs, sharedRecords(t)...)
	lim := clamp.Limits{MaxBytes: clamp.DefaultMaxBytes, MaxLines: clamp.DefaultMaxLines}
	var over []record
	for _, r := range recs {
		if len(r.Output) > lim.MaxBytes || clamp.CountLines(r.Output) > lim.MaxLines {
			over = append(over, r)
		}
	}
	tuning, test := splitSamples(t, prepare(over, 0))
	for _, set := range []struct {
		name    string
		samples []sample
	}{{"TEST", test}, {"tuning", tuning}} {
		structural, head := newQualityRun(), newQualityRun()
		cut := 0
		for _, s := range set.samples {
			out, ok := clamp.StructuralText(s.Output, s.h.ToolName, s.h.Args, lim, Cut)
			if ok {
				cut++
			} else {
				out, _ = clamp.Text(s.Output, lim)
			}
			if len(out) > lim.MaxBytes || clamp.CountLines(out) > lim.MaxLines {
				t.Errorf("%s: over the limits: %d bytes, %d lines", s.ID, len(out), clamp.CountLines(out))
			}
			structural.add(s, out)
			h, _ := clamp.Text(s.Output, lim)
			head.add(s, h)
		}
		t.Logf("%-6s %d outputs over the clamp, %d cut structurally", set.name, len(set.samples), cut)
		t.Logf("%-6s structural clamp %s", set.name, headline(structural.all))
		t.Logf("%-6s head-only clamp  %s", set.name, headline(head.all))
		if set.name == "tuning" {
			assertRecall(t, fmt.Sprintf("keyless clamp, %s set", set.name), structural.all, map[factClass]float64{factT: 0.99, factS: 0.99})
		}
	}
}

// TestKeylessClampRealLogs: the committed real logs over the clamp's
// defaults, cut as a request without references gets them (the clamp at
// its defaults, with Cut): every failing test and error id and the run's
// summary survive, within both limits, where the head-only clamp keeps
// none of them.
//
// The second log is one of round 28's tuning records: 92 failing tests
// and 342 error lines (Rust compile errors a transpiler's tests print),
// whose error lines alone are four times the clamp's limit. Before the
// cut held its critical lines to the aim (StructuralOptions.Hard), every
// aim it tried came out over the limit and the head-only clamp kept
// none of the failures.
func TestKeylessClampRealLogs(t *testing.T) {
	lim := clamp.Limits{MaxBytes: clamp.DefaultMaxBytes, MaxLines: clamp.DefaultMaxLines}
	fixture := func(id string) string {
		for _, r := range loadFixtureRecords(t) {
			if r.ID == id {
				return r.Output
			}
		}
		t.Fatalf("no fixture record %s", id)
		return ""
	}
	for _, c := range []struct {
		file, cmd string
		text      func() string
	}{
		{"pytest_many_errors.log", "pytest -rA tests/test_requests.py", nil},
		{"fixtures-xray-llm/pytest_out3.txt", "python -m pytest tests", func() string { return fixture("fixtures-xray-llm/pytest_out3.txt") }},
	} {
		var text string
		if c.text != nil {
			text = c.text()
		} else {
			text = readTestdata(t, c.file)
		}
		if len(text) <= lim.MaxBytes {
			t.Fatalf("%s: %d bytes, under the clamp", c.file, len(text))
		}
		h := bash(c.cmd)
		out, ok := clamp.StructuralText(text, h.ToolName, h.Args, lim, Cut)
		if !ok || len(out) > lim.MaxBytes || clamp.CountLines(out) > lim.MaxLines {
			t.Fatalf("%s: ok %v, %d bytes, %d lines", c.file, ok, len(out), clamp.CountLines(out))
		}
		head, _ := clamp.Text(text, lim)
		var want []string
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "FAILED ") || strings.HasPrefix(l, "ERROR ") || isSummaryLine(l) && strings.HasPrefix(l, "=") {
				want = append(want, idOf(l))
			}
		}
		kept, keptHead := 0, 0
		for _, w := range want {
			if strings.Contains(out, w) {
				kept++
			}
			if strings.Contains(head, w) {
				keptHead++
			}
		}
		t.Logf("%s: %d → %d bytes; failures and summary kept %d/%d (head-only clamp %d)", c.file, len(text), len(out), kept, len(want), keptHead)
		if len(want) == 0 || kept < len(want) {
			t.Errorf("%s: kept %d of %d failing ids and summaries", c.file, kept, len(want))
		}
	}
}

// idOf is a failing-test line's id ("FAILED a.py::t" without the " - why"
// that may be cut), or a summary line whole.
func idOf(l string) string {
	if k := strings.Index(l, " - "); k > 0 {
		return l[:k]
	}
	return l
}
