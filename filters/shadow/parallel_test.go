package shadow

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// slowSummariser answers after a pause and records how many calls were in
// flight at once.
type slowSummariser struct {
	mu             sync.Mutex
	inFlight, peak int
	calls          atomic.Int32
}

func (s *slowSummariser) Complete(ctx context.Context, req compress.LLMRequest) (string, error) {
	s.calls.Add(1)
	s.mu.Lock()
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.inFlight--; s.mu.Unlock() }()
	select {
	case <-time.After(50 * time.Millisecond):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	first, _, _ := strings.Cut(req.Text, "\n")
	return "SUMMARY of " + first, nil
}

// Review finding 20: summaries of one request ran one after another. With
// Parallel they run side by side, and the request's bytes are exactly those
// of a sequential run (outputs applied in result order).
func TestSummariesRunConcurrently(t *testing.T) {
	var results []string
	for i := range 8 {
		results = append(results, fmt.Sprintf("result %d\n", i)+testLog(400))
	}
	body := wiretest.Request(wire.OpenAIChat, results...)
	rewrite := func(parallel int) ([]byte, *slowSummariser) {
		s := &slowSummariser{}
		o := defaultOpts()
		o.Strategy = compress.LLM(compress.LLMOptions{Timeout: 5 * time.Second, MaxConcurrent: 8, Rate: -1, TargetBytes: 2048}, s)
		o.Parallel = parallel
		f := NewCompressFilter(o, Env{Store: NewMemory(MemoryOptions{}), Tenant: "t"})
		out := run(t, f, wire.OpenAIChat, body)
		if f.Stats.References != 8 {
			t.Fatalf("parallel=%d: %d references", parallel, f.Stats.References)
		}
		return out, s
	}
	seqOut, seq := rewrite(1)
	parOut, par := rewrite(8)
	if seq.peak != 1 || par.peak < 2 {
		t.Fatalf("peak concurrency: sequential %d, parallel %d", seq.peak, par.peak)
	}
	if par.calls.Load() != 8 {
		t.Fatalf("parallel run asked %d summaries for 8 results", par.calls.Load())
	}
	if string(seqOut) != string(parOut) {
		t.Fatal("the parallel run's bytes differ from the sequential run's")
	}
	if !strings.Contains(string(parOut), "SUMMARY of result 7") {
		t.Fatal("summaries not applied")
	}
}
