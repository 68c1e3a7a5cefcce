// Package report turns toolproc's audit log into the bill: per day, model
// and tenant, what the providers billed (read from each answer's usage),
// what toolproc removed, what that cost at a price table, and the net
// savings after cache costs against an estimated counterfactual (the same
// traffic without toolproc). `toolproc report --audit FILE` prints it.
package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"
)

// Usage is an exchange's bill in tokens, as the audit line has it.
type Usage struct {
	Input      int64 `json:"input"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Output     int64 `json:"output"`
}

// Prompt is every prompt token.
func (u Usage) Prompt() int64 { return u.Input + u.CacheRead + u.CacheWrite }

// Exchange is one "kind":"exchange" audit line (extproc/audit.go).
type Exchange struct {
	Time          time.Time `json:"time"`
	Kind          string    `json:"kind"`
	Dialect       string    `json:"dialect"`
	Profile       string    `json:"profile"`
	Model         string    `json:"model"`
	Tenant        string    `json:"tenant"`
	Tiered        int       `json:"tiered"`
	Step          int       `json:"tier_step"`
	BytesRemoved  int64     `json:"bytes_removed"`
	TokensRemoved int64     `json:"tokens_removed"`
	Usage         *Usage    `json:"usage"`
	UsageOutcome  string    `json:"usage_outcome"`
}

// decision is a per-result compression line (its tool name and sizes).
type decision struct {
	Kind        string `json:"kind"`
	Tool        string `json:"tool"`
	Outcome     string `json:"outcome"`
	BytesBefore int64  `json:"bytes_before"`
	BytesAfter  int64  `json:"bytes_after"`
}

// Audit is what an audit log holds for the report.
type Audit struct {
	Exchanges []Exchange
	// Tools: per tool name, results compressed and bytes removed.
	Tools map[string]*ToolRow
	// Skipped counts lines that were not JSON or too long.
	Skipped int
}

// MaxLine bounds one audit line; longer lines are skipped (counted).
const MaxLine = 1 << 20

// Read parses an audit log. Lines it cannot read are skipped and counted:
// a log cut by a crash still reports.
func Read(r io.Reader) (*Audit, error) {
	a := &Audit{Tools: map[string]*ToolRow{}}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			a.add(line)
		}
		if errors.Is(err, errLineTooLong) {
			a.Skipped++
			continue
		}
		if err == io.EOF {
			return a, nil
		}
		if err != nil {
			return a, fmt.Errorf("read audit: %w", err)
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns one line without its newline, or errLineTooLong after
// discarding a line over MaxLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(line)+len(chunk) > MaxLine {
			for isPrefix && err == nil {
				_, isPrefix, err = br.ReadLine()
			}
			if err != nil {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if !isPrefix || err != nil {
			return line, err
		}
	}
}

func (a *Audit) add(line []byte) {
	var probe struct {
		Kind    string `json:"kind"`
		Outcome string `json:"outcome"`
	}
	if json.Unmarshal(line, &probe) != nil {
		a.Skipped++
		return
	}
	switch {
	case probe.Kind == "exchange":
		var e Exchange
		if json.Unmarshal(line, &e) != nil {
			a.Skipped++
			return
		}
		a.Exchanges = append(a.Exchanges, e)
	case probe.Outcome == "compressed":
		var d decision
		if json.Unmarshal(line, &d) != nil {
			a.Skipped++
			return
		}
		tool := d.Tool
		if tool == "" {
			tool = "(unnamed)"
		}
		t := a.Tools[tool]
		if t == nil {
			t = &ToolRow{Tool: tool}
			a.Tools[tool] = t
		}
		t.Compressed++
		t.BytesRemoved += max(d.BytesBefore-d.BytesAfter, 0)
	}
}

// Row is one line of the report: a day, model and tenant (or a total).
type Row struct {
	Day    string `json:"day,omitempty"`
	Model  string `json:"model,omitempty"`
	Tenant string `json:"tenant,omitempty"`
	// Requests processed; Unread of them carried no readable usage and are
	// left out of the token and money columns.
	Requests int `json:"requests"`
	Unread   int `json:"unread"`
	Usage
	// Removed is toolproc's removed prompt tokens, on the bill's scale.
	Removed int64 `json:"tokens_removed"`
	// Money in USD: what was billed, the estimated bill without toolproc,
	// and the difference. Priced is false when no price matched the model.
	Cost           float64 `json:"cost"`
	Counterfactual float64 `json:"counterfactual"`
	Savings        float64 `json:"net_savings"`
	Priced         bool    `json:"priced"`
}

// CacheReadShare is the share of prompt tokens read from the cache.
func (r Row) CacheReadShare() float64 {
	if p := r.Prompt(); p > 0 {
		return float64(r.CacheRead) / float64(p)
	}
	return 0
}

// ToolRow is what toolproc's compression did per tool.
type ToolRow struct {
	Tool         string `json:"tool"`
	Compressed   int    `json:"results_compressed"`
	BytesRemoved int64  `json:"bytes_removed"`
}

// Report is the whole bill.
type Report struct {
	Rows     []Row     `json:"rows"`
	Days     []Row     `json:"days"` // per day, all models and tenants
	Tools    []ToolRow `json:"tools"`
	Total    Row       `json:"total"`
	Unpriced []string  `json:"unpriced_models,omitempty"`
	Skipped  int       `json:"skipped_lines"`
	Method   string    `json:"counterfactual_method"`
}

// Method explains the counterfactual; it is printed with every report.
const Method = "Without toolproc each request would have carried the tokens toolproc removed " +
	"(tokens_removed: the bytes it took out, on the provider's scale for that request), so its raw " +
	"prompt is the billed prompt plus those. An agent's conversation only grows, so its raw prompt " +
	"re-reads the previous raw prompt from the provider's cache and adds the rest: each exchange is " +
	"priced as the previous raw prompt of its conversation at the cache-read price and the growth at " +
	"the cache-write price (or the input price where the provider charges no write). Conversations are " +
	"followed per tenant and model by their raw prompt size (allowed to dip 5 %, the estimate's own error at a tier step); a tenant whose answers show no cache use " +
	"is priced at the input price throughout. The billed side keeps every cache write toolproc caused " +
	"(a tier step re-writes the prefix after it). Output tokens are the same on both sides. " +
	"Net savings = counterfactual - billed. Checked against recorded sessions billed both ways by a " +
	"simulated prompt cache (testenv TestReportCounterfactual)."

// maxChains bounds the conversations followed per tenant and model; past
// it the oldest is dropped (its next exchange starts a new one).
const maxChains = 4096

type chainKey struct{ tenant, model string }

// chains holds, per tenant and model, the last raw prompt size of each
// conversation seen.
type chains map[chainKey][]int64

// follow assigns an exchange with raw prompt raw to the conversation whose
// last raw prompt is the largest not above it, and returns that size (0:
// a new conversation).
func (cs chains) follow(k chainKey, raw int64) int64 {
	open := cs[k]
	best := -1
	// The raw prompt is an estimate (billed + removed, the removal counted
	// on the results' text), so at a tier step it can come out a little
	// under the previous one although the real prompt only grew: a chain
	// up to chainSlack above it is still this conversation.
	limit := raw + raw/chainSlack
	for i, last := range open {
		if last <= limit && (best < 0 || last > open[best]) {
			best = i
		}
	}
	if best < 0 {
		if len(open) >= maxChains {
			open = open[1:]
		}
		cs[k] = append(open, raw)
		return 0
	}
	prev := min(open[best], raw)
	open[best] = raw
	return prev
}

// chainSlack: a conversation's estimated raw prompt may dip by 1/chainSlack
// (5 %) from one exchange to the next and still be followed.
const chainSlack = 20

// counterfactual is the prompt cost of an exchange without toolproc.
// caches says the provider cached anything for this tenant and model.
func counterfactual(u Usage, removed, rawBefore int64, caches bool, p Price) float64 {
	raw := u.Prompt() + removed
	if !caches || p.CacheRead == 0 {
		return float64(raw) * p.Input / 1e6
	}
	grow := p.CacheWrite
	if grow == 0 {
		grow = p.Input
	}
	return (float64(rawBefore)*p.CacheRead + float64(raw-rawBefore)*grow) / 1e6
}

// Build aggregates an audit log at the given prices.
func Build(a *Audit, ps Prices) Report {
	rep := Report{Skipped: a.Skipped, Method: Method}
	unpriced := map[string]bool{}
	promptCost := func(u Usage, p Price) float64 {
		return (float64(u.Input)*p.Input + float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*p.CacheWrite) / 1e6
	}
	// The counterfactual walks each tenant and model's exchanges in time
	// order and follows its conversations by their raw prompt size, which
	// only grows within one.
	order := make([]int, len(a.Exchanges))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return a.Exchanges[order[i]].Time.Before(a.Exchanges[order[j]].Time) })
	cs := chains{}
	caches := map[chainKey]bool{}
	rawBefore := make([]int64, len(a.Exchanges))
	for _, i := range order {
		e := a.Exchanges[i]
		if e.Usage == nil {
			continue
		}
		k := chainKey{e.Tenant, e.Model}
		rawBefore[i] = cs.follow(k, e.Usage.Prompt()+e.TokensRemoved)
		caches[k] = caches[k] || e.Usage.CacheRead+e.Usage.CacheWrite > 0
	}
	rows := map[[3]string]*Row{}
	days := map[string]*Row{}
	for i, e := range a.Exchanges {
		day := e.Time.UTC().Format("2006-01-02")
		rk := [3]string{day, e.Model, e.Tenant}
		r := rows[rk]
		if r == nil {
			r = &Row{Day: day, Model: e.Model, Tenant: e.Tenant, Priced: true}
			rows[rk] = r
		}
		d := days[day]
		if d == nil {
			d = &Row{Day: day, Priced: true}
			days[day] = d
		}
		for _, t := range []*Row{r, d, &rep.Total} {
			t.Requests++
		}
		if e.Usage == nil {
			r.Unread++
			d.Unread++
			rep.Total.Unread++
			continue
		}
		u := *e.Usage
		var cost, cf float64
		p, ok := ps.For(e.Model)
		if ok {
			cost = promptCost(u, p) + float64(u.Output)*p.Output/1e6
			cf = counterfactual(u, e.TokensRemoved, rawBefore[i], caches[chainKey{e.Tenant, e.Model}], p) + float64(u.Output)*p.Output/1e6
		} else {
			unpriced[e.Model] = true
			r.Priced, d.Priced = false, false
		}
		for _, t := range []*Row{r, d, &rep.Total} {
			t.Input += u.Input
			t.CacheRead += u.CacheRead
			t.CacheWrite += u.CacheWrite
			t.Output += u.Output
			t.Removed += e.TokensRemoved
			t.Cost += cost
			t.Counterfactual += cf
			t.Savings += cf - cost
		}
	}
	rep.Total.Priced = len(unpriced) == 0
	for _, r := range rows {
		rep.Rows = append(rep.Rows, *r)
	}
	sort.Slice(rep.Rows, func(i, j int) bool {
		a, b := rep.Rows[i], rep.Rows[j]
		if a.Day != b.Day {
			return a.Day < b.Day
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Tenant < b.Tenant
	})
	for _, d := range days {
		rep.Days = append(rep.Days, *d)
	}
	sort.Slice(rep.Days, func(i, j int) bool { return rep.Days[i].Day < rep.Days[j].Day })
	for _, t := range a.Tools {
		rep.Tools = append(rep.Tools, *t)
	}
	sort.Slice(rep.Tools, func(i, j int) bool {
		if rep.Tools[i].BytesRemoved != rep.Tools[j].BytesRemoved {
			return rep.Tools[i].BytesRemoved > rep.Tools[j].BytesRemoved
		}
		return rep.Tools[i].Tool < rep.Tools[j].Tool
	})
	for m := range unpriced {
		rep.Unpriced = append(rep.Unpriced, m)
	}
	sort.Strings(rep.Unpriced)
	return rep
}
