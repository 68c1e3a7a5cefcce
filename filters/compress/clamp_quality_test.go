package compress

import (
	"fmt"
	"testing"

	"github.com/toolproc/toolproc/filters/clamp"
)

// TestQualityKeylessClamp measures what a request without references gets:
// the clamp at its defaults (51,200 bytes, 2,000 lines) on every output
// over them, cut structurally where it can classify the output (Cut, as
// clamp.structural does) against the head-only clamp, test set and tuning
// set apart. It needs the shared corpus and sessions and skips without
// them. Failing tests and summaries are held at 99% on the tuning set.
func TestQualityKeylessClamp(t *testing.T) {
	if raceEnabled {
		t.Skip("figures come from the run without -race")
	}
	recs := append(loadRecords(t, corpusDir+"/records.jsonl"), loadSessionRecords(t, sessionsFile)...)
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
