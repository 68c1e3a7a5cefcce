package history

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestFactCache: the cache answers exactly what reading the text answers,
// keeps the two readings apart, and stays within two generations.
func TestFactCache(t *testing.T) {
	m := newFactMemo(4096)
	log := strings.Repeat("tests/test_a.py::test_ok PASSED\n", 100) + "FAILED tests/test_a.py::test_b - assert 1 == 2\n=== 1 failed, 100 passed in 0.5s ===\n"
	for range 2 { // a miss, then a hit
		for _, full := range []bool{true, false} {
			if got, want := m.get(log, full), factsOf(log, full); !reflect.DeepEqual(got, want) {
				t.Fatalf("full=%v: cached %+v, read %+v", full, got, want)
			}
		}
	}
	if f := m.get(log, true); !f.failed || len(f.key) == 0 {
		t.Fatalf("the log's failure was not read: %+v", f)
	}
	for i := range 200 {
		m.get(fmt.Sprintf("%s\nrun %d", log, i), true)
	}
	if len(m.cur)+len(m.old) > 2*4096/64 {
		t.Fatalf("cache holds %d entries past its bound", len(m.cur)+len(m.old))
	}
}
