package compress

import (
	"strings"
	"testing"
)

// taskOutput is Claude Code's TaskOutput result around out.
func taskOutput(out string) string {
	return "<retrieval_status>success</retrieval_status>\n\n<task_id>bc1c6c5</task_id>\n\n<task_type>local_bash</task_type>\n\n" +
		"<status>completed</status>\n\n<exit_code>1</exit_code>\n\n<output>\n" + out + "</output>"
}

// geminiShell is Gemini CLI's run_shell_command result around out.
func geminiShell(out string) string {
	return "Command: pytest -q\nDirectory: (root)\nOutput: " + out + "\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 48213"
}

func TestHarnessEnvelope(t *testing.T) {
	run := strings.Repeat("tests/test_a.py::test_x PASSED\n", 40) + "=== 1 failed, 40 passed in 0.3s ===\n"
	for _, c := range []struct {
		name, text string
		body       string // "" when not an envelope
	}{
		{"TaskOutput", taskOutput(run), run},
		{"TaskOutput, CRLF tags", strings.ReplaceAll(taskOutput(""), "\n", "\r\n") + "", ""}, // no output to read
		{"BashOutput", "<status>completed</status>\n\n<exit_code>1</exit_code>\n\n<stdout>\n" + run + "</stdout>\n\n<timestamp>2026-01-01T10:00:00.000Z</timestamp>", run},
		{"an output that quotes its closing tag", taskOutput("echo '</output>'\n" + run), "echo '</output>'\n" + run},
		{"still running, no output", "<retrieval_status>not_ready</retrieval_status>\n\n<task_id>a1</task_id>\n\n<status>running</status>", ""},
		{"a tool error", "<tool_use_error>No task found with ID: b6kpwyvm1</tool_use_error>", ""},
		{"no closing tag", strings.TrimSuffix(taskOutput(run), "</output>"), ""},
		{"prose after the output", taskOutput(run) + "\nThe run failed; see above.", ""},
		{"tags around a short output", taskOutput("ok\n") + strings.Repeat("\n<note>x</note>", 20), ""},
		{"a line that is not a tag", "Status: done\n<output>\n" + run + "</output>", ""},
		{"an XML document", "<?xml version=\"1.0\"?>\n<testsuites>\n" + run + "</testsuites>", ""},
		{"Gemini CLI's shell", geminiShell(strings.TrimSuffix(run, "\n")), strings.TrimSuffix(strings.SplitN(run, "\n", 2)[1], "\n")},
		{"Gemini CLI's shell, an output with its own Error: line", geminiShell("Error: boom\n" + strings.TrimSuffix(run, "\n")), strings.TrimSuffix(run, "\n")},
		{"Gemini CLI's shell, one line of output", geminiShell(strings.Repeat("x", 400)), ""},
		{"Gemini CLI's shell, a field it does not write", geminiShell(strings.TrimSuffix(run, "\n")) + "\nNote: x", ""},
		{"a command line in prose", "Command: run it\nThen more prose follows.\nOutput: " + run + "\nError: (none)", ""},
	} {
		head, body, tail, ok := harnessEnvelope(c.text)
		if ok != (c.body != "") || body != c.body {
			t.Errorf("%s: ok %v, body %.60q; want %.60q", c.name, ok, body, c.body)
			continue
		}
		if ok && head+body+tail != c.text {
			t.Errorf("%s: the parts do not make the text", c.name)
		}
	}
}

// TestTaskOutputKeepsSummary: a run fetched with TaskOutput, or run by
// Gemini CLI's shell, keeps its summary and failing test, and the harness's
// lines, as the run printed alone does.
func TestTaskOutputKeepsSummary(t *testing.T) {
	run := strings.Repeat("tests/test_a.py::test_x PASSED                                   [ 10%]\n", 200) +
		"FAILED tests/test_a.py::test_y - AssertionError: 1 != 2\n=== 1 failed, 200 passed in 3.21s ===\n"
	text := taskOutput(run)
	h := Hint{ToolName: "TaskOutput", Args: `{"task_id":"bc1c6c5","block":true,"timeout":120000}`}
	s := Structural(StructuralOptions{TargetRatio: 10})
	out, rep := s.Compress(text, h)
	if !rep.Changed || rep.Kind != KindTestLog {
		t.Fatalf("changed %v, kind %s", rep.Changed, rep.Kind)
	}
	for _, want := range []string{"<exit_code>1</exit_code>", "<output>\n", "FAILED tests/test_a.py::test_y", "=== 1 failed, 200 passed in 3.21s ===\n</output>"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q dropped:\n%s", want, out)
		}
	}
	if err := checkGuards(s, text, h); err != nil {
		t.Error(err)
	}
	text = geminiShell(strings.TrimSuffix(run, "\n"))
	h = Hint{ToolName: "run_shell_command", Args: `{"command":"pytest -q"}`}
	out, rep = s.Compress(text, h)
	if !rep.Changed || rep.Kind != KindTestLog {
		t.Fatalf("Gemini CLI: changed %v, kind %s", rep.Changed, rep.Kind)
	}
	for _, want := range []string{"Command: pytest -q\nDirectory: (root)\nOutput: ", "FAILED tests/test_a.py::test_y", "=== 1 failed, 200 passed in 3.21s ===\nError: (none)\nExit Code: 1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("Gemini CLI: %q dropped:\n%s", want, out)
		}
	}
	if err := checkGuards(s, text, h); err != nil {
		t.Error(err)
	}
}

// TestNestedEnvelopes: an output inside a harness's lines is not read for
// another harness's (each level would scan the rest of the text again),
// so the inner tags stay as they are.
func TestNestedEnvelopes(t *testing.T) {
	run := strings.Repeat("tests/test_a.py::test_x PASSED\n", 400) + "=== 1 failed, 400 passed in 0.3s ===\n"
	text := run
	for range 2000 {
		text = "<a>b</a>\n<output>\n" + text + "</output>"
	}
	out, rep := Structural(StructuralOptions{TargetRatio: 4}).Compress(text, Hint{ToolName: "TaskOutput"})
	if !strings.HasPrefix(out, "<a>b</a>\n<output>\n<a>b</a>\n<output>\n") || !strings.HasSuffix(out, "</output></output>") {
		t.Errorf("kind %s, changed %v: the nested tags were not kept: %.200q … %.100q", rep.Kind, rep.Changed, out, out[max(len(out)-100, 0):])
	}
}

// FuzzHarnessEnvelope: the parts always make the text, and the output is
// at least three quarters of it.
func FuzzHarnessEnvelope(f *testing.F) {
	f.Add(taskOutput("a\nb\n"))
	f.Add("<status>completed</status>\n<stdout>\n" + strings.Repeat("x\n", 40) + "</stdout>\n<timestamp>t</timestamp>")
	f.Add("<a>b</a>\n<output>\n</output></output>")
	f.Add(geminiShell("a\nb"))
	f.Add("Command: x\nOutput: \nError: y")
	f.Fuzz(func(t *testing.T, text string) {
		head, body, tail, ok := harnessEnvelope(text)
		if !ok {
			return
		}
		if head+body+tail != text {
			t.Fatalf("parts %q %q %q do not make %q", head, body, tail, text)
		}
		if len(body)*4 < len(text)*3 {
			t.Fatalf("output %d bytes of %d", len(body), len(text))
		}
	})
}
