//go:build race

package compress

// raceEnabled shortens the corpus-wide runs under the race detector, which
// makes them ten times slower and has nothing to find in single-goroutine
// code beyond what one pass shows.
const raceEnabled = true
