package sessions

import (
	"testing"

	"github.com/toolproc/toolproc/extproc"
)

// BenchmarkRewriteSession is the request rewrite of a whole real session,
// turn by turn, on a fresh Rewriter (its caches and store start empty, as
// a new process's would): a Claude Code session of daqifi/daqifi-core
// (MIT; corpus/SOURCES.md), 123 OpenAI Chat requests of 228 KB on average,
// each the one before it plus a turn. It is the in-process side of
// benche2e's session cell: the cost of steady traffic, where most of what
// a request carries was seen on the turn before.
func BenchmarkRewriteSession(b *testing.B) {
	ss, err := Load("corpus/claude-code-daqificore.jsonl.gz")
	if err != nil {
		b.Fatal(err)
	}
	total := 0
	for _, s := range ss {
		for _, body := range s.OpenAI {
			total += len(body)
		}
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		r, err := extproc.NewRewriter(extproc.DefaultConfig(), "")
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range ss {
			for _, body := range s.OpenAI {
				if _, err := r.Rewrite("/v1/chat/completions", body); err != nil {
					b.Fatal(err)
				}
			}
		}
		_ = r.Close()
	}
}
