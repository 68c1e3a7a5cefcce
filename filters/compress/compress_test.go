package compress

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/toolproc/toolproc/filters/clamp"
)

func TestPassthrough(t *testing.T) {
	s := Passthrough()
	text := "line one\nline two\n"
	out, rep := s.Compress(text, Hint{ToolName: "Bash"})
	if out != text || rep.Changed || rep.BytesBefore != len(text) || rep.BytesAfter != len(text) || rep.LinesBefore != 2 || rep.LinesAfter != 2 {
		t.Fatalf("passthrough changed something: %q %+v", out, rep)
	}
	if s.Name() != "passthrough" {
		t.Errorf("Name = %q", s.Name())
	}
}

func TestSimple(t *testing.T) {
	s := Simple(5)
	if s.Name() != "simple" {
		t.Errorf("Name = %q", s.Name())
	}
	text := "one two  three\nfour five six seven eight nine ten eleven twelve thirteen fourteen\n"
	out, rep := s.Compress(text, Hint{})
	want := "one two  three\nfour five\n[… 9 words omitted …]"
	if out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
	if !rep.Changed || rep.Omitted != 9 || rep.BytesAfter != len(want) || rep.LinesBefore != 2 || rep.LinesAfter != 3 {
		t.Errorf("report %+v", rep)
	}
	if again, rep := s.Compress(out, Hint{}); again != out || rep.Changed {
		t.Errorf("not idempotent: %q", again)
	}
	// At or under the word count, or when the marker would not save
	// bytes, the text is left alone.
	for _, text := range []string{"a b c d e", "a b c d e f g h", "  a\tb\n"} {
		if out, rep := s.Compress(text, Hint{}); out != text || rep.Changed {
			t.Errorf("%q changed to %q", text, out)
		}
	}
	// Zero means 50 words.
	long := strings.Repeat("word ", 200)
	out, _ = Simple(0).Compress(long, Hint{})
	if out != strings.Repeat("word ", 49)+"word\n[… 150 words omitted …]" {
		t.Errorf("Simple(0): %q", out)
	}
}

func TestStructuralUnderTargetUntouched(t *testing.T) {
	s := Structural(StructuralOptions{})
	text := strings.Repeat("FAILED tests/test_x.py::test_y - AssertionError\n", 100) // 4.9 KB < 8 KB
	out, rep := s.Compress(text, bash("pytest"))
	// Nor is it read: an output left as it is has no kind to report.
	if out != text || rep.Changed || rep.Kind != "" || rep.BytesAfter != len(text) {
		t.Fatalf("under-target input changed: %+v", rep)
	}
	if s.Name() != "structural" {
		t.Errorf("Name = %q", s.Name())
	}
}

func TestMarkers(t *testing.T) {
	ours := []string{
		linesMarker(412, "passing tests"),
		linesMarker(1, "line 7"),
		repeatMarker(312),
		repeatMarker(1),
		countMarker(1234, "bytes"),
		countMarker(97, "items"),
		countMarker(1, "items"),
		countMarker(12, "keys"),
		countMarker(900, "words"),
		"prefix " + countMarker(5, "bytes") + " suffix",
		`["a", "` + countMarker(3, "items") + `"]`,
	}
	for _, m := range ours {
		if !hasOwnMarker(m) {
			t.Errorf("hasOwnMarker(%q) = false", m)
		}
	}
	if got := linesMarker(412, "passing tests"); got != "[… 412 lines omitted: passing tests …]" {
		t.Errorf("linesMarker = %q", got)
	}
	if got := repeatMarker(312); got != "[… line repeated 312 times …]" {
		t.Errorf("repeatMarker = %q", got)
	}
	if got := countMarker(1, "items"); got != "[… 1 item omitted …]" {
		t.Errorf("countMarker = %q", got)
	}
	// The clamp's marker and look-alikes are not ours: clamped output is
	// still compressed.
	notOurs := []string{
		"[… 12 lines omitted …]",
		"[… 12 lines, 300 bytes omitted …]",
		"[... omitted 10 of 300 lines ...]",
		"[… 12 lines omitted: no close",
		"[… 12 lines omitted: broken\n …]",
		"[… line repeated x times …]",
		"[… lines omitted: x …]",
		"plain text",
	}
	for _, m := range notOurs {
		if hasOwnMarker(m) {
			t.Errorf("hasOwnMarker(%q) = true", m)
		}
	}
}

func TestAlreadyCompressedIsLeftAlone(t *testing.T) {
	s := Structural(StructuralOptions{TargetBytes: 256})
	text := synthLog(400)
	once, rep := s.Compress(text, bash("cat app.log"))
	if !rep.Changed {
		t.Fatal("not compressed")
	}
	twice, rep := s.Compress(once, bash("cat app.log"))
	if twice != once || rep.Changed {
		t.Fatal("second pass changed the output")
	}
	// Clamped text (the clamp's marker has no reason) is compressed.
	clamped := strings.Repeat("x\n", 10) + "[… 5000 lines omitted …]\n" + text
	out, rep := s.Compress(clamped, bash("cat app.log"))
	if !rep.Changed || !strings.Contains(out, "[… 5000 lines omitted …]") {
		t.Errorf("clamped text: changed=%v, clamp marker kept=%v", rep.Changed, strings.Contains(out, "[… 5000 lines omitted …]"))
	}
}

func TestLongLinesCutOnRuneBoundaries(t *testing.T) {
	// One huge line of multi-byte text among others.
	line := strings.Repeat("é中🙂", 5000)
	text := "start\n" + line + "\nerror: the end\n" + strings.Repeat("filler line\n", 300)
	s := Structural(StructuralOptions{TargetBytes: 1024})
	out, rep := s.Compress(text, Hint{})
	if !rep.Changed || !utf8.ValidString(out) || len(out) > len(text) {
		t.Fatalf("changed=%v valid=%v len=%d", rep.Changed, utf8.ValidString(out), len(out))
	}
	if !strings.Contains(out, "error: the end") {
		t.Errorf("error line lost")
	}
	if err := checkGuards(s, text, Hint{}); err != nil {
		t.Error(err)
	}
}

func TestTrailingNewlineAndCRLF(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, "INFO request %d served\r\n", i)
	}
	b.WriteString("ERROR database unreachable\r\n")
	text := b.String()
	s := Structural(StructuralOptions{TargetBytes: 1024})
	out, rep := s.Compress(text, Hint{})
	if !rep.Changed || !strings.HasSuffix(out, "ERROR database unreachable\r\n") {
		t.Fatalf("tail lost: %q", out[max(0, len(out)-80):])
	}
	if err := checkGuards(s, text, Hint{}); err != nil {
		t.Error(err)
	}
	// Without a trailing newline none is added.
	text = strings.TrimSuffix(text, "\r\n")
	out, _ = s.Compress(text, Hint{})
	if strings.HasSuffix(out, "\n") {
		t.Errorf("newline added")
	}
}

func TestContextLines(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 400; i++ {
		if i == 200 {
			b.WriteString("ValueError: bad input at record 200\n")
			continue
		}
		fmt.Fprintf(&b, "processing record %04d of the nightly batch\n", i)
	}
	text := b.String()
	with, _ := Structural(StructuralOptions{TargetBytes: 600, ContextLines: 2}).Compress(text, Hint{})
	without, _ := Structural(StructuralOptions{TargetBytes: 600, ContextLines: -1}).Compress(text, Hint{})
	for _, l := range []string{"record 0198", "record 0199", "record 0201", "record 0202"} {
		if !strings.Contains(with, l) {
			t.Errorf("context line %q missing with ContextLines 2", l)
		}
		if strings.Contains(without, l) {
			t.Errorf("context line %q kept with ContextLines -1", l)
		}
	}
	if !strings.Contains(without, "ValueError: bad input at record 200") {
		t.Errorf("error line lost")
	}
}

func TestJSONStaysValid(t *testing.T) {
	inputs := []string{
		readTestdata(t, "github_get_repository.json"),
		readTestdata(t, "tau_search_onestop.json"),
		readTestdata(t, "swebench_report.json"),
		readTestdata(t, "mocha_report.json"),
		// Escapes and multi-byte text around every cut point.
		`{"s":"` + strings.Repeat(`a\"b\\c\u00e9d中\n`, 400) + `","n":[` + strings.Repeat(`1,`, 999) + `1]}`,
		// Deep nesting.
		strings.Repeat(`{"k":[`, 200) + `"leaf"` + strings.Repeat(`]}`, 200),
		// A wide object.
		func() string {
			var b strings.Builder
			b.WriteString("{")
			for i := 0; i < 2000; i++ {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `"key%d":%d`, i, i)
			}
			b.WriteString("}")
			return b.String()
		}(),
	}
	for i, in := range inputs {
		for _, target := range []int{64, 500, 2000, 8192} {
			out, rep := Structural(StructuralOptions{TargetBytes: target}).Compress(in, Hint{})
			if len(in) > target && rep.Kind != KindJSON {
				t.Fatalf("input %d: kind %q", i, rep.Kind)
			}
			if !gjson.Valid(out) {
				t.Fatalf("input %d at %d: invalid JSON %q", i, target, out[:min(200, len(out))])
			}
			if len(out) > len(in) || !utf8.ValidString(out) {
				t.Fatalf("input %d at %d: len %d > %d or invalid UTF-8", i, target, len(out), len(in))
			}
			if rep.Changed && (rep.Omitted == 0 && !strings.Contains(out, "bytes omitted")) {
				t.Errorf("input %d at %d: changed but nothing counted", i, target)
			}
			if rep.Changed && len(out) > 2*target+200 {
				t.Errorf("input %d at %d: %d bytes, far over the target", i, target, len(out))
			}
		}
	}
}

func TestReportCounts(t *testing.T) {
	text := synthLog(2000)
	out, rep := Structural(StructuralOptions{}).Compress(text, Hint{})
	if rep.BytesBefore != len(text) || rep.BytesAfter != len(out) || rep.LinesBefore != clamp.CountLines(text) || rep.LinesAfter != clamp.CountLines(out) {
		t.Errorf("report %+v does not match", rep)
	}
	if rep.Omitted <= 0 || rep.Omitted >= rep.LinesBefore {
		t.Errorf("Omitted %d of %d", rep.Omitted, rep.LinesBefore)
	}
}

func TestEdgeInputs(t *testing.T) {
	s := Structural(StructuralOptions{TargetBytes: 16})
	for _, text := range []string{
		"", "\n", "\n\n\n", "x", strings.Repeat("\n", 100), strings.Repeat("a", 100),
		strings.Repeat("same line\n", 100), "\xff\xfe\xfd" + strings.Repeat("\x80 bytes\n", 50),
		strings.Repeat("[… 1 line omitted: x …]\n", 3),
	} {
		if err := checkGuards(s, text, Hint{}); err != nil {
			t.Errorf("%q: %v", text[:min(len(text), 20)], err)
		}
	}
}

// Codex-style shell results wrap the output in JSON; the output inside is
// compressed as the test log it is, and the result stays valid JSON.
func TestEmbeddedShellOutput(t *testing.T) {
	log := readTestdata(t, "pytest_failures.log")
	wrapped := `{"output":` + jsonString(log) + `,"metadata":{"exit_code":1,"duration_seconds":19.4}}`
	h := Hint{ToolName: "shell", Args: `{"command":["bash","-lc","pytest -rA lib/matplotlib/tests/test_figure.py"]}`}
	s := Structural(StructuralOptions{})
	out, rep := s.Compress(wrapped, h)
	if !rep.Changed || rep.Kind != KindJSON || !gjson.Valid(out) {
		t.Fatalf("changed=%v kind=%s valid=%v", rep.Changed, rep.Kind, gjson.Valid(out))
	}
	inner := gjson.Get(out, "output").String()
	for _, k := range []string{
		"FAILED lib/matplotlib/tests/test_figure.py::test_subfigures_wspace_hspace",
		"= 7 failed, 131 passed, 7 skipped in 19.35s =",
		"passing tests …]",
	} {
		if !strings.Contains(inner, k) {
			t.Errorf("lost %q", k)
		}
	}
	if gjson.Get(out, "metadata.exit_code").Int() != 1 || len(out) > 2*DefaultTargetBytes {
		t.Errorf("metadata lost or output too large (%d bytes)", len(out))
	}
	if err := checkGuards(s, wrapped, h); err != nil {
		t.Error(err)
	}
}
