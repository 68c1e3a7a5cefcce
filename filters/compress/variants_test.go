package compress

import (
	"os"
	"strings"
	"testing"
)

// variant is a change of an output's form that leaves its facts as they
// are: how the same run reads from another shell, terminal or CI runner.
// undo maps a compressed output back to the original's form, so the
// original's facts are looked for in it.
type variant struct {
	name string
	do   func(string) string
	undo func(string) string
}

func eachLine(s string, f func(string) string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if i == len(lines)-1 && l == "" {
			break
		}
		lines[i] = f(l)
	}
	return strings.Join(lines, "\n")
}

var variants = []variant{
	{"crlf", // a Windows console's line ends
		func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
		func(s string) string { return strings.ReplaceAll(s, "\r", "") }},
	{"colour", // a terminal's colours, as pytest, cargo and jest write them with a tty or FORCE_COLOR
		func(s string) string {
			return eachLine(s, func(l string) string {
				if strings.TrimSpace(l) == "" {
					return l
				}
				return "\x1b[1;31m" + l + "\x1b[0;39m"
			})
		},
		func(s string) string {
			return strings.NewReplacer("\x1b[1;31m", "", "\x1b[0;39m", "").Replace(s)
		}},
	{"actions", // a GitHub Actions job log's timestamps
		func(s string) string {
			return eachLine(s, func(l string) string { return "2026-07-14T14:03:52.0047503Z " + l })
		},
		func(s string) string { return strings.ReplaceAll(s, "2026-07-14T14:03:52.0047503Z ", "") }},
	{"compose", // docker compose's service prefix
		func(s string) string { return eachLine(s, func(l string) string { return "app-1  | " + l }) },
		func(s string) string { return strings.ReplaceAll(s, "app-1  | ", "") }},
}

// TestQualityVariants measures the tuning set's critical classes with
// every output in each variant's form beside its own: a recogniser that
// reads one form only loses facts in the others, on outputs no tuning set
// holds in that form. Each class may fall half a point at most (the
// prefixes leave fewer lines in the same bytes). QUALITY_RATIO=10 measures
// at 10x; QUALITY_VARIANT names one variant, and QUALITY_VERBOSE lists the
// outputs that lose facts in it.
func TestQualityVariants(t *testing.T) {
	if raceEnabled {
		t.Skip("figures come from the run without -race")
	}
	tuning, _ := splitSamples(t, prepare(append(committedRecords(t), sharedRecords(t)...), 2000))
	ratio := 4.0
	if os.Getenv("QUALITY_RATIO") == "10" {
		ratio = 10
	}
	s := Structural(StructuralOptions{TargetRatio: ratio})
	measure := func(do, undo func(string) string, r sample) *tally {
		in := do(r.Output)
		out, _ := s.Compress(in, r.h)
		tl := newTally()
		tl.records, tl.bytesIn, tl.bytesO = 1, len(in), len(out)
		tl.add(r.facts, undo(out))
		return tl
	}
	same := func(s string) string { return s }
	base := newTally()
	asIs := make([]*tally, len(tuning))
	for i, r := range tuning {
		asIs[i] = measure(same, same, r)
		base.merge(asIs[i])
	}
	t.Logf("%-8s %gx %s", "as is", ratio, headline(base))
	for _, v := range variants {
		if only := os.Getenv("QUALITY_VARIANT"); only != "" && v.name != only {
			continue
		}
		all := newTally()
		for i, r := range tuning {
			tl := measure(v.do, v.undo, r)
			all.merge(tl)
			if os.Getenv("QUALITY_VERBOSE") == "" {
				continue
			}
			for _, c := range []factClass{factT, factS, factE, factX} {
				if tl.kept[c] < asIs[i].kept[c] {
					t.Logf("  %s %s: %s kept %d, as is %d, of %d", v.name, r.ID, c, tl.kept[c], asIs[i].kept[c], tl.total[c])
				}
			}
		}
		t.Logf("%-8s %gx %s", v.name, ratio, headline(all))
		for _, c := range []factClass{factT, factS, factE, factX} {
			got, _ := all.recall(c)
			want, _ := base.recall(c)
			if got < want-0.005 {
				t.Errorf("%s at %gx: %s %.1f%%, as is %.1f%%", v.name, ratio, c, 100*got, 100*want)
			}
		}
	}
}

// merge adds u's counts to t.
func (t *tally) merge(u *tally) {
	t.records += u.records
	t.bytesIn += u.bytesIn
	t.bytesO += u.bytesO
	for c, n := range u.total {
		t.total[c] += n
	}
	for c, n := range u.kept {
		t.kept[c] += n
	}
	t.critRecords += u.critRecords
	t.critComplete += u.critComplete
}
