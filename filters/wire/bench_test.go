package wire_test

import (
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// manyResults is a ~1 MB request with 200 tool results of ~5 KB each.
func manyResults(d wire.Dialect) []byte {
	results := make([]string, 200)
	for i := range results {
		results[i] = wiretest.LongOutput(4_800)
	}
	return wiretest.Request(d, results...)
}

// BenchmarkParse is model extraction: one gjson pass over a 1 MB body with
// 200 tool results, per dialect.
func BenchmarkParse(b *testing.B) {
	for _, d := range wire.Dialects {
		b.Run(string(d), func(b *testing.B) {
			body := manyResults(d)
			ep := wire.Detect(wiretest.Path(d), body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				c, err := wire.ParseEndpoint(ep, body)
				if err != nil || len(c.Results) != 200 {
					b.Fatal("parse failed", err)
				}
			}
		})
	}
}
