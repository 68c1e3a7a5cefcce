package shadow

import (
	"context"
	"errors"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/memo"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
)

// FilterName is the pipeline step's name in reports and metrics.
const FilterName = "compress"

// CompressOptions is a profile's compression policy, fixed at start.
type CompressOptions struct {
	Strategy compress.Strategy
	// Fallback is tried when Strategy does not make a result strictly
	// smaller; nil means none.
	Fallback compress.Strategy
	// MinBytes: results at or below it are left alone (not worth a
	// reference). MaxBytes: results above it are left to the clamp (0 = no
	// upper bound).
	MinBytes, MaxBytes int
	// SkipTool reports tools whose results are never compressed (an edit
	// tool needs the exact bytes a read returned, Claude Code's Edit replaces an exact old_string, docs.anthropic.com/en/docs/claude-code).
	SkipTool func(tool string) bool
	// Clamp is the profile's clamp, which runs after this step as the floor.
	// A compressed result is fitted inside it below the reference lines, so
	// the clamp never cuts the reference off (keep: tail would).
	Clamp clamp.Limits
	// Tool is the expand tool named in the hint line.
	Tool string
	// CacheTag names the strategies' options (Name does not), so a changed
	// setting never reuses an old compressed-cache entry.
	CacheTag string
	// Parallel is how many results of one request a context-bound strategy
	// (the llm summariser) may compress at once; 0 or 1 means one after
	// another. Outputs are applied in result order, so the bytes do not
	// depend on which answer came first.
	Parallel int
}

// Env is what one request brings: where originals go and whose they are.
type Env struct {
	Ctx    context.Context
	Store  Store // nil: nothing is compressed (there would be no way back)
	Tenant string
	Keys   Keyring // derives shadow ids; the deployment's secret
}

// Decision is one result's outcome, for metrics and the audit log. It
// never carries content.
type Decision struct {
	Ordinal     int    `json:"ordinal"`
	CallID      string `json:"call_id,omitempty"`
	Tool        string `json:"tool,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Strategy    string `json:"strategy,omitempty"`
	Outcome     string `json:"outcome"`
	Cache       string `json:"cache,omitempty"` // hit | miss
	BytesBefore int    `json:"bytes_before"`
	BytesAfter  int    `json:"bytes_after"`
	// ShadowID is a bearer capability within its tenant: never written to
	// logs (the audit log writes AuditRef of it).
	ShadowID string `json:"-"`
}

// Decision outcomes.
const (
	OutcomeCompressed = "compressed"
	OutcomeSmall      = "skipped_small"
	OutcomeLarge      = "skipped_large"
	OutcomeTool       = "skipped_tool"
	OutcomeNotSmaller = "not_smaller"
	OutcomeStoreError = "store_error"
	OutcomeHasRef     = "already_referenced"
)

// Stats counts what one run did.
type Stats struct {
	CacheHits, CacheMisses int
	StoreErrors            int
	References             int // results that now carry a shadow reference
}

// CompressFilter compresses large tool results, keeps each original in the
// store under its shadow id, and starts the result with a reference so the
// model can read the original back with expand_context. It is built per
// request (it carries that request's tenant and context) and is not safe
// for concurrent use.
type CompressFilter struct {
	opts      CompressOptions
	env       Env
	storeDown bool // a store error this request: degrade to the clamp for the rest
	noCache   bool // the current result's compression must not be cached
	// pre holds compressions done ahead, concurrently, by cache key.
	pre map[string]compressed
	// started holds, for the results that read a background task's output,
	// the hint of the call that started the task (backgroundHints).
	started map[*wire.ToolResult]compress.Hint

	Stats     Stats
	Decisions []Decision
}

// NewCompressFilter returns the step for one request.
func NewCompressFilter(opts CompressOptions, env Env) *CompressFilter {
	if opts.Tool == "" {
		opts.Tool = DefaultTool
	}
	if env.Ctx == nil {
		env.Ctx = context.Background()
	}
	return &CompressFilter{opts: opts, env: env}
}

// Name implements pipeline.Filter.
func (f *CompressFilter) Name() string { return FilterName }

// cacheMarkerNone is stored in the compressed cache for a result the
// strategy could not shrink, so an expensive strategy is not asked again.
const cacheMarkerNone = "\x00"

// Rewrite implements pipeline.Filter.
func (f *CompressFilter) Rewrite(c *wire.Conversation) ([]wire.Edit, []pipeline.Change) {
	if f.env.Store == nil || f.opts.Strategy == nil {
		return nil, nil
	}
	var edits []wire.Edit
	var changes []pipeline.Change
	f.started = backgroundHints(c)
	f.prefetch(c)
	for i := range c.Results {
		r := &c.Results[i]
		// Each text value is its own unit with its own id: the model expands
		// exactly the block it needs, and a block's bytes depend only on
		// that block.
		for k := range r.Texts {
			t := &r.Texts[k]
			if t.MaxLen() <= f.opts.MinBytes {
				continue // surely small: not decoded (one would skip it anyway)
			}
			if e, ch, ok := f.one(r, t.Span, blockValue(t)); ok {
				edits = append(edits, e)
				changes = append(changes, ch)
			}
		}
		// JSON results (Gemini functionResponse.response, Bedrock json) must
		// stay JSON of the same kind: their large top-level strings are
		// compressed in place; the JSON clamp handles the structure.
		for _, j := range r.JSON {
			v := gjson.Parse(j.Raw)
			if !v.IsObject() {
				continue
			}
			v.ForEach(func(_, m gjson.Result) bool {
				if m.Type != gjson.String || len(m.Raw) <= f.opts.MinBytes {
					return true
				}
				at := wire.Span{Start: j.Span.Start + m.Index, End: j.Span.Start + m.Index + len(m.Raw)}
				if m.Index <= 0 || at.End > j.Span.End {
					return true
				}
				if e, ch, ok := f.one(r, at, stringValue(m.Str)); ok {
					edits = append(edits, e)
					changes = append(changes, ch)
				}
				return true
			})
		}
	}
	return edits, changes
}

// value is one text value to decide: its facts, and its text, decoded
// only when it must be read (a cache miss, a reference to check, an
// original to put back).
type value struct {
	TextFacts
	text func() string
	// owned says, after text, whether the store may keep the text's
	// buffer as it is (wire.TextBlock.OwnsText).
	owned func() bool
}

// blockValue is a text block's value: its facts come from its literal
// when the literal was seen before (FactsOf).
func blockValue(t *wire.TextBlock) value { return value{FactsOf(t), t.Text, t.OwnsText} }

// stringValue is the value of a text already decoded (a part of a JSON
// value: the store copies it).
func stringValue(s string) value {
	return value{factsOfString(s), func() string { return s }, func() bool { return false }}
}

// bytes is the value's text to put, and whether it may be handed over.
func (v value) bytes() ([]byte, bool) {
	text := v.text()
	return ReadOnlyBytes(text), v.owned()
}

// one decides one text value. ok=false leaves it as it is.
func (f *CompressFilter) one(r *wire.ToolResult, at wire.Span, v value) (wire.Edit, pipeline.Change, bool) {
	d := Decision{Ordinal: r.Ordinal, CallID: r.CallID, Tool: r.ToolName, BytesBefore: v.Len, BytesAfter: v.Len}
	done := func(outcome string) (wire.Edit, pipeline.Change, bool) {
		d.Outcome = outcome
		f.Decisions = append(f.Decisions, d)
		return wire.Edit{}, pipeline.Change{}, false
	}
	switch {
	case v.Len <= f.opts.MinBytes:
		// Not recorded: small results are the common case and say nothing.
		return wire.Edit{}, pipeline.Change{}, false
	case f.opts.MaxBytes > 0 && v.Len > f.opts.MaxBytes:
		return done(OutcomeLarge)
	case f.opts.SkipTool != nil && f.opts.SkipTool(r.ToolName):
		return done(OutcomeTool)
	case f.storeDown:
		return done(OutcomeStoreError)
	case v.RefLike && f.referenced(v.text()):
		return done(OutcomeHasRef)
	}

	// One fingerprint for the id and the key, found by the literal when
	// the result was seen before (FactsOf): a cache hit reads no text.
	sum := v.Sum
	id := f.env.Keys.id(f.env.Tenant, sum)
	ref := Reference(id, v.Len, f.opts.Tool)
	// The hint is part of the key: the strategy reads it to pick the kind
	// (a grep_search and a view_file result of the same bytes compress
	// differently), and the bytes must be a function of the request alone,
	// never of which result the store happened to see first (finding 14).
	key := cacheKey(sum, f.strategyDesc()+"|"+hintKey(f.hintOf(r)))
	ctx := f.env.Ctx

	// A result this process compressed or read from the cache before is
	// its finished edit: the store's copy, the reference's concatenation
	// and the quoting were a fifth of a request whose results were all
	// seen before (issue 23).
	var mk memo.Key
	var fe finishedEdit
	remembered := false
	useMemo := f.memoizable()
	if useMemo {
		mk = finishedEdits.KeyWith(func(h *maphash.Hash) {
			_, _ = h.WriteString(f.env.Tenant)
			_ = h.WriteByte(0)
			_, _ = h.WriteString(ref)
			_ = h.WriteByte(0)
		}, key)
		fe, remembered = finishedEdits.Lookup(mk)
	}

	var body, kind, name string
	hit := remembered
	if remembered {
		kind, name = fe.kind, fe.name
	} else {
		var err error
		if body, kind, name, hit, err = f.cached(ctx, key); err != nil {
			return f.storeFailed(&d, err)
		}
	}
	if hit {
		d.Cache = "hit"
		f.Stats.CacheHits++
	} else {
		d.Cache = "miss"
		f.Stats.CacheMisses++
		text := v.text()
		var res compressed
		if p, ok := f.pre[key]; ok {
			res = p
		} else {
			res = f.compress(text, r, len(ref))
		}
		body, kind, name, f.noCache = res.body, res.kind, res.name, res.noCache
		if body != "" {
			// The original first: a reference is only ever written once its
			// original can be read back.
			b, owned := v.bytes()
			if err := PutOwned(ctx, f.env.Store, f.env.Tenant, Original, id, b, owned); err != nil {
				return f.storeFailed(&d, err)
			}
		}
		if !f.noCache {
			if err := PutOwned(ctx, f.env.Store, f.env.Tenant, Compressed, key, cacheValue(kind, name, body), true); err != nil {
				// The reference is still good; only the next turn pays again.
				f.Stats.StoreErrors++
			}
		}
	}
	d.Kind, d.Strategy = kind, name
	if body == "" && !remembered {
		return done(OutcomeNotSmaller)
	}
	if hit {
		// The compressed entry (24 h) outlives the original (5 h): refresh
		// the original so the reference being reused can still be expanded.
		if err := KeepFunc(ctx, f.env.Store, f.env.Tenant, Original, id, v.bytes); err != nil {
			return f.storeFailed(&d, err)
		}
	}
	if remembered {
		return f.withRef(d, r, v, id, kind, fe.edit.WithSpan(at), len(fe.edit.Text), fe.lines)
	}
	out := ref + body
	e, lines := wire.SetString(at, out), clamp.CountLines(out)
	if useMemo && !f.noCache {
		finishedEdits.Add(mk, finishedEdit{edit: e, lines: lines, kind: kind, name: name})
	}
	return f.withRef(d, r, v, id, kind, e, len(out), lines)
}

// cacheValue is the compressed cache's value for a result: its kind and
// strategy, then its compressed text (see cached), built in one copy;
// cacheMarkerNone when nothing smaller came out.
func cacheValue(kind, name, body string) []byte {
	if body == "" {
		return []byte(cacheMarkerNone)
	}
	v := make([]byte, 0, len(kind)+len(name)+len(body)+2)
	v = append(append(append(append(append(v, kind...), '\n'), name...), '\n'), body...)
	return v
}

// withRef records a result that now carries a reference, of n bytes and
// lines lines, and returns its edit.
func (f *CompressFilter) withRef(d Decision, r *wire.ToolResult, v value, id, kind string, e wire.Edit, n, lines int) (wire.Edit, pipeline.Change, bool) {
	d.Outcome, d.BytesAfter, d.ShadowID = OutcomeCompressed, n, id
	f.Decisions = append(f.Decisions, d)
	f.Stats.References++
	return e, pipeline.Change{
		Filter:      FilterName,
		Ordinal:     r.Ordinal,
		CallID:      r.CallID,
		ToolName:    r.ToolName,
		IsError:     r.IsError,
		BytesBefore: v.Len,
		BytesAfter:  n,
		LinesBefore: v.Lines,
		LinesAfter:  lines,
		Detail:      kind,
	}, true
}

// finishedEdits remembers the edits of the results this process gave a
// reference, by tenant, reference and cache key: the same request bytes
// always make the same edit (the cache key covers the text, the strategy
// and the hint; the reference, the tenant's id of the text). Only the
// deterministic strategies' edits are kept (memoizable): a model's summary
// is the store's to share between replicas. Up to two generations of 16 MiB.
var finishedEdits = memo.New(16<<20, func(f finishedEdit) int { return len(f.edit.Raw) + len(f.edit.Text) + 128 })

type finishedEdit struct {
	edit       wire.Edit // its Span is the first request's
	lines      int
	kind, name string
}

// memoizable reports whether this filter's compressions may be remembered
// in the process (finishedEdits): not a model's, which may differ from one
// call to the next.
func (f *CompressFilter) memoizable() bool {
	for _, s := range []compress.Strategy{f.opts.Strategy, f.opts.Fallback} {
		if _, ok := s.(compress.ContextCompressor); ok {
			return false
		}
	}
	return true
}

// referenced reports whether text starts with a reference toolproc wrote
// for this tenant: it parses and its original is in the store. Anything
// else that merely looks like one (a web page a tool fetched can say
// anything) is content like any other, compressed as usual (finding 22).
func (f *CompressFilter) referenced(text string) bool {
	id, _, _, ok := ParseReference(text)
	if !ok {
		return false
	}
	if t, isToucher := f.env.Store.(Toucher); isToucher {
		return t.Touch(f.env.Ctx, f.env.Tenant, Original, id) == nil
	}
	_, err := f.env.Store.Get(f.env.Ctx, f.env.Tenant, Original, id)
	return err == nil
}

// hintKey is the part of the cache key the hint decides: the tool name
// and its call's arguments, length-prefixed so no split collides.
func hintKey(h compress.Hint) string {
	return strconv.Itoa(len(h.ToolName)) + ":" + h.ToolName + strconv.Itoa(len(h.Args)) + ":" + h.Args
}

// hintOf is the hint r is compressed with: its own call's, or, for a
// background task's output, the call that started the task.
func (f *CompressFilter) hintOf(r *wire.ToolResult) compress.Hint {
	if h, ok := f.started[r]; ok {
		return h
	}
	return compress.Hint{ToolName: r.ToolName, Args: r.Args}
}

// cached reads the compressed cache. The stored value is
// "<kind>\n<strategy>\n<body>", or the none-marker.
func (f *CompressFilter) cached(ctx context.Context, key string) (body, kind, name string, hit bool, err error) {
	v, err := f.env.Store.Get(ctx, f.env.Tenant, Compressed, key)
	if errors.Is(err, ErrNotFound) {
		return "", "", "", false, nil
	}
	if err != nil {
		return "", "", "", false, err
	}
	// v is this call's own copy (Store.Get): read in place, not copied again.
	s := unsafe.String(unsafe.SliceData(v), len(v))
	if s == cacheMarkerNone {
		return "", "", "", true, nil
	}
	kind, rest, ok1 := strings.Cut(s, "\n")
	name, body, ok2 := strings.Cut(rest, "\n")
	if !ok1 || !ok2 {
		// Not ours (or from an older format): recompute.
		return "", "", "", false, nil
	}
	return body, kind, name, true, nil
}

// compress runs the strategy (then the fallback) and fits the result under
// the clamp below a reference of refLen bytes. It returns "" when nothing
// strictly smaller than the original came out. The body is also the cache
// value's tail; see cached for the header.
func (f *CompressFilter) compress(text string, r *wire.ToolResult, refLen int) (res compressed) {
	hint := f.hintOf(r)
	for _, s := range []compress.Strategy{f.opts.Strategy, f.opts.Fallback} {
		if s == nil {
			continue
		}
		var out string
		var rep compress.Report
		if cc, ok := s.(compress.ContextCompressor); ok {
			var fellBack error
			out, rep, fellBack = cc.CompressContext(f.env.Ctx, text, hint)
			// A transient failure (timeout, rate limit) must not pin the
			// fallback's output in the cache for a day: the next turn tries
			// the model again.
			res.noCache = res.noCache || fellBack != nil
		} else {
			out, rep = s.Compress(text, hint)
		}
		if !rep.Changed {
			continue
		}
		out = f.fit(out, refLen)
		if refLen+len(out) < len(text) {
			res.body, res.kind, res.name = out, string(rep.Kind), s.Name()
			return res
		}
	}
	return res
}

// compressed is one result's compression: the body ("" when nothing
// strictly smaller came out), its kind and strategy, and whether it must
// not be cached (a fallback after a transient failure).
type compressed struct {
	body, kind, name string
	noCache          bool
	failed           bool // prefetch only: it panicked; the main loop tries again
}

// prefetch compresses, concurrently (opts.Parallel at most), the results
// this request will compress with a context-bound strategy and whose
// compressed form is not cached yet: a summariser answers in seconds, and
// ten results one after another would spend ten times the request's
// budget (review finding 20). It decides nothing: the main loop still
// applies every rule in result order and takes the work done here by key.
func (f *CompressFilter) prefetch(c *wire.Conversation) {
	if f.opts.Parallel < 2 || f.env.Store == nil || !contextBound(f.opts.Strategy, f.opts.Fallback) {
		return
	}
	type job struct {
		key, text string
		r         *wire.ToolResult
		refLen    int
	}
	var jobs []job
	seen := map[string]bool{}
	add := func(r *wire.ToolResult, text string) {
		switch {
		case len(text) <= f.opts.MinBytes, f.opts.MaxBytes > 0 && len(text) > f.opts.MaxBytes,
			f.opts.SkipTool != nil && f.opts.SkipTool(r.ToolName), strings.HasPrefix(text, refPrefix):
			return
		}
		key := CacheKey([]byte(text), f.strategyDesc()+"|"+hintKey(f.hintOf(r)))
		if seen[key] {
			return
		}
		seen[key] = true
		if _, _, _, hit, err := f.cached(f.env.Ctx, key); hit || err != nil {
			return
		}
		refLen := len(Reference(IDPrefix+strings.Repeat("0", idHexLen), len(text), f.opts.Tool))
		jobs = append(jobs, job{key: key, text: text, r: r, refLen: refLen})
	}
	for i := range c.Results {
		r := &c.Results[i]
		for k := range r.Texts {
			if t := &r.Texts[k]; t.MaxLen() > f.opts.MinBytes {
				add(r, t.Text())
			}
		}
		for _, j := range r.JSON {
			v := gjson.Parse(j.Raw)
			if !v.IsObject() {
				continue
			}
			v.ForEach(func(_, m gjson.Result) bool {
				if m.Type == gjson.String && len(m.Raw) > f.opts.MinBytes {
					add(r, m.Str)
				}
				return true
			})
		}
	}
	if len(jobs) < 2 {
		return
	}
	results := make([]compressed, len(jobs))
	sem := make(chan struct{}, f.opts.Parallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer func() {
				// A panic here must not take the process down: the main
				// loop compresses this result itself (and recovers there).
				if recover() != nil {
					results[i] = compressed{failed: true}
				}
			}()
			results[i] = f.compress(j.text, j.r, j.refLen)
		}()
	}
	wg.Wait()
	f.pre = make(map[string]compressed, len(jobs))
	for i, j := range jobs {
		if results[i].failed {
			continue
		}
		f.pre[j.key] = results[i]
	}
}

// contextBound reports whether a strategy waits on something outside the
// process (the llm summariser), which is what concurrency is for.
func contextBound(ss ...compress.Strategy) bool {
	for _, s := range ss {
		if _, ok := s.(compress.ContextCompressor); ok {
			return true
		}
	}
	return false
}

// fit clamps a compressed body so that, with the reference lines in front,
// it stays within the profile's clamp: the clamp then leaves it alone.
func (f *CompressFilter) fit(body string, refLen int) string {
	lim := f.opts.Clamp
	if lim.MaxBytes > 0 {
		lim.MaxBytes = max(lim.MaxBytes-refLen, 1024)
	}
	if lim.MaxLines > 0 {
		lim.MaxLines = max(lim.MaxLines-2, 10)
	}
	out, _ := clamp.Text(body, lim)
	return out
}

// strategyDesc names everything that decides the compressed bytes, so a
// changed strategy or clamp never reuses an old cache entry.
func (f *CompressFilter) strategyDesc() string {
	var b strings.Builder
	for _, s := range []compress.Strategy{f.opts.Strategy, f.opts.Fallback} {
		if s != nil {
			b.WriteString(s.Name())
		}
		b.WriteByte('|')
	}
	b.WriteString(strconv.Itoa(f.opts.Clamp.MaxBytes))
	b.WriteByte('|')
	b.WriteString(strconv.Itoa(f.opts.Clamp.MaxLines))
	b.WriteByte('|')
	b.WriteString(string(f.opts.Clamp.Keep))
	b.WriteByte('|')
	b.WriteString(f.opts.Tool)
	b.WriteByte('|')
	b.WriteString(f.opts.CacheTag)
	return b.String()
}

// storeFailed degrades the rest of this request to the clamp: a store that
// failed once is likely down, and every further call would add its timeout.
func (f *CompressFilter) storeFailed(d *Decision, _ error) (wire.Edit, pipeline.Change, bool) {
	f.storeDown = true
	f.Stats.StoreErrors++
	d.Outcome = OutcomeStoreError
	f.Decisions = append(f.Decisions, *d)
	return wire.Edit{}, pipeline.Change{}, false
}
