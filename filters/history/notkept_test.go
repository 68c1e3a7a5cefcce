package history

import (
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// Review round 3, N1: without a store (no references for this request) the
// tiers replaced 8 of 14 results with one line at 60 % of the window, for
// good. Now such a request is left whole until it would not fit the
// window; past it the summaries say their original cannot be expanded and
// are counted as irrecoverable.
func TestNoStoreTiersOnlyWhenTheWindowForces(t *testing.T) {
	outs := results(14, 30000, func(i int) bool { return i%4 == 0 })
	body := wiretest.Request(wire.OpenAIChat, outs...)
	window := func(tokens int) func(string) int { return func(string) int { return tokens } }
	// ~420 KB: 80 % of a 128k window, past the 60 % trigger.
	opts := Options{Window: window(128000), CostModel: CostNone}
	out, f := runTiers(t, wire.OpenAIChat, body, opts, Env{})
	if f.Stats.Summarized+f.Stats.Middle != 0 || string(out) != string(body) {
		t.Fatalf("no store, request fits the window: %+v", f.Stats)
	}
	// With a store the same request is tiered, with references.
	_, fs := runTiers(t, wire.OpenAIChat, body, opts, Env{Store: shadow.NewMemory(shadow.MemoryOptions{}), Tenant: "t1"})
	if fs.Stats.Summarized == 0 || fs.Stats.Irrecoverable != 0 {
		t.Fatalf("with a store: %+v", fs.Stats)
	}
	// Over the window (100k tokens = 400 KB), the cut is forced: every
	// summary is marked, and counted.
	opts.Window = window(100000)
	out, f = runTiers(t, wire.OpenAIChat, body, opts, Env{})
	cut := f.Stats.Summarized + f.Stats.Middle
	if cut == 0 || !f.Stats.Urgent {
		t.Fatalf("over the window without a store: %+v", f.Stats)
	}
	if f.Stats.Irrecoverable != cut {
		t.Fatalf("%d results cut, %d counted irrecoverable", cut, f.Stats.Irrecoverable)
	}
	if n := strings.Count(string(out), notKeptHint) + strings.Count(string(out), strings.TrimSuffix(NotKeptMarker, "\n")); n != cut {
		t.Fatalf("%d results cut, %d marked in-band", cut, n)
	}
	if strings.Contains(string(out), "returns it") {
		t.Fatal("a summary without a kept original offers expand_context")
	}
}
