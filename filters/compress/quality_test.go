package compress

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// The quality harness (fact retention per category, head+tail baseline at the same bytes), for everything that can
// be measured without an LLM: per-class fact recall, weighted score,
// critical completeness, fact-lossless ratio, compression ratio, and the
// guard metrics (faithfulness, honesty, JSON validity, determinism,
// idempotence, never larger). Next-step reference recall (U) needs the
// agent's next turn, which the corpus does not have.

// record is one tool output, in the corpus's records.jsonl shape.
type record struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	Tool   string `json:"tool"`
	Format string `json:"format"`
	Input  string `json:"input"`
	Output string `json:"output"`
	// Prev and Next are the assistant turns before and after the output,
	// where known (session records): the U class needs them.
	Prev string `json:"prev,omitempty"`
	Next string `json:"next,omitempty"`
}

// hint builds the Hint a filter would see: the tool name, and for shell
// tools the arguments as the JSON object agents send.
func (r record) hint() Hint {
	args := r.Input
	if !gjson.Valid(args) {
		b, _ := json.Marshal(map[string]string{"command": r.Input})
		args = string(b)
	}
	return Hint{ToolName: r.Tool, Args: args}
}

// corpusDir is the shared corpus beside the repository (absent in a user's
// clone), relative to this package's directory.
const corpusDir = "../../../shared/corpus"

func loadRecords(t testing.TB, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	defer f.Close()
	var recs []record
	sc := bufio.NewScanner(gunzipped(t, f, path))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// gunzipped reads f, decompressed when its path ends in ".gz".
func gunzipped(t testing.TB, f *os.File, path string) io.Reader {
	t.Helper()
	if !strings.HasSuffix(path, ".gz") {
		return f
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// compressor is what the harness measures: a function of the text, the hint
// and the byte budget.
type compressor struct {
	name string
	fn   func(text string, h Hint, budget int) string
}

var structuralC = compressor{"structural", func(text string, h Hint, budget int) string {
	out, _ := Structural(StructuralOptions{TargetBytes: budget}).Compress(text, h)
	return out
}}

// headTailC is the Codex-style baseline: the first and last lines, half the
// budget each, with a marker in between.
var headTailC = compressor{"head+tail", func(text string, _ Hint, budget int) string {
	if len(text) <= budget {
		return text
	}
	lines := strings.Split(text, "\n")
	var head, tail []string
	used := 0
	i, j := 0, len(lines)-1
	for i <= j && used+len(lines[i])+1 <= budget/2 {
		used += len(lines[i]) + 1
		head = append(head, lines[i])
		i++
	}
	for j >= i && used+len(lines[j])+1 <= budget {
		used += len(lines[j]) + 1
		tail = append(tail, lines[j])
		j--
	}
	slices.Reverse(tail)
	return strings.Join(head, "\n") + "\n" + fmt.Sprintf("[... omitted %d of %d lines ...]", j-i+1, len(lines)) + "\n" + strings.Join(tail, "\n")
}}

// tally accumulates one group's figures.
type tally struct {
	records         int
	bytesIn, bytesO int
	total, kept     map[factClass]int
	critRecords     int // records with T, S or E facts
	critComplete    int // of those, records that kept all of them
}

func newTally() *tally {
	return &tally{total: map[factClass]int{}, kept: map[factClass]int{}}
}

func (t *tally) add(facts []fact, out string) {
	m := newMatcher(out, len(facts))
	hasCrit, allCrit := false, true
	for _, f := range facts {
		t.total[f.class]++
		ok := m.survives(f)
		if ok {
			t.kept[f.class]++
		}
		if f.class == factT || f.class == factS || f.class == factE {
			hasCrit = true
			allCrit = allCrit && ok
		}
	}
	if hasCrit {
		t.critRecords++
		if allCrit {
			t.critComplete++
		}
	}
}

func (t *tally) recall(c factClass) (float64, bool) {
	if t.total[c] == 0 {
		return 0, false
	}
	return float64(t.kept[c]) / float64(t.total[c]), true
}

// frs is the weighted fact retention score over the classes present.
func (t *tally) frs() float64 {
	num, den := 0.0, 0.0
	for _, c := range factClasses {
		if r, ok := t.recall(c); ok {
			num += factWeight[c] * r
			den += factWeight[c]
		}
	}
	if den == 0 {
		return 1
	}
	return num / den
}

func (t *tally) row(name string) string {
	var b strings.Builder
	ratio := 0.0
	if t.bytesO > 0 {
		ratio = float64(t.bytesIn) / float64(t.bytesO)
	}
	fmt.Fprintf(&b, "%-24s n=%-4d %8d→%-8d %5.2fx", name, t.records, t.bytesIn, t.bytesO, ratio)
	for _, c := range factClasses {
		if r, ok := t.recall(c); ok {
			fmt.Fprintf(&b, "  %s %5.1f%%(%d)", c, 100*r, t.total[c])
		}
	}
	fmt.Fprintf(&b, "  FRS %.3f", t.frs())
	if t.critRecords > 0 {
		fmt.Fprintf(&b, "  crit-complete %.1f%%", 100*float64(t.critComplete)/float64(t.critRecords))
	}
	return b.String()
}

// qualityRun measures one compressor at one ratio over records of at least
// minBytes, overall and per detected kind.
type qualityRun struct {
	all    *tally
	diag   *tally // test logs, tracebacks, logs, text: the outputs read for what went wrong
	byKind map[Kind]*tally
}

func isDiagnostic(k Kind) bool {
	return k == KindTestLog || k == KindTraceback || k == KindLog || k == KindText
}

// sample is a record prepared for measurement: hint, detected kind and
// facts are computed once.
type sample struct {
	record
	h     Hint
	kind  Kind
	facts []fact
}

func prepare(recs []record, minBytes int) []sample {
	var out []sample
	for _, r := range recs {
		if len(r.Output) < minBytes {
			continue
		}
		h := r.hint()
		kind := Detect(r.Output, h)
		facts := append(extractFacts(r.Output, kind), nextStepRefs(r)...)
		out = append(out, sample{record: r, h: h, kind: kind, facts: facts})
	}
	return out
}

// runPair measures the structural strategy in its ratio mode
// (TargetRatio) and the head+tail baseline given, record by record, exactly
// the bytes the structural output took: the comparison at the same bytes.
func runPair(samples []sample, ratio float64) (structural, baseline qualityRun) {
	structural = newQualityRun()
	baseline = newQualityRun()
	s := Structural(StructuralOptions{TargetRatio: ratio})
	for _, r := range samples {
		out, _ := s.Compress(r.Output, r.h)
		structural.add(r, out)
		baseline.add(r, headTailC.fn(r.Output, r.h, len(out)))
	}
	return structural, baseline
}

// runDefaults is runPair at the shipped defaults (an 8 KiB aim, no ratio),
// over the outputs the strategy changes: what a caller gets where toolproc
// acts.
func runDefaults(samples []sample) (structural, baseline qualityRun) {
	structural = newQualityRun()
	baseline = newQualityRun()
	s := Structural(StructuralOptions{})
	for _, r := range samples {
		out, rep := s.Compress(r.Output, r.h)
		if !rep.Changed {
			continue
		}
		structural.add(r, out)
		baseline.add(r, headTailC.fn(r.Output, r.h, len(out)))
	}
	return structural, baseline
}

func newQualityRun() qualityRun {
	return qualityRun{all: newTally(), diag: newTally(), byKind: map[Kind]*tally{}}
}

func (q qualityRun) add(r sample, out string) {
	kt := q.byKind[r.kind]
	if kt == nil {
		kt = newTally()
		q.byKind[r.kind] = kt
	}
	groups := []*tally{q.all, kt}
	if isDiagnostic(r.kind) {
		groups = append(groups, q.diag)
	}
	for _, t := range groups {
		t.records++
		t.bytesIn += len(r.Output)
		t.bytesO += len(out)
		t.add(r.facts, out)
	}
}

func (q qualityRun) log(t *testing.T, title string) {
	t.Logf("%s", title)
	t.Logf("  %s", q.all.row("all"))
	t.Logf("  %s", q.diag.row("diagnostic kinds"))
	kinds := make([]string, 0, len(q.byKind))
	for k := range q.byKind {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("  %s", q.byKind[Kind(k)].row(k))
	}
}

// fll computes the fact-lossless ratio of each record with T/S/E facts: the
// largest achieved ratio among the tried targets at which every T, S and E
// fact survives. It returns the median and the 10th percentile.
func fll(samples []sample) (median, p10 float64, n int) {
	targets := []float64{1.5, 2, 3, 4, 6, 8, 12, 16, 32}
	var ratios []float64
	for _, r := range samples {
		var crit []fact
		for _, f := range r.facts {
			if f.class == factT || f.class == factS || f.class == factE {
				crit = append(crit, f)
			}
		}
		if len(crit) == 0 {
			continue
		}
		best := 1.0
		for _, tr := range targets {
			out := structuralC.fn(r.Output, r.h, int(float64(len(r.Output))/tr))
			m := newMatcher(out, len(crit))
			all := true
			for _, f := range crit {
				if !m.survives(f) {
					all = false
					break
				}
			}
			if all {
				best = max(best, float64(len(r.Output))/float64(len(out)))
			}
		}
		ratios = append(ratios, best)
	}
	if len(ratios) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ratios)
	return ratios[len(ratios)/2], ratios[len(ratios)/10], len(ratios)
}

// checkGuards runs the §3.2 (d) guard metrics on one output and returns the
// first violation.
func checkGuards(s Strategy, text string, h Hint) error {
	out, rep := s.Compress(text, h)
	if again, _ := s.Compress(text, h); again != out {
		return fmt.Errorf("not deterministic")
	}
	if len(out) > len(text) {
		return fmt.Errorf("grew from %d to %d bytes", len(text), len(out))
	}
	if utf8.ValidString(text) && !utf8.ValidString(out) {
		return fmt.Errorf("invalid UTF-8 from valid input")
	}
	if twice, _ := s.Compress(out, h); twice != out {
		return fmt.Errorf("not idempotent")
	}
	if rep.Changed != (out != text) || rep.BytesBefore != len(text) || rep.BytesAfter != len(out) {
		return fmt.Errorf("report does not match: %+v", rep)
	}
	if out == text {
		return nil
	}
	if !hasOwnMarker(out) {
		return fmt.Errorf("changed without a marker")
	}
	if looksJSON(text) && rep.Kind == KindJSON {
		if !gjson.Valid(out) {
			return fmt.Errorf("JSON input, invalid JSON output")
		}
		return nil
	}
	if header, _, ok := harnessJSON(text); ok && rep.Kind == KindJSON {
		if !strings.HasPrefix(out, header) || !gjson.Valid(out[len(header):]) {
			return fmt.Errorf("a harness's header over JSON: header changed or JSON invalid")
		}
		return nil
	}
	return faithful(text, out, rep)
}

// faithful replays the output against the input: every output line is the
// next input line, a cut of it (start and end kept around a bytes marker),
// a lines marker standing for exactly as many input lines as it says, or a
// repeat marker standing for that many copies of the line above. So lines
// are verbatim, in order, and every count is right.
func faithful(text, out string, rep Report) error {
	in := splitText(text)
	i := 0
	for k, l := range splitText(out) {
		switch {
		case k == 0 && isStatMarker(l) && (i >= len(in) || l != in[i]):
			// A diff's per-file counts: they stand for no input line.
		case i < len(in) && l == in[i]:
			i++
		case markerCount(l, " lines omitted: ", " line omitted: ") > 0:
			i += markerCount(l, " lines omitted: ", " line omitted: ")
		case strings.HasPrefix(l, markOpen+"line repeated "):
			n := digitsValue(l[len(markOpen+"line repeated "):])
			for k := 0; k < n; k++ {
				if i == 0 || i >= len(in) || in[i] != in[i-1] {
					return fmt.Errorf("repeat marker %q does not match the input at line %d", l, i+1)
				}
				i++
			}
		default:
			m := strings.Index(l, markOpen)
			if i >= len(in) || m < 0 || !isOwnMarkerBody(l[m+len(markOpen):]) {
				return fmt.Errorf("output line not from input line %d: %.120q", i+1, l)
			}
			e := strings.Index(l[m:], markClose) + m + len(markClose)
			if strings.Count(l, " bytes omitted"+markClose)+strings.Count(l, " byte omitted"+markClose) > 1 {
				// A long line's middle cut with the exit statuses it held
				// (cutMiddleKeeping): every marker exact, pieces in order.
				if !cutPiecesMatch(l, in[i]) {
					return fmt.Errorf("cut line's pieces do not match input line %d: %.120q", i+1, l)
				}
			} else if !strings.HasPrefix(in[i], l[:m]) || !strings.HasSuffix(in[i], l[e:]) {
				return fmt.Errorf("cut line does not match input line %d: %.120q", i+1, l)
			}
			i++
		}
		if i > len(in) {
			return fmt.Errorf("markers count more lines (%d) than the input has (%d)", i, len(in))
		}
	}
	if i != len(in) {
		return fmt.Errorf("output accounts for %d of %d input lines", i, len(in))
	}
	if omitted := len(in) - countKept(in, out); rep.Omitted != omitted && rep.Kind != KindJSON {
		return fmt.Errorf("Report.Omitted %d, but %d lines are missing", rep.Omitted, omitted)
	}
	return nil
}

// cutPiecesMatch reports whether cut, pieces of line between byte-count
// markers, is line with each marker standing for exactly the bytes it
// says, in order.
func cutPiecesMatch(cut, line string) bool {
	pos := 0
	for {
		m := strings.Index(cut, markOpen)
		if m < 0 {
			return line[pos:] == cut
		}
		if !strings.HasPrefix(line[pos:], cut[:m]) {
			return false
		}
		pos += m
		rest := cut[m+len(markOpen):]
		e := strings.Index(rest, " bytes omitted"+markClose)
		if e < 0 {
			e = strings.Index(rest, " byte omitted"+markClose)
		}
		n, err := strconv.Atoi(rest[:max(e, 0)])
		if e < 0 || err != nil || pos+n > len(line) {
			return false
		}
		pos += n
		cut = rest[e+len(" bytes omitted"+markClose):]
		if strings.HasPrefix(rest[e:], " byte omitted") {
			cut = rest[e+len(" byte omitted"+markClose):]
		}
	}
}

// splitText splits into lines the way the plan does: a final newline ends
// the last line rather than starting an empty one.
func splitText(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// countKept counts output lines that are input lines or cuts of them.
func countKept(in []string, out string) int {
	n := 0
	for k, l := range splitText(out) {
		if markerCount(l, " lines omitted: ", " line omitted: ") > 0 || strings.HasPrefix(l, markOpen+"line repeated ") || k == 0 && isStatMarker(l) {
			continue
		}
		n++
	}
	return n
}

// markerCount returns N of a "[… N lines omitted: … …]" line, or 0.
func markerCount(l string, forms ...string) int {
	if !strings.HasPrefix(l, markOpen) || !strings.HasSuffix(l, markClose) {
		return 0
	}
	rest := l[len(markOpen):]
	d := digits(rest)
	for _, f := range forms {
		if d > 0 && strings.HasPrefix(rest[d:], f) {
			return digitsValue(rest)
		}
	}
	return 0
}

func digitsValue(s string) int {
	n := 0
	for i := 0; i < len(s) && isDigit(s[i]); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// TestQualityCorpus is the whole-corpus run: figures at 2x/4x/8x against the
// head+tail baseline, the fact-lossless ratio, and the guards on every
// record. It needs the shared corpus and skips without it.
func TestQualityCorpus(t *testing.T) {
	recs := loadRecords(t, filepath.Join(corpusDir, "records.jsonl"))
	const minBytes = 2000
	var samples []sample
	ratios := []float64{2, 4, 10}
	switch {
	case raceEnabled:
		// Figures come from the run without -race; this one checks the
		// guards on a sample.
		ratios = nil
	case testing.Short():
		ratios = []float64{4}
	}
	var test []sample
	if len(ratios) > 0 {
		samples, test = splitSamples(t, prepare(recs, minBytes))
	}
	for _, ratio := range ratios {
		s, b := runPair(samples, ratio)
		s.log(t, fmt.Sprintf("tuning set, structural at %gx target, outputs ≥ %d bytes", ratio, minBytes))
		b.log(t, fmt.Sprintf("tuning set, head+tail at the same bytes, %gx", ratio))
		if ratio >= 4 {
			assertQuality(t, "corpus tuning set", s, b, ratio, true)
		}
		s, b = runPair(test, ratio)
		s.log(t, fmt.Sprintf("TEST set, structural at %gx target, outputs ≥ %d bytes", ratio, minBytes))
		b.log(t, fmt.Sprintf("TEST set, head+tail at the same bytes, %gx", ratio))
	}
	if len(ratios) == 3 {
		med, p10, n := fll(samples)
		t.Logf("tuning set: fact-lossless ratio over %d records with T/S/E facts: median %.2fx, p10 %.2fx", n, med, p10)
		med, p10, n = fll(test)
		t.Logf("TEST set: fact-lossless ratio over %d records with T/S/E facts: median %.2fx, p10 %.2fx", n, med, p10)
	}

	// Guards on every record, at a 4x target and (without -race) at the
	// default target.
	for i, r := range recs {
		if raceEnabled && i%8 != 0 {
			continue // a sample; the run without -race covers every record
		}
		h := r.hint()
		strategies := []Strategy{Structural(StructuralOptions{TargetBytes: max(len(r.Output)/4, 64)}), Structural(StructuralOptions{TargetRatio: 10})}
		if !raceEnabled {
			strategies = append(strategies, Structural(StructuralOptions{}))
		}
		for _, s := range strategies {
			if err := checkGuards(s, r.Output, h); err != nil {
				t.Errorf("%s: %v", r.ID, err)
			}
		}
	}
}

// assertQuality holds a run to the quality goals. At any ratio: failing
// tests and run summaries (kept at any price), critical completeness, a
// weighted score above head+tail at the same bytes, and an achieved ratio
// within a tenth of the aim. At 4x also error lines, exception types and
// locations (full holds them on every output; without it, on the outputs
// read for what went wrong). Error-like lines in file reads and diffs are
// code, not failures, and are not extracted (facts_test.go).
func assertQuality(t *testing.T, name string, s, baseline qualityRun, ratio float64, full bool) {
	t.Helper()
	name = fmt.Sprintf("%s at %gx", name, ratio)
	must := map[factClass]float64{factT: 0.99, factS: 0.999}
	assertRecall(t, name, s.all, must)
	if ratio <= 4 {
		if full {
			// Diff headers (D) are held lower than they were: a hunk
			// header is kept with its first changes, not before every
			// changed line, a file header with the first line of its
			// file, not alone (issue 23), and a hunk or a file dropped
			// whole is counted in the per-file line on top.
			assertRecall(t, name, s.all, map[factClass]float64{factE: 0.95, factX: 0.95, factL: 0.90, factD: 0.70, factJ: 0.80})
		} else {
			assertRecall(t, name+", diagnostic", s.diag, map[factClass]float64{factE: 0.95, factX: 0.95})
		}
	}
	if s.all.critComplete*10 < s.all.critRecords*9 {
		t.Errorf("%s: critical completeness %d/%d below 90%%", name, s.all.critComplete, s.all.critRecords)
	}
	if s.all.frs() <= baseline.all.frs() {
		t.Errorf("%s: structural FRS %.3f not above head+tail %.3f", name, s.all.frs(), baseline.all.frs())
	}
	// Next-step references are a goal of their own (issue 23): what the
	// agent used next must survive at least as often as in head+tail at
	// the same bytes. Held where there are enough of them to mean
	// something (the committed sample's tuning part has a dozen).
	if u, ok := s.all.recall(factU); ok && s.all.total[factU] >= 100 {
		if ub, _ := baseline.all.recall(factU); u < ub {
			t.Errorf("%s: next-step references %.1f%% below head+tail's %.1f%%", name, 100*u, 100*ub)
		}
	}
	if full && float64(s.all.bytesIn) < 0.9*ratio*float64(s.all.bytesO) {
		t.Errorf("%s: achieved %.2fx", name, float64(s.all.bytesIn)/float64(s.all.bytesO))
	}
}

func assertRecall(t *testing.T, name string, tl *tally, min map[factClass]float64) {
	t.Helper()
	for _, c := range factClasses {
		want, ok := min[c]
		if !ok {
			continue
		}
		if r, ok := tl.recall(c); ok && r < want {
			t.Errorf("%s: %s recall %.1f%% below %.1f%%", name, c, 100*r, 100*want)
		}
	}
}

// TestQualityTestdata runs the harness on the samples in testdata/, so the
// figures exist in any clone. The hint of each sample is the one its table
// test uses.
func TestQualityTestdata(t *testing.T) {
	var samples []sample
	for _, c := range kindCases(t) {
		text := c.text
		if c.file != "" {
			text = readTestdata(t, c.file)
		}
		kind := Detect(text, c.hint)
		samples = append(samples, sample{
			record: record{ID: c.name, Output: text},
			h:      c.hint, kind: kind, facts: extractFacts(text, kind),
		})
	}
	ratios := []float64{2, 4, 10}
	if raceEnabled {
		ratios = []float64{4}
	}
	for _, ratio := range ratios {
		s, b := runPair(samples, ratio)
		s.log(t, fmt.Sprintf("testdata, structural at %gx target", ratio))
		b.log(t, fmt.Sprintf("testdata, head+tail at the same bytes, %gx", ratio))
		if ratio == 4 {
			// Several samples are 1–3 KB: at 4x a Java or Go stack keeps a
			// few hundred bytes, so locations are held lower than on the
			// corpus.
			assertRecall(t, "diagnostic", s.diag, map[factClass]float64{factT: 0.99, factS: 0.99, factE: 0.95, factX: 0.95, factL: 0.55})
			if s.diag.critComplete < s.diag.critRecords {
				t.Errorf("critical completeness %d/%d", s.diag.critComplete, s.diag.critRecords)
			}
			if s.all.frs() <= b.all.frs() {
				t.Errorf("structural FRS %.3f not above head+tail %.3f", s.all.frs(), b.all.frs())
			}
		}
	}
	if !raceEnabled {
		med, p10, n := fll(samples)
		t.Logf("fact-lossless ratio over %d samples with T/S/E facts: median %.2fx, p10 %.2fx", n, med, p10)
	}
}

// TestGroundTruthFailingTests validates the failing-test extractor and the
// compressor against SWE-bench grading reports (the extractor's
// validation): report.json lists the tests that failed
// (FAIL_TO_PASS and PASS_TO_PASS failures) for the run in test_output.txt.
// Of the failing tests named in the log, it measures how many the T
// extractor finds, and how many survive compression at a 4x and an 8x
// target and at the default target.
func TestGroundTruthFailingTests(t *testing.T) {
	dir := filepath.Join(corpusDir, "swebench-logs")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	var named, extracted, logs int
	kept := map[string]int{}
	for _, e := range entries {
		report, err1 := os.ReadFile(filepath.Join(dir, e.Name(), "report.json"))
		logb, err2 := os.ReadFile(filepath.Join(dir, e.Name(), "test_output.txt"))
		if err1 != nil || err2 != nil {
			continue
		}
		var failing []string
		gjson.ParseBytes(report).ForEach(func(_, inst gjson.Result) bool {
			for _, k := range []string{"FAIL_TO_PASS", "PASS_TO_PASS"} {
				inst.Get("tests_status." + k + ".failure").ForEach(func(_, v gjson.Result) bool {
					failing = append(failing, v.String())
					return true
				})
			}
			return true
		})
		if len(failing) == 0 {
			continue
		}
		logs++
		text := string(logb)
		h := Hint{ToolName: "Bash", Args: `{"command":"pytest"}`}
		var facts []string
		for _, f := range extractFacts(text, Detect(text, h)) {
			if f.class == factT {
				facts = append(facts, f.text)
			}
		}
		outs := map[string]string{
			"4x":      structuralC.fn(text, h, len(text)/4),
			"8x":      structuralC.fn(text, h, len(text)/8),
			"default": structuralC.fn(text, h, DefaultTargetBytes),
		}
		for _, id := range failing {
			// A test that never appears in the log (a collection error
			// fails the whole module) cannot be kept or extracted.
			name := strings.TrimSpace(id)
			if !strings.Contains(text, name) {
				continue
			}
			named++
			found := false
			for _, f := range facts {
				if strings.Contains(f, name) {
					found = true
					break
				}
			}
			if found {
				extracted++
			} else {
				t.Logf("%s: %q not extracted", e.Name(), name)
			}
			for k, out := range outs {
				if strings.Contains(out, name) {
					kept[k]++
				} else if k == "default" {
					t.Logf("%s: %q not kept", e.Name(), name)
				}
			}
		}
	}
	if logs == 0 {
		t.Skip("no reports with failures")
	}
	pct := func(n int) float64 { return 100 * float64(n) / float64(max(named, 1)) }
	t.Logf("%d logs with failures, %d failing tests named in their logs", logs, named)
	t.Logf("T extractor finds %d (%.1f%%)", extracted, pct(extracted))
	for _, k := range []string{"4x", "8x", "default"} {
		t.Logf("kept at %s target: %d (%.1f%%)", k, kept[k], pct(kept[k]))
	}
	// Two of the 54 are harness attributions the log does not support: a
	// unittest subTest failure credited to the next test, whose own line
	// reads "... ok". The compressor drops such lines as passing tests.
	if pct(kept["4x"]) < 95 || pct(kept["default"]) < 95 {
		t.Errorf("failing tests kept: 4x %.1f%%, default %.1f%%", pct(kept["4x"]), pct(kept["default"]))
	}
}
