package sessions

import (
	"fmt"
	"strings"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/overflow"
	"github.com/toolproc/toolproc/filters/wire"
)

// Run replays every session in dialect d through cfg's default profile,
// each session with its own store (as one agent talks to one deployment).
// window is in tokens; 0 gives each session its OwnWindow.
func Run(cfg *extproc.Config, ss []Session, d wire.Dialect, window int) ([]Result, error) {
	return RunFraction(cfg, ss, d, window, 3)
}

// Defaults, as RunFraction's window, replays every session at the model's
// own window (the built-in table), with the profile as configured.
const Defaults = -1

// RunFraction is Run where a per-session window (window 0) is exhausted by
// the raw session 1/fraction of the way through its growth.
func RunFraction(cfg *extproc.Config, ss []Session, d wire.Dialect, window, fraction int) ([]Result, error) {
	base, ok := cfg.Profiles[extproc.DefaultProfile]
	if !ok {
		return nil, fmt.Errorf("no default profile")
	}
	out := make([]Result, 0, len(ss))
	for _, s := range ss {
		w := window
		if w == 0 {
			w = OwnWindow(s, d, fraction)
		}
		p := *base
		if w == Defaults {
			w = overflow.Window(requestModel(d), overflow.DefaultWindows, p.Recovery.DefaultWindow)
		} else {
			p.Tiers.WindowTokens = w
		}
		c := *cfg
		c.Profiles = map[string]*extproc.Profile{extproc.DefaultProfile: &p}
		rw, err := extproc.NewRewriter(&c, "")
		if err != nil {
			return nil, err
		}
		out = append(out, Replay(s, d, func(path string, body []byte) ([]byte, history.Stats, error) {
			r, err := rw.Rewrite(path, body)
			return r.Body, r.Tiers, err
		}, func(path string, body []byte) []byte {
			out, _, _ := rw.RecoverTiers(path, body)
			return out
		}, w, p.Tiers.KeepRecent, p.Tiers.Flatten != "" && p.Tiers.Flatten != "off"))
		rw.Close()
	}
	return out, nil
}

// OwnWindow is the window the raw session exhausts a third of the way
// through its growth: its first request (system prompt, tools, task; the
// part no rewrite may touch) plus a third of what the conversation adds
// after it, in tokens.
func OwnWindow(s Session, d wire.Dialect, fraction int) int {
	reqs := s.Anthropic
	if d == wire.OpenAIChat {
		reqs = s.OpenAI
	}
	if len(reqs) == 0 {
		return 1024
	}
	first, last := estimate(d, reqs[0]), estimate(d, reqs[len(reqs)-1])
	return max(1024, (first+(last-first)/max(fraction, 1)+3)/4)
}

func estimate(d wire.Dialect, body []byte) int {
	c, err := wire.Parse(d, body)
	if err != nil {
		return len(body)
	}
	return history.Estimate(c)
}

// Summary states the goals' figures over a set of results.
func Summary(rs []Result) string {
	t := Totals(rs)
	rawFit, outFit, ladderFit, over, never := 0, 0, 0, 0, 0
	for _, r := range rs {
		if r.RawFit == r.Requests {
			continue // the raw session never overflowed: nothing to extend
		}
		over++
		rawFit += r.RawFit
		outFit += r.OutFit
		ladderFit += r.OutFitLadder
		if r.OutFit == r.Requests {
			never++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- turns before the window is exhausted: %d raw, %d rewritten = %.2f× over the %d sessions whose raw requests overflow (%d of them never overflowed rewritten: the ratio is a floor)\n",
		rawFit, outFit, float64(outFit)/float64(max(rawFit, 1)), over, never)
	fmt.Fprintf(&b, "- with one replay of the overflow ladder's tiers rung when the provider refuses a request: %d turns = %.2f×\n",
		ladderFit, float64(ladderFit)/float64(max(rawFit, 1)))
	fmt.Fprintf(&b, "- bytes sent: %d raw, %d rewritten (%.1f%% less); largest request %d raw, %d rewritten\n",
		t.RawBytes, t.OutBytes, 100*(1-float64(t.OutBytes)/float64(max(t.RawBytes, 1))), t.RawLargest, t.OutLargest)
	fmt.Fprintf(&b, "- cache-model cost, rewritten / raw: %.3f× Anthropic (read 0.1×, write 1.25×), %.3f× OpenAI (cached 0.5×)\n",
		t.OutCostA/max(t.RawCostA, 1), t.OutCostO/max(t.RawCostO, 1))
	fmt.Fprintf(&b, "- steps %d (%d forced by the window), prefix breaks %d (%d on a request without a step), steps outside the window's emergency closer than a quarter window %d\n",
		t.Steps, t.StepsUrgent, t.Breaks, t.BreaksOffStep, t.StepsTooClose)
	more, most := 0, 0.0
	for _, r := range rs {
		if r.OutBytes > r.RawBytes {
			more++
			most = max(most, float64(r.OutBytes)/float64(r.RawBytes)-1)
		}
	}
	fmt.Fprintf(&b, "- sessions sending more bytes than raw: %d of %d (at most +%.2f%%)\n", more, len(rs), 100*most)
	fmt.Fprintf(&b, "- recent results summarised because the window forced it: %d\n", t.RecentForced)
	fmt.Fprintf(&b, "- key lines missing from results shortened otherwise (middle tier, per-result compression, clamp): %d\n", t.KeyLinesShortened)
	fmt.Fprintf(&b, "- pairing errors %d, recent results changed %d, newest result changed %d, key lines lost %d, system/first message changed %d, rewrite errors %d",
		t.PairingErrors, t.RecentChanged, t.NewestChanged, t.KeyLinesLost, t.HeadChanged, t.Errors)
	return b.String()
}
