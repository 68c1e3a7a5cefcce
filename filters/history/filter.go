package history

import (
	"context"
	"crypto/sha256"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
)

// FilterName is the pipeline step's name in reports and metrics.
const FilterName = "tiers"

// Defaults of Options.
const (
	DefaultKeepRecent    = 6
	DefaultTriggerShare  = 0.60
	DefaultTargetShare   = 0.35
	DefaultInputMinBytes = 512
)

// Options is a profile's tier policy, fixed at start.
type Options struct {
	// KeepRecent is how many of the latest tool results stay byte-identical
	// whatever the budget (seed 003's recentCallsToKeep).
	KeepRecent int
	// TriggerShare and TargetShare are shares of the model's context
	// window: a request estimated above the trigger is brought down to the
	// target. TriggerTokens and TargetTokens, when set, replace them with
	// absolute figures (upstreams without a prompt cache, where every byte
	// costs, or models missing from the window table).
	TriggerShare, TargetShare   float64
	TriggerTokens, TargetTokens int
	// Window returns the model's context window in tokens (0: unknown).
	Window func(model string) int
	// InputMinBytes: string arguments of old calls longer than this (file
	// bodies of writes and edits, patches) are summarised too; 0 takes the
	// default, a negative value leaves call arguments alone.
	InputMinBytes int
	// Tool is the expand tool the summaries name.
	Tool string
	// Flatten renders tool exchanges as plain text instead of calls and
	// results (wire.Flatten), for gateways that reject structured tool
	// history: FlattenOld the summarised ones (before the cut), FlattenAll
	// every one in the request, tiered or not.
	Flatten string
	// MiddleRatio is the middle tier's compression ratio (results kept
	// whole that keep the request above its target are compressed at it);
	// 0 takes DefaultMiddleRatio, a negative value turns the tier off.
	MiddleRatio float64
	// CostModel names the prompt-cache prices a step is weighed with
	// (PricesFor): auto (the dialect's provider family), anthropic,
	// openai, gemini or none (no cache: every removed byte pays).
	CostModel string
	// Reserve is what the request gains after the tiers have planned (the
	// expand_context declaration), in bytes: the window must hold it too.
	Reserve int
	// Force is the overflow ladder's tiers rung: the provider refused the
	// request as too long, so after the usual replay the cut moves as far
	// as the target needs (keeping KeepRecent results), whatever the
	// trigger and the spacing. Not cache-stable; only for the replay.
	Force bool
}

// Flatten settings.
const (
	FlattenOff = ""
	FlattenOld = "old"
	FlattenAll = "all"
)

func (o Options) withDefaults() Options {
	if o.KeepRecent <= 0 {
		o.KeepRecent = DefaultKeepRecent
	}
	if o.TriggerShare <= 0 {
		o.TriggerShare = DefaultTriggerShare
	}
	if o.TargetShare <= 0 || o.TargetShare >= o.TriggerShare {
		o.TargetShare = min(DefaultTargetShare, o.TriggerShare/2)
	}
	if o.InputMinBytes == 0 {
		o.InputMinBytes = DefaultInputMinBytes
	}
	if o.Tool == "" {
		o.Tool = shadow.DefaultTool
	}
	if o.MiddleRatio == 0 {
		o.MiddleRatio = DefaultMiddleRatio
	}
	return o
}

// hardShare of the window is where a step is taken even if the last one
// was recent: past it the provider's answer (max_tokens) may no longer fit.
const hardShare = 1.0

// budgetFor returns the budget for a model; ok=false when there is none
// (no absolute figures and no known window): the tiers do not act.
func (o Options) budgetFor(model string) (budget, bool) {
	var b budget
	w := 0
	if o.Window != nil {
		w = o.Window(model)
	}
	if w > 0 {
		b.hard = int(float64(w)*hardShare)*4 - o.Reserve
	}
	switch {
	case o.TriggerTokens > 0:
		b.trigger = o.TriggerTokens * 4
		b.target = o.TargetTokens * 4
		if o.TargetTokens <= 0 || o.TargetTokens >= o.TriggerTokens {
			b.target = b.trigger * 7 / 12 // the default shares' ratio, 35/60
		}
	case w > 0:
		b.trigger = int(float64(w)*o.TriggerShare) * 4
		b.target = int(float64(w)*o.TargetShare) * 4
	default:
		return b, false
	}
	b.spacing = b.trigger - b.target
	return b, b.trigger > 0
}

// Env is what one request brings: where originals go and whose they are.
// With a nil Store (no store, no deployment secret, a text-only upstream)
// nothing can be read back, so the tiers act only when the request would
// not fit the window otherwise, and every summary says that its original
// cannot be expanded (review round 3, N1: old results were dropped for
// good to save cost).
type Env struct {
	Ctx    context.Context
	Store  shadow.Store
	Tenant string
	Keys   shadow.Keyring
}

// Stats says what one request's run did.
type Stats struct {
	// Step is how many times the cut has moved over the conversation's
	// life, replayed from the request; 0 means the request is untouched.
	Step int
	// Summarized results and shortened call Inputs this request.
	Summarized, Inputs int
	// BytesCleared is what the summaries took out of the body.
	BytesCleared int
	// EstimatedBytes is the request's size as the budget counts it,
	// before the rewrite.
	EstimatedBytes int
	References     int // summaries that point to a kept original
	StoreErrors    int
	// Flattened is how many messages Options.Flatten rendered as text.
	Flattened int
	// Middle is how many results the middle tier compressed this request.
	Middle int
	// KeptWhole is how many results after the cut this request keeps
	// whole when the window forced fewer than keep_recent (0: it did not;
	// -1: the cut took every result, as only the overflow rung may).
	KeptWhole int
	// Urgent: the last step was taken because the request would otherwise
	// not fit the window, whatever it cost the cache.
	Urgent bool
	// Irrecoverable counts the results (summaries and middle-tier ones)
	// whose original was not kept: their text says so.
	Irrecoverable int
}

// Filter is the tiers step for one request (it carries the request's
// tenant and store). Not safe for concurrent use.
type Filter struct {
	opts  Options
	env   Env
	Stats Stats
}

// New returns the step for one request.
func New(opts Options, env Env) *Filter {
	if env.Ctx == nil {
		env.Ctx = context.Background()
	}
	return &Filter{opts: opts.withDefaults(), env: env}
}

// Name implements pipeline.Filter.
func (f *Filter) Name() string { return FilterName }

// Rewrite implements pipeline.Filter. Below the trigger it returns nothing;
// above it, every result of the groups before the cut becomes its summary
// (in place: pairing with its call never changes) and long arguments of
// their calls are shortened.
func (f *Filter) Rewrite(c *wire.Conversation) ([]wire.Edit, []pipeline.Change) {
	edits, changes, cutMsg := f.tier(c)
	switch f.opts.Flatten {
	case FlattenOld:
		if cutMsg > 0 {
			edits, f.Stats.Flattened = flattenOld(c, cutMsg, edits)
		}
	case FlattenAll:
		edits, f.Stats.Flattened = flattenOld(c, len(c.Msgs), edits)
	}
	return edits, changes
}

// tier is the tiers proper: the summaries' edits, and the first message
// after the cut (0 when the request is below the trigger).
func (f *Filter) tier(c *wire.Conversation) ([]wire.Edit, []pipeline.Change, int) {
	b, ok := f.opts.budgetFor(c.Model)
	if !ok || len(c.Results) < 2 {
		return nil, nil, 0
	}
	points := sizes(c)
	f.Stats.EstimatedBytes = c.BodyBytes
	if len(points) > 0 {
		f.Stats.EstimatedBytes = points[len(points)-1].size
	}
	if !f.opts.Force && !anyAbove(points, b.trigger) {
		return nil, nil, 0
	}
	groups := f.groups(c)
	callsAt := make(map[int][]int) // message index → its calls, so grouping stays linear
	for i, call := range c.Calls {
		callsAt[call.Message] = append(callsAt[call.Message], i)
	}
	rewrites := make([][]rewrite, len(groups))
	summarised := make([]bool, len(groups))
	summary := func(g int) int {
		if !summarised[g] {
			rewrites[g] = f.rewriteGroup(c, &groups[g], callsAt[groups[g].callMessage])
			summarised[g] = true
		}
		return groups[g].saved
	}
	head := setStarts(c, groups)
	prices, ok := PricesFor(f.opts.CostModel, c.Dialect)
	if !ok {
		prices = PricesNoCache
	}
	middle := make([][]rewrite, len(groups))
	pl := planner{groups: groups, summary: summary, points: points, b: b, keep: f.opts.KeepRecent, prices: prices, head: head, urgentOnly: !f.canKeep()}
	if f.opts.MiddleRatio > 1 {
		pl.middle = func(g int) int {
			if !groups[g].midKnown {
				middle[g] = f.middleGroup(c, &groups[g])
				groups[g].midKnown = true
			}
			return groups[g].midSaved
		}
	}
	p := pl.plan()
	if f.opts.Force {
		p = pl.forceCut(p)
		p.mid = max(p.mid, p.cut)
	}
	f.Stats.Step = p.steps
	if p.cut > 0 && p.cut < len(groups) {
		if after := len(c.Results) - groups[p.cut].first; after < f.opts.KeepRecent {
			f.Stats.KeptWhole = after
		}
	} else if p.cut > 0 {
		f.Stats.KeptWhole = -1 // nothing kept whole: cannot happen outside the overflow rung
	}
	f.Stats.Urgent = p.urgent
	var edits []wire.Edit
	var changes []pipeline.Change
	for g := p.cut; g < p.mid; g++ {
		pl.middle(g)
		for _, rw := range middle[g] {
			edits = append(edits, rw.edits...)
			f.keep(rw.kept)
			f.Stats.BytesCleared += rw.saved
			f.Stats.Middle++
			f.countIrrecoverable(rw)
			changes = append(changes, *rw.change)
		}
	}
	for g := 0; g < p.cut; g++ {
		summary(g) // the plan has read every group before its cut; this is a no-op
		for _, rw := range rewrites[g] {
			edits = append(edits, rw.edits...)
			f.keep(rw.kept)
			f.Stats.BytesCleared += rw.saved
			if rw.change != nil {
				f.Stats.Summarized++
				f.countIrrecoverable(rw)
				changes = append(changes, *rw.change)
			} else {
				f.Stats.Inputs++
			}
		}
	}
	if p.cut == 0 {
		return edits, changes, 0
	}
	return edits, changes, cutMessage(c, groups, p.cut)
}

// setStarts records where each group starts in the request, in the
// estimated bytes the budget counts: the bytes outside the message list
// (tools, system: the head of every cached prefix) and the messages before
// the group's first one. It returns the bytes outside the message list.
func setStarts(c *wire.Conversation, groups []group) int {
	if len(c.Msgs) == 0 {
		return 0
	}
	listStart := c.Msgs[0].Span.Start
	fixed := c.HeadBytes()
	for g := range groups {
		m := cutMessage(c, groups, g)
		if m < len(c.Msgs) {
			groups[g].start = fixed + c.Msgs[m].Span.Start - listStart
		}
	}
	return fixed
}

// cutMessage is the first message of the recent part: where group cut
// starts (its call, or its first result when it has no call).
func cutMessage(c *wire.Conversation, groups []group, cut int) int {
	if cut >= len(groups) {
		return len(c.Msgs)
	}
	g := groups[cut]
	m := c.Results[g.first].Message
	if g.callMessage >= 0 {
		m = min(m, g.callMessage)
	}
	return m
}

func anyAbove(points []point, limit int) bool {
	for _, p := range points {
		if p.size > limit {
			return true
		}
	}
	return false
}

// groups splits the results into the units the cut moves by.
func (f *Filter) groups(c *wire.Conversation) []group {
	var out []group
	for i := range c.Results {
		r := &c.Results[i]
		key := r.CallMessage
		if key < 0 {
			key = -1 - r.Message
		}
		if n := len(out); n > 0 && out[n-1].callMessage == key {
			out[n-1].last = i
			out[n-1].end = max(out[n-1].end, r.Message)
			continue
		}
		out = append(out, group{first: i, last: i, end: r.Message, callMessage: key})
	}
	return out
}

// rewrite is one value's summary: a result (change set) or a call's
// arguments (change nil).
type rewrite struct {
	edits  []wire.Edit
	kept   []keptValue
	saved  int
	change *pipeline.Change
}

// rewriteGroup builds the summaries of one group and records in it how
// many bytes they save. It does no I/O: the originals are kept only for the
// groups the plan cuts.
func (f *Filter) rewriteGroup(c *wire.Conversation, g *group, calls []int) []rewrite {
	var out []rewrite
	if g.callMessage >= 0 && f.opts.InputMinBytes > 0 {
		for _, i := range calls {
			call := &c.Calls[i]
			if in := summarizeInput(call, f.opts.InputMinBytes, f.ref); len(in.edits) > 0 {
				out = append(out, rewrite{edits: in.edits, kept: in.kept, saved: in.saved})
				g.saved += in.saved
			}
		}
	}
	for i := g.first; i <= g.last; i++ {
		// Nothing here may depend on later messages (TurnsAgo would): the
		// savings decide the cut at every earlier point of the replay, and
		// the next request must replay them the same. The newest results
		// are never cut anyway (keep_recent >= 1).
		r := &c.Results[i]
		// The exchange is built only when a summary is not remembered
		// (summaryCache): on later turns every text of an old result is.
		var ex exchange
		built := false
		var rw rewrite
		before, after, lines := 0, 0, 0
		var category Category
		for k := range r.Texts {
			t := &r.Texts[k]
			// The text's facts come from its literal when this result was
			// summarised on an earlier turn: no decoding (shadow.FactsOf).
			tf := shadow.FactsOf(t)
			lines = tf.Lines
			id, hint := f.refOf(tf.Sum)
			key := summaryKey(r.ToolName, r.Args, r.IsError, &tf.Sum, hint)
			se, ok := summaryCache.Lookup(key)
			if !ok {
				if !built {
					ex, built = exchangeOf(r), true
				}
				ex.text, ex.textLen, ex.lines = t.Text, tf.Len, tf.Lines
				ex.sum = &tf.Sum
				se = summaryEdit{edit: wire.SetString(t.Span, summarizeResult(ex, hint)), category: ex.category}
				summaryCache.Add(key, se)
			}
			e := se.edit.WithSpan(t.Span)
			category = se.category
			if len(e.Raw) >= t.Span.End-t.Span.Start {
				continue // already short: a summary would not save anything
			}
			rw.edits = append(rw.edits, e)
			rw.kept = append(rw.kept, keptValue{id: id, block: t})
			before += tf.Len
			after += len(e.Text)
			rw.saved += t.Span.End - t.Span.Start - len(e.Raw)
		}
		for _, j := range r.JSON {
			// Gemini's functionResponse.response and Bedrock's json block
			// must stay objects: the summary goes in as {"output": …}, or
			// {"error": …} for a result that reported one.
			if !gjson.Parse(j.Raw).IsObject() {
				continue
			}
			if !built {
				ex, built = exchangeOf(r), true
			}
			// The summary reads the object's longest string (the output
			// itself); the original kept is the whole object.
			ex.setText(longestString(j.Raw))
			ex.sum = nil // the original kept is the object, not this text
			lines, category = ex.lines, ex.category
			id, hint := f.ref(j.Raw)
			key := `{"output":`
			if r.IsError {
				key = `{"error":`
			}
			s := summarizeResult(ex, hint)
			raw := append([]byte(key), wire.QuoteString(s)...)
			raw = append(raw, '}')
			if len(raw) >= len(j.Raw) {
				continue
			}
			rw.edits = append(rw.edits, wire.Edit{Span: j.Span, Raw: string(raw)})
			rw.kept = append(rw.kept, keptValue{id: id, value: j.Raw})
			before += len(j.Raw)
			after += len(raw)
			rw.saved += len(j.Raw) - len(raw)
		}
		if len(rw.edits) == 0 {
			continue
		}
		rw.change = resultChange(r, before, after, lines, 1, string(category))
		g.saved += rw.saved
		out = append(out, rw)
	}
	return out
}

// exchangeOf is what a summary of r's texts starts from: the call's
// category and arguments, and whether it reported an error.
func exchangeOf(r *wire.ToolResult) exchange {
	return exchange{category: Categorize(r.ToolName, r.Args), tool: r.ToolName, args: wire.ArgsObject(r.Args), isError: r.IsError}
}

// ref returns the shadow id and the expand hint for an original, or two
// empty strings when this request cannot keep originals. The id depends
// only on the tenant and the bytes, so the summary is the same on every
// turn and on every replica.
func (f *Filter) ref(value string) (id, hint string) {
	id, hint, _ = f.refSum(value)
	return id, hint
}

// refOf is ref for a value whose shadow.Fingerprint is sum.
func (f *Filter) refOf(sum [sha256.Size]byte) (id, hint string) {
	if !f.canKeep() {
		return "", notKeptHint
	}
	id = f.env.Keys.IDOf(f.env.Tenant, sum)
	return id, expandHint(f.opts.Tool, id)
}

// refSum is ref, with value's shadow.Fingerprint (nil when no original can
// be kept) for the caches that key by it.
func (f *Filter) refSum(value string) (id, hint string, sum *[sha256.Size]byte) {
	if !f.canKeep() {
		return "", notKeptHint, nil
	}
	s := shadow.Fingerprint(shadow.ReadOnlyBytes(value))
	id, hint = f.refOf(s)
	return id, hint, &s
}

// canKeep reports whether this request's originals can be kept for
// expand_context.
func (f *Filter) canKeep() bool { return f.env.Store != nil && f.env.Tenant != "" }

// countIrrecoverable counts, and marks in its change, a rewritten result
// none of whose originals was kept.
func (f *Filter) countIrrecoverable(rw rewrite) {
	for _, k := range rw.kept {
		if k.id != "" {
			return
		}
	}
	f.Stats.Irrecoverable++
	if rw.change != nil {
		rw.change.Irrecoverable = true
	}
}

// keep stores the originals the request's summaries point to, touching
// those already there. A failure does not change the summary (its bytes
// must not depend on the store's health, or one slow second would break
// the provider's cache for the rest of the session); it is counted, and an
// expansion of that id reports the original missing.
func (f *Filter) keep(values []keptValue) {
	for _, v := range values {
		if v.id == "" {
			continue
		}
		if err := shadow.KeepFunc(f.env.Ctx, f.env.Store, f.env.Tenant, shadow.Original, v.id, v.bytes); err != nil {
			f.Stats.StoreErrors++
			continue
		}
		f.Stats.References++
	}
}

// longestString is the longest top-level string of a JSON object, decoded
// (a Gemini response's "output"), or the raw object when it has none.
func longestString(raw string) string {
	best := ""
	found := false
	gjson.Parse(raw).ForEach(func(_, v gjson.Result) bool {
		if v.Type == gjson.String && (!found || len(v.Str) > len(best)) {
			best, found = v.Str, true
		}
		return true
	})
	if !found {
		return raw
	}
	return best
}

// resultChange is the report of one result the tiers rewrote.
func resultChange(r *wire.ToolResult, before, after, linesBefore, linesAfter int, detail string) *pipeline.Change {
	return &pipeline.Change{
		Filter:      FilterName,
		Ordinal:     r.Ordinal,
		CallID:      r.CallID,
		ToolName:    r.ToolName,
		IsError:     r.IsError,
		BytesBefore: before,
		BytesAfter:  after,
		LinesBefore: linesBefore,
		LinesAfter:  linesAfter,
		Detail:      detail,
	}
}
