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
}

// budget is when the tiers act, in estimated bytes (tokens × 4, the
// estimate the overflow ladder uses too).
type budget struct {
	trigger int // a request above it is cut
	target  int // ... down to here, as far as the recent exchanges allow
	spacing int // the least growth between two steps (trigger − target)
	// hard is the size past which a step is taken whatever the spacing
	// (0: none): near the window a cache break is cheaper than the
	// provider's overflow error.
	hard int
}

// plan is where the cut falls for a conversation.
type plan struct {
	cut   int // groups [0, cut) are summarised
	steps int // how many times the cut moved, replaying the conversation's growth
	size  int // estimated bytes of the whole request before the rewrite
}

// sizes lists, for every message a request can end with (anything but
// model output), the estimated bytes of the request that ended there: the
// bytes outside the message list, the messages up to it, less the thinking
// blocks the provider drops from earlier turns. It is a pure function of
// the request, and every earlier request of an append-only conversation is
// one of these prefixes, so it sees the same sizes.
func sizes(c *wire.Conversation) (points []point) {
	if len(c.Msgs) == 0 {
		return nil
	}
	listStart := c.Msgs[0].Span.Start
	fixed := c.BodyBytes - (c.Msgs[len(c.Msgs)-1].Span.End - listStart)
	thinking, dropped := 0, 0
	for m, msg := range c.Msgs {
		if msg.Prompt {
			// A new user turn: thinking of every earlier turn stops counting.
			dropped = thinking
		}
		thinking += msg.Thinking
		if msg.Assistant {
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

// planCut replays the conversation's growth point by point and moves the
// cut each time the rewritten request passes the trigger: to the first
// group boundary that brings it to the target, never into the last keep
// results. After a step the next one waits until the request has grown by
// the spacing again, so steps stay rare even when the target cannot be
// reached, unless the request passes the hard limit. Since every earlier request replays the same points, turn N+1
// repeats turn N's cut until the next step.
func planCut(groups []group, points []point, b budget, keep int) plan {
	p := plan{}
	if len(points) == 0 {
		return p
	}
	p.size = points[len(points)-1].size
	saved := make([]int, len(groups)+1) // saved[g]: bytes out when groups < g are summarised
	results := make([]int, len(groups)+1)
	for g, gr := range groups {
		saved[g+1] = saved[g] + gr.saved
		results[g+1] = results[g] + gr.last - gr.first + 1
	}
	next := b.trigger
	done := 0 // groups whose last result is at or before the point
	for _, pt := range points {
		for done < len(groups) && groups[done].end <= pt.msg {
			done++
		}
		cur := pt.size - saved[p.cut]
		urgent := b.hard > 0 && cur > b.hard
		if cur <= next && !urgent {
			continue
		}
		maxCut := p.cut
		for maxCut < done && results[done]-results[maxCut+1] >= keep {
			maxCut++
		}
		if maxCut == p.cut {
			continue
		}
		c := p.cut + 1
		for c < maxCut && pt.size-saved[c] > b.target {
			c++
		}
		// A step re-writes the provider's cache from the first changed
		// message on (1.25× instead of 0.1× at Anthropic's prices) and
		// earns back only 0.1× of what it removes on each later turn: one
		// that cannot take out at least half the spacing costs more than it
		// saves. It waits for more old results, unless the request is at
		// the window.
		if !urgent && cur-(pt.size-saved[c]) < b.spacing/2 {
			continue
		}
		p.cut = c
		p.steps++
		next = max(b.trigger, pt.size-saved[c]+b.spacing)
	}
	return p
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
func forceCut(p plan, groups []group, b budget, keep int) plan {
	saved, results := 0, 0
	for g := 0; g < p.cut; g++ {
		saved += groups[g].saved
	}
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
		saved += groups[c].saved
		after -= n
		c++
	}
	if c > p.cut {
		p.cut = c
		p.steps++
	}
	return p
}
