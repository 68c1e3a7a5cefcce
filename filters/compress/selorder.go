package compress

import (
	"iter"
	"slices"
)

// inOrder yields the keys of each segment a[bounds[t]:bounds[t+1]] in
// increasing order, segment after segment, sorting only as far as the
// consumer reads. Selection stops soon after the budget is spent (a few
// hundred lines of an output of tens of thousands at the default aim), so
// sorting every tier in full was a tenth of a traceback's or a test log's
// compression (issue 23). A long segment is made a heap and popped; once a
// sixteenth of it is read the rest is sorted and read in place, so reading
// everything costs about one sort. Keys are unique (each holds its line's
// index), so the order read is the order a full sort gives. Nothing is
// allocated: a plan stays within its bytes per line.
func inOrder(a []uint64, bounds []int) iter.Seq2[int, uint64] {
	return func(yield func(int, uint64) bool) {
		k := 0
		for t := 0; t+1 < len(bounds); t++ {
			seg := a[bounds[t]:bounds[t+1]]
			if len(seg) <= lazySortMin {
				slices.Sort(seg)
				for _, v := range seg {
					if !yield(k, v) {
						return
					}
					k++
				}
				continue
			}
			heapifyKeys(seg)
			for popped, switchAt := 0, len(seg)/16; len(seg) > 0; popped++ {
				if popped == switchAt {
					slices.Sort(seg)
					for _, v := range seg {
						if !yield(k, v) {
							return
						}
						k++
					}
					break
				}
				v := seg[0]
				last := len(seg) - 1
				seg[0] = seg[last]
				seg = seg[:last]
				siftDownKeys(seg, 0)
				if !yield(k, v) {
					return
				}
				k++
			}
		}
	}
}

// lazySortMin is the segment length up to which inOrder sorts at once.
const lazySortMin = 1024

// heapifyKeys makes a a min-heap.
func heapifyKeys(a []uint64) {
	for i := len(a)/2 - 1; i >= 0; i-- {
		siftDownKeys(a, i)
	}
}

func siftDownKeys(a []uint64, i int) {
	n := len(a)
	v := a[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && a[c+1] < a[c] {
			c++
		}
		if a[c] >= v {
			break
		}
		a[i] = a[c]
		i = c
	}
	a[i] = v
}
