package sessions

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
	"github.com/toolproc/toolproc/testenv/promptcache"
)

// Rewrite is the request rewrite under test: the body a client sent to
// path in, the body the provider gets out, and what the tiers reported
// (Step is x-toolproc-tiers).
type Rewrite func(path string, body []byte) (out []byte, tiers history.Stats, err error)

// Ladder is the overflow ladder's replay for a refused request.
type Ladder func(path string, body []byte) []byte

// Prices of the prompt-cache models, relative to an uncached input token.
// Anthropic: cache reads 0.1×, cache writes 1.25× (5-minute cache)
// (docs.anthropic.com/en/docs/build-with-claude/prompt-caching#pricing),
// and only the prefixes a breakpoint wrote are cached: the replay sets
// them where Claude Code does (the head and the newest message) unless the
// body has its own. OpenAI: every prefix cached automatically, cached
// input at 0.5× (the discount of its first cached models; newer ones give
// more), nothing extra to write
// (platform.openai.com/docs/guides/prompt-caching). The rules are the
// fake upstream's (promptcache), so a replay predicts what the Ledger
// bills.
const (
	anthropicRead, anthropicWrite = 0.10, 1.25
	openAIRead                    = 0.50
)

// pricer bills one session's requests under both cache models.
type pricer struct{ a, o promptcache.Cache }

// price returns a request's cost in input-token equivalents under the
// Anthropic and the OpenAI cache models.
func (p *pricer) price(d wire.Dialect, body []byte) (costA, costO float64) {
	us := promptcache.Units(d, body)
	o := p.o.Charge(wire.OpenAIChat, us)
	costO = float64(o.Input) + openAIRead*float64(o.Read+o.Write)
	head := promptcache.HeadUnits(d, body)
	if d == wire.OpenAIChat && gjson.GetBytes(body, "messages.0.role").String() == "system" {
		head++ // Chat's system prompt is its first message
	}
	a := p.a.Charge(wire.Anthropic, promptcache.MarkLikeClaudeCode(us, head))
	costA = float64(a.Input) + anthropicRead*float64(a.Read) + anthropicWrite*float64(a.Write)
	return costA, costO
}

// Result is one session replayed in one dialect.
type Result struct {
	Session string
	Dialect wire.Dialect
	// Requests is the number of turns (requests) in the session.
	Requests int
	// Bytes sent over the session and the largest request, raw and
	// rewritten.
	RawBytes, OutBytes     int64
	RawLargest, OutLargest int
	// RawFit and OutFit count the turns before the first request over the
	// window (as the provider counts: thinking of earlier turns dropped);
	// equal to Requests when none was over.
	RawFit, OutFit int
	// OutFitLadder is OutFit when a request over the window gets one
	// replay of the overflow ladder's tiers rung (the provider refused it,
	// toolproc summarised harder and sent it again).
	OutFitLadder int
	// Cost of the session's input under each cache model, in tokens at
	// the uncached price.
	RawCostA, OutCostA float64
	RawCostO, OutCostO float64
	// Breaks counts rewritten requests that did not extend the previous
	// one: some message sent before changed, so the provider's cached
	// prefix ended early.
	Breaks int
	// BreaksOffStep are the breaks on a request where the tier step did
	// not change (expand_context first offered, a per-result compression).
	BreaksOffStep int
	// Steps is the last request's tier step; StepsTooClose counts steps
	// taken outside the window's emergency that came less than a quarter
	// of the window after the previous one; StepsUrgent the steps taken
	// because the request would not have fit the window.
	Steps, StepsTooClose, StepsUrgent int
	// RecentForced counts results among the keep_recent latest that a
	// step summarised because even the middle tier left the request over
	// the window (keep_recent adapts down to the newest result).
	RecentForced int
	// Invariants, each should be 0: pairs broken, recent results changed
	// outside the window's emergency, the newest result summarised or
	// compressed by the tiers, key lines of a summarised result lost,
	// system prompt or first user message changed, rewrite errors.
	PairingErrors, RecentChanged, NewestChanged, KeyLinesLost, HeadChanged, Errors int
	// KeyLinesShortened counts key lines missing from results shortened
	// otherwise than by a summary (the middle tier, per-result compression,
	// the clamp): reported, not an invariant of the tiers.
	KeyLinesShortened int
}

// Replay sends every request of one session (in the dialect's shape)
// through rw and measures it against the raw requests. window is in
// tokens; keep is the tiers' keep_recent (the results that must stay);
// flatten says old exchanges may reach the provider as text (the tiers'
// flatten option), so they are checked there instead.
//
// ladder, when not nil, is what the overflow ladder's tiers rung would
// replay for a request the provider refused; OutFitLadder counts the turns
// that fit with it.
func Replay(s Session, d wire.Dialect, rw Rewrite, ladder Ladder, window, keep int, flatten bool) Result {
	res := Result{Session: s.Name, Dialect: d}
	reqs, path := s.Anthropic, "/v1/messages"
	if d == wire.OpenAIChat {
		reqs, path = s.OpenAI, "/v1/chat/completions"
	}
	res.Requests = len(reqs)
	var prevOut [][]byte
	var rawBill, outBill pricer
	rawOver, outOver, ladderOver := false, false, false
	lastStep, lastStepSize := 0, 0
	for _, raw := range reqs {
		out, st, err := rw(path, raw)
		step := st.Step
		if err != nil {
			res.Errors++
			out = raw
		}
		rc, err1 := wire.Parse(d, raw)
		oc, err2 := wire.Parse(d, out)
		if err1 != nil || err2 != nil {
			res.Errors++
			continue
		}
		res.RawBytes += int64(len(raw))
		res.OutBytes += int64(len(out))
		res.RawLargest = max(res.RawLargest, len(raw))
		res.OutLargest = max(res.OutLargest, len(out))
		rawEst, outEst := history.Estimate(rc), history.Estimate(oc)
		if !rawOver && rawEst > window*4 {
			rawOver = true
		}
		if !rawOver {
			res.RawFit++
		}
		if !outOver && outEst > window*4 {
			outOver = true
		}
		if !outOver {
			res.OutFit++
		}
		if !ladderOver && outEst > window*4 {
			ladderOver = true
			if ladder != nil {
				if lc, err := wire.Parse(d, ladder(path, raw)); err == nil && history.Estimate(lc) <= window*4 {
					ladderOver = false
				}
			}
		}
		if !ladderOver {
			res.OutFitLadder++
		}
		os := segments(d, out)
		ra, ro := rawBill.price(d, raw)
		oa, oo := outBill.price(d, out)
		res.RawCostA += ra
		res.RawCostO += ro
		res.OutCostA += oa
		res.OutCostO += oo
		if prevOut != nil && common(prevOut, os) < len(prevOut) {
			res.Breaks++
			if step == lastStep {
				res.BreaksOffStep++
			}
		}
		prevOut = os
		if step > lastStep {
			// Steps must be at least a quarter of the window apart in the
			// conversation's growth (window tokens × 4 bytes / 4), unless the
			// request would not have fit.
			switch {
			case st.Urgent:
				res.StepsUrgent++
			case lastStep > 0 && rawEst-lastStepSize < window:
				res.StepsTooClose++
			}
			lastStep, lastStepSize = step, rawEst
		}
		res.Steps = step
		if flatten {
			res.PairingErrors += flatPairing(d, rc, oc, out)
		} else {
			res.PairingErrors += pairing(rc, oc)
		}
		changed := recent(rc, oc, keep)
		if st.KeptWhole != 0 {
			res.RecentForced += changed
		} else {
			res.RecentChanged += changed
		}
		res.NewestChanged += recent(rc, oc, 1)
		lost, shortened := keyLines(rc, oc, out)
		res.KeyLinesLost += lost
		res.KeyLinesShortened += shortened
		if !head(d, raw, out) {
			res.HeadChanged++
		}
	}
	return res
}

// segments splits a request the way a prompt cache sees it: what comes
// before the messages (tools, system: they start every cached prefix) as
// one segment, then one per message. Fields after the messages that are
// not tools or system (model, max_tokens) are left out: they are not
// prompt.
func segments(d wire.Dialect, body []byte) [][]byte {
	root := gjson.ParseBytes(body)
	var head bytes.Buffer
	head.WriteString(root.Get("tools").Raw)
	head.WriteString(root.Get("system").Raw)
	out := [][]byte{head.Bytes()}
	root.Get("messages").ForEach(func(_, m gjson.Result) bool {
		out = append(out, []byte(m.Raw))
		return true
	})
	return out
}

// common is how many leading segments two requests share.
func common(a, b [][]byte) int {
	n := 0
	for n < len(a) && n < len(b) && bytes.Equal(a[n], b[n]) {
		n++
	}
	return n
}

// pairing counts broken tool pairs: a result or call missing, moved or
// re-paired by the rewrite.
func pairing(raw, out *wire.Conversation) int {
	bad := 0
	if len(raw.Results) != len(out.Results) || len(raw.Calls) != len(out.Calls) || raw.Messages != out.Messages {
		return 1 + abs(len(raw.Results)-len(out.Results)) + abs(len(raw.Calls)-len(out.Calls))
	}
	for i := range raw.Results {
		a, b := raw.Results[i], out.Results[i]
		if a.CallID != b.CallID || a.Message != b.Message || a.CallMessage != b.CallMessage {
			bad++
		}
	}
	for i := range raw.Calls {
		if raw.Calls[i].ID != out.Calls[i].ID || raw.Calls[i].Name != out.Calls[i].Name {
			bad++
		}
	}
	return bad
}

// recent counts the last keep results the tiers touched: they must reach
// the provider as results, not summarised and not flattened into text.
func recent(raw, out *wire.Conversation, keep int) int {
	bad := 0
	shift := len(raw.Results) - len(out.Results) // results flattened into text
	for i := max(0, len(raw.Results)-keep); i < len(raw.Results); i++ {
		j := i - shift
		if j < 0 || j >= len(out.Results) {
			bad++
			continue
		}
		if raw.Results[i].CallID != out.Results[j].CallID {
			bad++
			continue
		}
		// Per-result compression may still shorten a large recent result;
		// what the tiers promise is that they do not summarise it.
		for _, t := range out.Results[j].Texts {
			if strings.HasPrefix(t.Text(), history.Prefix) {
				bad++
				break
			}
		}
	}
	return bad
}

// keyLines counts error lines, failing tests and run summaries of
// summarised command outputs that the summary lost, and apart those lost by
// any other shortening. A result flattened
// into text (no longer a result) must have them in the request's text.
func keyLines(raw, out *wire.Conversation, body []byte) (lost, shortened int) {
	shift := len(raw.Results) - len(out.Results)
	text := ""
	for i, r := range raw.Results {
		cat := history.Categorize(r.ToolName, r.Args)
		if cat != history.Terminal && cat != history.Other && !r.IsError {
			continue
		}
		if i < shift {
			if text == "" {
				text = wiretest.AllText(body)
			}
			for k := range r.Texts {
				lines, _ := compress.KeyLines(r.Texts[k].Text(), compress.MaxKeyLines)
				for _, l := range lines {
					if !strings.Contains(text, "\n"+l) {
						lost++
					}
				}
			}
			continue
		}
		o := out.Results[i-shift]
		for k, t := range o.Texts {
			if k >= len(r.Texts) || t.Text() == r.Texts[k].Text() {
				continue
			}
			// A summary must keep every key line of the original, on a line
			// of its own; so should any other shortening (the middle tier,
			// per-result compression, the clamp), counted apart.
			lines, _ := compress.KeyLines(r.Texts[k].Text(), compress.MaxKeyLines)
			summary := strings.HasPrefix(t.Text(), history.Prefix)
			for _, l := range lines {
				if strings.Contains(t.Text(), "\n"+l) || strings.HasPrefix(t.Text(), l) {
					continue
				}
				if summary {
					lost++
				} else {
					shortened++
				}
			}
		}
	}
	return lost, shortened
}

// flatPairing checks a request whose old exchanges may be text: the
// provider must find every call answered and every result called
// (wiretest.CheckPairing), and the results left are the raw request's
// latest ones, in order.
func flatPairing(d wire.Dialect, raw, out *wire.Conversation, body []byte) int {
	bad := 0
	if err := wiretest.CheckPairing(d, body); err != nil {
		bad++
	}
	shift := len(raw.Results) - len(out.Results)
	if shift < 0 {
		return bad + 1
	}
	for j, b := range out.Results {
		if raw.Results[j+shift].CallID != b.CallID || raw.Results[j+shift].CallMessage >= 0 && b.CallMessage < 0 {
			bad++
		}
	}
	return bad
}

// head reports whether the system prompt and the first user message reach
// the provider as sent.
func head(d wire.Dialect, raw, out []byte) bool {
	r, o := gjson.ParseBytes(raw), gjson.ParseBytes(out)
	if r.Get("system").Raw != o.Get("system").Raw {
		return false
	}
	first := func(v gjson.Result) string {
		s := ""
		v.Get("messages").ForEach(func(_, m gjson.Result) bool {
			if m.Get("role").String() == "user" {
				s = m.Raw
				return false
			}
			if d == wire.OpenAIChat && m.Get("role").String() == "system" && s == "" {
				s = m.Raw // the system message comes first; keep looking for the user
			}
			return true
		})
		return s
	}
	sys := func(v gjson.Result) string { return v.Get("messages.0").Raw }
	return first(r) == first(o) && (d != wire.OpenAIChat || sys(r) == sys(o))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Totals sums results.
func Totals(rs []Result) Result {
	t := Result{Session: "all"}
	for _, r := range rs {
		t.Requests += r.Requests
		t.RawBytes += r.RawBytes
		t.OutBytes += r.OutBytes
		t.RawLargest = max(t.RawLargest, r.RawLargest)
		t.OutLargest = max(t.OutLargest, r.OutLargest)
		t.RawFit += r.RawFit
		t.OutFit += r.OutFit
		t.OutFitLadder += r.OutFitLadder
		t.RawCostA += r.RawCostA
		t.OutCostA += r.OutCostA
		t.RawCostO += r.RawCostO
		t.OutCostO += r.OutCostO
		t.Breaks += r.Breaks
		t.BreaksOffStep += r.BreaksOffStep
		t.Steps += r.Steps
		t.StepsTooClose += r.StepsTooClose
		t.StepsUrgent += r.StepsUrgent
		t.RecentForced += r.RecentForced
		t.NewestChanged += r.NewestChanged
		t.PairingErrors += r.PairingErrors
		t.RecentChanged += r.RecentChanged
		t.KeyLinesLost += r.KeyLinesLost
		t.KeyLinesShortened += r.KeyLinesShortened
		t.HeadChanged += r.HeadChanged
		t.Errors += r.Errors
	}
	return t
}

// Row formats a result as one Markdown table row (see Header).
func (r Result) Row() string {
	return fmt.Sprintf("| %s | %s | %d | %d | %.1f%% | %d | %d | %d | %d | %.3f | %.3f | %d | %d | %d/%d/%d/%d/%d/%d |",
		r.Session, r.Dialect, r.Requests, r.RawBytes, 100*(1-float64(r.OutBytes)/float64(max(r.RawBytes, 1))),
		r.RawLargest, r.OutLargest, r.RawFit, r.OutFit,
		r.OutCostA/max(r.RawCostA, 1), r.OutCostO/max(r.RawCostO, 1), r.Steps, r.Breaks,
		r.PairingErrors, r.RecentChanged, r.NewestChanged, r.KeyLinesLost, r.HeadChanged, r.Errors)
}

// Header is the Markdown table header for Row.
const Header = "| session | dialect | turns | raw bytes | bytes saved | largest raw | largest out | turns fit raw | turns fit out | cost × (Anthropic) | cost × (OpenAI) | steps | prefix breaks | pairing/recent/newest/keylines/head/errors |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
