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

// BenchmarkQuoteString quotes a tool output for a splice (a compressed
// result, a summary): mostly ASCII with a line break every few dozen
// bytes, and one with a multi-byte character on every line (Claude Code's
// Read writes "→" after each line number).
func BenchmarkQuoteString(b *testing.B) {
	ascii := wiretest.LongOutput(64 << 10)
	numbered := ""
	for i := 0; len(numbered) < 64<<10; i++ {
		numbered += "   12→	func (p *plan) take(i int) (cost, taken int) {\n"
	}
	for _, tc := range []struct{ name, s string }{{"ascii", ascii}, {"numbered", numbered}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.s)))
			b.ReportAllocs()
			for b.Loop() {
				_ = wire.QuoteString(tc.s)
			}
		})
	}
}
