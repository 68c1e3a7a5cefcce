package history

import "testing"

// convo is a synthetic conversation for the planner: a head of head bytes,
// then one exchange per turn of grow bytes whose result summarises to
// keepBytes and compresses (the middle tier) to mid bytes.
type convo struct {
	turns, head, grow, keepBytes, mid int
}

func (cv convo) planner(b budget, keep int, prices Prices) planner {
	var groups []group
	var points []point
	size := cv.head
	for i := 0; i < cv.turns; i++ {
		groups = append(groups, group{first: i, last: i, end: 2*i + 2, callMessage: 2*i + 1,
			saved: cv.grow - cv.keepBytes, start: size})
		size += cv.grow
		points = append(points, point{msg: 2*i + 2, size: size})
	}
	pl := planner{groups: groups, points: points, b: b, keep: keep, prices: prices}
	if cv.mid > 0 {
		pl.middle = func(int) int { return cv.grow - cv.mid }
	}
	return pl
}

// replay plans every prefix of the conversation, as every request of a
// session would, and reports the plan of each turn.
func replayPlans(pl planner) []plan {
	var out []plan
	for n := 1; n <= len(pl.points); n++ {
		p := pl
		p.points = pl.points[:n]
		p.groups = pl.groups[:n]
		out = append(out, p.plan())
	}
	return out
}

// A step is taken outside the window's emergency only when the reads it
// saves over the turns it buys pay for the cache it re-writes: with
// Anthropic's prices an early step in a short conversation does not, the
// same step without a prompt cache does, and once the conversation is
// long enough the step pays under Anthropic's prices too.
func TestCostModelDefersSteps(t *testing.T) {
	cv := convo{turns: 40, head: 20000, grow: 8000, keepBytes: 200}
	b := budget{trigger: 60000, target: 35000, spacing: 25000, hard: 2_000_000}
	first := func(prices Prices) int {
		for i, p := range replayPlans(cv.planner(b, 2, prices)) {
			if p.steps > 0 {
				return i
			}
		}
		return -1
	}
	none, anthropic := first(PricesNoCache), first(PricesAnthropic)
	if none < 0 || anthropic < 0 {
		t.Fatalf("no step: none %d, anthropic %d", none, anthropic)
	}
	// The trigger is passed at turn 5 (20 KB + 6 × 8 KB).
	if none != 5 {
		t.Errorf("without a cache the first step is at turn %d, want 5 (the trigger)", none)
	}
	if anthropic <= none {
		t.Errorf("Anthropic's prices step at turn %d, no later than without a cache (%d)", anthropic, none)
	}
}

// Steps stay rare outside emergencies: never on consecutive turns, and at
// least the spacing of growth apart.
func TestStepsSpaced(t *testing.T) {
	cv := convo{turns: 60, head: 10000, grow: 6000, keepBytes: 300}
	b := budget{trigger: 80000, target: 40000, spacing: 40000, hard: 4_000_000}
	plans := replayPlans(cv.planner(b, 3, PricesNoCache))
	lastStep, lastSize := -1, 0
	for i, p := range plans {
		if i > 0 && p.steps > plans[i-1].steps {
			size := cv.head + (i+1)*cv.grow
			if lastStep >= 0 && (i == lastStep+1 || size-lastSize < b.spacing) {
				t.Errorf("step at turn %d, %d turns and %d bytes after the last", i, i-lastStep, size-lastSize)
			}
			lastStep, lastSize = i, size
		}
	}
	if plans[len(plans)-1].steps < 3 {
		t.Fatalf("only %d steps over 60 turns", plans[len(plans)-1].steps)
	}
}

// When the recent results alone keep the request over the window, one
// step compresses the older of them (the middle tier) down to the target,
// and the step lasts: the next one comes only after the conversation has
// grown again. The newest result stays whole, and so do the recent ones
// while the window allows it.
func TestMiddleTierInOneStep(t *testing.T) {
	// 6 recent results of 20 KB are 120 KB: over a 100 KB window.
	cv := convo{turns: 30, head: 10000, grow: 20000, keepBytes: 300, mid: 5000}
	b := budget{trigger: 60000, target: 35000, spacing: 25000, hard: 100000}
	plans := replayPlans(cv.planner(b, 6, PricesAnthropic))
	for i, p := range plans {
		if p.mid > p.cut && p.mid >= i+1 {
			t.Fatalf("turn %d: the newest result is in the middle tier (cut %d, mid %d)", i, p.cut, p.mid)
		}
		size := cv.head + (i+1)*cv.grow - p.cut*(cv.grow-cv.keepBytes) - (p.mid-p.cut)*(cv.grow-cv.mid)
		if size > b.hard {
			t.Errorf("turn %d: %d bytes over the %d window (cut %d, mid %d)", i, size, b.hard, p.cut, p.mid)
		}
		if i > 0 && p.steps > plans[i-1].steps+1 {
			t.Errorf("turn %d: %d steps at once", i, p.steps-plans[i-1].steps)
		}
	}
	// Turns 0..3 fit whole (10 + 4×20 = 90 KB), a step must come at turn 4
	// (110 KB) and compress the recent results, keeping them results.
	p := plans[4]
	if p.steps != 1 || p.mid <= p.cut {
		t.Fatalf("turn 4: %+v, want one step with a middle tier", p)
	}
	last := plans[len(plans)-1]
	if last.steps > len(plans)/2 {
		t.Errorf("%d steps over %d turns: the steps do not last", last.steps, len(plans))
	}
}

// Past what the middle tier can do, keep_recent gives way, down to the
// newest result; and a request no cut can bring under the window is left
// to the overflow ladder rather than re-writing the cache for nothing.
func TestKeepRecentAdapts(t *testing.T) {
	cv := convo{turns: 12, head: 5000, grow: 30000, keepBytes: 200, mid: 20000}
	b := budget{trigger: 30000, target: 20000, spacing: 10000, hard: 70000}
	plans := replayPlans(cv.planner(b, 6, PricesAnthropic))
	for i, p := range plans {
		if p.cut > i {
			t.Fatalf("turn %d: the newest result was summarised (cut %d)", i, p.cut)
		}
	}
	if p := plans[5]; p.cut == 0 {
		t.Errorf("turn 5 (185 KB against a 70 KB window): nothing summarised, %+v", p)
	}
	// A head larger than the window: nothing can help.
	hopeless := convo{turns: 8, head: 80000, grow: 3000, keepBytes: 200}
	for i, p := range replayPlans(hopeless.planner(b, 2, PricesAnthropic)) {
		if p.steps != 0 {
			t.Fatalf("turn %d: a step that cannot fit the window: %+v", i, p)
		}
	}
}

// The planner asks for a group's summary only when it prices it: on a
// long conversation cut once, the groups well after the cut are never
// summarised, and the plan is the one the eager savings give.
func TestPlanSummarisesOnlyWhatItPrices(t *testing.T) {
	cv := convo{turns: 40, head: 10000, grow: 6000, keepBytes: 300}
	b := budget{trigger: 120000, target: 60000, spacing: 60000, hard: 4_000_000}
	eager := cv.planner(b, 3, PricesNoCache)
	want := eager.plan()
	lazy := cv.planner(b, 3, PricesNoCache)
	asked := map[int]bool{}
	lazy.summary = func(g int) int {
		asked[g] = true
		return lazy.groups[g].saved
	}
	got := lazy.plan()
	if got != want {
		t.Fatalf("lazy plan %+v, eager %+v", got, want)
	}
	if got.cut == 0 || got.cut >= len(lazy.groups)-3 {
		t.Fatalf("cut %d of %d groups: the case needs a cut well before the end", got.cut, len(lazy.groups))
	}
	last := -1
	for g := range asked {
		last = max(last, g)
	}
	if last >= got.cut+1 {
		t.Errorf("summarised groups up to %d for a cut at %d: the groups after it were summarised only to be priced", last, got.cut)
	}
	for g := range got.cut {
		if !asked[g] {
			t.Errorf("group %d is before the cut (%d) but was never summarised", g, got.cut)
		}
	}
}
