package compress

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestInOrder checks that inOrder yields every segment in sorted order,
// whether the consumer reads all of it or stops early, on the shapes
// selection gives it (rank over index: runs up and down, equal ranks) and
// on random keys.
func TestInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]func(i, n int) uint64{
		"fill":   func(i, n int) uint64 { return uint64(uint32(min(i, 2*(n-1-i))^1<<31))<<32 | uint64(i) },
		"equal":  func(i, n int) uint64 { return uint64(1<<31)<<32 | uint64(i) },
		"few":    func(i, n int) uint64 { return uint64(uint32(r.IntN(5))^1<<31)<<32 | uint64(i) },
		"random": func(i, n int) uint64 { return r.Uint64()>>1<<1 | uint64(i&1) },
	}
	for name, f := range shapes {
		for _, sizes := range [][]int{{0}, {1, 0, 2}, {1023, 1024, 1025}, {5000, 0, 40000}} {
			var a []uint64
			bounds := []int{0}
			for _, n := range sizes {
				for i := range n {
					a = append(a, f(i, n))
				}
				seg := a[bounds[len(bounds)-1]:]
				r.Shuffle(len(seg), func(i, j int) { seg[i], seg[j] = seg[j], seg[i] })
				bounds = append(bounds, len(a))
			}
			var want []uint64
			for s := 0; s+1 < len(bounds); s++ {
				seg := slices.Clone(a[bounds[s]:bounds[s+1]])
				slices.Sort(seg)
				want = append(want, seg...)
			}
			for _, stop := range []int{0, 1, 100, 3000, len(a)} {
				b := slices.Clone(a)
				var got []uint64
				for k, v := range inOrder(b, bounds) {
					if k != len(got) {
						t.Fatalf("%s %v: index %d, want %d", name, sizes, k, len(got))
					}
					if k == stop {
						break
					}
					got = append(got, v)
				}
				if !slices.Equal(got, want[:min(stop, len(want))]) {
					t.Fatalf("%s %v, stop at %d: not in sorted order", name, sizes, stop)
				}
			}
		}
	}
}
