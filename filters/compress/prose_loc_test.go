package compress

import (
	"fmt"
	"strings"
	"testing"
)

// TestProseLocations: a subagent's report names several locations a line.
// The lines it leaves out are named in its markers by every location they
// hold while the list has room, not only by each line's first.
func TestProseLocations(t *testing.T) {
	var b strings.Builder
	b.WriteString("All claims verified. Here is the report.\n\n## Verdict\n\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "**Claim %d — CONFIRMED.** `src/cache/store%d.go:%d` persists the session on close; the caller is `src/cli/init%d.go:%d`, and the TTL check sits in clear%d.go:%d.\n\n", i, i, 100+i, i, 200+i, i, 300+i)
	}
	text := b.String()
	out, rep := Structural(StructuralOptions{TargetRatio: 4}).Compress(text, Hint{ToolName: "Agent"})
	if rep.Kind != KindText {
		t.Fatalf("detected as %s", rep.Kind)
	}
	// Markers are the lines that open with "[…": count what they name.
	var markers strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[…") {
			markers.WriteString(l + "\n")
		}
	}
	m := markers.String()
	firsts, others := 0, 0
	for i := 0; i < 40; i++ {
		if strings.Contains(m, fmt.Sprintf("src/cache/store%d.go:%d", i, 100+i)) {
			firsts++
		}
		for _, loc := range []string{fmt.Sprintf("src/cli/init%d.go:%d", i, 200+i), fmt.Sprintf("clear%d.go:%d", i, 300+i)} {
			if strings.Contains(m, loc) {
				others++
			}
		}
	}
	t.Logf("%d→%d bytes; markers name %d first locations and %d others", len(text), len(out), firsts, others)
	// The list of the long run is full with first locations (its budget
	// is the binding one); the short runs' lists have room for the rest.
	if firsts < 30 || others < 4 {
		t.Errorf("markers name %d first and %d other locations, want 30 and 4 or more:\n%s", firsts, others, out)
	}
	if !strings.Contains(m, "store3.go:103, src/cli/init3.go:203, clear3.go:303") {
		t.Errorf("a one-line marker does not name its line's three locations in order:\n%s", m)
	}
}
