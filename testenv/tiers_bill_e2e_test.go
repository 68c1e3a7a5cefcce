package testenv_test

// Issue 22's check of the cost model against a bill: a long recorded
// session grows turn by turn through the stand-in and toolproc to an
// upstream that keeps a prompt cache and bills by its rules
// (testenv.Ledger). The session replay (make bench-sessions) predicts the
// cost of what toolproc sends from the rewritten bodies alone; the bill the
// provider reports must agree with it.

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/testenv"
	"github.com/toolproc/toolproc/testenv/sessions"
)

func TestTiersCostModelAgainstTheBill(t *testing.T) {
	ss, err := sessions.Load("sessions/testdata/sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// The longest sample session, up to 40 turns.
	s := ss[0]
	for _, c := range ss[1:] {
		if len(c.Anthropic) > len(s.Anthropic) {
			s = c
		}
	}
	for _, tc := range []struct {
		dial wire.Dialect
		// tolerance is how far the replay's prediction may be from the
		// bill. Both price by the same cache rules (promptcache: Anthropic
		// reads only what a breakpoint wrote, within its lookback), so what
		// is left is what toolproc sends through the proxy against what it
		// rewrites offline: streamed and buffered turns alternate here, and
		// must be rewritten alike.
		tolerance float64
	}{{wire.OpenAIChat, 0.05}, {wire.Anthropic, 0.05}} {
		t.Run(string(tc.dial), func(t *testing.T) {
			reqs := s.Anthropic
			if tc.dial == wire.OpenAIChat {
				reqs = s.OpenAI
			}
			turns := min(40, len(reqs))
			if turns < 20 {
				t.Fatalf("the longest sample session has %d turns", turns)
			}
			bodies := make([][]byte, turns)
			for i := range bodies {
				bodies[i] = reqs[i]
				if tc.dial == wire.Anthropic {
					bodies[i] = claudeCodeShape(t, reqs[i])
				}
			}
			// A window the raw session exhausts a third of the way in, so
			// the tiers step.
			replay := sessions.Session{Name: s.Name, Anthropic: bodies, OpenAI: bodies}
			window := sessions.OwnWindow(replay, tc.dial, 3)
			config := "profiles: {default: {tiers: {window_tokens: " + strconv.Itoa(window) + "}}}"

			ledger := testenv.NewLedger()
			up := testenv.NewFakeUpstream()
			up.SetScript(ledger.Wrap(nil))
			r := harness{config: config, respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, seed: 22, upstream: up}.start(t)
			rt := &receipts{}
			for i, body := range bodies {
				stream := i%2 == 1 && tc.dial == wire.Anthropic // a Chat stream bills only with include_usage
				billedTurn(t, r.proxyURL, rt, tc.dial, stream, body)
			}
			charges := ledger.Charges()
			if len(charges) != turns {
				t.Fatalf("%d requests billed for %d turns", len(charges), turns)
			}
			var bill float64
			for _, c := range charges {
				bill += c.Bill.InputEquivalent(tc.dial)
			}

			// The prediction: the same bodies rewritten offline, priced by the
			// replay's cache model from the bytes alone.
			cfg, err := extproc.ParseConfig([]byte(config))
			if err != nil {
				t.Fatal(err)
			}
			rw, err := extproc.NewRewriter(cfg, "")
			if err != nil {
				t.Fatal(err)
			}
			defer rw.Close()
			res := sessions.Replay(replay, tc.dial, func(path string, body []byte) ([]byte, history.Stats, error) {
				out, err := rw.Rewrite(path, body)
				return out.Body, out.Tiers, err
			}, nil, window, cfg.Profiles[extproc.DefaultProfile].Tiers.KeepRecent, false)
			if res.Steps == 0 {
				t.Fatalf("the tiers never stepped: %+v", res)
			}
			predicted := res.OutCostO
			if tc.dial == wire.Anthropic {
				predicted = res.OutCostA
			}
			off := (predicted - bill) / bill
			t.Logf("%s, %d turns, window %d tokens: %d steps; predicted %.0f input-token equivalents, billed %.0f (%+.1f%%)",
				s.Name, turns, window, res.Steps, predicted, bill, 100*off)
			if math.Abs(off) > tc.tolerance {
				t.Errorf("the cost model predicted %.0f, the provider billed %.0f: %s off", predicted, bill, fmt.Sprintf("%+.1f%%", 100*off))
			}
		})
	}
}

// claudeCodeShape writes a request as Claude Code does: every message's
// content a list of blocks, the system prompt a list of text blocks with a
// cache breakpoint, and a breakpoint on the newest message's last block.
// Anthropic caches a prefix only where a breakpoint wrote it, and looks
// for earlier ones at block boundaries before each breakpoint
// (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching).
func claudeCodeShape(t *testing.T, body []byte) []byte {
	t.Helper()
	out := body
	var err error
	if sys := gjson.GetBytes(out, "system"); sys.Type == gjson.String {
		out, err = sjson.SetBytes(out, "system", []map[string]any{{"type": "text", "text": sys.String(), "cache_control": map[string]string{"type": "ephemeral"}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	n := int(gjson.GetBytes(out, "messages.#").Int())
	for i := range n {
		key := fmt.Sprintf("messages.%d.content", i)
		if c := gjson.GetBytes(out, key); c.Type == gjson.String {
			if out, err = sjson.SetBytes(out, key, []map[string]string{{"type": "text", "text": c.String()}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return withBreakpoint(out)
}
