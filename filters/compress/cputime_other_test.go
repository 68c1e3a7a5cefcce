//go:build !unix

package compress

// processCPU is not measured here: cpu-MB/s is not reported.
func processCPU() float64 { return 0 }
