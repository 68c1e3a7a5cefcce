package compress

import (
	"strings"
	"testing"
)

// TestLongLinesKeepExitStatuses: a one-line JSON reply (a CI job's log
// inside an API's answer) cut in the middle keeps the exit statuses of the
// part cut, each between byte-count markers.
func TestLongLinesKeepExitStatuses(t *testing.T) {
	filler := strings.Repeat(`log line of the job that says nothing in particular, `, 80)
	line := `{"jobs":[{"name":"lint","logTail":"` + filler + `Error: Process completed with exit code 2.` + filler +
		`"},{"name":"test","logTail":"` + filler + `make: *** [test] exit status 1` + filler + `"}]}`
	text := "Chunk ID: 4ba19f\nWall time: 2.7 seconds\nProcess exited with code 0\nOutput:\n" + line
	h := Hint{ToolName: "exec_command", Args: `{"cmd":"gh api repos/o/r/actions/runs/1/jobs"}`}
	for _, ratio := range []float64{4, 10} {
		s := Structural(StructuralOptions{TargetRatio: ratio})
		out, _ := s.Compress(text, h)
		for _, want := range []string{"exit code 2.", "exit status 1"} {
			if !strings.Contains(out, want) {
				t.Errorf("%gx: lost %q:\n%s", ratio, want, out)
			}
		}
		if len(out) > len(text)/int(ratio)*2 {
			t.Errorf("%gx: %d bytes of %d", ratio, len(out), len(text))
		}
		if err := checkGuards(s, text, h); err != nil {
			t.Errorf("%gx: %v", ratio, err)
		}
	}
	if !cutPiecesMatch("ab[… 3 bytes omitted …]f", "abcdef") || cutPiecesMatch("ab[… 2 bytes omitted …]f", "abcdef") {
		t.Error("cutPiecesMatch does not hold markers to their counts")
	}
	checkLineCases(t, "nextExitStatus", func(l string) bool { i, _ := nextExitStatus(l, 0, len(l)); return i >= 0 }, []lineCase{
		{"Error: Process completed with exit code 2.", true},
		{"make: *** [test] exit status 1", true},
		{"EXIT CODE: 137", true},
		{"process exited with Exit Status 3", true},
		{"completed with exit code 0", false},
		{"exit code unknown", false},
		{"the next exit codes are listed", false},
		{"xit code 2", false},
	})
}
