package extproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/stream"
	"github.com/toolproc/toolproc/filters/wire"
)

// replayPurposeExpand labels expand_context continuations in metrics and in
// the x-toolproc-replay header.
const replayPurposeExpand = "expand_context"

// maxContinuationBytes bounds a non-streaming continuation answer held in
// memory; Envoy's own buffer limit bounds the first answer the same way.
const maxContinuationBytes = 64 << 20

// Continue implements stream.Continuer, and serves the JSON path too: it
// answers t's expand_context calls from the store, appends the model's turn
// and the answers to the request last sent upstream, and replays that
// through Envoy's replay listener with the original request's headers. It
// returns the continuation's answer body, or ok=false (loop limit, replay
// failure, non-200 answer) and the caller ends the answer without the
// phantom calls.
func (x *exchange) Continue(t wire.Turn) (io.ReadCloser, bool) {
	d := string(x.dialect)
	m := x.srv.metrics
	m.Expansions.WithLabelValues(d, "requested").Add(float64(len(t.Calls)))
	if x.loops >= x.profile.Expand.MaxLoops {
		m.Expansions.WithLabelValues(d, "loop_limit").Inc()
		x.log.Warn("expand_context loop limit reached; answer delivered without the phantom calls",
			"max_loops", x.profile.Expand.MaxLoops)
		return nil, false
	}
	x.loops++
	results := make([]wire.ExpandResult, len(t.Calls))
	for i, c := range t.Calls {
		results[i] = wire.ExpandResult{Call: c, Text: x.lookup(c.ID)}
	}
	next, err := wire.Continue(x.dialect, x.upstreamBody, t, results)
	if err != nil {
		m.Expansions.WithLabelValues(d, "replay_failed").Inc()
		x.log.Warn("expand_context continuation could not be built", "error", err.Error())
		return nil, false
	}
	x.extendTimeout()
	resp, err := x.srv.replay.Do(context.Background(), Replay{Purpose: replayPurposeExpand, Headers: x.reqHeaders, Body: next})
	if err != nil {
		m.Expansions.WithLabelValues(d, "replay_failed").Inc()
		x.log.Warn("expand_context replay failed", "error", err.Error(), "loop", x.loops)
		return nil, false
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		m.Expansions.WithLabelValues(d, "replay_failed").Inc()
		x.log.Warn("expand_context replay answered an error", "status", resp.StatusCode, "loop", x.loops)
		return nil, false
	}
	x.upstreamBody = next
	x.log.Info("expand_context answered", "calls", len(t.Calls), "loop", x.loops)
	return resp.Body, true
}

// notFoundText and unavailableText answer an id toolproc cannot read. The
// model is told plainly, so it carries on with the shortened result rather
// than asking again.
const (
	notFoundText    = "expand_context: no original is stored under id %q (it expired, or belongs to another caller). Continue with the shortened tool result."
	malformedText   = "expand_context: the call did not carry a valid id (expected {\"id\":\"sh_…\"}). Continue with the shortened tool result."
	unavailableText = "expand_context: the store of originals is unavailable right now. Continue with the shortened tool result."
)

// lookup reads one original for this exchange's tenant; another tenant's id
// is simply not found.
func (x *exchange) lookup(id string) string {
	d := string(x.dialect)
	m := x.srv.metrics
	if !shadow.ValidID(id) {
		m.Expansions.WithLabelValues(d, "not_found").Inc()
		return malformedText
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	v, err := x.srv.store.Get(ctx, x.tenant, shadow.Original, id)
	switch {
	case err == nil:
		m.Expansions.WithLabelValues(d, "resolved").Inc()
		return string(v)
	case errors.Is(err, shadow.ErrNotFound):
		m.Expansions.WithLabelValues(d, "not_found").Inc()
		return fmt.Sprintf(notFoundText, id)
	default:
		m.Expansions.WithLabelValues(d, "store_error").Inc()
		m.StoreErrors.WithLabelValues("expand").Inc()
		x.log.Warn("shadow store read failed", "error", err.Error())
		return unavailableText
	}
}

// expandJSON resolves expand_context calls in a complete (non-streaming)
// answer, loop after loop, and returns the answer the client gets: the
// continuation's, or the last one with the phantom calls stripped.
func (x *exchange) expandJSON(body []byte) ([]byte, bool) {
	answer, changed := body, false
	for {
		t, _, err := wire.TurnFromAnswer(x.dialect, answer)
		if err != nil || len(t.Calls) == 0 {
			return answer, changed
		}
		rc, ok := x.Continue(t)
		if !ok {
			out, stripped := wire.StripExpandCalls(x.dialect, answer)
			return out, changed || stripped
		}
		next, err := io.ReadAll(io.LimitReader(rc, maxContinuationBytes))
		rc.Close()
		if err != nil {
			x.srv.metrics.Expansions.WithLabelValues(string(x.dialect), "replay_failed").Inc()
			out, stripped := wire.StripExpandCalls(x.dialect, answer)
			return out, changed || stripped
		}
		answer, changed = next, true
	}
}

// planExpansion wraps the answer's repair so expand_context calls are
// answered inside toolproc. ok=false leaves repair as it was.
func (x *exchange) planExpansion(ct string, repair stream.Repair, planned bool) (stream.Repair, bool) {
	opts := stream.Options{XMLToolCalls: x.profile.Stream.XMLToolCalls}
	switch {
	case stream.IsSSE(ct):
		newInner := func() stream.Normalizer {
			r, ok := stream.PlanRepair(x.dialect, ct, *x.clientAsk, opts)
			if !ok || r.Stream == nil {
				return nil
			}
			return r.Stream
		}
		inner := newInner()
		if inner == nil {
			return repair, planned
		}
		var emit func([]byte) error
		if x.resp.known && x.resp.mode == extprocv3FullDuplex {
			emit = x.emitResponse
		}
		return stream.Repair{
			Stream:      stream.NewExpanding(x.dialect, inner, newInner, x, emit),
			ContentType: repair.ContentType,
			Action:      "stream_expanding",
		}, true
	case stream.IsJSON(ct):
		whole := repair.Whole
		return stream.Repair{
			Whole: func(body []byte) ([]byte, bool) {
				out, changed := x.expandJSON(body)
				if whole == nil {
					return out, changed
				}
				fixed, c2 := whole(out)
				if !c2 {
					return out, changed
				}
				return fixed, true
			},
			ContentType: repair.ContentType,
			Action:      "json_expanding",
		}, true
	}
	return repair, planned
}

// emitResponse sends continuation bytes at once (FULL_DUPLEX_STREAMED: no
// per-message answer to wait for), so the client sees the continuation
// stream as the upstream produces it. A Send error (Envoy reset the stream:
// the client is gone) is returned so the caller stops reading the
// continuation at once.
func (x *exchange) emitResponse(b []byte) error {
	if len(b) == 0 || x.send == nil {
		return nil
	}
	for _, r := range streamedResponses(dirResponse, b, false) {
		if err := x.send(r); err != nil {
			return err
		}
	}
	return nil
}

// extendTimeout asks Envoy for more time before a replay on the response
// path; see extendTimer.
func (x *exchange) extendTimeout() { x.extendTimer(dirResponse) }

// extendTimer asks Envoy for more time before slow work outside
// FULL_DUPLEX_STREAMED, where a message timer runs (default 200 ms, our
// envoy.yaml 30 s). Envoy honours it once per state and only up to its
// max_message_timeout, hence the configured value (envoy-extproc.md §9).
func (x *exchange) extendTimer(d direction) {
	b := &x.resp
	if d == dirRequest {
		b = &x.req
	}
	if x.send == nil || x.extended[d] || (b.known && b.mode == extprocv3FullDuplex) {
		return
	}
	t := time.Duration(x.srv.cfg.Server.MaxMessageTimeout)
	if t <= 0 {
		return
	}
	x.extended[d] = true
	_ = x.send(&extprocv3.ProcessingResponse{OverrideMessageTimeout: durationpb.New(t)})
}
