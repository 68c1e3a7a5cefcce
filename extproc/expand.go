package extproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/overflow"
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

// storeLookupTimeout bounds one read of an original: a store slower than
// this is treated as unavailable and the model is told so.
const storeLookupTimeout = 2 * time.Second

// Continue implements stream.Continuer, and serves the JSON path too: it
// answers t's expand_context calls from the store, appends the model's turn
// and the answers to the request last sent upstream, and replays that
// through Envoy's replay listener with the original request's headers. It
// returns the continuation's answer body, or an error (loop limit, replay
// failure, non-200 answer, each counted and logged here) and the caller
// ends the answer without the phantom calls.
func (x *exchange) Continue(t wire.Turn) (io.ReadCloser, error) {
	d := string(x.dialect)
	m := x.srv.metrics
	m.Expansions.WithLabelValues(d, "requested").Add(float64(len(t.Calls)))
	if x.expansion.loops >= x.profile.Expand.MaxLoops {
		m.Expansions.WithLabelValues(d, "loop_limit").Inc()
		x.log.Warn("expand_context loop limit reached; answer delivered without the phantom calls",
			"max_loops", x.profile.Expand.MaxLoops)
		return nil, errExpandLoopLimit
	}
	x.expansion.loops++
	results := make([]wire.ExpandResult, len(t.Calls))
	for i, c := range t.Calls {
		text, found := x.lookup(c.ID)
		results[i] = wire.ExpandResult{Call: c, Text: x.fitExpansion(text, found, c, len(t.Calls))}
	}
	next, err := wire.Continue(x.dialect, x.rewrite.upstreamBody, t, results)
	if err == nil && x.profile.tiers.Flatten == history.FlattenAll {
		// The gateway behind takes no structured tool history: the
		// expand_context call and its result go as text like the rest.
		next, err = history.FlattenBody(x.dialect, next)
	}
	if err != nil {
		m.Expansions.WithLabelValues(d, "replay_failed").Inc()
		x.log.Warn("expand_context continuation could not be built", "error", err.Error())
		return nil, fmt.Errorf("expand_context continuation: %w", err)
	}
	x.extendTimeout()
	resp, err := x.srv.replay.Do(x.ctx, Replay{Purpose: replayPurposeExpand, Headers: x.rewrite.reqHeaders, Body: next})
	if err != nil {
		m.Expansions.WithLabelValues(d, "replay_failed").Inc()
		x.log.Warn("expand_context replay failed", "error", err.Error(), "loop", x.expansion.loops)
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		m.Expansions.WithLabelValues(d, "replay_failed").Inc()
		x.log.Warn("expand_context replay answered an error", "status", resp.StatusCode, "loop", x.expansion.loops)
		return nil, fmt.Errorf("expand_context replay answered %d", resp.StatusCode)
	}
	x.rewrite.upstreamBody = next
	x.watchReplay(resp)
	x.log.Info("expand_context answered", "calls", len(t.Calls), "loop", x.expansion.loops)
	return resp.Body, nil
}

// errExpandLoopLimit: the exchange sent expand.max_loops continuations.
var errExpandLoopLimit = errors.New("expand_context loop limit reached")

// expandPageNote says which lines of an original an expansion holds when
// it is not the whole of it, and how to ask for the next part.
const expandPageNote = "\n[expand_context: lines %d-%d of %d (%d bytes in all)%s. " +
	"For the next part call expand_context with {\"id\":\"%s" + wire.PageSep + "%d\"}.]"

// fitExpansion answers one expand_context call: the lines it asked for
// (offset, limit), cut to what the context can take. The budget is the
// model's share of its window for expansions (expand.context_share),
// split between the calls of one turn; the model asked for this text, so
// the per-result clamp does not apply, the window does. Continuations go
// through the replay listener, where nothing else clamps them: an uncut
// 2.75 MB original made the continuation overflow and the answer came back
// empty (review finding 3). A part that is not the whole original ends with
// the offset of the next one, so nothing is out of reach.
func (x *exchange) fitExpansion(text string, found bool, c wire.ExpandCall, calls int) string {
	if !found {
		return text
	}
	rp := x.profile.Recovery
	budget := overflow.ShareBytes(overflow.Window(x.rewrite.model, x.srv.windows(rp), rp.DefaultWindow), x.profile.Expand.ContextShare)
	budget = max(budget/max(calls, 1), 4096)
	if c.Offset <= 1 && c.Limit == 0 && len(text) <= budget {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	total := len(lines)
	first := max(c.Offset, 1)
	if first > total {
		return fmt.Sprintf("[expand_context: the original has %d lines; offset %d is past its end.]", total, first)
	}
	last := total
	if c.Limit > 0 {
		last = min(total, first+c.Limit-1)
	}
	room := budget - len(expandPageNote) - 2*shadow.IDLen - 60
	var b strings.Builder
	end := first - 1 // last line shown, 1-based
	cutLine := ""
	for end < last {
		line := lines[end]
		if b.Len()+len(line) > room {
			if end == first-1 {
				// One line longer than the budget: its head, cut on a
				// rune boundary, and the next part starts after it.
				cut := clamp.CutUTF8(line, room)
				b.WriteString(cut)
				end++
				cutLine = fmt.Sprintf("; line %d cut after %d of its %d bytes", end, len(cut), len(line))
			}
			break
		}
		b.WriteString(line)
		end++
	}
	if first == 1 && end == total && cutLine == "" {
		return text
	}
	x.srv.metrics.Expansions.WithLabelValues(string(x.dialect), "paged").Inc()
	next := end + 1
	if end >= total {
		return b.String() + fmt.Sprintf("\n[expand_context: lines %d-%d of %d (%d bytes in all)%s; this is the end.]", first, end, total, len(text), cutLine)
	}
	return b.String() + fmt.Sprintf(expandPageNote, first, end, total, len(text), cutLine, c.ID, next)
}

// notFoundText and unavailableText answer an id toolproc cannot read. The
// model is told plainly, so it carries on with the shortened result rather
// than asking again.
const (
	notFoundText    = "expand_context: the original of id %q is no longer available (it expired or was evicted, the store lost it, or it belongs to another caller). Continue with the shortened tool result."
	malformedText   = "expand_context: the call did not carry a valid id (expected {\"id\":\"sh_…\"}). Continue with the shortened tool result."
	unavailableText = "expand_context: the store of originals is unavailable right now. Continue with the shortened tool result."
)

// lookup reads one original for this exchange's tenant; another tenant's id
// is simply not found.
func (x *exchange) lookup(id string) (string, bool) {
	d := string(x.dialect)
	m := x.srv.metrics
	if !x.rewrite.refs {
		// No references were written for this caller: nothing is theirs.
		m.Expansions.WithLabelValues(d, "not_found").Inc()
		return fmt.Sprintf(notFoundText, id), false
	}
	if !shadow.ValidID(id) {
		m.Expansions.WithLabelValues(d, "not_found").Inc()
		return malformedText, false
	}
	ctx, cancel := context.WithTimeout(x.ctx, storeLookupTimeout)
	defer cancel()
	v, err := x.srv.store.Get(ctx, x.rewrite.tenant, shadow.Original, id)
	switch {
	case err == nil:
		m.Expansions.WithLabelValues(d, "resolved").Inc()
		return string(v), true
	case errors.Is(err, shadow.ErrNotFound):
		m.Expansions.WithLabelValues(d, "not_found").Inc()
		return fmt.Sprintf(notFoundText, id), false
	default:
		m.Expansions.WithLabelValues(d, "store_error").Inc()
		m.StoreErrors.WithLabelValues("expand").Inc()
		x.log.Warn("shadow store read failed", "error", err.Error())
		return unavailableText, false
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
		rc, err := x.Continue(t)
		if err != nil {
			return x.withoutExpansions(answer, changed)
		}
		next, err := readReplay(rc, maxContinuationBytes)
		rc.Close()
		if err != nil {
			// A continuation cut short is no answer (review finding 19).
			x.srv.metrics.Expansions.WithLabelValues(string(x.dialect), "replay_failed").Inc()
			x.log.Warn("expand_context continuation unreadable", "error", err.Error())
			return x.withoutExpansions(answer, changed)
		}
		answer, changed = next, true
	}
}

// continuationFailedNote is what the client reads when the model's only
// act was an expand_context call that could not be answered.
const continuationFailedNote = "[toolproc: the model asked to read the full text of a shortened tool result, " +
	"and that follow-up request failed. Ask again, or narrow the request.]"

// withoutExpansions is the answer the client gets when a continuation
// failed: the model's own answer with the phantom calls stripped, and a
// note where nothing else would be left.
func (x *exchange) withoutExpansions(answer []byte, changed bool) ([]byte, bool) {
	out, stripped := wire.StripExpandCalls(x.dialect, answer)
	if noted, ok := wire.NoteEmptyAnswer(x.dialect, out, continuationFailedNote); ok {
		return noted, true
	}
	return out, changed || stripped
}

// readReplay reads a replay's body whole, up to limit bytes. A read error
// or a body past the limit is an error: a cut answer must never be handed
// on as a complete one.
func readReplay(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("replay answer: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("replay answer: over %d bytes", limit)
	}
	return b, nil
}

// planExpansion wraps the answer's repair so expand_context calls are
// answered inside toolproc. ok=false leaves repair as it was.
func (x *exchange) planExpansion(ct string, repair stream.Repair, planned bool) (stream.Repair, bool) {
	opts := stream.Options{XMLToolCalls: x.profile.Stream.XMLToolCalls}
	switch {
	case stream.IsSSE(ct):
		newInner := func() stream.Normalizer {
			r, ok := stream.PlanRepair(x.dialect, ct, *x.rewrite.clientAsk, opts)
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
// max_message_timeout, hence the configured value (docs/envoy-notes.md §9).
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
