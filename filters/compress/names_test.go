package compress

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestNamesCode(t *testing.T) {
	checkLineCases(t, "namesCode", namesCode, []lineCase{
		{"Plaintext file keys are not zeroed if `unwrapKey` throws mid-loop.", true},
		{"| 3 | `apps/web/src/hooks/useFolder.ts` | 826 |", true},
		{"Set RUST_LOG=debug before the run.", true},
		{"the badge in dark mode (see 2026-02-21)", true}, // a date is a name an agent may quote
		{"The plan's premise is false, and the badge renders unfiltered.", false},
		{"See the docs. Then run it again.", false},
		{"Findings", false},
		{"a/b c.d e_f", false}, // too short to name anything
		{"", false},
	})
}

// TestReportsKeepTheirNames: a sub-agent's report cut at 4x keeps, between
// its opening and its end, the lines that name files and functions before
// the prose around them (issue 23, on the tuning set: next-step references
// of Task reports at 4x 43.4 -> 49.5 %).
func TestReportsKeepTheirNames(t *testing.T) {
	var b strings.Builder
	b.WriteString("Here is the review of the plan, prioritized.\n\n## Findings\n\n")
	for i := range 240 {
		if i%4 == 0 {
			fmt.Fprintf(&b, "- `src/services/share%02d.service.ts` line %d: `rewrapKey%02d` swallows the error.\n", i, 40+i, i)
		} else {
			fmt.Fprintf(&b, "The reviewer found that this part of the plan reads well and needs no change at all, item %d.\n", i)
		}
	}
	b.WriteString("\n## Verdict\n\nNot safe to execute verbatim; fix the findings first.\n")
	text := b.String()
	h := Hint{ToolName: "Task", Args: `{"description":"Review the plan","prompt":"Review it."}`}
	s := Structural(StructuralOptions{TargetRatio: 4})
	out, _ := s.Compress(text, h)
	named, prose := 0, 0
	for l := range strings.SplitSeq(out, "\n") {
		switch {
		case strings.Contains(l, "swallows the error"):
			named++
		case strings.Contains(l, "needs no change"):
			prose++
		}
	}
	if named < 10 || named <= prose {
		t.Errorf("kept %d named lines and %d prose lines:\n%s", named, prose, out)
	}
	if err := checkGuards(s, text, h); err != nil {
		t.Error(err)
	}
}

// TestCoverSameAfterAnyRead: the name cover's scratch arrays come from a
// pool, so a read may get a heap grown by a larger read before it. Its
// output must not depend on that: the cover's pushes are bounded by the
// read's own line count, not by the capacity the pool hands back.
func TestCoverSameAfterAnyRead(t *testing.T) {
	small := readTestdata(t, "claude_read.txt")
	h := Hint{ToolName: "Read", Args: `{"file_path":"/repo/src/server.py"}`}
	for _, ratio := range []float64{4, 10} {
		s := Structural(StructuralOptions{TargetRatio: ratio})
		runtime.GC()
		runtime.GC() // the pool's victim cache too: a fresh scratch
		fresh, _ := s.Compress(small, h)
		big := strings.Repeat(small, 40)
		_, _ = s.Compress(big, h) // grows the pooled scratch past small's size
		again, _ := s.Compress(small, h)
		if fresh != again {
			t.Errorf("%gx: the output after a larger read differs from a fresh one", ratio)
		}
	}
}
