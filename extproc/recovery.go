package extproc

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/overflow"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/shape"
	"github.com/toolproc/toolproc/filters/stream"
	"github.com/toolproc/toolproc/filters/wire"
)

// RecoveryHeader tells the client (and access logs) that toolproc answered
// with a replay: the rung that succeeded, or "exhausted".
const RecoveryHeader = "x-toolproc-recovery"

// Recovery outcomes for metrics.
const (
	recoveryRecovered = "recovered"
	recoveryExhausted = "exhausted"
	recoveryNotOurs   = "not_ours"
	recoveryNoRung    = "nothing_to_shrink"
)

// heldError is a FULL_DUPLEX_STREAMED error answer whose headers are not
// answered yet: Envoy sends the body without waiting (docs/envoy-notes.md
// §3.2), so toolproc can read it, classify it and still choose the status
// the client gets.
type heldError struct {
	status  int
	headers *corev3.HeaderMap
	body    []byte
}

// recoverable reports whether this exchange may replay to recover.
func (x *exchange) recoverable() bool {
	rp := x.profile.Recovery
	return x.process && x.rewrite.clientAsk != nil && x.rewrite.upstreamBody != nil && x.srv.replay != nil &&
		rp.Enabled && rp.MaxReplays > 0 && len(rp.Rungs) > 0
}

// neverOverflow are statuses no provider uses for a prompt that is too
// large (auth, rate limits): not worth holding.
var neverOverflow = map[string]bool{"401": true, "403": true, "404": true, "429": true}

// onErrorHeaders decides how an error answer is handled. FULL_DUPLEX: the
// headers answer is deferred until the body is in. BUFFERED: the body comes
// whole with the headers still held, and the body answer may change both.
// STREAMED (and NONE) answer the headers before the body exists, so the
// status the client gets is already decided: no recovery there except for
// errors that open a 200 stream (the overflow gate).
func (x *exchange) onErrorHeaders(status string, hm *corev3.HeaderMap, resp *extprocv3.ProcessingResponse) *extprocv3.ProcessingResponse {
	code, err := strconv.Atoi(status)
	if err != nil || code < 400 || neverOverflow[status] || !x.holdsErrors() || !x.resp.known {
		return resp
	}
	switch x.resp.mode {
	case extprocv3FullDuplex:
		x.recovery.held = &heldError{status: code, headers: hm}
		return nil
	case extprocfilterv3.ProcessingMode_BUFFERED:
		x.resp.rewrite = func(body []byte) ([]byte, bool, *extprocv3.ImmediateResponse) {
			return x.recoverBuffered(code, hm, body)
		}
	}
	return resp
}

// onHeldErrorBody collects a held FULL_DUPLEX error body.
func (x *exchange) onHeldErrorBody(b *extprocv3.HttpBody) []*extprocv3.ProcessingResponse {
	h := x.recovery.held
	h.body = append(h.body, b.GetBody()...)
	if len(h.body) > x.profile.Recovery.MaxErrorBytes {
		// Not an error body any provider sends for an overflow: let it go.
		x.recovery.held = nil
		x.resp.eos = b.GetEndOfStream()
		resps := []*extprocv3.ProcessingResponse{x.withReceipt(headersResponse(dirResponse, &extprocv3.CommonResponse{}))}
		return append(resps, streamedResponses(dirResponse, h.body, b.GetEndOfStream())...)
	}
	if !b.GetEndOfStream() {
		return nil
	}
	return x.finishHeldError(true)
}

// finishHeldError answers the held headers and body: unchanged, or with the
// replay's status, headers and body. eos says whether the body's own end
// of stream is ours to send (false when trailers follow).
func (x *exchange) finishHeldError(eos bool) []*extprocv3.ProcessingResponse {
	// x.recovery.held stays set until the headers are answered: a panic before
	// that must still release the held answer (failOpen).
	h := x.recovery.held
	// The body is over: a duplicate final chunk (envoy#46237) must be
	// ignored like any data after end_of_stream.
	x.resp.eos = true
	unchanged := func() []*extprocv3.ProcessingResponse {
		x.recovery.held = nil
		resps := []*extprocv3.ProcessingResponse{x.withReceipt(headersResponse(dirResponse, &extprocv3.CommonResponse{}))}
		return append(resps, streamedResponses(dirResponse, h.body, eos)...)
	}
	hdr := headerMap(h.headers)
	plain := x.plainErrorBody(hdr, h.body)
	v := overflow.Classify(h.status, hdr, plain)
	if !v.Match() {
		return unchanged()
	}
	res := x.tryLadder(v)
	switch {
	case res.resp != nil:
		defer res.resp.Body.Close()
		ct := res.resp.Header.Get("content-type")
		mutation := x.recoveredHeaders(res.resp.StatusCode, ct, res.rung)
		repair, ok := x.planSuccess(ct)
		if ok && repair.ContentType != "" {
			mutation.SetHeaders = append(mutation.SetHeaders, setHeader("content-type", repair.ContentType))
		}
		var whole []byte
		if !ok || repair.Stream == nil {
			// Read the whole answer before committing to its status: a
			// replay cut short (reset, timeout, past the cap) is a failed
			// recovery, and the client gets the original error instead of
			// a truncated 200 (review finding 19).
			var err error
			if whole, err = readReplay(res.resp.Body, maxContinuationBytes); err != nil {
				x.log.Warn("overflow recovery replay unreadable; the client gets the original error", "error", err.Error())
				return unchanged()
			}
			if ok {
				whole, _ = repair.Whole(whole)
			}
		}
		x.recovery.held = nil
		if x.send == nil || x.send(headersResponse(dirResponse, &extprocv3.CommonResponse{HeaderMutation: mutation})) != nil {
			return nil
		}
		if !ok || repair.Stream == nil {
			return streamedResponses(dirResponse, whole, eos)
		}
		buf := make([]byte, 32<<10)
		for {
			n, err := res.resp.Body.Read(buf)
			if n > 0 {
				if out := repair.Stream.Write(buf[:n]); len(out) > 0 && x.emitResponse(out) != nil {
					break // the client is gone: stop reading the replay
				}
			}
			if err != nil {
				break
			}
		}
		return streamedResponses(dirResponse, repair.Stream.Close(), eos)
	}
	if a, ok := x.failedAnswer(v, res, h.status, hdr, plain); ok {
		x.recovery.held = nil
		mutation := x.recoveredHeaders(a.status, a.contentType, recoveryExhausted)
		mutation.SetHeaders = append(mutation.SetHeaders, a.extra...)
		resps := []*extprocv3.ProcessingResponse{headersResponse(dirResponse, &extprocv3.CommonResponse{HeaderMutation: mutation})}
		return append(resps, streamedResponses(dirResponse, a.body, eos)...)
	}
	return unchanged()
}

// recoverBuffered is the whole-body answer to a BUFFERED error: the
// headers are still held, so status and content-type change with the body.
func (x *exchange) recoverBuffered(status int, hm *corev3.HeaderMap, body []byte) ([]byte, bool, *extprocv3.ImmediateResponse) {
	hdr := headerMap(hm)
	plain := x.plainErrorBody(hdr, body)
	v := overflow.Classify(status, hdr, plain)
	if !v.Match() {
		return body, false, nil
	}
	res := x.tryLadder(v)
	switch {
	case res.resp != nil:
		defer res.resp.Body.Close()
		ct := res.resp.Header.Get("content-type")
		out, err := readReplay(res.resp.Body, maxContinuationBytes)
		if err != nil {
			// Never a truncated 200 (review finding 19): the original error.
			x.log.Warn("overflow recovery replay unreadable; the client gets the original error", "error", err.Error())
			return body, false, nil
		}
		mutation := x.recoveredHeaders(res.resp.StatusCode, ct, res.rung)
		if repair, ok := x.planSuccess(ct); ok {
			if repair.Stream != nil {
				out = append(repair.Stream.Write(out), repair.Stream.Close()...)
			} else if fixed, changed := repair.Whole(out); changed {
				out = fixed
			}
			if repair.ContentType != "" {
				mutation.SetHeaders = append(mutation.SetHeaders, setHeader("content-type", repair.ContentType))
			}
		}
		x.resp.headers = mutation
		return out, true, nil
	}
	if a, ok := x.failedAnswer(v, res, status, hdr, plain); ok {
		x.resp.headers = x.recoveredHeaders(a.status, a.contentType, recoveryExhausted)
		x.resp.headers.SetHeaders = append(x.resp.headers.SetHeaders, a.extra...)
		return a.body, true, nil
	}
	return body, false, nil
}

// recoveredHeaders sets what the client must see of the replay's answer.
// :status may be set on response headers (docs/envoy-notes.md §7).
func (x *exchange) recoveredHeaders(status int, ct, rung string) *extprocv3.HeaderMutation {
	x.recovery.rung = rung
	m := &extprocv3.HeaderMutation{
		SetHeaders: []*corev3.HeaderValueOption{setHeader(":status", strconv.Itoa(status)), setHeader(RecoveryHeader, rung),
			setHeader(ReceiptHeader, x.receipt().String())},
		// The answer is the replay's or toolproc's own, never encoded: the
		// replay asks for no encoding (replayDropped).
		RemoveHeaders: []string{"content-length", "content-encoding"},
	}
	if ct != "" {
		m.SetHeaders = append(m.SetHeaders, setHeader("content-type", ct))
	}
	return m
}

// Recover implements stream.Recoverer: an overflow error opened a 200
// stream before anything reached the client.
func (x *exchange) Recover(v overflow.Verdict) (io.ReadCloser, error) {
	res := x.tryLadder(v)
	if res.resp == nil {
		return x.canonicalStream(v, errNotRecovered)
	}
	if !stream.IsSSE(res.resp.Header.Get("content-type")) {
		res.resp.Body.Close()
		return x.canonicalStream(v, errRecoveryNotStream)
	}
	return res.resp.Body, nil
}

// Recover's refusals: the ladder found no answer that is not an overflow
// (runLadder counted and logged why), or its answer is not a stream the
// gate could splice.
var (
	errNotRecovered      = errors.New("overflow not recovered")
	errRecoveryNotStream = errors.New("overflow recovery replay is not a stream")
)

// ladderResult is the outcome of the escalation ladder: a successful
// replay (resp, body unread), or the last error (status, contentType,
// body) after tried replays.
type ladderResult struct {
	resp        *http.Response
	rung        string
	tried       int
	status      int
	contentType string
	headers     map[string]string // lower-case keys
	body        []byte
}

// runLadder tries the profile's rungs in order, each at most once per
// request and at most max_replays in all, and stops at the first answer
// that is not an overflow.
func (x *exchange) runLadder(v overflow.Verdict) ladderResult {
	m := x.srv.metrics
	rp := x.profile.Recovery
	if x.recovery.rungsUsed == nil {
		x.recovery.rungsUsed = map[string]bool{}
	}
	x.noteVerdict(v)
	var res ladderResult
	for _, rung := range x.ladderRungs(v) {
		// The fallback model is the last resort and has a replay of its
		// own: the rungs before it may have used max_replays.
		if x.recovery.replays >= rp.MaxReplays && (rung != rungFallback || x.recovery.replays > rp.MaxReplays) {
			break
		}
		if x.recovery.rungsUsed[rung] {
			continue
		}
		x.recovery.rungsUsed[rung] = true
		body, injected, ok := x.ladderBody(rung, v)
		if !ok {
			continue
		}
		if x.rewrite.wasSent(body) {
			// The provider has already refused exactly these bytes (the
			// compress rung rebuilds what the first pass sent when every
			// result was compressed then): no replay, no cost.
			m.Recoveries.WithLabelValues(v.Provider, string(v.Class), rung, "same_body").Inc()
			continue
		}
		x.rewrite.markSent(body)
		x.recovery.replays++
		res.tried++
		x.extendTimeout()
		resp, err := x.srv.replay.Do(x.ctx, Replay{Purpose: "overflow_" + rung, Headers: x.rewrite.reqHeaders, Body: body})
		if err != nil {
			m.Recoveries.WithLabelValues(v.Provider, string(v.Class), rung, "replay_failed").Inc()
			x.log.Warn("overflow recovery replay failed", "rung", rung, "error", err.Error())
			break
		}
		ct := resp.Header.Get("content-type")
		if resp.StatusCode == http.StatusOK {
			if stream.IsSSE(ct) {
				// A stream may open with the same overflow: look before
				// handing it on (nothing of it reached the client yet).
				lv, prefix, _ := stream.LeadingError(x.dialect, resp.Body)
				if lv.Match() {
					resp.Body.Close()
					m.Recoveries.WithLabelValues(v.Provider, string(v.Class), rung, "still_overflow").Inc()
					res.status, res.contentType, res.headers, res.body = http.StatusOK, ct, lowerHeader(resp.Header), prefix
					continue
				}
				resp.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(prefix), resp.Body), Closer: resp.Body}
			}
			x.rewrite.upstreamBody = body
			x.expansion.expandable = x.expansion.expandable || injected
			x.watchReplay(resp)
			res.resp, res.rung = resp, rung
			x.recovery.rung = rung // for the receipt, the audit line and the metadata
			m.Recoveries.WithLabelValues(v.Provider, string(v.Class), rung, recoveryRecovered).Inc()
			x.log.Warn("overflow recovered by replay", "provider", v.Provider, "class", string(v.Class),
				"reason", v.Reason, "rung", rung, "replays", x.recovery.replays, "bytes", len(body), "compaction", x.recovery.ladder.compaction)
			return res
		}
		errBody, err := readReplay(resp.Body, int64(rp.MaxErrorBytes))
		resp.Body.Close()
		if err != nil {
			// An error answer we could not read whole is not one to hand
			// on; the last complete one (or the original) stands.
			m.Recoveries.WithLabelValues(v.Provider, string(v.Class), rung, "replay_failed").Inc()
			x.log.Warn("overflow recovery replay unreadable", "rung", rung, "error", err.Error())
			break
		}
		res.status, res.contentType, res.headers, res.body = resp.StatusCode, ct, lowerHeader(resp.Header), errBody
		next := overflow.Classify(resp.StatusCode, lowerHeader(resp.Header), errBody)
		x.noteVerdict(next)
		if !next.Match() {
			// A different error now: that is the answer.
			m.Recoveries.WithLabelValues(v.Provider, string(v.Class), rung, recoveryNotOurs).Inc()
			break
		}
		m.Recoveries.WithLabelValues(v.Provider, string(v.Class), rung, "still_overflow").Inc()
	}
	if res.tried == 0 {
		m.Recoveries.WithLabelValues(v.Provider, string(v.Class), "none", recoveryNoRung).Inc()
		x.log.Warn("overflow not recovered: no rung could shrink the request", "provider", v.Provider, "class", string(v.Class))
	} else {
		m.Recoveries.WithLabelValues(v.Provider, string(v.Class), "all", recoveryExhausted).Inc()
		x.log.Warn("overflow recovery exhausted; the client gets the last error", "provider", v.Provider,
			"class", string(v.Class), "replays", x.recovery.replays, "status", res.status)
	}
	return res
}

// rungBody builds the request of one rung. injected says whether it offers
// expand_context (its references must then be answered). ok=false: the rung
// changes nothing (or cannot run here) and costs no replay.
// shapedRungBody is rungBody for the upstream the profile talks to: a
// text-only upstream refuses the structured history the truncate rung
// builds from the client's body, so the replay is rendered as text too
// (rendering an already rendered body changes nothing).
func (x *exchange) shapedRungBody(rung string) (body []byte, injected, ok bool) {
	if !x.profile.Shape.TextOnly() {
		return x.rungBody(rung)
	}
	if rung == "compress" {
		// Its references would offer expand_context, whose continuation
		// a text-only upstream refuses.
		return nil, false, false
	}
	body, injected, ok = x.rungBody(rung)
	if !ok {
		return nil, false, false
	}
	shaped, _, err := shape.TextOnly(x.endpoint.Dialect, body, shape.Options{InjectSystem: shape.InjectSystem(x.profile.Shape.InjectSystem)})
	if err != nil {
		return nil, false, false
	}
	return shaped, injected, true
}

func (x *exchange) rungBody(rung string) (body []byte, injected, ok bool) {
	rp := x.profile.Recovery
	budget := overflow.ShareBytes(x.ladderWindow(), rp.ContextShare)
	keep := x.profile.Clamp.ClampLimits().Keep
	ask := *x.rewrite.clientAsk
	// A compaction request is cut without references: the summary must be
	// written from what the request holds, and a summariser that expands
	// originals brings back the bytes that overflowed.
	resolvable := x.rewrite.refs && x.srv.store != nil && x.profile.Expand.MaxLoops > 0 && x.recovery.ladder.compaction == "" &&
		wire.ExpandResolvable(x.endpoint, ask, x.recovery.clientBody)
	run := func(src []byte, filters ...pipeline.Filter) ([]byte, pipeline.Report, bool) {
		out, rep, err := pipeline.New(filters...).RunEndpoint(x.endpoint, src)
		return out, rep, err == nil && rep.Changed()
	}
	switch rung {
	case "tiers":
		if !x.profile.Tiers.Enabled {
			return nil, false, false
		}
		var store shadow.Store
		if resolvable {
			store = x.srv.store
		}
		p := x.profile.tiersRung()
		if x.recovery.ladder.window > 0 {
			// The provider's stated window, unless the tiers' own is smaller.
			w, own := x.ladderWindow(), p.tiers.Window
			p.tiers.Window = func(model string) int {
				if own != nil {
					if o := own(model); o > 0 && o < w {
						return o
					}
				}
				return w
			}
		}
		rr, err := rewriteRequestBody(x.ctx, p, store, x.refEnv(), x.endpoint, ask, x.recovery.clientBody)
		if err != nil || rr.tiers == nil || rr.tiers.Stats.Summarized+rr.tiers.Stats.Inputs == 0 {
			return nil, false, false
		}
		if store == nil {
			return rr.out, false, true
		}
		return x.offerExpand(rr.out)
	case "clamp":
		// On the request as last sent: what the pipeline kept, cut to the
		// model's share of its window.
		out, _, changed := run(x.rewrite.upstreamBody, overflow.NewClampRung(budget, keep))
		return out, false, changed
	case "compress":
		if !resolvable {
			return nil, false, false
		}
		// From the client's own body, so the originals kept are the real
		// ones; every result over min_bytes, skip_tools or not.
		opts := x.profile.compress
		opts.Strategy = compress.Structural(compress.StructuralOptions{TargetBytes: min(x.profile.Compress.TargetBytes, budget)})
		opts.Fallback, opts.SkipTool, opts.MaxBytes = nil, nil, 0
		opts.Clamp = clamp.Limits{MaxBytes: budget, Keep: keep}
		env := x.refEnv()
		env.Store = x.srv.store
		cf := shadow.NewCompressFilter(opts, env)
		out, _, changed := run(x.recovery.clientBody, cf, overflow.NewClampRung(budget, keep))
		if !changed || cf.Stats.References == 0 {
			return nil, false, false
		}
		return x.offerExpand(out)
	case "truncate":
		o := overflow.TruncateOptions{MaxChars: rp.TruncateChars, Tool: wire.ExpandToolName}
		if resolvable {
			keys, tenant := x.rewrite.keys, x.rewrite.tenant
			o.ID = func(original string) string { return keys.ID(tenant, []byte(original)) }
		}
		tr := overflow.NewTruncateRung(o)
		out, _, changed := run(x.recovery.clientBody, tr)
		if !changed {
			return nil, false, false
		}
		if o.ID == nil {
			// No store to keep originals: the cut is marked in-band only.
			return out, false, true
		}
		for _, k := range tr.Kept() {
			if err := x.srv.store.Put(x.ctx, x.rewrite.tenant, shadow.Original, k.ID, []byte(k.Original)); err != nil {
				// A reference nobody can expand would be a lie: cut without.
				x.srv.metrics.StoreErrors.WithLabelValues("recovery").Inc()
				o.ID = nil
				out, _, changed = run(x.recovery.clientBody, overflow.NewTruncateRung(o))
				return out, false, changed
			}
		}
		return x.offerExpand(out)
	}
	return nil, false, false
}

// offerExpand adds expand_context to a rung's body that carries references.
func (x *exchange) offerExpand(body []byte) ([]byte, bool, bool) {
	out, changed, err := wire.InjectExpandTool(x.dialect, body)
	if err != nil {
		return nil, false, false
	}
	return out, changed || x.expansion.expandable, true
}

// tiersRung is the profile as the ladder's tiers rung runs it: the cut
// forced to the target, keeping recovery.tiers_keep_recent results.
func (p *compiledProfile) tiersRung() *compiledProfile {
	cp := *p
	cp.tiers.Force = true
	cp.tiers.KeepRecent = min(p.tiers.KeepRecent, max(1, p.Recovery.TiersKeepRecent))
	return &cp
}

// windows merges the profile's window entries over the built-in table.
func (s *Server) windows(rp RecoveryProfile) map[string]int { return windowTable(rp) }

func windowTable(rp RecoveryProfile) map[string]int {
	if len(rp.Windows) == 0 {
		return overflow.DefaultWindows
	}
	out := make(map[string]int, len(overflow.DefaultWindows)+len(rp.Windows))
	for k, v := range overflow.DefaultWindows {
		out[k] = v
	}
	for k, v := range rp.Windows {
		out[k] = v
	}
	return out
}

func lowerHeader(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		if len(v) > 0 {
			out[strings.ToLower(k)] = v[0]
		}
	}
	return out
}

type readCloser struct {
	io.Reader
	io.Closer
}
