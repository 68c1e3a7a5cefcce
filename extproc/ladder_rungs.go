package extproc

import (
	"slices"
	"strings"

	"github.com/toolproc/toolproc/filters/overflow"
)

// The ladder's two rungs that leave the history alone: max_tokens (the
// cheapest: only the requested output did not fit) and the opt-in fallback
// to a larger-window model (the last resort).
const (
	rungMaxTokens = "max_tokens"
	rungFallback  = "fallback"
)

// ladderState is what the rungs of one exchange's ladder share.
type ladderState struct {
	// outputCap is the output limit the max_tokens rung set (0: none);
	// later rungs keep it.
	outputCap int
	// window is the context window the provider stated in its error (0:
	// it did not): the rungs size their cuts to it rather than to the
	// configured one, which a router or an unknown model may have wrong.
	window int
	// compaction is the agent compaction kind of the client's request
	// (overflow.CompactionKind), read once when the ladder first runs.
	compaction string
	looked     bool
}

// noteVerdict records what an overflow error told the ladder.
func (x *exchange) noteVerdict(v overflow.Verdict) {
	if l := v.Tokens.Limit; l > 0 && (x.recovery.ladder.window == 0 || l < x.recovery.ladder.window) {
		x.recovery.ladder.window = l
	}
	if !x.recovery.ladder.looked {
		x.recovery.ladder.looked = true
		x.recovery.ladder.compaction = overflow.CompactionKind(x.dialect, x.recovery.clientBody)
	}
}

// ladderWindow is the window the rungs cut to: the configured one, or the
// provider's stated one when that is smaller.
func (x *exchange) ladderWindow() int {
	rp := x.profile.Recovery
	w := overflow.Window(x.rewrite.model, x.srv.windows(rp), rp.DefaultWindow)
	if x.recovery.ladder.window > 0 && x.recovery.ladder.window < w {
		w = x.recovery.ladder.window
	}
	return w
}

// ladderRungs is the order the ladder tries for verdict v: the profile's
// rungs, max_tokens first when the error blames the requested output (it
// touches no byte of history, so no cached prefix breaks), and the model
// fallback last when one is configured for this model.
func (x *exchange) ladderRungs(v overflow.Verdict) []string {
	rp := x.profile.Recovery
	rungs := rp.Rungs
	if v.Class == overflow.ProviderLimit {
		rungs = rp.ProviderLimitRungs
	}
	rungs = slices.Clone(rungs)
	if _, named := v.Tokens.OutputFit(); named {
		if i := slices.Index(rungs, rungMaxTokens); i > 0 {
			rungs = append([]string{rungMaxTokens}, slices.Delete(rungs, i, i+1)...)
		}
	}
	if x.fallbackModel() != "" {
		rungs = append(rungs, rungFallback)
	}
	return rungs
}

// ladderBody builds the request of one rung; see rungBody.
func (x *exchange) ladderBody(rung string, v overflow.Verdict) (body []byte, injected, ok bool) {
	switch rung {
	case rungMaxTokens:
		return x.maxTokensBody(v)
	case rungFallback:
		return x.fallbackBody()
	}
	body, injected, ok = x.shapedRungBody(rung)
	if ok && x.recovery.ladder.outputCap > 0 {
		// A rung that shrinks the history keeps the lowered output: the
		// provider said the old one did not fit.
		if capped, set := overflow.WithOutputLimit(x.dialect, body, x.recovery.ladder.outputCap); set {
			body = capped
		}
	}
	return body, injected, ok
}

// maxTokensBody is the request as last sent with only the requested
// output lowered to what the provider said fits next to the input. It runs
// only when the error stated both counts, and never below
// recovery.min_output_tokens.
func (x *exchange) maxTokensBody(v overflow.Verdict) ([]byte, bool, bool) {
	fit, ok := v.Tokens.OutputFit()
	if !ok || fit < x.profile.Recovery.MinOutputTokens || x.rewrite.upstreamBody == nil {
		return nil, false, false
	}
	if cur, set := overflow.OutputLimit(x.dialect, x.rewrite.upstreamBody); set && cur <= fit {
		return nil, false, false // lowering it would not lower it
	}
	out, changed := overflow.WithOutputLimit(x.dialect, x.rewrite.upstreamBody, fit)
	if !changed {
		return nil, false, false
	}
	x.recovery.ladder.outputCap = fit
	return out, false, true
}

// fallbackModel is the configured larger-window model for this request's
// model ("" when none): the longest matching prefix of
// recovery.fallback_models, and only where the model is named in the
// body (OpenAI Chat, Responses, Anthropic Messages), so the replay keeps
// the route.
func (x *exchange) fallbackModel() string {
	fm := x.profile.Recovery.FallbackModels
	if len(fm) == 0 || x.rewrite.model == "" {
		return ""
	}
	if !overflow.ModelInBody(x.dialect) {
		return ""
	}
	model := strings.ToLower(x.rewrite.model)
	best, to := -1, ""
	for prefix, m := range fm {
		if strings.HasPrefix(model, strings.ToLower(prefix)) && len(prefix) > best {
			best, to = len(prefix), m
		}
	}
	if strings.EqualFold(to, x.rewrite.model) {
		return ""
	}
	return to
}

// fallbackBody is the request as first sent with the larger-window model
// in place of the client's: the bigger window is the last resort, so it
// gets the request with the least cut from it.
func (x *exchange) fallbackBody() ([]byte, bool, bool) {
	to := x.fallbackModel()
	if to == "" || x.rewrite.upstreamBody == nil {
		return nil, false, false
	}
	// upstreamBody changes only when a replay answered: during the ladder
	// it is the request as first sent.
	out, ok := overflow.WithModel(x.dialect, x.rewrite.upstreamBody, to)
	if !ok {
		return nil, false, false
	}
	return out, x.expansion.expandable, true
}
