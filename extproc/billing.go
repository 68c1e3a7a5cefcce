package extproc

import (
	"io"
	"net/http"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/toolproc/toolproc/filters/usage"
	"github.com/toolproc/toolproc/filters/wire"
)

// billing collects what the provider billed for one exchange: the usage of
// the answer, read as its chunks pass to the client, and of every replay
// toolproc sent for it (expand_context continuations, recovery rungs),
// which the provider bills as requests of their own. Readers only observe:
// no byte is held or delayed for them.
type billing struct {
	readers []*usage.Reader
}

func (b *billing) watch(d wire.Dialect, ct string, maxObject int) *usage.Reader {
	r := usage.NewReader(d, ct, maxObject)
	b.readers = append(b.readers, r)
	return r
}

// total sums the bills and says how the reading went: read, or the last
// reason an answer's usage could not be read; "" when no answer was
// watched. rate is the first billed answer's prompt tokens, the scale
// toolproc's removed bytes are converted with.
func (b *billing) total() (u usage.Usage, outcome string, rate int64) {
	for i, r := range b.readers {
		ru, ok := r.Usage()
		switch {
		case ok:
			u = u.Add(ru)
			if rate == 0 {
				rate = ru.Prompt()
			}
			if i == 0 || outcome == "" {
				outcome = "read"
			}
		case r.GaveUp() != "":
			outcome = r.GaveUp()
		case r.Dropped() > 0:
			outcome = "too_large"
		default:
			outcome = "missing"
		}
	}
	return u, outcome, rate
}

// watchAnswer starts reading the usage of the answer's body (a 200 of a
// processed request). bodyStream feeds it every chunk as it arrives,
// before any repair, so it sees exactly what the provider sent.
func (x *exchange) watchAnswer(ct string) {
	if p := pathForLog(x.path); strings.HasSuffix(p, "/count_tokens") || strings.HasSuffix(p, ":countTokens") {
		// Counting tokens is not billed and its answer has no usage
		// (https://docs.anthropic.com/en/docs/build-with-claude/token-counting).
		return
	}
	x.resp.tap = x.bill.watch(x.dialect, ct, x.srv.cfg.Server.UsageMaxObjectBytes)
}

// billedBody reads a replay's answer through a usage reader.
type billedBody struct {
	io.ReadCloser
	r *usage.Reader
}

func (b billedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.r.Write(p[:n])
	}
	return n, err
}

// watchReplay reads the usage of a successful replay's answer as whoever
// consumes it (the stream continuation, the JSON expansion, the recovered
// answer) reads it.
func (x *exchange) watchReplay(resp *http.Response) {
	if resp == nil || resp.StatusCode != http.StatusOK {
		return
	}
	resp.Body = billedBody{resp.Body, x.bill.watch(x.dialect, resp.Header.Get("content-type"), x.srv.cfg.Server.UsageMaxObjectBytes)}
}

// bytesPerToken is the fallback scale when no answer carried usage: about
// four bytes of English or code per token
// (https://help.openai.com/en/articles/4936856-what-are-tokens-and-how-to-count-them).
const bytesPerToken = 4

// RemovedTokens is removedTokens for tools that replay requests outside an
// exchange (the counterfactual check of toolproc report).
func RemovedTokens(bytesRemoved, bytesSent int, prompt int64) int64 {
	return removedTokens(bytesRemoved, bytesSent, prompt)
}

// removedTokens puts the bytes toolproc removed on the provider's scale:
// the request's billed prompt tokens per byte sent upstream, so the
// removed count and the billed counts are in the same unit.
func removedTokens(bytesRemoved, bytesSent int, prompt int64) int64 {
	if bytesRemoved <= 0 {
		return 0
	}
	if prompt <= 0 || bytesSent <= 0 {
		return int64(bytesRemoved / bytesPerToken)
	}
	return int64(float64(bytesRemoved) * float64(prompt) / float64(bytesSent))
}

// finish records, once, what the exchange cost: the usage metrics, the
// removed tokens, and the exchange's audit line. It returns the dynamic
// metadata to send with the exchange's last answer (nil when the exchange
// was not processed). Called when the answer's body ends, and again (a
// no-op then) when the stream closes, for answers that never ended.
func (x *exchange) finish() *structpb.Struct {
	if x.finished || !x.process || x.rewrite.report == nil {
		return nil
	}
	x.finished = true
	m := x.srv.metrics
	d, p := string(x.dialect), x.profile.name
	u, outcome, rate := x.bill.total()
	if outcome != "" {
		m.UsageAnswers.WithLabelValues(d, outcome).Inc()
	}
	for i, n := range u.ByKind() {
		if n > 0 {
			m.UsageTokens.WithLabelValues(p, d, usage.Kinds[i]).Add(float64(n))
		}
	}
	if x.rewrite.tierStep > 0 && u.CacheWrite > 0 {
		m.TierCacheWrite.WithLabelValues(p, d).Add(float64(u.CacheWrite))
	}
	rc := x.receipt()
	removed := removedTokens(rc.BytesRemoved, x.rewrite.report.BytesOut, rate)
	if removed > 0 {
		m.RemovedTokens.WithLabelValues(p, d).Add(float64(removed))
	}
	rec := exchangeAudit{
		Kind: "exchange", RequestID: getHeader(x.rewrite.reqHeaders, "x-request-id"),
		Dialect: d, Profile: p, Model: x.rewrite.model, Tenant: x.rewrite.tenant,
		Results: x.rewrite.report.Results, Compressed: rc.Compressed, Clamped: rc.Clamped, Tiered: rc.Tiered,
		BytesIn: x.rewrite.report.BytesIn, BytesOut: x.rewrite.report.BytesOut, BytesRemoved: rc.BytesRemoved,
		TokensRemoved: removed, References: rc.References, Step: rc.Step, Rung: rc.Rung,
		Expansions: x.expansion.loops, Replays: len(x.bill.readers) - min(len(x.bill.readers), x.answerWatched()),
		UsageOutcome: outcome, Receipt: rc.String(),
	}
	if outcome != "" {
		rec.Usage = &u
	}
	x.srv.audit.writeExchange(rec)
	fields := map[string]any{
		"receipt":           rec.Receipt,
		"tokens_removed":    float64(removed),
		"usage_outcome":     outcome,
		"usage_input":       float64(u.Input),
		"usage_cache_read":  float64(u.CacheRead),
		"usage_cache_write": float64(u.CacheWrite),
		"usage_output":      float64(u.Output),
		"replays":           float64(rec.Replays),
	}
	inner, err := structpb.NewStruct(fields)
	if err != nil {
		return nil
	}
	return &structpb.Struct{Fields: map[string]*structpb.Value{"toolproc": structpb.NewStructValue(inner)}}
}

// answerWatched is 1 when the upstream's own answer was watched (a 200),
// 0 when only replays were (a recovered error).
func (x *exchange) answerWatched() int {
	if x.resp.tap != nil {
		return 1
	}
	return 0
}

// mergeMetadata adds src's toolproc fields to dst's (Envoy merges the
// namespace's fields across answers too: StreamInfo's setDynamicMetadata
// is a MergeFrom).
func mergeMetadata(dst, src *structpb.Struct) *structpb.Struct {
	if dst == nil {
		return src
	}
	if src == nil {
		return dst
	}
	d, s := dst.GetFields()["toolproc"].GetStructValue(), src.GetFields()["toolproc"].GetStructValue()
	if d == nil || s == nil {
		return dst
	}
	for k, v := range s.GetFields() {
		d.Fields[k] = v
	}
	return dst
}
