package extproc

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/testenv/benchbody"
)

// speedProfiles are the two sides of issue 14's CPU goal: the defaults
// against a profile that rewrites nothing (the cost of the exchange alone).
var speedProfiles = []struct{ name, config string }{
	{"disabled", "profiles: {default: {enabled: false}}"},
	{"defaults", ""},
}

// speedSizes are the body sizes of the end-to-end table.
var speedSizes = []struct {
	name string
	n    int
}{{"2KB", 2 << 10}, {"300KB", 300 << 10}, {"1MB", 1 << 20}}

func benchBuilder(b *testing.B) *benchbody.Builder {
	bb, err := benchbody.Load(filepath.Join("..", "filters", "compress", "testdata"))
	if err != nil {
		b.Fatal(err)
	}
	return bb
}

// BenchmarkRequest is one whole request exchange (request headers, the
// body in one BUFFERED message, response headers) over a real gRPC stream,
// on bodies of real tool outputs: "repeated" sends the same body every time
// (the compression cache is warm), "new" a body no cache has seen. The
// ratio defaults/disabled at the same size and case is the CPU goal
// (≤ 3×); MB/s is per core, since the loop is sequential.
func BenchmarkRequest(b *testing.B) {
	bb := benchBuilder(b)
	for _, p := range speedProfiles {
		for _, sz := range speedSizes {
			for _, fresh := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/repeated", p.name, sz.name)
				if fresh {
					name = fmt.Sprintf("%s/%s/new", p.name, sz.name)
				}
				b.Run(name, func(b *testing.B) {
					client := startGRPC(b, testServer(b, p.config))
					eachBody(b, bb, sz.n, fresh, func(body []byte) { exchangeOnce(b, client, body) })
				})
			}
		}
	}
}

// BenchmarkRewrite is the request rewrite alone (no gRPC), per profile,
// size and case, on a server's compiled profile and store.
func BenchmarkRewrite(b *testing.B) {
	bb := benchBuilder(b)
	for _, sz := range speedSizes {
		for _, fresh := range []bool{false, true} {
			name := sz.name + "/repeated"
			if fresh {
				name = sz.name + "/new"
			}
			b.Run(name, func(b *testing.B) {
				r, err := NewRewriter(DefaultConfig(), "")
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				eachBody(b, bb, sz.n, fresh, func(body []byte) {
					if _, err := r.Rewrite("/v1/chat/completions", body); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

// freshNonce numbers the "new" bodies of the whole process. The caches
// (compression, digests, summaries) live as long as the process, so a
// count that restarted with each benchmark run would make every -count run
// after the first, and every profile after the first, a run of bodies the
// caches had seen.
var freshNonce atomic.Int64

// eachBody runs fn once per benchmark iteration on a body of about size
// bytes: the same one every time, or, with fresh, one no earlier iteration
// of the process has built (built outside the timer).
func eachBody(b *testing.B, bb *benchbody.Builder, size int, fresh bool, fn func(body []byte)) {
	body := bb.Body(size, "warm")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if fresh {
			b.StopTimer()
			body = bb.Body(size, strconv.FormatInt(freshNonce.Add(1), 10))
			b.StartTimer()
		}
		fn(body)
	}
}

func exchangeOnce(b *testing.B, client extprocv3.ExternalProcessorClient, body []byte) {
	stream, err := client.Process(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []*extprocv3.ProcessingRequest{
		reqHeaders("/v1/chat/completions", modeBuffered, modeNone),
		reqBody(body, true),
		{Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: hdrs(":status", "200")}},
	} {
		if err := stream.Send(m); err != nil {
			b.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			b.Fatal(err)
		}
	}
	_ = stream.CloseSend()
}

// smallResultsBody is a ~1 MB OpenAI Chat request of 500 tool results of
// about 1.9 KB each (under every limit: nothing to clamp, compress or
// summarise) for a model with a 1M-token window (no tiers).
func smallResultsBody(b *testing.B) []byte {
	bb := benchBuilder(b)
	one := bb.Body(40<<10, "small") // twenty results of ~1.9 KB
	var out []byte
	out = append(out, `{"model":"gpt-4.1","messages":[`...)
	msgs := gjsonRaw(one, "messages")
	for i := 0; len(out) < 1<<20; i++ {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, msgs[1:len(msgs)-1]...)
	}
	return append(out, `]}`...)
}

// BenchmarkScanOnly is a request with nothing to rewrite: every result is
// under the limits. The body is checked and walked once, no result is
// decoded and nothing is copied but the expand_context tool's splice
// ("rewrite"), or nothing at all ("pipeline": the filters alone, for a
// profile that offers no tool). Goal: ≥ 1 GB/s per core.
func BenchmarkScanOnly(b *testing.B) {
	body := smallResultsBody(b)
	b.Run("pipeline", func(b *testing.B) {
		cfg := DefaultConfig()
		cp := &compiledProfile{Profile: cfg.Profiles[DefaultProfile], name: DefaultProfile}
		cp.compress, cp.tiers = compressOptions(cp.Profile, nil), tiersOptions(cp.Profile)
		store := shadow.NewMemory(shadow.MemoryOptions{})
		defer store.Close()
		ep := wire.Detect("/v1/chat/completions", body)
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			conv, err := wire.ParseEndpoint(ep, body)
			if err != nil {
				b.Fatal(err)
			}
			out, rep, err := pipeline.New(history.New(cp.tiers, history.Env{}), shadow.NewCompressFilter(cp.compress, shadow.Env{Tenant: "t", Store: store}),
				clamp.NewFilter(cp.Clamp.ClampLimits())).RunConversation(conv)
			if err != nil || rep.Changed() || len(out) != len(body) {
				b.Fatal("a body with nothing to rewrite was rewritten", err)
			}
		}
	})
	b.Run("rewrite", func(b *testing.B) {
		r, err := NewRewriter(DefaultConfig(), "")
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			out, err := r.Rewrite("/v1/chat/completions", body)
			if err != nil || out.Report.Changed() {
				b.Fatal("a body with nothing to rewrite was rewritten", err)
			}
		}
	})
}

func gjsonRaw(body []byte, path string) string { return gjson.GetBytes(body, path).Raw }
