package compress

import "strings"

// classifyDiff keeps the skeleton of a unified or git diff: file headers
// (diff --git, mode, rename, ---/+++, Binary files) and commit headers are
// critical, and a line of per-file counts goes on top; then changed
// lines that open a definition, then each hunk's header with its first
// changed lines, in order, then later changed lines of every hunk;
// unchanged context lines and index lines last. Markers count what they
// stand for: "[… 120 lines omitted: 80 added, 30 removed, 10 context …]".
func classifyDiff(p *plan) {
	p.style = reasonCounted
	catAdd := p.category("added")
	catDel := p.category("removed")
	catCtx := p.category("context")
	catOther := p.category("other")
	oldLeft, newLeft := 0, 0 // lines still expected in the current hunk
	inHunk := false
	pos := 0
	block, off, inBlock := -1, 0, false // the current run of changed lines in the hunk
	subject := false                    // after a commit's Date: line, before its message
	gitPath := ""                       // the path the last "diff --git" line named
	// A changed line, and a hunk's header, are read under their file's
	// header (selection keeps it with them, plan.take): anchor is the
	// file's first header line, head the last one they hang from ("+++"
	// of a plain diff), hunk the current hunk's header; -1 when none. A
	// hunk's header is not a changed line's parent: it costs a line of
	// its own, and at a tight aim the lines it would take the place of
	// hold more of the names an agent uses next (issue 23).
	anchor, head, hunk := -1, -1, -1
	var stats []fileStat
	cur := func() *fileStat {
		if len(stats) == 0 {
			stats = append(stats, fileStat{path: "?"})
		}
		return &stats[len(stats)-1]
	}
	for i, l := range p.allLines() {
		if inHunk && (oldLeft > 0 || newLeft > 0) {
			c := byte(' ')
			if l != "" {
				c = l[0]
			}
			switch c {
			case '+', '-':
				cat := catAdd
				if c == '+' {
					newLeft--
					cur().added++
				} else {
					oldLeft--
					cur().taken++
					cat = catDel
				}
				if !inBlock {
					block++
					inBlock, off = true, 0
				}
				// A block of changes ranks by its place in the hunk, and
				// its lines by eights, so a small - / + pair is kept or
				// dropped together, first blocks of every hunk first. The
				// first pair of a hunk's first block shares the rank of its
				// header, so (ties go by position) every hunk keeps its
				// header and its first change before any hunk keeps more.
				// A changed line that opens a definition goes before all
				// of them: the function or type it names is what the
				// agent calls, greps or edits next (issue 23), and it sits
				// anywhere in its hunk (a new file is one long block).
				rank := min(block, 1<<16)*64 + 2 + min(off/8, 62)
				switch {
				case isDefinition(l[1:]):
					rank = 0
				case block == 0 && off < 2:
					rank = 1
				}
				p.set(i, tierHigh, rank, cat)
				p.setParent(i, head)
				off++
				pos++
				continue
			case ' ':
				oldLeft--
				newLeft--
				inBlock = false
				p.set(i, tierFill, pos, catCtx)
				p.setParent(i, head)
				pos++
				continue
			case '\\':
				p.set(i, tierContext, pos, catOther)
				p.setParent(i, head)
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
			// A hunk header is worth its changed lines, not more: the
			// identifiers on changed lines are what an agent greps,
			// opens or edits next (issue 23), and the per-file counts on
			// top say what the hunks dropped here changed.
			p.set(i, tierHigh, 1, catOther)
			if head >= 0 {
				p.setParent(i, head)
			}
			hunk = i
			oldLeft, newLeft = hunkCounts(l)
			inHunk = true
			pos = 0
			block, inBlock = -1, false
		case strings.HasPrefix(l, "index "):
			// Blob hashes: no reader and no patch tool needs them once
			// the file headers are there.
			p.set(i, tierContext, 1<<20, catOther)
			p.setParent(i, onlyWithChild)
		case (strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ")) && gitPath != "" && diffPath(l) == gitPath:
			// The old and new names a "diff --git" line has just given:
			// dropped before any changed line, as the blob hashes are.
			p.set(i, tierContext, 1<<20, catOther)
			p.setParent(i, onlyWithChild)
		case isDiffHeader(l):
			// A file's first header is kept only with a line of its
			// file: where the budget reaches none, the counts on top
			// name it, and its header's bytes go to changed lines of
			// files read further (issue 23). What else the header says
			// (a rename, a mode, a binary file) is kept at any price,
			// with the first line.
			switch {
			case strings.HasPrefix(l, "--- ") && anchor >= 0 && hunk < anchor && head == anchor && strings.HasPrefix(p.line(anchor), "diff "),
				strings.HasPrefix(l, "+++ ") && anchor >= 0 && hunk < anchor:
				p.set(i, tierHigh, headerRank, catOther)
				p.setParent(i, head)
				head = i
			case strings.HasPrefix(l, "diff "), strings.HasPrefix(l, "--- "):
				p.set(i, tierHigh, headerRank, catOther)
				p.setParent(i, onlyWithChild)
				anchor, head = i, i
				stats = append(stats, fileStat{path: "?"})
			case strings.HasPrefix(l, "Only in "):
				p.set(i, tierCritical, 0, catOther)
				anchor, head = -1, -1
			default:
				p.set(i, tierCritical, 0, catOther)
				if anchor >= 0 {
					p.setParent(i, anchor)
				}
			}
			if strings.HasPrefix(l, "diff --git ") {
				gitPath = diffPath(l)
			} else if strings.HasPrefix(l, "diff ") {
				gitPath = ""
			}
			// The new name wins, the old one stands for a deletion.
			if path := diffPath(l); path != "" && (cur().path == "?" || strings.HasPrefix(l, "+++ ") && path != "/dev/null") {
				cur().path = path
			}
		case strings.HasPrefix(l, "commit "):
			p.set(i, tierCritical, 1, catOther)
		case strings.HasPrefix(l, "Author:") || strings.HasPrefix(l, "Date:") || strings.HasPrefix(l, "Merge:"):
			p.set(i, tierHigh, 2, catOther)
			subject = strings.HasPrefix(l, "Date:")
		case subject && strings.HasPrefix(l, "    ") && strings.TrimSpace(l) != "":
			// git show / git log -p: the commit's subject, what the
			// change says it does.
			p.set(i, tierHigh, 0, catOther)
			subject = false
		default:
			p.set(i, tierFill, i, catOther)
		}
	}
	if len(stats) > 0 {
		// Per-file counts stay whatever the hunks lose: what a change did
		// to each file is the first thing read in a diff.
		p.preface = statMarker(stats, max(p.budget/4, 160))
	}
	// Past every hunk's header and first change, the lines of a hunk that
	// show the most names not shown yet go first, up to diffCoverShare
	// percent of the bytes selection may take: the names on a hunk's
	// later lines (a new function's body) are what an agent greps, calls
	// or edits next far more often than the next block's first line
	// (issue 23). Changed and context lines are both read; headers name
	// no code.
	p.coverText = func(i int) string {
		if c := p.cls[i].cat; c == catAdd || c == catDel || c == catCtx {
			if l := p.line(i); l != "" {
				return l[1:]
			}
		}
		return ""
	}
	p.coverRank, p.coverShare = diffCoverRank, diffCoverShare
}

// diffCoverRank and diffCoverShare place a diff's name cover (see
// classifyDiff), chosen on the tuning set's diffs (split_test.go): at the
// defaults next-step references 85.2 -> 95.5 % (head+tail 84.1 %), at 4x
// 46.8 -> 46.0 %, at 10x 26.0 -> 26.4 %, hunk headers unchanged. A 60 %
// share gave 90.9 % at the defaults, starting before the first changes
// (rank 1) 93.2 % with hunk headers 96.6 -> 94.8 %.
const (
	diffCoverRank  = 2
	diffCoverShare = 90
)

// headerRank is a file header's own rank: after every changed line. A
// file header is kept with the first line kept under it (take), never on
// its own.
const headerRank = 1 << 22

// diffPath reads the file a header line names: "diff --git a/x b/y" gives
// y, "--- a/x" gives x, "+++ b/y" gives y (a/ and b/ prefixes dropped);
// "/dev/null" is returned as it is. Other lines give "".
func diffPath(l string) string {
	var path string
	switch {
	case strings.HasPrefix(l, "diff --git "):
		rest := l[len("diff --git "):]
		if k := strings.LastIndex(rest, " b/"); k >= 0 {
			return rest[k+3:]
		}
		return ""
	case strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "):
		path = l[4:]
	default:
		return ""
	}
	if k := strings.IndexByte(path, '\t'); k >= 0 {
		path = path[:k] // "--- a/x\t2009-10-11 15:12:20" (diff -u dates)
	}
	path = strings.TrimSpace(path)
	if strings.HasPrefix(path, "a/") || strings.HasPrefix(path, "b/") {
		path = path[2:]
	}
	return path
}

// isDiffHeader matches the per-file header lines of unified and git diffs.
func isDiffHeader(l string) bool {
	if l == "" {
		return false
	}
	// One switch on the first byte picks the few prefixes that can match:
	// a listing's paths start with these letters as often as a diff's
	// headers do (detection asks every line, issue 23).
	switch l[0] {
	case 'd':
		return strings.HasPrefix(l, "diff ") || strings.HasPrefix(l, "deleted file mode") || strings.HasPrefix(l, "dissimilarity index")
	case '-':
		return strings.HasPrefix(l, "--- ")
	case '+':
		return strings.HasPrefix(l, "+++ ")
	case 'i':
		return strings.HasPrefix(l, "index ")
	case 'n':
		return strings.HasPrefix(l, "new file mode") || strings.HasPrefix(l, "new mode")
	case 'o':
		return strings.HasPrefix(l, "old mode")
	case 's':
		return strings.HasPrefix(l, "similarity index")
	case 'r':
		return strings.HasPrefix(l, "rename from") || strings.HasPrefix(l, "rename to")
	case 'c':
		return strings.HasPrefix(l, "copy from") || strings.HasPrefix(l, "copy to")
	case 'B':
		return strings.HasPrefix(l, "Binary files ")
	case 'G':
		return strings.HasPrefix(l, "GIT binary patch")
	case 'O':
		return strings.HasPrefix(l, "Only in ")
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
