package pipeline_test

import (
	"testing"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// BenchmarkPipeline is the full request pipeline (parse, clamp every result,
// splice, validate) on a ~1 MB body with 200 tool results, per dialect. A
// tight profile (4 KiB / 40 lines) makes every result change.
func BenchmarkPipeline(b *testing.B) {
	for _, tc := range []struct {
		name string
		lim  clamp.Limits
	}{
		{"default", defaultClamp},
		{"tight", clamp.Limits{MaxBytes: 4096, MaxLines: 40}},
	} {
		for _, d := range wire.Dialects {
			b.Run(tc.name+"/"+string(d), func(b *testing.B) {
				results := make([]string, 200)
				for i := range results {
					results[i] = wiretest.LongOutput(4_800)
				}
				body := wiretest.Request(d, results...)
				ep := wire.Detect(wiretest.Path(d), body)
				p := pipeline.New(clamp.NewFilter(tc.lim))
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := p.RunEndpoint(ep, body); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
