package compress

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkKeyLinesFailed: the one-pass reading answers what KeyLines and
// Failed answer apart.
func checkKeyLinesFailed(t *testing.T, name, text string) {
	t.Helper()
	lines, more, failed := KeyLinesFailed(text, 5)
	wantLines, wantMore := KeyLines(text, 5)
	if !reflect.DeepEqual(lines, wantLines) || more != wantMore || failed != Failed(text) {
		t.Fatalf("%s: KeyLinesFailed = %q, %d, %v; KeyLines and Failed = %q, %d, %v",
			name, lines, more, failed, wantLines, wantMore, Failed(text))
	}
}

// TestKeyLinesFailed holds the one-pass reading to the two separate ones on
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
	for _, s := range []string{"FAILED tests/a.py::t - x\n=== 1 failed in 1s ===\n", "ok\r\nexit status 1\r\n", "Traceback (most recent call last)\nValueError: x\n", "E   assert 1\r\n\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkKeyLinesFailed(t, "fuzz", text)
	})
}
