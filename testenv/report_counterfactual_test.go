package testenv_test

// toolproc report estimates what the traffic would have cost without
// toolproc. Here the answer is known: every recorded session of
// testenv/sessions (make bench-sessions) is billed twice by a Ledger, once
// as the agent sent it (the counterfactual) and once as toolproc rewrote
// it (the bill), and the report's estimate, made from the rewritten run's
// audit lines alone, is held to the known counterfactual.

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/report"
	"github.com/toolproc/toolproc/testenv"
	"github.com/toolproc/toolproc/testenv/sessions"
)

// withBreakpoint marks the last message as Claude Code does, so the
// provider caches the whole prompt each turn
// (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching).
func withBreakpoint(body []byte) []byte {
	last := gjson.GetBytes(body, "messages.#").Int() - 1
	c := gjson.GetBytes(body, fmt.Sprintf("messages.%d.content", last))
	var out []byte
	var err error
	if c.Type == gjson.String {
		out, err = sjson.SetBytes(body, fmt.Sprintf("messages.%d.content", last),
			[]map[string]any{{"type": "text", "text": c.String(), "cache_control": map[string]string{"type": "ephemeral"}}})
	} else {
		n := c.Get("#").Int() - 1
		out, err = sjson.SetRawBytes(body, fmt.Sprintf("messages.%d.content.%d.cache_control", last, n), []byte(`{"type":"ephemeral"}`))
	}
	if err != nil {
		return body
	}
	return out
}

// TestReportCounterfactual: the estimated bill without toolproc, and the
// net savings, against the ones the Ledger knows.
func TestReportCounterfactual(t *testing.T) {
	ss, err := sessions.Load("sessions/testdata/sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := extproc.ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	prices := report.Prices(report.DefaultPrices)
	for _, tc := range []struct {
		dial  wire.Dialect
		path  string
		model string
	}{{wire.Anthropic, "/v1/messages", "claude-sonnet-4-5"}, {wire.OpenAIChat, "/v1/chat/completions", "gpt-4o"}} {
		t.Run(string(tc.dial), func(t *testing.T) {
			p, _ := prices.For(tc.model)
			cost := func(b testenv.Bill) float64 {
				return (float64(b.Input)*p.Input + float64(b.CacheRead)*p.CacheRead + float64(b.CacheWrite)*p.CacheWrite + float64(b.Output)*p.Output) / 1e6
			}
			audit := &report.Audit{}
			var known, billed float64
			when := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			for _, s := range ss {
				// bench-sessions' setting: each session gets a window its raw
				// growth exhausts a third of the way, so the tiers step.
				prof := *cfg.Profiles[extproc.DefaultProfile]
				prof.Tiers.WindowTokens = sessions.OwnWindow(s, tc.dial, 3)
				c := *cfg
				c.Profiles = map[string]*extproc.Profile{extproc.DefaultProfile: &prof}
				rw, err := extproc.NewRewriter(&c, "")
				if err != nil {
					t.Fatal(err)
				}
				raw, out := testenv.NewLedger(), testenv.NewLedger()
				reqs := s.Anthropic
				if tc.dial == wire.OpenAIChat {
					reqs = s.OpenAI
				}
				for _, body := range reqs {
					if tc.dial == wire.Anthropic {
						body = withBreakpoint(body)
					}
					r, err := rw.Rewrite(tc.path, body)
					if err != nil {
						r.Body = body
					}
					rb, _ := raw.Charge(testenv.RecordedRequest{Path: tc.path, Body: body})
					ob, _ := out.Charge(testenv.RecordedRequest{Path: tc.path, Body: r.Body})
					known += cost(rb)
					billed += cost(ob)
					rc := extproc.ReceiptOf(r.Report)
					audit.Exchanges = append(audit.Exchanges, report.Exchange{
						Time: when, Kind: "exchange", Dialect: string(tc.dial), Model: tc.model, Tenant: s.Name,
						Tiered: rc.Tiered, Step: r.Tiers.Step, BytesRemoved: int64(rc.BytesRemoved),
						TokensRemoved: extproc.RemovedTokens(rc.BytesRemoved, len(r.Body), ob.Prompt()),
						Usage:         &report.Usage{Input: ob.Input, CacheRead: ob.CacheRead, CacheWrite: ob.CacheWrite, Output: ob.Output},
						UsageOutcome:  "read",
					})
				}
				rw.Close()
			}
			rep := report.Build(audit, prices)
			if math.Abs(rep.Total.Cost-billed) > 1e-6 {
				t.Fatalf("report billed $%.4f, ledger $%.4f", rep.Total.Cost, billed)
			}
			cfErr := (rep.Total.Counterfactual - known) / known
			savings, estSavings := known-billed, rep.Total.Savings
			t.Logf("%d requests: billed $%.2f; without toolproc known $%.2f, estimated $%.2f (%+.1f%%); net savings known $%.2f, estimated $%.2f",
				len(audit.Exchanges), billed, known, rep.Total.Counterfactual, 100*cfErr, savings, estSavings)
			if math.Abs(cfErr) > 0.05 {
				t.Errorf("the counterfactual estimate is %+.1f%% off the known one", 100*cfErr)
			}
			// The savings inherit the same error, measured on the bill
			// without toolproc.
			if math.Abs(estSavings-savings) > 0.05*known {
				t.Errorf("net savings estimated $%.2f, known $%.2f", estSavings, savings)
			}
		})
	}
}
