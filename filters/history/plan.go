package history

import "github.com/toolproc/toolproc/filters/wire"

// group is the unit the cut moves by: the results that answer one assistant
// message (its parallel calls), so a message is rewritten once, whole, and
// a call and its results are always old or recent together.
type group struct {
	first, last int // result ordinals, inclusive
	end         int // the message index holding the group's last result
	callMessage int // the assistant message holding the calls, -1 if none
	saved       int // bytes summarising the group takes out of the body
	// midSaved is what the middle tier takes out (compressing instead of
	// summarising); known once midKnown.
	midSaved int
	midKnown bool
	// start is the estimated request bytes before the group's first
	// message: what a provider still reads from its cache when the group
	// is the first one a step changes.
	start int
}

// budget is when the tiers act, in estimated bytes (tokens × 4, the
// estimate the overflow ladder uses too).
type budget struct {
	trigger int // a request above it is cut
	target  int // ... down to here, as far as the recent exchanges allow
	spacing int // the least growth between two steps (trigger − target)
	// hard is the size past which a step is taken whatever the spacing
	// and the cost model (0: none): the window. Past it the provider
	// refuses the request, which costs more than any cache break.
	hard int
}

// plan is where the cut falls for a conversation.
type plan struct {
	cut   int // groups [0, cut) are summarised
	mid   int // groups [cut, mid) are compressed (the middle tier)
	steps int // how many times the cut moved, replaying the conversation's growth
	size  int // estimated bytes of the whole request before the rewrite
	// urgent: the last step was taken because the request would not have
	// fit the window (no cost check, no spacing).
	urgent bool
}

// sizes lists, for every message a request ends with (the last one, and
// each one the model answered), the estimated bytes of the request that
// ended there: the prompt outside the message list (tools, system), the
// messages up to it, less the thinking blocks the provider drops from
// earlier turns, and whatever comes before an Anthropic compaction block.
// Request parameters are left out, so a conversation estimates the same
// whether this request streams or not. It is a pure function of the
// request, and every earlier request of an append-only conversation is one
// of these prefixes, so it sees the same sizes.
func sizes(c *wire.Conversation) (points []point) {
	if len(c.Msgs) == 0 {
		return nil
	}
	listStart := c.Msgs[0].Span.Start
	fixed := c.HeadBytes()
	thinking, dropped := 0, 0
	cuts := compactionStarts(c)
	for m, msg := range c.Msgs {
		if at, ok := cuts[m]; ok {
			// Everything before a compaction block is dropped, the
			// thinking of earlier turns with it.
			listStart, thinking, dropped = at, 0, 0
		}
		if msg.Prompt {
			// A new user turn: thinking of every earlier turn stops counting.
			dropped = thinking
		}
		thinking += msg.Thinking
		if msg.Assistant {
			continue
		}
		if m+1 < len(c.Msgs) && !c.Msgs[m+1].Assistant {
			// No request ends here: the turn goes on (OpenAI's one tool
			// message per parallel result, a user message after them).
			continue
		}
		points = append(points, point{msg: m, size: fixed + msg.Span.End - listStart - dropped})
	}
	return points
}

type point struct {
	msg  int // message index
	size int // estimated request bytes when the request ends there
}

// planner decides the steps of a conversation. It replays the
// conversation's growth point by point: every earlier request of an
// append-only conversation is one of these prefixes and replays the same
// decisions, so turn N+1 repeats turn N's cut until the next step, on every
// replica, with no state kept between requests.
type planner struct {
	groups []group
	// summary returns group g's summary saving (group.saved), computing
	// it on first use: the groups after the cut stay whole, and
	// summarising them only to price them was a sixth of the rewrite of
	// a new 300 KB request (issue 23). nil: the groups' saved fields.
	summary func(g int) int
	points  []point
	b       budget
	keep    int // results kept whole unless the window forces fewer
	prices  Prices
	head    int // the bytes outside the message list (tools, system)
	// middle returns group g's middle-tier saving (computing it on first
	// use); nil turns the middle tier off.
	middle func(g int) int
	// urgentOnly: steps only where the request would not fit the window
	// otherwise (the originals cannot be kept, so a step to save cost
	// would lose content for good).
	urgentOnly bool
}

// plan runs the replay. A step is considered when the rewritten request
// passes the trigger (and has grown by the spacing since the last step).
// It cuts deep enough to last: summaries up to the keep_recent latest
// results until the request is at the target; when those recent results
// alone would keep it over the window, the older of them go to the middle
// tier in the same step, down to the target (the newest result always
// stays whole). Unless the
// request would not fit the window, a step is taken only when the cost
// model says it pays: what it removes, read on every turn it buys, against
// the cache write of everything after the first changed message. And,
// still outside the window's emergency, never on two consecutive turns.
// When even that leaves the request over the window, the cut goes past
// keep_recent, down to the newest result.
func (pl planner) plan() plan {
	p := plan{}
	if len(pl.points) == 0 {
		return p
	}
	groups, b := pl.groups, pl.b
	p.size = pl.points[len(pl.points)-1].size
	savedTo := pl.savedTo()
	results := make([]int, len(groups)+1)
	for g, gr := range groups {
		results[g+1] = results[g] + gr.last - gr.first + 1
	}
	midSum := func(from, to int) int {
		n := 0
		for g := from; g < to && pl.middle != nil; g++ {
			n += pl.middle(g)
		}
		return n
	}
	next := b.trigger
	lastStep := -2 // point index of the last step
	curMid := 0    // middle-tier saving of groups [p.cut, p.mid)
	done := 0      // groups whose last result is at or before the point
	first := pl.points[0].size
	for i, pt := range pl.points {
		for done < len(groups) && groups[done].end <= pt.msg {
			done++
		}
		cur := pt.size - savedTo(p.cut) - curMid
		urgent := b.hard > 0 && cur > b.hard
		if !urgent && (pl.urgentOnly || cur <= next || i == lastStep+1) {
			continue
		}
		// Summaries, keeping keep results whole.
		c := p.cut
		for c < done && results[done]-results[c+1] >= pl.keep && pt.size-savedTo(c) > b.target {
			c++
		}
		m := max(p.mid, c)
		mid := midSum(c, m)
		size := pt.size - savedTo(c) - mid
		// Recent results stay whole whenever the window allows it (seed
		// 003). When even with every older result summarised the request
		// would not fit, the older of them go to the middle tier, oldest
		// first, down to the target so that the step lasts; never the
		// newest group.
		if pl.middle != nil && b.hard > 0 && size > b.hard {
			for m < done-1 && size > b.target {
				s := pl.middle(m)
				mid += s
				size -= s
				m++
			}
		}
		if urgent {
			// Still over the window, or so close under it that the next
			// turns would force another step at once: fewer results kept
			// whole, down to the newest, until a quarter window of growth
			// fits.
			for size > b.hard-b.spacing && c < done-1 {
				if c < m {
					mid -= pl.middle(c)
				}
				c++
				m = max(m, c)
				size = pt.size - savedTo(c) - mid
			}
		}
		if c == p.cut && m == p.mid {
			continue
		}
		if urgent && size > b.hard {
			// Even the deepest cut leaves it over the window: the provider
			// refuses it whatever the tiers do, and the overflow ladder
			// takes over. A step would only re-write the cache.
			continue
		}
		if !urgent {
			changed := p.mid // the first group the step changes
			if c > p.cut {
				changed = p.cut
			}
			prefix := groups[changed].start - savedTo(min(changed, p.cut)) - midSum(p.cut, min(changed, p.mid))
			if pl.prices.Explicit {
				prefix = min(prefix, pl.head)
			}
			rewritten := size - prefix
			// The turns the step buys: until the request reaches the window
			// again at the growth seen so far, and no more than the
			// conversation has lasted (it may end any time).
			horizon := float64(i + 1)
			if grow := float64(pt.size-first) / float64(max(i, 1)); grow > 0 && b.hard > 0 {
				horizon = min(horizon, float64(b.hard-size)/grow)
			}
			if !pl.prices.stepPays(cur-size, rewritten, max(horizon, 1)) {
				continue
			}
		}
		p.cut, p.mid, curMid, p.urgent = c, m, mid, urgent
		p.steps++
		lastStep = i
		next = max(b.trigger, size+b.spacing)
	}
	return p
}

// savedTo returns a function of g: the bytes out when the groups before
// g are summarised, asking pl.summary only for the groups it needs.
func (pl planner) savedTo() func(g int) int {
	summary := pl.summary
	if summary == nil {
		summary = func(g int) int { return pl.groups[g].saved }
	}
	saved := make([]int, 1, len(pl.groups)+1) // saved[g]: bytes out when groups < g are summarised
	return func(g int) int {
		for len(saved) <= g {
			k := len(saved) - 1
			saved = append(saved, saved[k]+summary(k))
		}
		return saved[g]
	}
}

// Estimate is the request's size as the tiers count it: bytes, less the
// thinking blocks of earlier turns the provider drops. Divide by four for
// tokens.
func Estimate(c *wire.Conversation) int {
	points := sizes(c)
	if len(points) == 0 || points[len(points)-1].msg != len(c.Msgs)-1 {
		return c.BodyBytes
	}
	return points[len(points)-1].size
}

// forceCut moves the cut of p further, at the request's own size, until it
// reaches the target or only keep results are left after it: the overflow
// ladder's rung, for a request the provider refused.
func (pl planner) forceCut(p plan) plan {
	groups, b, keep := pl.groups, pl.b, pl.keep
	savedTo := pl.savedTo()
	saved, results := savedTo(p.cut), 0
	for g := range groups {
		results += groups[g].last - groups[g].first + 1
	}
	after := results // results from group p.cut on
	for g := 0; g < p.cut; g++ {
		after -= groups[g].last - groups[g].first + 1
	}
	c := p.cut
	for c < len(groups) && p.size-saved > b.target {
		n := groups[c].last - groups[c].first + 1
		if after-n < keep {
			break
		}
		saved = savedTo(c + 1)
		after -= n
		c++
	}
	if c > p.cut {
		p.cut = c
		p.steps++
	}
	return p
}
