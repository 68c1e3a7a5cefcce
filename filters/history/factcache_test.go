package history

import (
	"reflect"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/shadow"
)

// TestFactCache: the cache answers exactly what reading the text answers,
// and keeps the two readings apart.
func TestFactCache(t *testing.T) {
	log := strings.Repeat("tests/test_a.py::test_ok PASSED\n", 100) + "FAILED tests/test_a.py::test_b - assert 1 == 2\n=== 1 failed, 100 passed in 0.5s ===\n"
	for range 2 { // a miss, then a hit
		for _, full := range []bool{true, false} {
			if got, want := cachedFacts(lazy(log), len(log), full, nil), factsOf(log, full); !reflect.DeepEqual(got, want) {
				t.Fatalf("full=%v: cached %+v, read %+v", full, got, want)
			}
		}
	}
	if f := cachedFacts(lazy(log), len(log), true, nil); !f.failed || len(f.key) == 0 {
		t.Fatalf("the log's failure was not read: %+v", f)
	}
	if cachedFacts(lazy(log), len(log), false, nil).failed {
		t.Fatal("the key-lines-only reading came back with the full one's verdict")
	}
	// Keyed by the fingerprint ref computed: the same answers, the two
	// readings still apart.
	sum := shadow.Fingerprint([]byte(log))
	for range 2 {
		for _, full := range []bool{true, false} {
			if got, want := cachedFacts(lazy(log), len(log), full, &sum), factsOf(log, full); !reflect.DeepEqual(got, want) {
				t.Fatalf("by fingerprint, full=%v: cached %+v, read %+v", full, got, want)
			}
		}
	}
}

func lazy(s string) func() string { return func() string { return s } }
