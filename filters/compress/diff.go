package compress

import "strings"

// classifyDiff keeps the skeleton of a unified or git diff: file headers
// (diff --git, index, mode, rename, ---/+++, Binary files) and hunk headers
// are critical; changed lines come next, the first lines of every hunk
// before later ones; unchanged context lines last. Markers count what they
// stand for: "[… 120 lines omitted: 80 added, 30 removed, 10 context …]".
// Commit headers from git log -p / git show are kept high.
func classifyDiff(p *plan) {
	p.style = reasonCounted
	catAdd := p.category("added")
	catDel := p.category("removed")
	catCtx := p.category("context")
	catOther := p.category("other")
	oldLeft, newLeft := 0, 0 // lines still expected in the current hunk
	inHunk := false
	pos := 0
	for i, l := range p.lines {
		if inHunk && (oldLeft > 0 || newLeft > 0) {
			c := byte(' ')
			if l != "" {
				c = l[0]
			}
			switch c {
			case '+':
				newLeft--
				p.set(i, changedTier(l), pos, catAdd)
				pos++
				continue
			case '-':
				oldLeft--
				p.set(i, changedTier(l), pos, catDel)
				pos++
				continue
			case ' ':
				oldLeft--
				newLeft--
				p.set(i, tierFill, pos, catCtx)
				pos++
				continue
			case '\\':
				p.set(i, tierContext, pos, catOther)
				continue
			}
			// Anything else ends the hunk early (a malformed count).
		}
		if strings.HasPrefix(l, "\\ ") { // "\ No newline at end of file" after the last line
			p.set(i, tierContext, 0, catOther)
			continue
		}
		inHunk = false
		switch {
		case strings.HasPrefix(l, "@@ ") || strings.HasPrefix(l, "@@@ "):
			p.set(i, tierCritical, 1, catOther)
			oldLeft, newLeft = hunkCounts(l)
			inHunk = true
			pos = 0
		case isDiffHeader(l):
			p.set(i, tierCritical, 0, catOther)
		case strings.HasPrefix(l, "commit ") || strings.HasPrefix(l, "Author:") || strings.HasPrefix(l, "Date:") || strings.HasPrefix(l, "Merge:"):
			p.set(i, tierHigh, 0, catOther)
		default:
			p.set(i, tierFill, i, catOther)
		}
	}
	p.addContext(tierCritical)
}

// isDiffHeader matches the per-file header lines of unified and git diffs.
func isDiffHeader(l string) bool {
	for _, pre := range [...]string{
		"diff ", "--- ", "+++ ", "index ", "new file mode", "deleted file mode", "old mode", "new mode",
		"similarity index", "dissimilarity index", "rename from", "rename to", "copy from", "copy to",
		"Binary files ", "GIT binary patch", "Only in ",
	} {
		if strings.HasPrefix(l, pre) {
			return true
		}
	}
	return false
}

// hunkCounts reads "@@ -a,b +c,d @@" and returns b and d (1 when omitted).
// For a combined diff ("@@@ -a,b -c,d +e,f @@@") it returns the first old
// count and the new count, which bound the body well enough.
func hunkCounts(l string) (int, int) {
	f := strings.Fields(l)
	oldN, newN := -1, -1
	for _, w := range f[1:] {
		if strings.HasPrefix(w, "@@") {
			break
		}
		if len(w) < 2 || (w[0] != '-' && w[0] != '+') {
			continue
		}
		n := 1
		if k := strings.IndexByte(w, ','); k >= 0 {
			n = lineNumber(w[k+1:])
		}
		if n < 0 {
			n = 0
		}
		if w[0] == '-' && oldN < 0 {
			oldN = n
		} else if w[0] == '+' {
			newN = n
		}
	}
	return max(oldN, 0), max(newN, 0)
}

// changedTier ranks a changed line: ones that raise or report errors or
// name source locations come with the headers' neighbours, the rest after.
func changedTier(l string) tier {
	if isErrorLine(l[1:]) || location(l) != "" {
		return tierHigh
	}
	return tierContext
}
