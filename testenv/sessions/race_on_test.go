//go:build race

package sessions

// raceEnabled skips the corpus-wide replay under the race detector (ten
// times slower, and single-goroutine code); `make bench-sessions` and a
// plain `go test` run it.
const raceEnabled = true
