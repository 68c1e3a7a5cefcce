//go:build unix

package compress

import "syscall"

// processCPU is the CPU time this process has used, user and system, in
// seconds: on a shared machine a benchmark's wall time counts the other
// tenants' load, its CPU time does not.
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
