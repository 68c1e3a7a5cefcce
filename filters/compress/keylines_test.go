package compress

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// failedRef is the failure verdict read on its own, line by line, as the
// tiers read it before it shared a pass with KeyLines.
func failedRef(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if len(l) <= 2000 && (isFailingTest(l) || isExitNotice(t) || strings.Contains(t, "Traceback (most recent call last)") ||
			isSummaryLine(l) && (strings.Contains(t, "fail") || strings.Contains(t, "FAIL") || strings.Contains(t, "error") || failedCapitalised(t))) {
			return true
		}
	}
	return false
}

// checkKeyLinesFailed: the one-pass reading answers what KeyLines and the
// verdict read apart answer.
func checkKeyLinesFailed(t *testing.T, name, text string) {
	t.Helper()
	lines, more, failed := KeyLinesFailed(text, 5)
	wantLines, wantMore := KeyLines(text, 5)
	if !reflect.DeepEqual(lines, wantLines) || more != wantMore || failed != failedRef(text) {
		t.Fatalf("%s: KeyLinesFailed = %q, %d, %v; KeyLines and Failed = %q, %d, %v",
			name, lines, more, failed, wantLines, wantMore, failedRef(text))
	}
}

// TestKeyLinesFailed holds the one-pass reading to the separate ones on
// every testdata sample, with LF and CRLF line ends.
func TestKeyLinesFailed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.*"))
	if err != nil || len(files) == 0 {
		t.Fatal("no testdata", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		checkKeyLinesFailed(t, f, text)
		checkKeyLinesFailed(t, f+" (CRLF)", strings.ReplaceAll(text, "\n", "\r\n"))
	}
}

// FuzzKeyLinesFailed: the same for any text.
func FuzzKeyLinesFailed(f *testing.F) {
	for _, s := range []string{"FAILED tests/a.py::t - x\n=== 1 failed in 1s ===\n", "ok\r\nexit status 1\r\n", "Traceback (most recent call last)\nValueError: x\n", "E   assert 1\r\n\r\n", "  x a(b): c\n   ,-[d.ts:1:1]\n 1 | e\n   `----\n  × f\n  ╰─▶ g\r\n   ╭─[h.rs:2:3]\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkKeyLinesFailed(t, "fuzz", text)
	})
}

// TestKeyLinesCILog: history reads a CI job's log (`gh run view
// --log-failed`) through its prefixes: the failing test is a key line and
// the output a failure.
func TestKeyLinesCILog(t *testing.T) {
	text := "test (ubuntu-latest)\tUnit Tests\t2026-07-14T14:03:45.5825655Z ok  \texample.com/app/cache\t0.009s\n" +
		"test (ubuntu-latest)\tUnit Tests\t2026-07-14T14:03:52.0047503Z --- FAIL: TestFullPath (0.01s)\n" +
		"test (ubuntu-latest)\tUnit Tests\t2026-07-14T14:03:52.0083191Z FAIL\texample.com/app/segments\t0.211s\n" +
		"test (ubuntu-latest)\tUnit Tests\t2026-07-14T14:03:52.0404972Z ##[error]Process completed with exit code 1.\n"
	lines, _, failed := KeyLinesFailed(text, 10)
	if !failed {
		t.Error("a CI log with a failing test is not a failure")
	}
	if !slices.Contains(lines, "--- FAIL: TestFullPath (0.01s)") {
		t.Errorf("key lines %q lack the failing test", lines)
	}
}
