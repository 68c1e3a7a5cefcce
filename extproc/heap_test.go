package extproc

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// currentGCPercent reads GOGC without changing it.
func currentGCPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// With 64 MiB live and 16 MiB of headroom the tuner sets GOGC to about
// 25 and the soft limit to live + 16 MiB (not below minMemoryLimit)
// after a collection; stopping it
// restores GOGC 100 and the limit it found.
func TestHeadroomTuner(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory skews the live heap")
	}
	t.Setenv("GOGC", "")
	before := debug.SetMemoryLimit(-1)
	stop := startHeadroomTuner(16 << 20)
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	var p int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		runtime.GC()
		if p = currentGCPercent(); p < 100 {
			break
		}
	}
	limit := debug.SetMemoryLimit(-1)
	runtime.KeepAlive(live)
	stop()
	if p < minGCPercent || p > 30 {
		t.Fatalf("GOGC %d with 64 MiB live and 16 MiB headroom, want about 25", p)
	}
	if limit < 64<<20 || limit > max(100<<20, minMemoryLimit) {
		t.Fatalf("memory limit %d MiB, want about 80 (at least %d MiB)", limit>>20, minMemoryLimit>>20)
	}
	if currentGCPercent() != 100 || debug.SetMemoryLimit(-1) != before {
		t.Fatal("stop did not restore GOGC and the memory limit")
	}
}
