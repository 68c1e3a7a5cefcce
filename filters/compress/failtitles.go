package compress

import "strings"

// maxTitleLines bounds the lines a numbered failure heading may continue
// on: one per describe block it is nested in, the test's own last.
const maxTitleLines = 6

// readNumberedTitles reads the rest of the numbered failure headings
// mocha, and Cypress which runs it, write over each failure's report when
// the test sits in nested describe blocks:
//
//	2 failing
//	  1) Cart
//	       totals
//	         sums the items:
//	     AssertionError: expected 2 to equal 3
//
// The heading's first line names only the outermost suite: the test is on
// the line that ends in a colon, and what failed on the first line that is
// not blank after it (Cypress leaves one blank line between). The title's
// lines join the heading (critical, rank 1, as failing tests are) and the
// message is read as an error line (critical, rank 2) the first time it is
// seen. Each line of a title is indented deeper than the one before, one
// level per block, the first deeper than the heading's text; a heading
// whose next lines are not (rspec's "Failure/Error:" under the heading's
// text, ExUnit's location, exception and "stacktrace:" at one depth,
// PHPUnit's message at the margin), or that has no line ending in a colon
// within maxTitleLines, is left as it is. Each line is read at
// most twice, so the pass stays linear.
func readNumberedTitles(p *plan, catOut uint8) {
	seen := newSeenSet(len(p.body))
	for i := 0; i < p.n; i++ {
		if c := p.cls[i]; c.tier != tierCritical || c.rank != 1 {
			continue
		}
		l := trimRight(p.viewLine(i))
		lt := trimLeft(l)
		if !isNumberedFailure(lt, len(lt) < len(l)) || strings.HasSuffix(lt, ":") {
			continue
		}
		// The title's next line starts deeper than the heading's text
		// ("  1) Cart", then "       totals" at column 7, past column 5):
		// rspec's "Failure/Error:" and "Got 0 failures and 2 other
		// errors:" start at the text's column.
		indent := len(l) - len(lt) + digits(lt) + 2
		end := -1
		for j := i + 1; j < p.n && j <= i+maxTitleLines; j++ {
			lj := trimRight(p.viewLine(j))
			tj := trimLeft(lj)
			if tj == "" || len(lj)-len(tj) <= indent {
				break
			}
			indent = len(lj) - len(tj)
			if strings.HasSuffix(tj, ":") {
				end = j
				break
			}
		}
		if end < 0 {
			continue
		}
		for j := i + 1; j <= end; j++ {
			if p.cls[j].tier != tierCritical {
				p.set(j, tierCritical, 1, catOut)
			}
		}
		for j := end + 1; j < p.n && j <= end+2; j++ {
			tj := strings.TrimSpace(p.viewLine(j))
			if tj == "" {
				continue
			}
			if p.cls[j].tier != tierCritical && !seen.add(collapsedHash(tj)) {
				p.set(j, tierCritical, 2, catOut)
			}
			break
		}
		i = end
	}
}

// demoteListedFailures lowers the failing tests vitest lists under their
// file ("   × rejects empty input 7ms") when its "Failed Tests" section
// names each again with its file and suites ("FAIL  src/a.test.ts > api >
// rejects empty input"): one line per failure says what failed, and at a
// tight aim the first list's bytes go to the error and the code frame
// under it, where the next edit goes. A test the section does not name
// keeps its line.
func demoteListedFailures(p *plan) {
	// The failing-test lines, read once: the section's names and the
	// list's lines with theirs.
	type failing struct {
		i int
		t string // the name after the cross
	}
	var lines []failing
	var named map[string]struct{}
	for i := 0; i < p.n; i++ {
		if c := p.cls[i]; c.tier != tierCritical || c.rank != 1 {
			continue
		}
		t := trimLeft(trimRight(p.viewLine(i)))
		if name, ok := strings.CutPrefix(t, "× "); ok {
			lines = append(lines, failing{i, name})
			continue
		}
		if !strings.HasPrefix(t, "FAIL ") {
			continue
		}
		if k := strings.LastIndex(t, " > "); k > 0 {
			if named == nil {
				named = make(map[string]struct{})
			}
			named[strings.TrimSpace(t[k+3:])] = struct{}{}
		}
	}
	if named == nil {
		return
	}
	cat := -1
	for _, f := range lines {
		name := f.t
		// "7ms", "1.20s": the test's duration, which the section leaves out.
		if k := strings.LastIndexByte(name, ' '); k > 0 && endsWithDuration(name[k+1:]) {
			name = name[:k]
		}
		if _, again := named[name]; again {
			if cat < 0 { // a category of its own only where it is used
				cat = int(p.category("failing tests named again below"))
			}
			p.set(f.i, tierFill, 0, uint8(cat))
		}
	}
}
