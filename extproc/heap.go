package extproc

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The Go collector lets the heap grow to (1 + GOGC/100) times what was
// live after the last collection: with the default GOGC=100 a memory store
// holding 256 MiB lets the process reach 512 MiB before collecting, and
// with the soft memory limit (cap + 192 MiB + max_recv_msg_bytes) RSS
// levelled at that limit, cap + 250 MiB (review round 3). What the store
// holds is live for hours; it needs no headroom of its own. headroomTuner
// keeps the process at what is live plus a fixed headroom: after every
// collection it sets GOGC to headroom/live (never above 100, the default,
// so a small heap is collected as usual, and never below minGCPercent),
// and the soft memory limit to live + headroom (never above the
// configured one), which also makes the scavenger hand freed pages back
// to the OS instead of keeping 10 % over the heap goal. Bodies in flight
// are live at the next collection and raise both. The store's values are
// pointer-free, so the extra collections mark little: their cost is in
// the index, not in the bytes.
type headroomTuner struct {
	headroom int64
	ceiling  int64 // the memory limit before the tuner started
	stopped  atomic.Bool
	percent  int
	sample   []metrics.Sample
}

// minGCPercent bounds how often the collector runs on a very large heap.
const minGCPercent = 10

// minMemoryLimit: below it the tuner sets no tighter limit (a small heap
// is left to GOGC).
const minMemoryLimit = 128 << 20

// startHeadroomTuner starts keeping the heap goal at live + headroom and
// returns the function that stops it. Nothing is done when GOGC is set in
// the environment (the operator chose) or headroom ≤ 0.
func startHeadroomTuner(headroom int64) (stop func()) {
	if headroom <= 0 || os.Getenv("GOGC") != "" {
		return func() {}
	}
	t := &headroomTuner{headroom: headroom, percent: 100, ceiling: debug.SetMemoryLimit(-1),
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.arm()
	return func() {
		if t.stopped.CompareAndSwap(false, true) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(t.ceiling)
		}
	}
}

// gcSentinel is garbage from birth: its finalizer runs after the next
// collection, which is when the live heap is known.
type gcSentinel struct{ t *headroomTuner }

func (t *headroomTuner) arm() {
	s := &gcSentinel{t: t}
	runtime.SetFinalizer(s, func(s *gcSentinel) { s.t.afterGC() })
}

func (t *headroomTuner) afterGC() {
	if t.stopped.Load() {
		return
	}
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		if live := int64(t.sample[0].Value.Uint64()); live > 0 {
			p := int(min(100, max(minGCPercent, t.headroom*100/live)))
			if p != t.percent {
				t.percent = p
				debug.SetGCPercent(p)
			}
			debug.SetMemoryLimit(min(t.ceiling, max(live+t.headroom, minMemoryLimit)))
		}
	}
	t.arm()
}
