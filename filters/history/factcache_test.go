package history

import (
	"reflect"
	"strings"
	"testing"
)

// TestFactCache: the cache answers exactly what reading the text answers,
// and keeps the two readings apart.
func TestFactCache(t *testing.T) {
	log := strings.Repeat("tests/test_a.py::test_ok PASSED\n", 100) + "FAILED tests/test_a.py::test_b - assert 1 == 2\n=== 1 failed, 100 passed in 0.5s ===\n"
	for range 2 { // a miss, then a hit
		for _, full := range []bool{true, false} {
			if got, want := cachedFacts(log, full), factsOf(log, full); !reflect.DeepEqual(got, want) {
				t.Fatalf("full=%v: cached %+v, read %+v", full, got, want)
			}
		}
	}
	if f := cachedFacts(log, true); !f.failed || len(f.key) == 0 {
		t.Fatalf("the log's failure was not read: %+v", f)
	}
	if cachedFacts(log, false).failed {
		t.Fatal("the key-lines-only reading came back with the full one's verdict")
	}
}
