package extproc

import (
	"context"
	"fmt"
	"time"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/overflow"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/shape"
	"github.com/toolproc/toolproc/filters/wire"
)

// compressOptions turns a profile's compress settings into the filter's
// options. llm is the summariser for the llm strategy (nil: the llm
// strategy falls back at once).
func compressOptions(p *Profile, llm compress.Completer) shadow.CompressOptions {
	cp := p.Compress
	skip := compress.NewSkipSet(cp.SkipTools)
	return shadow.CompressOptions{
		Strategy: strategyByName(cp, cp.Strategy, llm),
		Fallback: strategyByName(cp, cp.FallbackStrategy, llm),
		MinBytes: cp.MinBytes,
		MaxBytes: cp.MaxBytes,
		SkipTool: skip.Skips,
		Clamp:    clampFloor(p),
		Tool:     wire.ExpandToolName,
		CacheTag: cacheTag(cp),
		// Summaries of one request run side by side, as many as the
		// summariser takes at once (review finding 20).
		Parallel: cp.LLM.MaxConcurrent,
	}
}

// flattenSetting maps the config's word to the filter's.
func flattenSetting(s string) string {
	if s == "off" {
		return history.FlattenOff
	}
	return s
}

// tiersOptions turns a profile's tier settings into the filter's options.
// The window comes from the same table the overflow ladder uses.
func tiersOptions(p *Profile) history.Options {
	tp := p.Tiers
	table, fallback := windowTable(p.Recovery), p.Recovery.DefaultWindow
	window := func(model string) int { return overflow.Window(model, table, fallback) }
	if tp.WindowTokens > 0 {
		window = func(string) int { return tp.WindowTokens }
	}
	return history.Options{
		KeepRecent:    tp.KeepRecent,
		TriggerShare:  tp.TriggerShare,
		TargetShare:   tp.TargetShare,
		TriggerTokens: tp.TriggerTokens,
		TargetTokens:  tp.TargetTokens,
		Window:        window,
		InputMinBytes: tp.InputMinBytes,
		MiddleRatio:   middleRatio(tp.MiddleRatio),
		CostModel:     tp.CostModel,
		Tool:          wire.ExpandToolName,
		Flatten:       flattenSetting(tp.Flatten),
	}
}

// middleRatio maps the config's 0 (off) to the history package's off.
func middleRatio(r float64) float64 {
	if r == 0 {
		return -1
	}
	return r
}

// clampFloor is the clamp the compressed results are fitted under; with
// the clamp off there is no floor to fit.
func clampFloor(p *Profile) clamp.Limits {
	if !p.Clamp.Enabled {
		return clamp.Limits{}
	}
	return p.Clamp.ClampLimits()
}

func strategyByName(cp CompressProfile, name string, llm compress.Completer) compress.Strategy {
	switch name {
	case "structural":
		return compress.Structural(compress.StructuralOptions{TargetBytes: cp.TargetBytes, TargetRatio: cp.TargetRatio})
	case "simple":
		return compress.Simple(cp.SimpleWords)
	case "llm":
		fallback := compress.Structural(compress.StructuralOptions{TargetBytes: cp.TargetBytes, TargetRatio: cp.TargetRatio})
		if cp.FallbackStrategy != "llm" && cp.FallbackStrategy != "" {
			fallback = strategyByName(cp, cp.FallbackStrategy, nil)
		}
		return compress.LLM(compress.LLMOptions{
			Model:         cp.LLM.Model,
			Prompt:        cp.LLM.Prompt,
			Timeout:       time.Duration(cp.LLM.Timeout),
			MaxConcurrent: cp.LLM.MaxConcurrent,
			Rate:          cp.LLM.Rate,
			TargetBytes:   cp.TargetBytes,
			Fallback:      fallback,
		}, llm)
	}
	return compress.Passthrough()
}

// requestRewrite is what rewriting one request body produced.
type requestRewrite struct {
	out      []byte
	report   pipeline.Report
	compress *shadow.CompressFilter // nil when compression was off for it
	tiers    *history.Filter        // nil when the tiers were off for it
	injected bool                   // expand_context was added to the tools
	shaped   *shape.Report          // the request was rendered for a text-only upstream
}

// rewriteRequestBody runs a profile's request pipeline. store is nil when
// this request must not get references (no store, or an answer toolproc
// could not resolve expansions in); compression is then skipped, the tiers
// act only when the request would not fit the window (each summary saying
// it cannot be expanded), and the clamp applies. This is the single
// place the pipeline order lives: tiers (old exchanges) → compress (with
// references) → clamp (the floor) → expand_context tool.
//
// expand_context is offered on every request that could get a reference
// and declares tools (or carries tool results), whether or not this one
// got any: the tools list
// starts every cached prompt prefix, so a tool appearing mid-session would
// make the provider re-read the whole conversation at the cache-write
// price (docs.anthropic.com/en/docs/build-with-claude/prompt-caching: tools
// come first in the cache order).
func rewriteRequestBody(ctx context.Context, p *compiledProfile, store shadow.Store, env shadow.Env,
	ep wire.Endpoint, ask wire.ClientAsk, body []byte) (requestRewrite, error) {
	conv, err := wire.ParseEndpoint(ep, body)
	if err != nil {
		return requestRewrite{out: body, report: pipeline.Report{Dialect: ep.Dialect, BytesIn: len(body), BytesOut: len(body)}}, err
	}
	return rewriteParsed(ctx, p, store, env, ep, ask, conv)
}

// rewriteParsed is rewriteRequestBody on a body already parsed, so that
// the exchange reads the request once (issue 14). The pipeline folds its
// edits into conv: it is used up.
func rewriteParsed(ctx context.Context, p *compiledProfile, store shadow.Store, env shadow.Env,
	ep wire.Endpoint, ask wire.ClientAsk, conv *wire.Conversation) (requestRewrite, error) {
	ctx, endTrace := traceCompress(ctx, p.name)
	rr, err := runPipeline(ctx, p, store, env, ep, ask, conv)
	endTrace(err)
	return rr, err
}

func runPipeline(ctx context.Context, p *compiledProfile, store shadow.Store, env shadow.Env,
	ep wire.Endpoint, ask wire.ClientAsk, conv *wire.Conversation) (requestRewrite, error) {
	body := conv.Body
	var filters []pipeline.Filter
	var cf *shadow.CompressFilter
	var hf *history.Filter
	textOnly := p.Shape.TextOnly() && (ep.Dialect == wire.OpenAIChat || ep.Dialect == wire.Anthropic)
	// A text-only upstream gets no references: the continuation of an
	// expand_context call is built as structured history, which it would
	// refuse. Compression is skipped with them; the clamp still applies.
	canRef := !textOnly && store != nil && p.Expand.MaxLoops > 0 && conv.ExpandResolvable(ep, ask)
	offer := conv.DeclaresTools() || len(conv.Results) > 0
	if p.Tiers.Enabled {
		henv := history.Env{Ctx: ctx}
		if canRef {
			henv.Store, henv.Tenant, henv.Keys = store, env.Tenant, env.Keys
		}
		opts := p.tiers
		if canRef && offer {
			opts.Reserve = len(wire.ExpandToolJSON(ep.Dialect))
		}
		hf = history.New(opts, henv)
		filters = append(filters, hf)
	}
	if canRef && p.Compress.Enabled {
		env.Ctx, env.Store = ctx, store
		cf = shadow.NewCompressFilter(p.compress, env)
		filters = append(filters, cf)
	}
	if p.Clamp.Enabled {
		clf := clamp.NewFilter(p.Clamp.ClampLimits()).WithReadKeep(clamp.Keep(p.Clamp.KeepReads), isFileRead).WithMemo(p.clampMemo)
		if p.Clamp.Structural {
			clf.WithCutter(compress.Cut)
		}
		filters = append(filters, clf)
	}
	refsOf := func() int {
		refs := 0
		if cf != nil {
			refs += cf.Stats.References
		}
		if hf != nil {
			refs += hf.Stats.Summarized + hf.Stats.Inputs // each names the tool
		}
		return refs
	}
	// A conversation with tool results but no tools list (some harnesses
	// send history only) gets the tool from its first result on.
	wantTool := func() bool { return refsOf() > 0 || (p.Compress.Enabled || p.Tiers.Enabled) && offer }
	// The tool is added in the pipeline's one splice when the filters
	// left the parse of the body standing (the usual case): its edit is
	// found from that parse, and the new body is neither walked again nor
	// copied again (RunConversationThen).
	var (
		toolAdded bool
		toolErr   error
		last      func(pipeline.Report) []wire.Edit
	)
	if canRef {
		last = func(pipeline.Report) []wire.Edit {
			if !wantTool() {
				return nil
			}
			var e wire.Edit
			if e, toolAdded, toolErr = conv.ExpandToolEdit(); toolErr != nil || !toolAdded {
				return nil
			}
			return []wire.Edit{e}
		}
	}
	out, rep, ran, err := pipeline.New(filters...).RunConversationThen(conv, last)
	rr := requestRewrite{out: out, report: rep, compress: cf, tiers: hf}
	if err == nil && textOnly {
		// Last, on what the filters made of it: the text the upstream
		// reads is the rewritten history.
		shaped, srep, serr := shape.TextOnly(ep.Dialect, out, shape.Options{InjectSystem: shape.InjectSystem(p.Shape.InjectSystem)})
		if serr != nil {
			return rr, serr
		}
		rr.out, rr.shaped = shaped, &srep
		rr.report.BytesOut = len(shaped)
	}
	if err != nil || !canRef {
		return rr, err
	}
	refs := refsOf()
	if !wantTool() {
		return rr, nil
	}
	// ran: last was called, and wantTool said then what it says now.
	injected, changed, ierr := out, toolAdded, toolErr
	if !ran {
		injected, changed, ierr = conv.InjectExpandTool(out)
	}
	if ierr != nil || !changed {
		if refs == 0 {
			return rr, nil
		}
		// No way to offer the tool (a tools list of an unknown shape), or
		// the client has its own tool of that name whose calls toolproc must
		// not take over: references would promise what the model cannot do.
		// Rewrite again without them.
		return rewriteRequestBody(ctx, p, nil, env, ep, ask, body)
	}
	rr.out, rr.injected = injected, changed
	rr.report.BytesOut = len(injected)
	return rr, nil
}

// recordCompression counts one request's compression decisions and writes
// them to the audit log.
func (x *exchange) recordCompression(rr requestRewrite) {
	x.recordTiers(rr.tiers)
	if n := irrecoverable(rr.report.Changes); n > 0 {
		x.srv.metrics.Irrecoverable.WithLabelValues(string(x.dialect)).Add(float64(n))
		x.log.Info("tool results cut with no original kept", "irrecoverable", n, "references", x.rewrite.refs)
	}
	cf := rr.compress
	if cf == nil {
		return
	}
	m := x.srv.metrics
	d := string(x.dialect)
	for _, dec := range cf.Decisions {
		m.Compress.WithLabelValues(d, dec.Outcome).Inc()
		if dec.Outcome == shadow.OutcomeCompressed {
			m.CompressBytes.WithLabelValues(d, "before").Add(float64(dec.BytesBefore))
			m.CompressBytes.WithLabelValues(d, "after").Add(float64(dec.BytesAfter))
		}
	}
	m.CompressCache.WithLabelValues("hit").Add(float64(cf.Stats.CacheHits))
	m.CompressCache.WithLabelValues("miss").Add(float64(cf.Stats.CacheMisses))
	if cf.Stats.StoreErrors > 0 {
		m.StoreErrors.WithLabelValues("compress").Add(float64(cf.Stats.StoreErrors))
		x.log.Warn("shadow store failed; compression degraded to the clamp for this request",
			"errors", cf.Stats.StoreErrors)
	}
	x.rewrite.compressed = cf.Stats.References
	x.srv.audit.write(auditRecord{Dialect: d, Profile: x.profile.name, Model: x.rewrite.model, Tenant: x.rewrite.tenant}, cf.Decisions)
}

// TiersHeader tells the client (and access logs) which tier step the
// request was sent at: how many times the line between summarised and
// whole tool exchanges has moved in this conversation.
const TiersHeader = "x-toolproc-tiers"

// recordTiers counts one request's tier rewrite and logs it.
func (x *exchange) recordTiers(hf *history.Filter) {
	if hf == nil || hf.Stats.Summarized+hf.Stats.Inputs+hf.Stats.Flattened+hf.Stats.Middle == 0 {
		return
	}
	st, d, m := hf.Stats, string(x.dialect), x.srv.metrics
	x.rewrite.tierStep = st.Step
	m.TierRewrites.WithLabelValues(d).Inc()
	m.TierBytes.WithLabelValues(d).Add(float64(st.BytesCleared))
	m.TierStep.WithLabelValues(d).Observe(float64(st.Step))
	if st.StoreErrors > 0 {
		m.StoreErrors.WithLabelValues("tiers").Add(float64(st.StoreErrors))
	}
	x.log.Info("tool history tiered", "step", st.Step, "summarized", st.Summarized, "inputs", st.Inputs,
		"middle", st.Middle, "kept_whole", st.KeptWhole, "forced", st.Urgent,
		"flattened", st.Flattened, "bytes_cleared", st.BytesCleared, "estimated_bytes", st.EstimatedBytes, "store_errors", st.StoreErrors)
	x.srv.audit.writeTiers(auditRecord{Dialect: d, Profile: x.profile.name, Model: x.rewrite.model, Tenant: x.rewrite.tenant}, tierAudit{
		Step: st.Step, Summarized: st.Summarized, Inputs: st.Inputs, Flattened: st.Flattened, BytesCleared: st.BytesCleared, EstimatedBytes: st.EstimatedBytes,
		Middle: st.Middle, KeptWhole: st.KeptWhole, Forced: st.Urgent,
	})
}

// isFileRead says whether a call read a file, by the categories the tiers
// use (read tools, the text editor's view).
func isFileRead(toolName, args string) bool {
	return history.Categorize(toolName, args) == history.Read
}

// cacheTag names the settings a compressed result depends on. target_ratio
// joins it only when set, so profiles without it keep their tags.
func cacheTag(cp CompressProfile) string {
	tag := fmt.Sprintf("t%d w%d %s %s", cp.TargetBytes, cp.SimpleWords, cp.LLM.Model, shortHash(cp.LLM.Prompt))
	if cp.TargetRatio != 0 {
		tag += fmt.Sprintf(" r%g", cp.TargetRatio)
	}
	return tag
}
