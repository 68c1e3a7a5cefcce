package clamp

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// everyOther is a stand-in Cutter: it keeps every other line up to aim
// bytes and marks the rest with one counted marker, the way the structural
// strategy marks its gaps, and refuses texts that start with "plain".
func everyOther(text, _, _ string, aim int) (string, bool) {
	if strings.HasPrefix(text, "plain") {
		return "", false
	}
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	omitted := 0
	for i, l := range lines {
		if i%2 == 0 && b.Len()+len(l) <= aim {
			b.WriteString(l)
		} else if l != "" {
			omitted++
		}
	}
	if omitted == 0 {
		return text, true
	}
	b.WriteString("[… " + strconv.Itoa(omitted) + " lines omitted …]")
	return b.String(), true
}

func TestStructuralText(t *testing.T) {
	long := strings.Repeat("a line of a log, héllo 中文\n", 4000)
	for _, c := range []struct {
		name string
		text string
		lim  Limits
		ok   bool
	}{
		{"bytes over", long, Limits{MaxBytes: 20000, MaxLines: 2000}, true},
		{"lines over", long, Limits{MaxBytes: 1 << 20, MaxLines: 300}, true},
		{"under", "short\n", Limits{MaxBytes: 20000, MaxLines: 2000}, false},
		{"not classified", "plain" + long, Limits{MaxBytes: 20000, MaxLines: 2000}, false},
		{"invalid UTF-8", strings.Repeat("bad \xff\xfe bytes \xe4\xb8 end\n", 3000), Limits{MaxBytes: 4096, MaxLines: 100}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, ok := StructuralText(c.text, "bash", "{}", c.lim, everyOther)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			if len(out) > c.lim.MaxBytes || CountLines(out) > c.lim.MaxLines || len(out) >= len(c.text) || !utf8.ValidString(out) {
				t.Errorf("%d bytes, %d lines, valid %v (limits %+v, input %d bytes)", len(out), CountLines(out), utf8.ValidString(out), c.lim, len(c.text))
			}
			if !strings.Contains(out, " lines omitted …]") || !strings.HasSuffix(out, "omitted lines are marked above]") {
				t.Errorf("cut not marked:\n%.400s", out)
			}
			if again, _ := StructuralText(c.text, "bash", "{}", c.lim, everyOther); again != out {
				t.Error("not deterministic")
			}
		})
	}
}

// FuzzStructuralText holds the structural path of the clamp to the clamp's
// own promises whatever the Cutter returns: both limits, valid UTF-8,
// strictly smaller than the input, the note last.
func FuzzStructuralText(f *testing.F) {
	fuzzSeeds(f, func(s string) {
		f.Add(s, uint16(300), uint8(10))
		f.Add(s, uint16(1500), uint8(0))
	})
	f.Fuzz(func(t *testing.T, s string, maxBytes uint16, maxLines uint8) {
		lim := fuzzLimits(maxBytes, maxLines, 0)
		out, ok := StructuralText(s, "bash", "{}", lim, everyOther)
		if !ok {
			return
		}
		if len(out) > axis(lim.MaxBytes) || CountLines(out) > axis(lim.MaxLines) {
			t.Fatalf("over the limits %+v: %d bytes, %d lines", lim, len(out), CountLines(out))
		}
		if len(out) >= len(validUTF8(s)) || !utf8.ValidString(out) || !strings.HasSuffix(out, "omitted lines are marked above]") {
			t.Fatalf("%d → %d bytes, valid %v: %q", len(s), len(out), utf8.ValidString(out), out)
		}
	})
}
