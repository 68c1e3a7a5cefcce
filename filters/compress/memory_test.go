package compress

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// maxAllocPerInputByte is the bound on what one compression allocates, per
// input byte, on any input (review round 3, N4): a compression that holds
// 33 bytes per byte of an 8 MiB result takes a quarter of a GiB, and a few
// concurrent requests take the pod over its memory limit. What is
// allocated bounds what is live at the peak.
const maxAllocPerInputByte = 4

// denseInputs are the line-dense shapes that cost the most per byte: every
// byte a line, a `seq` listing, a `find` of short names, and the opposite
// end, one line of the whole size.
func denseInputs(size int) []struct {
	name string
	text string
	hint Hint
} {
	var seq, find strings.Builder
	for i := 1; seq.Len() < size; i++ {
		fmt.Fprintf(&seq, "%d\n", i)
	}
	for i := 0; find.Len() < size; i++ {
		fmt.Fprintf(&find, "./d%d/f%d\n", i%97, i)
	}
	return []struct {
		name string
		text string
		hint Hint
	}{
		{"blank_lines", strings.Repeat("\n", size), bash("cat big.txt")},
		{"short_lines", seq.String(), bash("seq 1 2000000")},
		{"one_long_line", strings.Repeat("a", size), bash("cat big.txt")},
		{"one_char_lines", strings.Repeat("x\n", size/2), bash("cat big.txt")},
		{"find_short_names", find.String(), bash("find .")},
		{"blank_numbered_read", repeatTo(size, func(i int) string { return fmt.Sprintf("%6d→\n", i+1) }), Hint{ToolName: "Read"}},
		{"ansi_blank_lines", strings.Repeat("\x1b[0m\n", size/5), bash("make")},
		// Every line distinct and kept in a classifier's map: error lines,
		// locations, failing tests, repeated frames.
		{"error_lines", repeatTo(size, func(i int) string { return fmt.Sprintf("E%d: error: x\n", i) }), bash("make")},
		{"locations", repeatTo(size, func(i int) string { return fmt.Sprintf("a/b%d.go:%d: w\n", i, i) }), bash("go vet ./...")},
		{"failing_tests", repeatTo(size, func(i int) string { return fmt.Sprintf("FAILED t.py::t%d\n", i) }), bash("pytest")},
		{"frames", "Traceback (most recent call last):\n" + repeatTo(size, func(i int) string { return fmt.Sprintf("  File \"a%d.py\", line %d, in f\n    g()\n", i, i) }) + "ValueError: x\n", bash("python x.py")},
		{"hits", repeatTo(size, func(i int) string { return fmt.Sprintf("d%d/f%d.go:%d:x\n", i, i, i) }), Hint{ToolName: "Grep"}},
		{"diff", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n" + repeatTo(size, func(i int) string { return fmt.Sprintf("+l%d\n", i) }), bash("git diff")},
		{"json_array", "[" + repeatTo(size, func(i int) string { return fmt.Sprintf("%d,", i) }) + "0]", Hint{ToolName: "http"}},
	}
}

// allocPerByte is what one Compress of text allocates, per input byte.
func allocPerByte(s Strategy, text string, hint Hint) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s.Compress(text, hint)
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(len(text))
}

// TestCompressionMemoryBounded holds every kind of input, the line-dense
// shapes above and 1 MB of each kind the benchmarks use, to the bound, at
// the default aim and at 10x.
func TestCompressionMemoryBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow allocations distort the figures")
	}
	type input struct {
		name string
		text string
		hint Hint
	}
	var inputs []input
	for _, in := range denseInputs(4 << 20) {
		inputs = append(inputs, input{in.name, in.text, in.hint})
	}
	for _, in := range benchInputsOf(t, 1<<20) {
		inputs = append(inputs, input{string(in.kind), in.text, in.hint})
	}
	for _, opts := range []StructuralOptions{{}, {TargetRatio: 10}} {
		s := Structural(opts)
		for _, in := range inputs {
			if got := allocPerByte(s, in.text, in.hint); got > maxAllocPerInputByte {
				t.Errorf("%s (%d bytes, ratio %g): %.1f bytes allocated per input byte, want <= %d",
					in.name, len(in.text), opts.TargetRatio, got, maxAllocPerInputByte)
			}
		}
	}
}

// BenchmarkStructuralMemory reports what compression allocates per input
// byte (B/inbyte) on the shapes of review finding N4.
func BenchmarkStructuralMemory(b *testing.B) {
	s := Structural(StructuralOptions{})
	for _, in := range denseInputs(8 << 20)[:3] {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			b.ReportAllocs()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			start := ms.TotalAlloc
			for b.Loop() {
				s.Compress(in.text, in.hint)
			}
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.TotalAlloc-start)/float64(b.N)/float64(len(in.text)), "B/inbyte")
		})
	}
}

// TestDenseCut: line-dense outputs are cut without a plan, and still keep
// their head and tail, the lines that report, and every guarantee.
func TestDenseCut(t *testing.T) {
	mid := strings.Repeat("\n", 300000) + "FAILED tests/test_io.py::test_read - OSError: disk full\n" +
		strings.Repeat("\n", 300000) + "==== 1 failed, 3 passed in 2.01s ====\n" + strings.Repeat("\n", 300000)
	s := Structural(StructuralOptions{})
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"blank_lines", strings.Repeat("\n", 1<<20), []string{" lines omitted: "}},
		{"reporting_lines_between", "collected 4 items\n" + mid + "exit 1\n",
			[]string{"collected 4 items\n", "FAILED tests/test_io.py::test_read - OSError: disk full\n", "==== 1 failed, 3 passed in 2.01s ====\n", "exit 1\n"}},
		{"seq", denseInputs(1 << 20)[1].text, []string{"1\n2\n3\n", " lines omitted: "}},
		{"long_line_then_blanks", strings.Repeat("é", 1<<16) + strings.Repeat("\n", 1<<21), []string{"bytes omitted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tooDense(tc.text) {
				t.Fatal("not dense")
			}
			out, rep := s.Compress(tc.text, bash("cat out.txt"))
			if !rep.Changed || len(out) >= len(tc.text) || len(out) > 2*DefaultTargetBytes {
				t.Fatalf("changed=%v, %d -> %d bytes", rep.Changed, len(tc.text), len(out))
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if !utf8.ValidString(out) {
				t.Error("invalid UTF-8")
			}
			if again, _ := s.Compress(out, bash("cat out.txt")); again != out {
				t.Error("not idempotent")
			}
			if out2, _ := s.Compress(tc.text, bash("cat out.txt")); out2 != out {
				t.Error("not deterministic")
			}
			if got, want := rep.LinesAfter+rep.Omitted-markerLines(out), rep.LinesBefore; got != want {
				t.Errorf("kept %d + omitted %d - markers %d = %d lines, input had %d", rep.LinesAfter, rep.Omitted, markerLines(out), got, want)
			}
		})
	}
}

// markerLines counts the marker lines of out.
func markerLines(out string) int {
	n := 0
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, "[… ") && strings.HasSuffix(l, " …]") {
			n++
		}
	}
	return n
}
