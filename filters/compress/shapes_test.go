package compress

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// relayShapes are the forms in which agents hand a command's output to
// the model other than as the command printed it. Each returns the output
// as relayed and the call that relayed it; n numbers the outputs.
var relayShapes = []struct {
	name  string
	relay func(text string, h Hint, n int) (string, Hint)
}{
	// Claude Code runs a command in the background, saves its output to
	// a .output file, and the agent reads it back with Read: each line
	// behind a number and an arrow.
	{"read back", func(text string, _ Hint, n int) (string, Hint) {
		return numbered(text), Hint{ToolName: "Read", Args: fmt.Sprintf(`{"file_path":"/private/tmp/claude-501/-Users-dev-repo/tasks/b%04d.output"}`, n)}
	}},
	// Or fetches it with TaskOutput, in tags.
	{"TaskOutput", func(text string, _ Hint, n int) (string, Hint) {
		return "<retrieval_status>success</retrieval_status>\n\n<task_id>b" + fmt.Sprint(n) + "</task_id>\n\n<task_type>local_bash</task_type>\n\n" +
				"<status>completed</status>\n\n<exit_code>1</exit_code>\n\n<output>\n" + text + "</output>",
			Hint{ToolName: "TaskOutput", Args: fmt.Sprintf(`{"task_id":"b%d","block":true,"timeout":120000}`, n)}
	}},
	// Or, before TaskOutput, with BashOutput.
	{"BashOutput", func(text string, _ Hint, n int) (string, Hint) {
		return "<status>completed</status>\n\n<exit_code>1</exit_code>\n\n<stdout>\n" + text + "</stdout>\n\n<timestamp>2026-03-01T10:00:00.000Z</timestamp>",
			Hint{ToolName: "BashOutput", Args: fmt.Sprintf(`{"bash_id":"b%d"}`, n)}
	}},
	// Gemini CLI's shell: the command, then the output after "Output: ",
	// then the exit code and the process's fields.
	{"Gemini CLI shell", func(text string, h Hint, _ int) (string, Hint) {
		cmd := commandOf(h.decoded())
		q, _ := json.Marshal(cmd)
		return "Command: " + cmd + "\nDirectory: (root)\nOutput: " + strings.TrimSuffix(text, "\n") +
				"\nError: (none)\nExit Code: 1\nSignal: 0\nBackground PIDs: (none)\nProcess Group PGID: 48213",
			Hint{ToolName: "run_shell_command", Args: `{"command":` + string(q) + `}`}
	}},
	// A Windows shell's line ends.
	{"CRLF", func(text string, h Hint, _ int) (string, Hint) { return strings.ReplaceAll(text, "\n", "\r\n"), h }},
	// A test run inside a docker build's RUN step, behind BuildKit's step
	// number and time.
	{"BuildKit", func(text string, h Hint, _ int) (string, Hint) {
		var b strings.Builder
		b.WriteString("#8 [3/5] RUN " + commandOf(h.decoded()) + "\n")
		for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			fmt.Fprintf(&b, "#8 %d.%03d %s\n", i/50, i%1000, l)
		}
		return b.String(), bash("docker build -t app .")
	}},
	// A CI job's log, every line behind the runner's timestamp.
	{"CI timestamps", func(text string, h Hint, _ int) (string, Hint) { return ciTimestamped(text), h }},
	// That log saved (gh run view --log > ci.log) and read back with Read:
	// the read's number, then the runner's timestamp. Before stop 54 the
	// prefixes were looked for at the line's start only, and this shape
	// kept 70.5 % of failing tests and 68.5 % of summaries at 4x.
	{"CI log read back", func(text string, _ Hint, n int) (string, Hint) {
		return numbered(ciTimestamped(text)), Hint{ToolName: "Read", Args: fmt.Sprintf(`{"file_path":"/tmp/ci-%04d.log"}`, n)}
	}},
}

// ciTimestamped puts a CI runner's timestamp before every line of text.
func ciTimestamped(text string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fmt.Fprintf(&b, "2026-03-01T10:%02d:%02d.%07dZ %s\n", i/60%60, i%60, i*7919%10000000, l)
	}
	return b.String()
}

// shapeRuns compresses every diagnostic output of samples that holds a
// failing test, summary, error line or exception type at ratio, as printed
// and in each relay shape. The facts are the printed output's in all, so
// the tallies differ only by what the shape costs.
func shapeRuns(samples []sample, ratio float64) (printed *tally, relayed []*tally) {
	printed = newTally()
	relayed = make([]*tally, len(relayShapes))
	for k := range relayed {
		relayed[k] = newTally()
	}
	s := Structural(StructuralOptions{TargetRatio: ratio})
	add := func(t *tally, crit []fact, in, out string) {
		t.records++
		t.bytesIn += len(in)
		t.bytesO += len(out)
		t.add(crit, strings.ReplaceAll(out, "\r\n", "\n"))
	}
	n := 0
	for _, r := range samples {
		if !isDiagnostic(r.kind) {
			continue
		}
		var crit []fact
		for _, f := range r.facts {
			switch f.class {
			case factT, factS, factE, factX:
				crit = append(crit, f)
			}
		}
		if len(crit) == 0 {
			continue
		}
		n++
		out, _ := s.Compress(r.Output, r.h)
		add(printed, crit, r.Output, out)
		for k, sh := range relayShapes {
			text, h := sh.relay(r.Output, r.h, n)
			out, _ := s.Compress(text, h)
			add(relayed[k], crit, text, out)
		}
	}
	return printed, relayed
}

// TestQualityShapes: the same output relayed another way keeps the same
// facts. On the tuning set's test logs, tracebacks, logs and text, in every
// relay shape, all critical facts of an output, and each class, at most a
// point and a half below the printed output's at 4x and 10x (a shape that
// hides the command, as TaskOutput and a docker build do, costs what
// detecting the kind by its lines alone costs). Before stop 51 a read back kept all of them in 90.9 % of outputs at
// 4x and 84.8 % at 10x (99.7 and 98.8 printed): a saved output was read as a
// source file. TaskOutput and BashOutput kept 97.4 and 97.7 % at 4x: the
// closing tag, not the run's summary, was the output's last line. The test
// set is reported, not held to it (split_test.go). Before stop 51 a run
// inside a docker build kept all of them in 82.2 % of outputs at 4x and
// 75.3 % at 10x: BuildKit's prefixes hid the runner's lines; and one run by
// Gemini CLI's shell 96.5 and 94.9 %: its exit code and process fields,
// not the run's summary, ended the output.
func TestQualityShapes(t *testing.T) {
	tuning, test := qualitySplit(t)
	for _, ratio := range []float64{4, 10} {
		for _, set := range []struct {
			name    string
			samples []sample
			held    bool
		}{{"tuning", tuning, true}, {"TEST", test, false}} {
			printed, relayed := shapeRuns(set.samples, ratio)
			t.Logf("%-6s %2gx %s", set.name, ratio, printed.row("printed"))
			for k, sh := range relayShapes {
				r := relayed[k]
				t.Logf("%-6s %2gx %s", set.name, ratio, r.row(sh.name))
				if !set.held || printed.critRecords == 0 {
					continue
				}
				pc := float64(printed.critComplete) / float64(printed.critRecords)
				rc := float64(r.critComplete) / float64(r.critRecords)
				if rc < pc-0.015 {
					t.Errorf("%gx %s: %.1f %% of outputs kept all critical facts; printed, %.1f %%", ratio, sh.name, 100*rc, 100*pc)
				}
				for _, c := range []factClass{factT, factS, factE, factX} {
					p, ok1 := printed.recall(c)
					q, ok2 := r.recall(c)
					if ok1 && ok2 && q < p-0.015 {
						t.Errorf("%gx %s: %s %.1f %%, printed %.1f %%", ratio, sh.name, c, 100*q, 100*p)
					}
				}
			}
		}
	}
}
