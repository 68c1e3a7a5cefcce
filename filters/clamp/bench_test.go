package clamp

import "testing"

func BenchmarkText(b *testing.B) {
	s := genLog(1 << 20)
	cases := []struct {
		name string
		lim  Limits
	}{
		{"head", Limits{MaxBytes: DefaultMaxBytes, MaxLines: DefaultMaxLines, Keep: KeepHead}},
		{"tail", Limits{MaxBytes: DefaultMaxBytes, MaxLines: DefaultMaxLines, Keep: KeepTail}},
		{"head_tail", Limits{MaxBytes: DefaultMaxBytes, MaxLines: DefaultMaxLines, Keep: KeepHeadTail}},
		{"under_limit", Limits{MaxBytes: 2 << 20, MaxLines: 1 << 20}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				Text(s, c.lim)
			}
		})
	}
}

// BenchmarkApplyBlocks is the multi-block case: four 256 KB text blocks of
// one tool result sharing the default budget.
func BenchmarkApplyBlocks(b *testing.B) {
	s := genLog(1 << 18)
	in := []string{s, s, s, s}
	for _, keep := range allKeeps {
		b.Run(string(keep), func(b *testing.B) {
			lim := Limits{MaxBytes: DefaultMaxBytes, MaxLines: DefaultMaxLines, Keep: keep}
			b.SetBytes(int64(4 * len(s)))
			b.ReportAllocs()
			for b.Loop() {
				Apply(in, lim)
			}
		})
	}
}
