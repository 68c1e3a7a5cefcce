package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Formats the report renders.
var Formats = []string{"table", "csv", "json", "html"}

// Write renders rep in one of Formats.
func Write(w io.Writer, rep Report, format string) error {
	switch format {
	case "table":
		return writeTable(w, rep)
	case "csv":
		return writeCSV(w, rep)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "html":
		return writeHTML(w, rep)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

var header = []string{"day", "model", "tenant", "requests", "unread", "input", "cache_read", "cache_write",
	"output", "cache_read_share", "tokens_removed", "cost_usd", "without_toolproc_usd", "net_savings_usd"}

func cells(r Row) []string {
	money := func(v float64) string {
		if !r.Priced {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	return []string{r.Day, r.Model, r.Tenant, strconv.Itoa(r.Requests), strconv.Itoa(r.Unread),
		i(r.Input), i(r.CacheRead), i(r.CacheWrite), i(r.Output),
		strconv.FormatFloat(r.CacheReadShare(), 'f', 3, 64), i(r.Removed),
		money(r.Cost), money(r.Counterfactual), money(r.Savings)}
}

func writeTable(w io.Writer, rep Report) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, r := range rep.Rows {
		fmt.Fprintln(tw, strings.Join(cells(r), "\t")+"\t")
	}
	t := rep.Total
	t.Day = "total"
	fmt.Fprintln(tw, strings.Join(cells(t), "\t")+"\t")
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Tools) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "tool\tresults_compressed\tbytes_removed\t")
		for _, r := range rep.Tools {
			fmt.Fprintf(tw, "%s\t%d\t%d\t\n", r.Tool, r.Compressed, r.BytesRemoved)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nCounterfactual: %s\n", rep.Method)
	if len(rep.Unpriced) > 0 {
		fmt.Fprintf(w, "No price for: %s (add them with --prices FILE)\n", strings.Join(rep.Unpriced, ", "))
	}
	if rep.Skipped > 0 {
		fmt.Fprintf(w, "%d audit lines could not be read and were skipped\n", rep.Skipped)
	}
	return nil
}

func writeCSV(w io.Writer, rep Report) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(header)
	for _, r := range rep.Rows {
		_ = cw.Write(cells(r))
	}
	t := rep.Total
	t.Day = "total"
	_ = cw.Write(cells(t))
	cw.Flush()
	return cw.Error()
}

// chartBar is one day of the savings chart.
type chartBar struct {
	X, Y, W, H float64
	Day, Label string
	Negative   bool
}

// chart lays out the per-day net savings as SVG bars (positive up,
// negative down from the zero line): no script, no external asset, so the
// page pastes anywhere.
func chart(days []Row) (bars []chartBar, zero float64) {
	const width, height = 720.0, 220.0
	var hi, lo float64
	for _, d := range days {
		hi, lo = max(hi, d.Savings), min(lo, d.Savings)
	}
	span := hi - lo
	if span == 0 {
		span = 1
	}
	zero = height * hi / span
	w := width / float64(max(len(days), 1))
	for i, d := range days {
		h := height * abs(d.Savings) / span
		y := zero - h
		if d.Savings < 0 {
			y = zero
		}
		bars = append(bars, chartBar{X: float64(i)*w + 2, Y: y, W: max(w-4, 1), H: h, Day: d.Day,
			Label: fmt.Sprintf("%s: $%.2f", d.Day, d.Savings), Negative: d.Savings < 0})
	}
	return bars, zero
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

var page = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>toolproc: the bill</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:right}
th:nth-child(-n+3),td:nth-child(-n+3){text-align:left}.neg{fill:#c0392b}.pos{fill:#27ae60}
.note{max-width:60em;color:#555}
</style></head><body>
<h1>toolproc: what the providers billed, and what toolproc saved</h1>
<p>Total: {{.Total.Requests}} requests, billed ${{printf "%.2f" .Total.Cost}}, estimated ${{printf "%.2f" .Total.Counterfactual}} without toolproc: <b>net savings ${{printf "%.2f" .Total.Savings}}</b> after cache costs. Cache-read share {{printf "%.1f" .Share}}%.</p>
<h2>Net savings per day</h2>
<svg width="720" height="240" viewBox="0 0 720 240" role="img" aria-label="net savings per day">
<line x1="0" x2="720" y1="{{.Zero}}" y2="{{.Zero}}" stroke="#999"/>
{{range .Bars}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" class="{{if .Negative}}neg{{else}}pos{{end}}"><title>{{.Label}}</title></rect>
{{end}}</svg>
<h2>Per day, model and tenant</h2>
<table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{if .Tools}}<h2>Per tool</h2><table><tr><th>tool</th><th>results compressed</th><th>bytes removed</th></tr>
{{range .Tools}}<tr><td>{{.Tool}}</td><td>{{.Compressed}}</td><td>{{.BytesRemoved}}</td></tr>
{{end}}</table>{{end}}
<p class="note"><b>How the counterfactual is estimated.</b> {{.Method}}</p>
{{if .Unpriced}}<p class="note">No price for: {{range .Unpriced}}{{.}} {{end}}</p>{{end}}
</body></html>
`))

func writeHTML(w io.Writer, rep Report) error {
	bars, zero := chart(rep.Days)
	var rows [][]string
	for _, r := range rep.Rows {
		rows = append(rows, cells(r))
	}
	t := rep.Total
	t.Day = "total"
	rows = append(rows, cells(t))
	return page.Execute(w, map[string]any{
		"Total": rep.Total, "Share": 100 * rep.Total.CacheReadShare(), "Bars": bars, "Zero": zero,
		"Header": header, "Rows": rows, "Tools": rep.Tools, "Method": rep.Method, "Unpriced": rep.Unpriced,
	})
}
