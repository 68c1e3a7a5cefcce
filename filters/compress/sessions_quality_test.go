package compress

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// Tool outputs taken out of recorded agent sessions (Anthropic Messages
// requests, one session per line): unlike the corpus records, each comes
// with the call's own arguments, the assistant turn that made the call and
// the one that followed, so the harness can measure next-step references
// (U) and query-aware compression on what real agents asked for.

// sessionsFile is the whole-session corpus beside the repository (absent in
// a user's clone), relative to this package's directory.
const sessionsFile = "../../../shared/sessions/sessions.jsonl"

// loadSessionRecords returns one record per tool result of every session:
// tool name and raw input of its call, the output text, the text and tool
// inputs of the assistant turn that called it (Prev) and of the next one
// (Next).
func loadSessionRecords(t testing.TB, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("sessions not available: %v", err)
	}
	defer f.Close()
	var recs []record
	sc := bufio.NewScanner(gunzipped(t, f, path))
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for sc.Scan() {
		s := gjson.ParseBytes(sc.Bytes())
		name := s.Get("session").String()
		msgs := s.Get("messages").Array()
		for i, m := range msgs {
			if m.Get("role").String() != "assistant" || i+1 >= len(msgs) {
				continue
			}
			calls := map[string]gjson.Result{}
			m.Get("content").ForEach(func(_, b gjson.Result) bool {
				if b.Get("type").String() == "tool_use" {
					calls[b.Get("id").String()] = b
				}
				return true
			})
			if len(calls) == 0 {
				continue
			}
			next := ""
			if i+2 < len(msgs) {
				next = turnText(msgs[i+2])
			}
			prev := turnText(m)
			n := 0
			msgs[i+1].Get("content").ForEach(func(_, b gjson.Result) bool {
				if b.Get("type").String() != "tool_result" {
					return true
				}
				call, ok := calls[b.Get("tool_use_id").String()]
				if !ok {
					return true
				}
				n++
				recs = append(recs, record{
					ID:     name + "#" + b.Get("tool_use_id").String(),
					Source: "sessions",
					Tool:   call.Get("name").String(),
					Input:  call.Get("input").Raw,
					Output: resultText(b.Get("content")),
					Prev:   prev,
					Next:   next,
				})
				return true
			})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// turnText is what an assistant turn says: its text blocks and the raw
// inputs of its tool calls.
func turnText(m gjson.Result) string {
	c := m.Get("content")
	if c.Type == gjson.String {
		return c.String()
	}
	var b strings.Builder
	c.ForEach(func(_, blk gjson.Result) bool {
		switch blk.Get("type").String() {
		case "text":
			b.WriteString(blk.Get("text").String())
		case "tool_use":
			b.WriteString(blk.Get("input").Raw)
		}
		b.WriteByte('\n')
		return true
	})
	return b.String()
}

func resultText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.String()
	}
	var b strings.Builder
	c.ForEach(func(_, blk gjson.Result) bool {
		b.WriteString(blk.Get("text").String())
		return true
	})
	return b.String()
}

// reRef finds the candidate references of the U class: runs of identifier
// and path characters of six or more bytes.
var reRef = regexp.MustCompile(`[A-Za-z0-9_][A-Za-z0-9_./-]*[A-Za-z0-9_]`)

// nextStepRefs are the U facts of a record: references that occur in the
// output and in the next assistant turn but in neither the calling turn nor
// the call's input, so the agent can only have taken them from this output.
// Only code-like tokens count (with a digit, an underscore, a dot, a slash
// or an inner capital): plain English words the next turn happens to share
// with the output say nothing about what it used.
func nextStepRefs(r record) []fact {
	if r.Next == "" {
		return nil
	}
	inNext := map[string]bool{}
	for _, w := range reRef.FindAllString(r.Next, -1) {
		if len(w) >= 6 && codeLike(w) {
			inNext[w] = true
		}
	}
	seen := map[string]bool{}
	var out []fact
	for _, w := range reRef.FindAllString(r.Output, -1) {
		if !inNext[w] || seen[w] {
			continue
		}
		seen[w] = true
		if strings.Contains(r.Prev, w) || strings.Contains(r.Input, w) {
			continue
		}
		out = append(out, fact{class: factU, text: w})
	}
	return out
}

func codeLike(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if isDigit(c) || c == '_' || c == '.' || c == '/' || (i > 0 && c >= 'A' && c <= 'Z') {
			return true
		}
	}
	return false
}

// The committed session sample: the tool outputs of the sessions in
// testenv/sessions/testdata, and testdata/session_outputs.jsonl, sixteen
// test logs, tracebacks and diffs taken from the same public sessions with
// their calls and turns (provenance and licences in testdata/SOURCES.md).
const (
	committedSessions = "../../testenv/sessions/testdata/sample.jsonl"
	committedOutputs  = "testdata/session_outputs.jsonl"
)

// TestQualitySessions runs the harness on the tool outputs of the 78
// recorded agent sessions, at 4x and 10x, with head+tail at the same bytes
// beside. It needs the shared sessions and skips without them.
func TestQualitySessions(t *testing.T) {
	recs := loadSessionRecords(t, sessionsFile)
	qualitySessions(t, "sessions", recs)
}

// TestQualitySessionSample is the same run on the committed sample, so the
// figures and the goals hold in any clone.
func TestQualitySessionSample(t *testing.T) {
	recs := append(loadSessionRecords(t, committedSessions), loadRecords(t, committedOutputs)...)
	qualitySessions(t, "committed session sample", recs)
}

func qualitySessions(t *testing.T, name string, recs []record) {
	ratios := []float64{4, 10}
	if raceEnabled {
		ratios = []float64{4} // the figures come from the run without -race
	}
	samples, test := splitSamples(t, prepare(recs, 2000))
	if len(samples) == 0 || len(test) == 0 {
		t.Fatalf("%s: no tool output of 2000 bytes or more in the tuning or the test set", name)
	}
	for _, ratio := range ratios {
		s, b := runPair(samples, ratio)
		s.log(t, fmt.Sprintf("%s, tuning set, structural at %gx", name, ratio))
		b.log(t, fmt.Sprintf("%s, tuning set, head+tail at the same bytes, %gx", name, ratio))
		assertQuality(t, name+" tuning set", s, b, ratio, false)
		s, b = runPair(test, ratio)
		s.log(t, fmt.Sprintf("%s, TEST set, structural at %gx", name, ratio))
		b.log(t, fmt.Sprintf("%s, TEST set, head+tail at the same bytes, %gx", name, ratio))
	}
}

// TestQualityLosses lists, for one fact class at one ratio, the records
// that lose facts of it and which, and writes each compressed output next
// to its input under QUALITY_DUMP: the loop to find what a strategy gets
// wrong. Set QUALITY_CLASS (T, S, E, X, L, P, J, D, U) to run it;
// QUALITY_RATIO (default 4) and QUALITY_SET (sessions, corpus, committed:
// the sessions under testenv/sessions/corpus, or fixtures: the logs under
// testdata/fixtures) choose the rest. It lists the tuning set only.
func TestQualityLosses(t *testing.T) {
	class := factClass(os.Getenv("QUALITY_CLASS"))
	if class == "" {
		t.Skip("QUALITY_CLASS not set")
	}
	ratio := 4.0
	if v := os.Getenv("QUALITY_RATIO"); v != "" {
		fmt.Sscan(v, &ratio)
	}
	var recs []record
	switch os.Getenv("QUALITY_SET") {
	case "corpus":
		recs = loadRecords(t, corpusDir+"/records.jsonl")
	case "committed":
		recs = loadHeldOutSessions(t)
	case "fixtures":
		recs = loadFixtureRecords(t)
	default:
		recs = loadSessionRecords(t, sessionsFile)
	}
	dump := os.Getenv("QUALITY_DUMP")
	lostAll, totalAll := 0, 0
	// Only the tuning set's losses are read: the test set is measured,
	// never studied (split_test.go).
	tuning, _ := splitSamples(t, prepare(recs, 2000))
	for _, s := range tuning {
		out, _ := Structural(StructuralOptions{TargetRatio: ratio}).Compress(s.Output, s.h)
		m := newMatcher(out, len(s.facts))
		var lost []string
		total := 0
		for _, f := range s.facts {
			if f.class != class {
				continue
			}
			total++
			if !m.survives(f) {
				lost = append(lost, f.text)
			}
		}
		totalAll += total
		lostAll += len(lost)
		if len(lost) == 0 {
			continue
		}
		t.Logf("%s [%s %s] %d→%d: lost %d/%d: %.300q", s.ID, s.kind, s.Tool, len(s.Output), len(out), len(lost), total, lost[:min(len(lost), 4)])
		if dump != "" {
			name := strings.NewReplacer("/", "_", "#", "_").Replace(s.ID)
			os.MkdirAll(dump, 0o755)
			os.WriteFile(dump+"/"+name+".in", []byte(s.Output), 0o644)
			os.WriteFile(dump+"/"+name+".out", []byte(out), 0o644)
			os.WriteFile(dump+"/"+name+".args", []byte(s.Input), 0o644)
		}
	}
	t.Logf("lost %d of %d %s facts", lostAll, totalAll, class)
}
