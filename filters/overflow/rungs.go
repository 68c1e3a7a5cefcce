package overflow

// The request-rewriting rungs of the overflow escalation ladder. When the
// classifier says a request no longer fits, the caller rewrites the request
// harder at each retry; each rung here is an ordinary pipeline.Filter, pure
// like every other filter: the caller decides which rung runs when, and
// owns retries, the shadow store and the clock.
//
//   - Rung (a), NewClampRung: seed 001's recovery truncation, a per-result
//     byte budget (usually ShareBytes of the model's window) plus an
//     aggregate budget over all results together.
//   - Rung (c), NewTruncateRung: seed 000's llxprt compression (512
//     characters per tool message), made lossless by a shadow reference to
//     the original wherever the caller can store it.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
)

// minRungBytes is the floor of the clamp rung's per-result allowance: seed
// 001 keeps at least MIN_KEEP_CHARS = 2000 of a result; 2 KiB is that in
// bytes, rounded to what the clamp's hint and a useful head still fit in.
const minRungBytes = 2 << 10

// ClampRung is rung (a). Build it with NewClampRung.
type ClampRung struct {
	budget int
	keep   clamp.Keep
}

// NewClampRung clamps every tool result to budget bytes, and all results
// together to budget as well: when their sum exceeds it, the budget is split
// across the results that exceed their even share (results under their
// share keep their bytes) — seed 001's aggregate recovery; never below 2 KiB
// per result. Lines are unlimited; keep says which end survives.
//
// The split is a water level: the largest L with sum(min(size, L)) <=
// budget, so a result smaller than L is untouched and every bigger one gets
// L bytes. That is the "even share" rule applied until it settles (after
// the small results keep theirs, the share of the rest grows). The 2 KiB
// floor wins over the aggregate: with many results the total may exceed
// budget, but no result is cut to a stub the model cannot use.
func NewClampRung(budget int, keep clamp.Keep) pipeline.Filter {
	return &ClampRung{budget: max(budget, minRungBytes), keep: keep}
}

// Name implements pipeline.Filter.
func (r *ClampRung) Name() string { return "overflow_clamp" }

// resultBytes is what one result contributes to the aggregate: its decoded
// text plus the raw bytes of its JSON blocks.
func resultBytes(tr *wire.ToolResult) int {
	n := tr.TextBytes()
	for _, j := range tr.JSON {
		n += len(j.Raw)
	}
	return n
}

// Allowances returns the per-result byte allowance for results of the given
// sizes under budget (see NewClampRung). Exposed for callers that want to
// log or test the split without a request.
func Allowances(sizes []int, budget int) []int {
	budget = max(budget, minRungBytes)
	out := make([]int, len(sizes))
	total := 0
	for i, s := range sizes {
		out[i] = min(s, budget)
		total += out[i]
	}
	if total <= budget {
		return out
	}
	level := waterLevel(out, budget)
	for i := range out {
		out[i] = min(out[i], max(level, minRungBytes))
	}
	return out
}

// waterLevel is the largest L with sum(min(s, L)) <= budget. Walking the
// sizes in ascending order: while the smallest remaining size fits under the
// even share of what is left, it keeps its bytes and leaves the rest to the
// others.
func waterLevel(sizes []int, budget int) int {
	s := slices.Clone(sizes)
	slices.Sort(s)
	left, n := budget, len(s)
	for i, v := range s {
		share := left / (n - i)
		if v > share {
			return share
		}
		left -= v
	}
	return budget // unreachable when sum > budget
}

// Rewrite implements pipeline.Filter. It cuts through the clamp package
// (clamp.Apply for text, clamp.JSON for JSON blocks) exactly as the clamp
// filter does, so UTF-8 safety, markers and the kept shapes are the
// clamp's: a string stays a string, a block array keeps its length, a JSON
// value stays JSON of the same kind.
func (r *ClampRung) Rewrite(c *wire.Conversation) ([]wire.Edit, []pipeline.Change) {
	sizes := make([]int, len(c.Results))
	for i := range c.Results {
		sizes[i] = resultBytes(&c.Results[i])
	}
	allow := Allowances(sizes, r.budget)
	keep := r.keep
	if keep == "" {
		keep = clamp.KeepHead
	}
	var edits []wire.Edit
	var changes []pipeline.Change
	for i := range c.Results {
		tr := &c.Results[i]
		if sizes[i] <= allow[i] || len(tr.Texts) == 0 && len(tr.JSON) == 0 {
			continue
		}
		e, rep := clamp.Result(tr, clamp.Limits{MaxBytes: allow[i], Keep: keep})
		edits = append(edits, e...)
		if !rep.Changed {
			continue
		}
		changes = append(changes, pipeline.Change{
			Filter:      r.Name(),
			Ordinal:     tr.Ordinal,
			CallID:      tr.CallID,
			ToolName:    tr.ToolName,
			IsError:     tr.IsError,
			BytesBefore: rep.BytesBefore,
			BytesAfter:  rep.BytesAfter,
			LinesBefore: rep.LinesBefore,
			LinesAfter:  rep.LinesAfter,
			Detail:      fmt.Sprintf("budget=%d allowance=%d keep=%s", r.budget, allow[i], keep),
		})
	}
	return edits, changes
}

// DefaultTruncateChars is llxprt's MAX_TOOL_RESPONSE_RETRY_CHARS (seed 000).
const DefaultTruncateChars = 512

// Kept is an original the caller must store under ID before sending the
// rewritten request, so the expand tool can return it.
type Kept struct {
	ID       string
	Original string
}

// TruncateOptions configure rung (c).
type TruncateOptions struct {
	// MaxChars is the longest value left alone, default 512 (seed 000).
	// It counts Unicode code points. llxprt measured JavaScript's .length,
	// UTF-16 code units, which counts a character outside the BMP (emoji,
	// many CJK extension characters) twice; bytes would count a CJK
	// character three times. Code points charge every character once, so
	// non-ASCII tool output is not cut shorter than ASCII output.
	MaxChars int
	// ID returns the shadow id for an original (the caller binds the
	// tenant, typically a shadow.Keyring's ID(tenant, []byte(original))). nil means no
	// reference is written and Kept stays empty: the rung is then as lossy
	// as llxprt's. The id should satisfy shadow.ValidID; a function that
	// returns "" leaves that value without a reference and out of Kept.
	ID func(original string) string
	// Tool is the expand tool named in the hint, default "expand_context".
	Tool string
}

// TruncateRung is rung (c). It keeps the originals of the values it changed
// for Kept, so one TruncateRung serves one request at a time.
type TruncateRung struct {
	max  int
	id   func(string) string
	tool string
	kept []Kept
}

// NewTruncateRung returns rung (c) with o's defaults filled in.
func NewTruncateRung(o TruncateOptions) *TruncateRung {
	r := &TruncateRung{max: o.MaxChars, id: o.ID, tool: o.Tool}
	if r.max <= 0 {
		r.max = DefaultTruncateChars
	}
	if r.tool == "" {
		r.tool = shadow.DefaultTool
	}
	return r
}

// Name implements pipeline.Filter.
func (r *TruncateRung) Name() string { return "overflow_truncate" }

// Kept returns the originals the caller must store before sending: one per
// value the last Rewrite changed, in body order, and only when an ID
// function is set. The slice belongs to the caller.
func (r *TruncateRung) Kept() []Kept { return slices.Clone(r.kept) }

// Rewrite implements pipeline.Filter. Every tool result value (error results
// included, as in llxprt, which looked only at the role) longer than
// MaxChars code points is rewritten:
//
//   - text that parses as a JSON object keeps every member; "result" becomes
//     "[omitted N chars due to provider limits]" (replaced in place, or
//     appended), and "truncated": true, "originalLength": N are set — seed
//     000's JSON path, A.0 item 6 — plus "shadow_id" and "expand_hint" when
//     an ID function is set. Member order and formatting are kept; new keys
//     go at the end, as JavaScript's JSON.stringify would put them;
//   - any other text (a JSON array or scalar included: llxprt's array kept
//     its elements by accident and its scalar threw into the text path)
//     becomes the shadow reference lines, the first MaxChars code points and
//     "… [truncated N chars]" — seed 000's text path, A.0 item 7;
//   - a JSON block (Gemini functionResponse.response, Bedrock json content)
//     that is an object gets the JSON-object treatment directly and stays an
//     object; a non-object JSON block is left alone, because the provider
//     requires the same kind and only the clamp can shrink it safely.
//
// llxprt then ran ensureJsonSafe over the result (U+FFFD → '?', C0 controls
// and DEL dropped, lone surrogates → '?'). That is not reproduced: the edit
// is written with wire.QuoteString (or by sjson), which escapes every
// control character and turns invalid UTF-8 into U+FFFD, so the JSON is
// valid anyway; dropping or rewriting characters would only make the kept
// head differ from the stored original, which is what makes this rung
// lossless.
//
// The JSON-object path shrinks only what lives under "result" (llxprt's
// payloads kept their bulk there); an object whose bulk sits in other
// members stays about as big, and rung (a) is what shrinks it.
func (r *TruncateRung) Rewrite(c *wire.Conversation) ([]wire.Edit, []pipeline.Change) {
	r.kept = nil
	var edits []wire.Edit
	var changes []pipeline.Change
	for i := range c.Results {
		tr := &c.Results[i]
		var ch pipeline.Change
		var paths []string
		for _, t := range tr.Texts {
			ch.BytesBefore += len(t.Text())
			ch.LinesBefore += clamp.CountLines(t.Text())
			out, path, id := r.text(t.Text())
			if path == "" {
				out = t.Text()
			} else {
				edits = append(edits, wire.SetString(t.Span, out))
				paths = append(paths, path)
				r.keep(id, t.Text())
			}
			ch.BytesAfter += len(out)
			ch.LinesAfter += clamp.CountLines(out)
		}
		for _, j := range tr.JSON {
			ch.BytesBefore += len(j.Raw)
			out, id, ok := "", "", false
			if n := utf8.RuneCountInString(j.Raw); n > r.max && isObject(j.Raw) {
				id = r.idOf(j.Raw)
				out, ok = r.object(j.Raw, n, id)
			}
			if !ok {
				ch.BytesAfter += len(j.Raw)
				continue
			}
			ch.BytesAfter += len(out)
			edits = append(edits, wire.Edit{Span: j.Span, Raw: out})
			paths = append(paths, "json")
			r.keep(id, j.Raw)
		}
		if len(paths) == 0 {
			continue
		}
		ch.Filter, ch.Ordinal, ch.CallID, ch.ToolName, ch.IsError = r.Name(), tr.Ordinal, tr.CallID, tr.ToolName, tr.IsError
		ch.Detail = fmt.Sprintf("max_chars=%d values=%v shadow=%t", r.max, paths, r.id != nil)
		changes = append(changes, ch)
	}
	return edits, changes
}

// idOf is the shadow id of an original, "" when references are off.
func (r *TruncateRung) idOf(original string) string {
	if r.id == nil {
		return ""
	}
	return r.id(original)
}

// keep records an original for Kept when it got a reference.
func (r *TruncateRung) keep(id, original string) {
	if id != "" {
		r.kept = append(r.kept, Kept{ID: id, Original: original})
	}
}

// text rewrites one text value and says which path it took ("object" or
// "text"); path is "" when the value is short enough to stay. id is the
// shadow id written into the value, "" when none.
func (r *TruncateRung) text(s string) (out, path, id string) {
	n := utf8.RuneCountInString(s)
	if n <= r.max {
		return "", "", ""
	}
	id = r.idOf(s)
	if isObject(s) {
		if out, ok := r.object(s, n, id); ok {
			return out, "object", id
		}
	}
	var ref string
	if id != "" {
		ref = shadow.Reference(id, len(s), r.tool)
	}
	// The reference and the marker count inside the limit (the seed's own
	// test asserts length ≤ 512, A.0 item 7): an upstream that refuses any
	// result over the limit must accept the cut one. Never keep less than
	// minKeptChars of the text itself, so a tiny limit still shows something.
	keep := r.max - utf8.RuneCountInString(ref) - utf8.RuneCountInString(truncMarker(n))
	keep = max(keep, min(minKeptChars, r.max))
	return ref + prefixRunes(s, keep) + truncMarker(n-keep), "text", id
}

// minKeptChars is the least text a cut value keeps when the reference and
// marker alone would fill the limit.
const minKeptChars = 64

// truncMarker is seed 000's marker for n removed code points.
func truncMarker(n int) string { return "… [truncated " + strconv.Itoa(n) + " chars]" }

// isObject reports whether s is valid JSON whose top level is an object.
func isObject(s string) bool {
	return jsonsafe.ValidString(s) && gjson.Parse(s).IsObject()
}

// object applies the JSON-object path to s, an object of n code points. ok
// is false only if sjson could not edit it, which valid JSON never causes.
func (r *TruncateRung) object(s string, n int, id string) (string, bool) {
	type kv struct {
		key string
		val any
	}
	set := []kv{
		{"result", "[omitted " + strconv.Itoa(n) + " chars due to provider limits]"},
		{"truncated", true},
		{"originalLength", n},
	}
	if id != "" {
		set = append(set,
			kv{"shadow_id", id},
			kv{"expand_hint", "call " + r.tool + ` with {"id":"` + id + `"} to read the full original`})
	}
	out := s
	for _, e := range set {
		next, err := sjson.Set(out, e.key, e.val)
		if err != nil {
			return "", false
		}
		out = next
	}
	// A JSON block is spliced in raw, so bytes that are not UTF-8 inside
	// its strings would reach the provider as they are; U+FFFD is what the
	// text path's quoting writes for them too. Outside strings valid JSON
	// has only ASCII, so this cannot break the structure.
	out = strings.ToValidUTF8(out, "\uFFFD")
	if !isObject(out) {
		return "", false // never hand the provider broken JSON
	}
	return out, true
}

// prefixRunes returns the first n code points of s, never splitting one
// (an invalid byte counts as one, as utf8 decoding reports it).
func prefixRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return s[:i]
}
