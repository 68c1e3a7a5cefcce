package compress

import (
	"slices"
	"strings"
	"testing"
)

// TestGraphicalDiagnosticsKeepHeadlines: oxlint's report (the miette
// crate's ASCII theme) names each finding on a headline above its code
// frame. A real `pnpm fix` run from the tuning set (OpenCode on
// MandavkarPranjal/prsui, testenv/sessions/corpus, MIT) keeps, at 4x,
// every headline, every frame's location, the source line each frame
// points at with its caret line, and the linter's count. Before the rule
// only the locations and the count were kept: the findings themselves,
// and the code they point at, were omitted.
func TestGraphicalDiagnosticsKeepHeadlines(t *testing.T) {
	keepsLinesAt(t, "opencode-prsui__ses_056774f64ffefAaxN2T4lhVBv8#call_04d20f4f9b3d4980a7710e11", 4,
		"  x eslint(func-style): Expected a function expression.",
		"  x eslint-plugin-unicorn(no-array-for-each): Do not use `Array#forEach`",
		"  ! eslint-plugin-react-hooks(exhaustive-deps): React Hook useEffect has a missing dependency: 'titles'",
		"    ,-[demo/scramble-in-demo.tsx:7:8]", "    ,-[demo/scramble-in-demo.tsx:28:12]", "    ,-[demo/scramble-in-demo.tsx:34:6]",
		" 28 |     titles.forEach((_, index) => {", "    :            ^^^^^^^", " 34 |   }, []);",
		"Found 1 warning and 2 errors.",
	)
}

// TestFrameHeadlineForms: the headline is read above a frame's opener,
// past the causes between them, in both themes; a line above a frame that
// bears no severity mark is not one, nor is a marked line with no frame
// under it.
func TestFrameHeadlineForms(t *testing.T) {
	for _, c := range []struct {
		text     string
		headline int
		sev      frameSeverity
		src      int // the frame's pointed line, -1 for none
		label    int // the label line under it, -1 for none
	}{
		{"  x eslint(curly): Expected { after 'if' condition.\n   ,-[src/a.ts:3:5]\n 2 | let n = 0\n 3 | if (n) n++\n   :     ^\n   `----", 0, frameError, 3, 4},
		{"  × Expected ';', '}' or <eof>\n   ╭─[/app/page.tsx:2:1]\n 1 │ import x from 'y'\n 2 │ export defualt x\n   · ───┬───\n   ╰────", 0, frameError, 3, 4},
		{"  ⚠ unused import\n   ╭─[a.ts:1:1]\n 1 │ import x\n   ╰────", 0, frameWarning, 2, -1},
		{"  × failed to build\n  ├─▶ while reading config\n  ╰─▶ no such file\n   ╭─[cfg.toml:9:2]\n 9 │ a = \n   ╰────", 0, frameError, 4, -1},
		{"  ! missing key\n   ,-[x.json:4:1]\n   `----", 0, frameWarning, -1, -1},
		{"const x = [\n   ,-[not:1:1]", -1, frameNone, -1, -1},
		{"  ☞ consider a loop\n   ╭─[a.rs:2:1]", -1, frameNone, -1, -1},
		{"  x y\n\n   ,-[a.ts:1:1]", -1, frameNone, -1, -1},
	} {
		p := newPlan(c.text, KindText, StructuralOptions{})
		opener := -1
		for i := range p.n {
			if isFrameOpener(strings.TrimSpace(p.viewLine(i))) {
				opener = i
				break
			}
		}
		if opener < 0 {
			t.Fatalf("%q: no opener", c.text)
		}
		h, sev := frameHeadline(p, opener)
		if sev != c.sev || (sev != frameNone && h != c.headline) {
			t.Errorf("%q: headline %d %d, want %d %d", c.text, h, sev, c.headline, c.sev)
		}
		src, label := framePointed(p, opener, strings.TrimSpace(p.viewLine(opener)))
		if src != c.src {
			t.Errorf("%q: pointed line %d, want %d", c.text, src, c.src)
		}
		if label != c.label {
			t.Errorf("%q: label %d, want %d", c.text, label, c.label)
		}
	}
	for _, t0 := range []string{",-[a.ts:1:1]", "╭─[a.ts:1:1]"} {
		if !isFrameOpener(t0) {
			t.Errorf("isFrameOpener(%q) = false", t0)
		}
	}
	for _, t0 := range []string{",-[a.ts:1:1", ",- [a]", "[a.ts:1:1]", "-[a]"} {
		if isFrameOpener(t0) {
			t.Errorf("isFrameOpener(%q) = true", t0)
		}
	}
}

// TestGraphicalDiagnosticsKeyLines: history's summary of an old oxlint run
// keeps the findings' error headlines, told by the frames under them, with
// the count and the exit notice; a warning's headline and a marked line
// with no frame under it are not key lines.
func TestGraphicalDiagnosticsKeyLines(t *testing.T) {
	const id = "opencode-prsui__ses_056774f64ffefAaxN2T4lhVBv8#call_04d20f4f9b3d4980a7710e11"
	rec := heldOutRecord(t, id)
	lines, _, failed := KeyLinesFailed(rec.Output, 0)
	want := []string{
		"  x eslint(func-style): Expected a function expression.",
		"  x eslint-plugin-unicorn(no-array-for-each): Do not use `Array#forEach`",
		"Found 1 warning and 2 errors.",
		"[ELIFECYCLE] Command failed with exit code 1.",
	}
	if !slices.Equal(lines, want) || !failed {
		t.Errorf("key lines %q (failed %v), want %q", lines, failed, want)
	}
	lines, _ = KeyLines("  x y\n  x not a headline\nok\n  ! warned\n   ,-[a.ts:1:1]\n  × crashed\n  ╰─▶ cause\r\n   ╭─[b.rs:2:1]\r\n", 0)
	if !slices.Equal(lines, []string{"  × crashed"}) {
		t.Errorf("key lines %q", lines)
	}
}
