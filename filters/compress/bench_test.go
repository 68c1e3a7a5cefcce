package compress

import (
	"fmt"
	"strings"
	"testing"
)

// benchSize is the size of every benchmark input: about the largest tool
// output an agent harness lets through.
const benchSize = 1 << 20

// repeatTo repeats s (with a per-copy prefix from mk) until the result has
// about n bytes.
func repeatTo(n int, mk func(copy int) string) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(mk(i))
	}
	return b.String()
}

// benchInputs builds a ~1 MB input of each kind from the testdata samples.
func benchInputs(b *testing.B) []struct {
	kind Kind
	text string
	hint Hint
} {
	return benchInputsOf(b, benchSize)
}

// benchInputsOf builds an input of about benchSize bytes of each kind.
func benchInputsOf(b testing.TB, benchSize int) []struct {
	kind Kind
	text string
	hint Hint
} {
	pytest := readTestdata(b, "pytest_many_errors.log")
	tb := readTestdata(b, "py_traceback.txt")
	grep := readTestdata(b, "grep_hits.txt")
	read := readTestdata(b, "claude_read.txt")
	repo := readTestdata(b, "github_get_repository.json")
	patch := readTestdata(b, "git_patch.diff")
	files := readTestdata(b, "file_list.txt")

	// A numbered read of a long file: the sample's code, renumbered.
	var code []string
	for _, l := range strings.Split(strings.TrimSuffix(read, "\n"), "\n") {
		code = append(code, stripNumber(l, numArrow))
	}
	var rb strings.Builder
	for i := 0; rb.Len() < benchSize; i++ {
		fmt.Fprintf(&rb, "%6d→%s\n", i+1, code[i%len(code)])
	}
	// A JSON array of many API interactions.
	item := strings.TrimSpace(repo)
	item = strings.TrimSuffix(strings.TrimPrefix(item, "["), "]")
	json := "[" + repeatTo(benchSize, func(i int) string {
		if i == 0 {
			return item
		}
		return "," + item
	}) + "]"
	var prose strings.Builder
	for i := 0; prose.Len() < benchSize; i++ {
		fmt.Fprintf(&prose, "Paragraph %d. The request was received and queued; the worker picked it up after %d ms and wrote the result to the store.\n", i, i%97)
	}
	return []struct {
		kind Kind
		text string
		hint Hint
	}{
		{KindTestLog, repeatTo(benchSize, func(int) string { return pytest }), bash("pytest -rA")},
		{KindTraceback, repeatTo(benchSize, func(int) string { return tb }), bash("python3 inventory.py")},
		{KindSearch, repeatTo(benchSize, func(i int) string { return strings.ReplaceAll(grep, "\n", fmt.Sprintf("\ncopy%d/", i)) }), Hint{ToolName: "Grep"}},
		{KindFileRead, rb.String(), Hint{ToolName: "Read"}},
		{KindJSON, json, Hint{ToolName: "http"}},
		{KindDiff, repeatTo(benchSize, func(int) string { return patch }), bash("git diff")},
		{KindDirListing, repeatTo(benchSize, func(i int) string { return strings.ReplaceAll(files, "\n", fmt.Sprintf("\ncopy%d/", i)) }), bash("git ls-files")},
		{KindLog, synthLog(14000 * benchSize >> 20), bash("journalctl -u orders")},
		{KindText, prose.String(), Hint{}},
	}
}

func BenchmarkStructural(b *testing.B) {
	s := Structural(StructuralOptions{})
	for _, in := range benchInputs(b) {
		if got := Detect(in.text, in.hint); got != in.kind {
			b.Fatalf("%s input detected as %s", in.kind, got)
		}
		b.Run(string(in.kind), func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			b.ReportAllocs()
			var out string
			cpu := processCPU()
			for b.Loop() {
				out, _ = s.Compress(in.text, in.hint)
			}
			reportCPUThroughput(b, len(in.text), processCPU()-cpu)
			b.ReportMetric(float64(len(in.text))/float64(len(out)), "ratio")
		})
	}
}

// reportCPUThroughput reports MB/s per CPU second of this process (the
// loop's own work, its garbage collection included): the figure issue 23's
// "per core" goal means, and one a shared, loaded machine barely moves.
func reportCPUThroughput(b *testing.B, size int, cpuSeconds float64) {
	if cpuSeconds > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/cpuSeconds, "cpu-MB/s")
	}
}

// BenchmarkStructuralScaling runs every kind at 1 MB and 16 MB: MB/s must
// stay flat (every strategy linear in its input; review finding 9's class
// of bug shows here as a collapse at 16 MB).
func BenchmarkStructuralScaling(b *testing.B) {
	s := Structural(StructuralOptions{})
	for _, size := range []int{1 << 20, 16 << 20} {
		for _, in := range benchInputsOf(b, size) {
			b.Run(fmt.Sprintf("%s/%dMB", in.kind, size>>20), func(b *testing.B) {
				b.SetBytes(int64(len(in.text)))
				for b.Loop() {
					s.Compress(in.text, in.hint)
				}
			})
		}
	}
}

func BenchmarkSimple(b *testing.B) {
	text := synthLog(14000)
	s := Simple(50)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		s.Compress(text, Hint{})
	}
}

func BenchmarkDetect(b *testing.B) {
	for _, in := range benchInputs(b) {
		b.Run(string(in.kind), func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			b.ReportAllocs()
			for b.Loop() {
				Detect(in.text, in.hint)
			}
		})
	}
}

// BenchmarkStructuralPathological: shapes an attacker controls (one huge
// line, nothing but newlines, one repeated line, deep JSON-looking text)
// must stay linear too.
func BenchmarkStructuralPathological(b *testing.B) {
	s := Structural(StructuralOptions{})
	for _, size := range []int{1 << 20, 16 << 20} {
		for _, in := range []struct {
			name, text string
			hint       Hint
		}{
			{"one_line", strings.Repeat("a", size), Hint{}},
			{"newlines", strings.Repeat("\n", size), Hint{}},
			{"same_line", strings.Repeat("FAILED tests/test_x.py::test_y - AssertionError\n", size/48), bash("pytest")},
			{"brackets", strings.Repeat("[", size), Hint{ToolName: "http"}},
			{"grep_one_file", strings.Repeat("src/a.go:12:func x() {}\n", size/24), Hint{ToolName: "Grep"}},
		} {
			b.Run(fmt.Sprintf("%s/%dMB", in.name, size>>20), func(b *testing.B) {
				b.SetBytes(int64(len(in.text)))
				for b.Loop() {
					s.Compress(in.text, in.hint)
				}
			})
		}
	}
}

// BenchmarkKeyLinesFailed is the history tiers' read of an old result
// (failing verdict and key lines) on each kind: every line of every
// old command output a new request carries goes through it once.
func BenchmarkKeyLinesFailed(b *testing.B) {
	for _, in := range benchInputs(b) {
		b.Run(string(in.kind), func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				KeyLinesFailed(in.text, 0)
			}
			reportCPUThroughput(b, len(in.text), processCPU()-cpu)
		})
	}
}
