package compress

import (
	"strings"
)

// classifySearch groups search hits by file. Every file's first hit is
// high; the next hits of all files come round-robin (second hits of every
// file before third hits of any), so a budget keeps the first K hits of each
// file and names every file. Omitted hits are counted per file, with their
// line numbers, in the marker: "[… 7 lines omitted: hits in a.go at lines 12, 40 …]".
//
// Forms read: grep -n / rg "path:12:text" and "path-12-text" (context),
// grep -r without -n "path:text",
// rg --heading (a path line, then "12:text" lines), SWE-agent search_dir
// ("/path (3 matches)"). An output without hits is a file list (grep -l,
// Grep's files_with_matches) and is handled as a listing.
func classifySearch(p *plan) {
	hitsSeen, plain := 0, 0
	for _, l := range p.linesTo(min(p.n, 400)) {
		if path, _, _ := parseHit(l); path != "" {
			hitsSeen++
		} else if numberedHit(l) > 0 {
			hitsSeen++
		} else if plainHitPath(l) != "" {
			plain++
		}
	}
	// grep without -n: "path:text" hits, when nothing else is numbered.
	plainHits := hitsSeen == 0 && plain > 0
	hitsSeen += plain
	if hitsSeen == 0 {
		classifyListing(p)
		return
	}
	p.groups = []string{}
	p.groupUnit = "hits"
	p.groupLines = true
	p.groupSplit = 24
	p.markCost = 110
	p.hitLine = make([]int32, p.n)
	p.hitText = make([]int32, p.n)
	p.hitCut = searchHitText
	catOther := p.category("output")
	groupOf := make(map[uint64]int32) // by the path's hash
	var perGroup []int32
	var vendored []bool // by group: a file under a dependency or build directory
	// Groups cost up to 150 bytes each with growth (map entry, name,
	// count): no more than one per 128 input bytes, so a million one-hit
	// files of short lines stay under the memory bound (review round 3,
	// N4). Paths past the cap are ungrouped lines.
	maxGroups := max(len(p.body)/128, 64)
	group := func(path string) int32 {
		h := hash64(path)
		if g, ok := groupOf[h]; ok {
			return g
		}
		if len(p.groups) >= maxGroups {
			return -1
		}
		g := int32(len(p.groups))
		groupOf[h] = g
		p.groups = append(p.groups, cleanLabel(path, 160))
		perGroup = append(perGroup, 0)
		vendored = append(vendored, isVendoredDir(path[:lastSlash(path)+1]))
		return g
	}
	heading := int32(-1) // rg --heading: the current file
	var types seenSet    // the exception types error hits named so far
	for i, l := range p.allLines() {
		path, n, match := parseHit(l)
		if path == "" && plainHits {
			if path = plainHitPath(l); path != "" {
				match = true
			}
		}
		if path == "" && heading >= 0 {
			if n = numberedHit(l); n > 0 {
				match = true
			}
		}
		g := heading
		if path != "" {
			g = group(path)
		}
		switch {
		case (path != "" || (heading >= 0 && n > 0)) && g >= 0:
			p.setGroup(i, g)
			if match {
				p.hitLine[i] = int32(n)
			}
			text := hitText(l, path)
			errHit := isErrorOrSummaryHit(text)
			if !errHit {
				p.hitText[i] = int32(len(l) - len(text))
			}
			k := int(perGroup[g])
			perGroup[g]++
			switch {
			case errHit:
				// A hit that reports or raises an error ("error:",
				// "fatal:", "FooError: …") or a run's summary is where
				// the failure text an agent searches for is made: it is
				// critical, as an error line is in every other
				// kind, so it is kept before the first hits of other
				// files and may take critCap. Its rank is not
				// negative: critical lines ranked below mustRank (-1
				// here) would be kept at any ratio, and a search for
				// "Error" over a large tree has thousands. The first hit
				// naming each exception type goes first: when error
				// hits overflow what they may take, a type only later
				// files handle (`except IntegrityError:`) is news a
				// tenth more hits of the first types are not.
				rank := int(g) + 1
				if name := exceptionName(text); name != "" && match {
					if types.m == nil {
						types = newSeenSet(len(p.body))
					}
					if !types.add(hashAdd(hashSeed, name)) {
						rank = 0
					}
				}
				p.set(i, tierCritical, rank, 0)
			case vendored[g]:
				// A grep that descends into node_modules or a
				// virtualenv finds the dependencies' copies of a name;
				// the project's own hits are where its next edit goes.
				p.set(i, tierFill, vendoredRank+k*len(perGroup)+int(g), 0)
			case k == 0:
				p.set(i, tierHigh, int(g), 0)
			case k < 3:
				p.set(i, tierContext, k*len(perGroup)+int(g), 0)
			default:
				p.set(i, tierFill, k, 0)
			}
			if !match {
				// A context line: after the matches of its file. One that
				// names or reports an error (grep -C's "a_test.go-30-\t{…,
				// WidthError: errors.New(…)}" under a match) is where
				// failure text is made as much as a match is: critical,
				// but after every match's error hit, so it takes only the
				// room they leave.
				if !errHit {
					p.cls[i].tier = max(p.cls[i].tier, tierFill)
				}
				p.cls[i].rank += contextRank
			}
		case isSearchSummary(l) || isSummaryLine(l):
			// A search's count, or a linter's or a runner's summary after
			// its path:line findings (pylint's rating, ruff's "Found 3
			// errors."), which read as hits.
			p.set(i, tierCritical, 0, catOther)
		case strings.TrimSpace(l) == "--":
			p.set(i, tierNoise, 0, catOther)
			if heading >= 0 {
				p.setGroup(i, heading)
			}
		case isPathLine(l) || strings.HasSuffix(trimRight(l), " matches)") || strings.HasSuffix(trimRight(l), " match)"):
			// A heading: rg --heading, or SWE-agent's "/path (3 matches)".
			name := strings.TrimSpace(l)
			if k := strings.LastIndex(name, " ("); k > 0 {
				name = name[:k]
			}
			if heading = group(name); heading >= 0 {
				p.setGroup(i, heading)
				p.set(i, tierHigh, int(heading), 0)
			}
		case isBlank(l):
			heading = -1
		case isErrorLine(l):
			// Not a hit but a failure around them: "exit status 1" after
			// a linter's findings (golangci-lint's are path:line hits),
			// Claude Code's "Exit code 2", grep's "No such file". As an
			// error hit is, and within the same cap.
			p.set(i, tierCritical, len(p.groups), catOther)
		default:
			p.set(i, tierFill, i, catOther)
		}
	}
	p.headTail(2, 2)
}

// contextRank is added to the rank of a search's context lines (grep -C's
// "a.go-12-…"): each goes after every match of its kind.
const contextRank = 1 << 20

// isErrorOrSummaryHit reports whether a match's text (hitText: the part
// after "path:12:", or "12:" under an rg --heading) is an error line or a
// test run's summary ("3 failed, 400 passed in 12.30s",
// "test result: FAILED. 1 passed; 2 failed"): a search through logs for
// how a run ended finds its summary, which says that as an error hit says
// what failed. Only the summaries that open with what isSummaryLine knows
// them by (summaryStart) are looked for, and only in a text with a digit:
// a count, "in 12.30s". Most hits are code, and an exit notice anywhere in
// a line is an error line already. A failing test in a runner's words
// ("--- FAIL: TestParse", "FAILED tests/a.py::t") is one too: a grep for
// FAIL over saved runs is a search for them.
func isErrorOrSummaryHit(text string) bool {
	// Only the text is read: a path cannot make a hit an error line, and a
	// text that opens with "panic: " or "E   " is read as such a line opens.
	m := bitsOf(text)
	if isErrorLineIn(text, m) {
		return true
	}
	t := trimLeft(text)
	if m.has('0') && t != "" && summaryStart[t[0]] && isSummaryLine(t) || failureMarkedIn(t, m) && isFailingTest(t) {
		return true
	}
	// A linter's finding after its column: "8: E1101: …", "1: F401 …".
	if d := digits(t); d > 0 && d < len(t) && t[d] == ':' {
		t = trimLeft(t[d+1:])
	}
	return isLintErrorCode(t)
}

// isLintErrorCode reports whether a linter's finding names a code of the
// error classes: pylint's error and fatal messages ("E1101: Instance of
// 'Client' has no 'fetch' member", "F0001: …") and pyflakes' codes in
// flake8 and ruff ("F401 'os' imported but unused", "F821 undefined name
// 'x'"), and pycodestyle's E9 (syntax errors). Style codes (E501, W291,
// C0114) are findings, not errors.
func isLintErrorCode(t string) bool {
	if len(t) < 6 || t[0] != 'E' && t[0] != 'F' {
		return false
	}
	d := digits(t[1:])
	switch {
	case d == 4 && t[5] == ':': // pylint
		return true
	case d == 3 && (t[4] == ' ' || t[4] == ':'): // flake8, ruff
		return t[0] == 'F' || t[1] == '9'
	}
	return false
}

// hitText is a hit's text: l after "path:12:", "path-12-", "path:" or,
// under a heading, "12:".
func hitText(l, path string) string {
	t := l[len(path):]
	if len(t) > 0 && (t[0] == ':' || t[0] == '-') && path != "" {
		t = t[1:]
	}
	if d := digits(t); d > 0 && d < len(t) && (t[d] == ':' || t[d] == '-') {
		t = t[d+1:]
	}
	return t
}

// searchHitText is the bytes of a hit's text a compressed search shows
// (plan.hitCut); an error hit is shown whole. A hit is where the next read
// goes, and its text past the first 60 bytes rarely names what the agent
// opens next. Measured on the tuning set (issue 23), with the fuller
// location lists of this change: text cut at 25, 40, 60 bytes or not at
// all gave file:line at 4x 82.1, 81.9, 81.7, 80.7 % and next-step
// references 54.1, 54.2, 54.4, 54.4 %; 60 costs no reference.
const searchHitText = 60

// numberedHit parses the "12:text" / "12-text" lines of rg --heading.
func numberedHit(l string) int {
	d := digits(l)
	if d == 0 || d > 9 || d >= len(l) || (l[d] != ':' && l[d] != '-') {
		return 0
	}
	return lineNumber(l[:d])
}

// isSearchSummary matches the count lines search tools print.
func isSearchSummary(l string) bool {
	t := strings.TrimSpace(l)
	if d := digits(t); d > 0 && (t[d:] == " issues:" || t[d:] == " issue:") {
		return true // golangci-lint's count, before its per-linter lines
	}
	return strings.HasPrefix(t, "Found ") || strings.HasPrefix(t, "No matches") || strings.HasPrefix(t, "No files found") ||
		strings.HasPrefix(t, "End of matches") || strings.HasPrefix(t, "Binary file ") && strings.HasSuffix(t, " matches") ||
		looksLikeMarker(t)
}

// classifyListing groups directory listings by directory: the first entry of
// every directory is high, then entries round-robin across directories.
// Forms read: path lists (find, git ls-files, Glob), `tree`, `ls -l` and
// `ls -R` (with "dir:" headers), and indented lists ("- name" per level).
func classifyListing(p *plan) {
	p.groups = []string{}
	p.groupUnit = "entries"
	p.groupSplit = 2
	p.markCost = 64
	catOther := p.category("output")
	groupOf := make(map[string]int32)
	var perGroup []int
	var vendored []bool // by group: a directory of dependencies or build output
	lastDir, lastG := "", int32(-1)
	group := func(dir string) int32 {
		// Entries come directory by directory: most lines repeat the
		// directory of the line before, which needs no map lookup.
		if lastG >= 0 && dir == lastDir {
			return lastG
		}
		g, ok := groupOf[dir]
		if !ok {
			g = int32(len(p.groups))
			groupOf[dir] = g
			p.groups = append(p.groups, cleanLabel(dir, 160))
			perGroup = append(perGroup, 0)
			vendored = append(vendored, isVendoredDir(dir))
		}
		lastDir, lastG = dir, g
		return g
	}
	type level struct {
		depth int
		name  string
	}
	var stack []level // tree / indented lists: the open directories
	lsDir := ""       // ls -R: the current "dir:" header
	for i, l := range p.allLines() {
		t := strings.TrimSpace(l)
		var dir string
		switch {
		case t == "":
			stack = stack[:0]
			continue
		case isListingSummary(t):
			p.set(i, tierCritical, 0, catOther)
			continue
		case strings.HasSuffix(t, ":") && !strings.Contains(t, " ") && len(t) > 1:
			lsDir = strings.TrimSuffix(t, ":")
			p.set(i, tierHigh, 0, catOther)
			if p.headingOf == nil {
				p.headingOf = make([]int32, p.n)
				for k := range p.headingOf {
					p.headingOf[k] = -1
				}
			}
			p.headingOf[i] = group(lsDir)
			continue
		case isLsLine(l):
			dir = lsDir
			if dir == "" {
				dir = "./"
			}
		default:
			if depth, name := nestedEntry(l); depth >= 0 {
				for len(stack) > 0 && stack[len(stack)-1].depth >= depth {
					stack = stack[:len(stack)-1]
				}
				var b strings.Builder
				for _, s := range stack {
					b.WriteString(strings.TrimSuffix(s.name, "/"))
					b.WriteByte('/')
				}
				dir = b.String()
				if dir == "" {
					dir = "./"
				}
				stack = append(stack, level{depth, name})
			} else if lsDir != "" && !strings.ContainsAny(t, "/\\ \t") {
				// ls -R without -l: bare names under the last "dir:".
				dir = lsDir
			} else if isPathLine(l) {
				dir = "./"
				if k := lastSlash(t); k >= 0 {
					if k == len(t)-1 {
						// "src/a/" itself: list it under its parent.
						if k2 := lastSlash(t[:k]); k2 >= 0 {
							dir = t[:k2+1]
						}
					} else {
						dir = t[:k+1]
					}
				}
			} else {
				tier := tierFill
				if isKeyLineIn(l, scanLine(l)) {
					// Not an entry but a failure around them: "fatal: not
					// a git repository" after `git ls-files`, a walk's
					// error, "Exit code 1". Kept as a search keeps its
					// error lines, within the same cap.
					tier = tierCritical
				}
				p.set(i, tier, i, catOther)
				continue
			}
		}
		g := group(dir)
		p.setGroup(i, g)
		if strings.HasSuffix(t, " .") || strings.HasSuffix(t, " ..") {
			// ls -a's "." and "..": after every real entry.
			p.set(i, tierFill, 1<<20, 0)
			continue
		}
		k := perGroup[g]
		perGroup[g]++
		switch {
		case vendored[g]:
			// A search over a tree that holds its dependencies
			// (`**/mix.exs`, `tsconfig*`) finds theirs by the dozen; the
			// project's own, which the agent opens next, come first.
			// Theirs follow, the first of each directory first.
			p.set(i, tierFill, vendoredRank+k*len(perGroup)+int(g), 0)
		case k == 0:
			p.set(i, tierHigh, int(g), 0)
		case k < 4:
			p.set(i, tierContext, k*len(perGroup)+int(g), 0)
		default:
			p.set(i, tierFill, k, 0)
		}
	}
	p.headTail(2, 3)
}

// vendoredRank puts the entries of dependency and build directories after
// every other entry of a listing's fill tier.
const vendoredRank = 1 << 26

// isVendoredDir reports whether a listing's directory is, or lies inside,
// one that package managers and builds write (node_modules, a virtualenv's
// site-packages, mix's deps, vendor, target, dist, build, caches).
func isVendoredDir(dir string) bool {
	start := 0
	for i := 0; i <= len(dir); i++ {
		if i < len(dir) && dir[i] != '/' && dir[i] != '\\' {
			continue
		}
		// One segment: the names below are 4 to 16 bytes.
		if n := i - start; n >= 4 && n <= 16 && isVendoredName(dir[start:i]) {
			return true
		}
		start = i + 1
	}
	return false
}

func isVendoredName(seg string) bool {
	switch seg {
	case "node_modules", "bower_components", "deps", "vendor", "site-packages", "dist-packages", ".venv", "venv",
		"__pycache__", ".git", "target", "dist", "build", ".next", ".nuxt", ".tox", ".mypy_cache", ".pytest_cache",
		".gradle", "Pods", ".build", "_build":
		return true
	}
	return false
}

// lastSlash is strings.LastIndexAny(s, "/\\") without building the set
// on every call.
func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' || s[i] == '\\' {
			return i
		}
	}
	return -1
}

// nestedEntry reads a tree row or an indented "- name" row and returns its
// depth (the column where the name starts) and the name, or -1.
func nestedEntry(l string) (int, string) {
	if d := treeDepth(l); d >= 0 {
		return d, strings.TrimSpace(l[d:])
	}
	t := trimLeft(l)
	if strings.HasPrefix(t, "- ") {
		d := len(l) - len(t) + 2
		return d, strings.TrimSpace(t[2:])
	}
	return -1, ""
}

// isListingSummary matches tree's "3 directories, 12 files", Glob's
// "Found 12 files", truncation notes.
func isListingSummary(t string) bool {
	if d := digits(t); d > 0 {
		rest := t[d:]
		if strings.HasPrefix(rest, " director") || strings.HasPrefix(rest, " file") {
			return true
		}
	}
	return strings.HasPrefix(t, "Found ") || strings.HasPrefix(t, "total ") && digits(t[6:]) == len(t)-6 ||
		strings.HasPrefix(t, "There are more than ") || looksLikeMarker(t) || strings.HasPrefix(t, "(Results are truncated")
}

// criticalAreDiagnostics reports whether most of a search's critical hits
// are a compiler's diagnostics, "path:12:5: error: …", as GNU's standard
// for compiler messages words them and clang, swiftc, gcc, rustc's short
// form and go vet follow: the search is a build's report, not a grep of
// code.
func (p *plan) criticalAreDiagnostics() bool {
	crit, diag := 0, 0
	for i, l := range p.allLines() {
		if p.cls[i].tier != tierCritical || p.cls[i].rank >= contextRank {
			continue // context lines do not say what the search was of
		}
		crit++
		if isDiagnosticHit(l) || isReportedErrorHit(l) {
			diag++
		}
	}
	return diag > 0 && diag*2 >= crit
}

// isReportedErrorHit reports whether a hit is a line a program wrote: a
// hit in a saved run's output (a .log, .txt, .out, .output or .err file) or
// one whose text opens with a time stamp (a log's line, `grep -n ERROR
// app.log`). An error there is one the program reported, not code that
// names an error.
func isReportedErrorHit(l string) bool {
	path, _, _ := parseHit(l)
	if path == "" {
		return false
	}
	if ext, ok := fileExtension(path); ok && isSavedOutputExt(ext) {
		return true
	}
	t := strings.TrimLeft(hitText(l, path), " \t[")
	return len(t) >= 8 && isDigit(t[0]) && isDigit(t[1]) && hasTimestamp(t[:min(len(t), 32)])
}

// isDiagnosticHit matches "path:line[:col]: error: …", "…: error[E0308]:
// …", "…: fatal error: …" and TypeScript's "path:line:col - error TS2339:
// …": a location's digits right before the severity, and the severity's
// colon or code after it.
func isDiagnosticHit(l string) bool {
	if len(l) > 4096 {
		l = l[:4096]
	}
	for _, sev := range [...]string{": error", ": fatal error", " - error"} {
		i := strings.Index(l, sev)
		if i <= 0 || i+len(sev) >= len(l) {
			continue
		}
		if next := l[i+len(sev):]; next[0] != ':' && next[0] != '[' && !strings.HasPrefix(next, " TS") {
			continue
		}
		if d := digitsBefore(l[:i]); d > 0 && d < i && l[i-d-1] == ':' {
			return true
		}
	}
	return false
}
