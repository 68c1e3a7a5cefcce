package compress

import (
	"strings"
	"unsafe"
)

// scanStats counts, over the lines of an output, the signals content
// detection weighs.
type scanStats struct {
	nonEmpty    int
	testStrong  int // session banners, run summaries, go/cargo/jest markers
	testLines   int // passing/failing test lines
	traceback   int // traceback headers, goroutine headers, java/js stacks
	diagnostics int // error lines
	diffGit     int
	diffFiles   int // "--- a" followed by "+++ b"
	hunks       int
	diffBody    int
	hits        int // path:line: search hits
	plainHits   int // path:text: grep hits without line numbers
	pathLines   int
	lsLines     int
	treeLines   int
	numbered    int
	logLines    int
	goJSON      int
	// want is what this scan counted: the counts of the groups not in
	// it stay zero. The line and diff counts are always counted.
	want scanWant
	// decided: the scan stopped early, the output being a test log
	// whatever its other lines hold (testDecided), or, with stopAtHit,
	// holding a search hit; the counts are then those of the lines read.
	decided bool
	// mayStop lets the scan stop once decided (scan sets it; the tests
	// read whole outputs without it).
	mayStop bool
	// stopAtHit also stops it at the first hit: a search tool's output
	// needs one to be read as hits (Detect).
	stopAtHit bool
	// notes, when not nil, takes each line's scan and error verdicts for
	// the classifier (lineNotes); lineNo is the next line's number.
	notes  *lineNotes
	lineNo int
}

// scanWant names groups of scanStats' counts: Detect asks for the ones its
// decision reads, and a line is not put to the questions of the others.
type scanWant uint8

const (
	wantTest  scanWant = 1 << iota // testStrong, testLines
	wantTrace                      // traceback
	wantDiag                       // diagnostics
	wantHits                       // hits, plainHits
	wantList                       // lsLines, treeLines, pathLines
	wantLog                        // logLines
	wantAll   = wantTest | wantTrace | wantDiag | wantHits | wantList | wantLog
)

// scanLimit bounds how much of a large output detection reads: the start and
// the end, where banners and summaries are. 32 KiB decides every one of
// the 15,581 corpus, session and committed outputs as 64 KiB did (16 KiB
// read 3 test logs as file reads), at half the cost on large outputs:
// detection was a fifth of a new 1 MB request's rewrite (issue 23).
const scanLimit = 32 << 10

// scanAll counts the signals of text's lines (of its start and end when it
// is long) that want asks for; with mayStop it stops once testDecided, and
// with stopAtHit too at the first hit.
func scanAll(text string, want scanWant, mayStop, stopAtHit bool, notes *lineNotes) scanStats {
	s := scanStats{want: want, mayStop: mayStop, stopAtHit: stopAtHit, notes: notes}
	if len(text) > scanLimit {
		head := text[:scanLimit*3/4]
		if i := strings.LastIndexByte(head, '\n'); i > 0 {
			head = head[:i]
		}
		tail := text[len(text)-scanLimit/4:]
		if i := strings.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		}
		s.add(head)
		if !s.decided {
			s.notes = nil // the tail's line numbers are not counted
			s.add(tail)
		}
		return s
	}
	s.add(text)
	return s
}

func (s *scanStats) add(text string) {
	ansi := strings.IndexByte(text, 0x1b) >= 0 // else no line needs stripANSI
	prefix := prefixOf(text)
	if prefix != noPrefix {
		// Lines read without their prefixes are not the lines as they
		// stand: their notes would tell of other bytes.
		s.notes = nil
	}
	prevMinus := false
	oldLeft, newLeft := 0, 0 // lines still expected in the current diff hunk
	for len(text) > 0 {
		var l string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			l, text = text[:i], text[i+1:]
		} else {
			l, text = text, ""
		}
		s.lineNo++
		if oldLeft > 0 || newLeft > 0 {
			// Inside a hunk: only its body lines count as diff.
			c := byte(' ')
			if l != "" {
				c = l[0]
			}
			switch c {
			case '+':
				newLeft--
				s.diffBody++
				s.nonEmpty++
				continue
			case '-':
				oldLeft--
				s.diffBody++
				s.nonEmpty++
				continue
			case ' ':
				oldLeft--
				newLeft--
				s.diffBody++
				s.nonEmpty++
				continue
			case '\\':
				s.diffBody++
				s.nonEmpty++
				continue
			}
			oldLeft, newLeft = 0, 0
		}
		if isBlank(l) {
			continue
		}
		s.nonEmpty++
		if prevMinus && strings.HasPrefix(l, "+++ ") {
			s.diffFiles++
			s.diffBody += 2
		}
		prevMinus = strings.HasPrefix(l, "--- ")
		if strings.HasPrefix(l, "@@ -") || strings.HasPrefix(l, "@@@ ") {
			s.hunks++
			s.diffBody++
			oldLeft, newLeft = hunkCounts(l)
			continue
		}
		if isDiffHeader(l) && !strings.HasPrefix(l, "--- ") && !strings.HasPrefix(l, "+++ ") {
			s.diffBody++
		}
		if prefix != noPrefix {
			lansi := ansi
			if ansi && prefix.kind() == taskPrefix {
				// turbo colours the prefix: it is read without the codes
				l, lansi = stripANSI(l), false
			}
			s.line(l[prefix.cut(l):], lansi)
		} else {
			s.line(l, ansi)
		}
		if s.mayStop && (s.testDecided() || s.stopAtHit && s.hits > 0) {
			s.decided = true
			return
		}
	}
}

// testDecided reports whether the lines read so far make the output a test
// log whatever the rest holds, so a scan that counts test lines can stop:
// isTest's first two tests only ever become true as lines are added, and
// Detect answers KindTestLog whenever isTest holds (kind puts it first, and
// every earlier decision that counts test lines either returns KindTestLog
// on it or falls through to kind). A pytest run is decided by its session
// banner and its first result line, instead of 32 KiB of lines.
func (s *scanStats) testDecided() bool {
	return s.want&wantTest != 0 && (s.testStrong >= 2 || s.testStrong >= 1 && s.testLines >= 1)
}

func (s *scanStats) line(l string, ansi bool) {
	raw := l // noted only as it is in the output
	if ansi {
		l = stripANSI(l)
	}
	if st := numberedLine(l); st != numNone {
		s.numbered++
		l = stripNumber(l, st)
		if isBlank(l) {
			return
		}
	}
	if l != "" {
		switch l[0] {
		case '{':
			if strings.HasPrefix(l, "{\"") && strings.Contains(l, "\"Action\":\"") {
				s.goJSON++
				return
			}
		case 'd':
			if strings.HasPrefix(l, "diff -") { // "diff --git a/x b/x" too
				s.diffGit++
				return
			}
		}
	}
	want := s.want
	if want == 0 {
		return
	}
	t := trimLeft(l)
	sc := scanLine(l)
	m := sc.bits
	var f noteFlags
	if want&wantTest != 0 {
		f = s.testLine(l, t, sc)
	}
	if want&wantTrace != 0 && (strings.HasPrefix(t, "Traceback (most recent call last)") || strings.HasPrefix(l, "goroutine ") && strings.HasSuffix(l, "]:") ||
		strings.HasPrefix(l, "Exception in thread ") || strings.HasPrefix(l, "panic: ") || strings.HasPrefix(t, "at ") && strings.HasSuffix(l, ")")) {
		s.traceback++
	}
	if want&wantDiag != 0 {
		f |= errAsked
		if isErrorLineIn(l, m) {
			f |= errLine
			s.diagnostics++
		}
	}
	if want&wantHits != 0 {
		// A hit has digits after its path, a plain hit a colon.
		if m.has('0') && hitPath(l) != "" {
			s.hits++
		} else if m.has(':') && plainHitPath(l) != "" {
			s.plainHits++
		}
	}
	if want&wantList != 0 {
		if isLsLine(l) {
			s.lsLines++
		} else if sc.mayBeTreeRow() && treeDepth(l) >= 0 {
			s.treeLines++
		} else if sc.mayBePathLine() && isPathLine(l) {
			s.pathLines++
		}
	}
	info := m.has('I') && m.has('N') && m.has('F') && m.has('O')
	if want&wantLog != 0 {
		logLine := m.has('0') && hasTimestamp(l)
		if !logLine {
			f |= logAsked
			if isLogErrorIn(l, m) {
				f |= logErrLine
				logLine = true
			}
		}
		if logLine || info && containsWord(l, "INFO ") ||
			m.has('D') && m.has('B') && m.has('G') && containsWord(l, "DEBUG ") || info && strings.Contains(l, "[INFO]") {
			s.logLines++
		}
	}
	if s.notes != nil && len(l) == len(raw) && unsafe.StringData(l) == unsafe.StringData(raw) {
		s.notes.note(s.lineNo-1, m, f)
	}
}

// testLine counts the test signals of a line (t is l without its
// indentation), and returns the verdicts it asked (lineNotes).
func (s *scanStats) testLine(l, t string, sc lineScan) noteFlags {
	f := sumAsked | failAsked
	summary := sc.mayBeSummary() && isSummaryLine(l)
	if summary {
		f |= sumLine
	}
	// Summaries and the banners that open a run: pytest's session, cargo's
	// "running 12 tests", Deno's "running 2 tests from ./a_test.ts",
	// ExUnit's "Running ExUnit with seed: 1, max_cases: 8".
	if summary || sc.startsWith('=') && ruleTitle(l, '=') == "test session starts" ||
		strings.HasPrefix(t, "running ") && (strings.HasSuffix(t, " tests") || strings.Contains(t, " tests from ") || strings.Contains(t, " test from ")) ||
		sc.startsWith('R') && strings.HasPrefix(t, "Running ExUnit with seed: ") {
		s.testStrong++
	}
	if sc.mayBeFailingTest() && isFailingTest(l) {
		f |= failLine
		s.testLines++
	} else if f |= passAsked; sc.mayBePassingTest(l) && isPassingTest(l) {
		f |= passLine
		s.testLines++
	}
	if sc.startsWith('<') {
		switch xmlTestClass(l) {
		case xmlFail, xmlPass, xmlCase:
			s.testLines++
		case xmlSummary:
			s.testStrong++
		}
	}
	if t != "" && t[0] == '<' && (strings.HasPrefix(t, "<testsuites") || strings.HasPrefix(t, "<TestRun ") || strings.HasPrefix(t, "<test-run ")) {
		s.testStrong++
	}
	return f
}

func (s scanStats) isTest() bool {
	// The two middle tests are testDecided's: keep them together.
	return s.goJSON*2 > s.nonEmpty || s.testStrong >= 2 || s.testStrong >= 1 && s.testLines >= 1 || s.testLines >= 5 && s.testLines*10 >= s.nonEmpty
}

// listing reports whether most lines are paths, ls rows or tree rows.
func (s scanStats) listing() bool {
	return s.nonEmpty > 0 && (s.lsLines+s.treeLines+s.pathLines)*10 >= s.nonEmpty*7
}

func (s scanStats) isDiff() bool {
	if s.diffGit == 0 && s.hunks == 0 {
		return false
	}
	return s.diffBody*10 >= s.nonEmpty*6
}

func (s scanStats) kind() Kind {
	n := s.nonEmpty
	switch {
	case n == 0:
		return KindText
	case s.goJSON*2 > n:
		return KindTestLog
	case s.isTest():
		// Before diffs: test harnesses often print the patch under test.
		return KindTestLog
	case s.isDiff():
		return KindDiff
	case s.traceback > 0:
		return KindTraceback
	case s.numbered*10 >= n*7:
		return KindFileRead
	case s.hits*2 >= n:
		return KindSearch
	case s.listing():
		return KindDirListing
	case s.logLines*10 >= n*3:
		return KindLog
	}
	return KindText
}

// outputKind is kind for the lines of a command's saved output read back
// with a read tool or `cat -n`: the numbers are the read's, not the
// output's, so numbered lines do not make it a file read.
func (s scanStats) outputKind() Kind {
	s.numbered = 0
	return s.kind()
}

// numbering is how a file read numbers its lines.
type numbering uint8

const (
	numNone  numbering = iota
	numArrow           // Claude Code Read: "    12→code"
	numTab             // cat -n: "    12\tcode"
	numColon           // SWE-agent open: "12:code"
)

// numberedLine says which numbering a line uses.
func numberedLine(l string) numbering {
	n, _ := numberAndCode(l, numNone)
	return n
}

// lineNumber parses the number of a numbered line, or returns -1.
func lineNumber(l string) int {
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	d := digits(l[i:])
	if d == 0 || d > 9 {
		return -1
	}
	n := 0
	for _, c := range []byte(l[i : i+d]) {
		n = n*10 + int(c-'0')
	}
	return n
}

// isLsLine matches `ls -l` rows ("drwxr-xr-x 2 ...") and "total 48".
func isLsLine(l string) bool {
	if strings.HasPrefix(l, "total ") && digits(l[6:]) == len(l)-6 {
		return true
	}
	if len(l) < 11 {
		return false
	}
	switch l[0] {
	case '-', 'd', 'l', 'c', 'b', 'p', 's':
	default:
		return false
	}
	for i := 1; i < 10; i++ {
		switch l[i] {
		case 'r', 'w', 'x', '-', 's', 'S', 't', 'T':
		default:
			return false
		}
	}
	return true
}

// treeDepth returns where the name starts in a `tree` row ("│   ├── a.go"),
// or -1 when l is not one.
func treeDepth(l string) int {
	// Most lines hold none of the marks' first bytes; three byte searches
	// say so without a search per mark.
	if strings.IndexByte(l, "├"[0]) < 0 && strings.IndexByte(l, '|') < 0 && strings.IndexByte(l, '`') < 0 {
		return -1
	}
	for _, mark := range [...]string{"├── ", "└── ", "|-- ", "`-- "} {
		if i := strings.Index(l, mark); i >= 0 {
			return i + len(mark)
		}
	}
	return -1
}

// isPathLine matches a line that is one path (find, git ls-files, Glob).
func isPathLine(l string) bool {
	t := strings.TrimSpace(l)
	if t == "" || len(t) > 512 {
		return false
	}
	// One pass for both byte sets, eight bytes between tests: one table
	// load and an OR a byte.
	var m uint8
	i := 0
	for ; i+8 <= len(t); i += 8 {
		m |= pathBytes[t[i]] | pathBytes[t[i+1]] | pathBytes[t[i+2]] | pathBytes[t[i+3]] |
			pathBytes[t[i+4]] | pathBytes[t[i+5]] | pathBytes[t[i+6]] | pathBytes[t[i+7]]
		if m&pathNot != 0 {
			return false
		}
	}
	for ; i < len(t); i++ {
		m |= pathBytes[t[i]]
	}
	if m&pathNot != 0 || strings.Contains(t, "://") {
		return false
	}
	return m&pathSlash != 0 || hasSourceExt(t) || strings.HasPrefix(t, ".")
}

// pathBytes marks the bytes that make a line more than a path (pathNot)
// and the path separators (pathSlash).
var pathBytes = func() (t [256]uint8) {
	for _, c := range []byte(" \t\"'<>{}[]()=,;") {
		t[c] = pathNot
	}
	t['/'], t['\\'] = pathSlash, pathSlash
	return t
}()

const (
	pathNot uint8 = 1 << iota
	pathSlash
)

// hitPath returns the path of a grep/rg hit line ("path:12:text",
// "path-12-text" for context lines, "path:text" is not enough), or "".
func hitPath(l string) string {
	p, _, _ := parseHit(l)
	return p
}

// plainHitPath returns the path of a grep hit printed without a line
// number ("src/app.py:    return total"), or "". Only a search command's
// output is read this way: many other lines have a colon after a word.
// The path must look like one: no spaces, a slash (or a backslash), and an
// extension.
func plainHitPath(l string) string {
	c := strings.IndexByte(l, ':')
	if c == 1 && len(l) > 2 && (l[2] == '/' || l[2] == '\\') {
		// A Windows drive, "D:/src/app.py:    return total".
		if k := strings.IndexByte(l[2:], ':'); k >= 0 {
			c = k + 2
		}
	}
	if c <= 0 || c > 512 || c+1 >= len(l) {
		return ""
	}
	path := l[:c]
	// pathBytes holds both sets strings.ContainsAny was asked for, which
	// built each set again on every call (issue 23: 6 % of detecting
	// listings, tracebacks and text).
	if m := pathByteSet(path); m&pathNot != 0 || m&pathSlash == 0 || !hasSourceExt(path) {
		return ""
	}
	return path
}

// pathByteSet is the union of pathBytes over s's bytes.
func pathByteSet(s string) uint8 {
	var m uint8
	for i := 0; i < len(s); i++ {
		m |= pathBytes[s[i]]
	}
	return m
}

// parseHit splits "path:12:text" (a match) or "path-12-text" (grep -C
// context). The path must look like one: no spaces, a slash or an extension.
func parseHit(l string) (path string, line int, match bool) {
	if len(l) > 4096 {
		l = l[:4096]
	}
	colonHit := -2 // where a "path:12:" separator is, -1 for none; -2 until looked for
	for i := 1; i < len(l); i++ {
		c := l[i]
		if c == ' ' || c == '\t' {
			return "", 0, false
		}
		if c != ':' && c != '-' {
			continue
		}
		d := digits(l[i+1:])
		if c == '-' && d > 0 {
			// A file name may hold "-12-" (dates, versions): the match
			// form's colon later in the same path is the separator.
			if colonHit == -2 {
				colonHit = matchColon(l[i:])
				if colonHit >= 0 {
					colonHit += i
				}
			}
			if colonHit > i {
				continue
			}
		}
		if d == 0 || d > 9 || i+1+d >= len(l) || l[i+1+d] != c {
			if c == ':' && !(i == 1 && i+1 < len(l) && (l[i+1] == '\\' || l[i+1] == '/')) {
				// A ':' that is not a Windows drive ends the path.
				return "", 0, false
			}
			continue
		}
		path = l[:i]
		if lastSlash(path) < 0 && !hasSourceExt(path) {
			if c == '-' {
				continue
			}
			return "", 0, false
		}
		n := 0
		for _, ch := range []byte(l[i+1 : i+1+d]) {
			n = n*10 + int(ch-'0')
		}
		return path, n, c == ':'
	}
	return "", 0, false
}

// matchColon returns the index in s of the first ':' followed by one to
// nine digits and another ':', before any blank, or -1.
func matchColon(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t':
			return -1
		case ':':
			if d := digits(s[i+1:]); d > 0 && d <= 9 && i+1+d < len(s) && s[i+1+d] == ':' {
				return i
			}
		}
	}
	return -1
}

// ciLogPrefix is the length of the prefix a CI job's log puts before each
// line, or 0: GitHub Actions' timestamp, "2026-07-14T14:03:52.0047503Z ",
// and, as `gh run view --log` and `--log-failed` print it, the job's and
// the step's names before it, "test (ubuntu-latest)\tUnit Tests\t…", or a
// Jenkins pipeline's bracketed timestamp, "[2026-07-14T14:03:52.004Z] ". What
// follows is the step's own output (a test run, a compiler's errors),
// which the classifiers read without it.
func ciLogPrefix(l string) int {
	if l != "" && l[0] == '[' {
		// A Jenkins pipeline's timestamps(): "[2026-07-14T14:03:52.004Z] ".
		n := isoTimestampZ(l[1:])
		if n == 0 || 1+n >= len(l) || l[1+n] != ']' {
			return 0
		}
		if 2+n == len(l) {
			return len(l)
		}
		if l[2+n] != ' ' {
			return 0
		}
		return n + 3
	}
	at := 0
	if l != "" && !isDigit(l[0]) {
		t1 := strings.IndexByte(l, '\t')
		if t1 <= 0 || t1 > 256 {
			return 0
		}
		t2 := strings.IndexByte(l[t1+1:], '\t')
		if t2 <= 0 || t2 > 256 {
			return 0
		}
		at = t1 + t2 + 2
	}
	n := isoTimestampZ(l[at:])
	switch {
	case n == 0:
		return 0
	case at+n == len(l):
		return len(l)
	case l[at+n] == ' ':
		return at + n + 1
	}
	return 0
}

// isoTimestampZ is the length of the UTC timestamp s starts with,
// "2026-07-14T14:03:52Z" or with a fraction, "…52.0047503Z", or 0.
func isoTimestampZ(s string) int {
	i := isoDateTime(s)
	if i > 0 && i < len(s) && s[i] == 'Z' {
		return i + 1
	}
	return 0
}

// isoDateTime is the length of the ISO 8601 date and time s starts with,
// "2026-07-14T14:03:52" and its fraction if any, without a zone; or 0.
func isoDateTime(s string) int {
	const form = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(form) {
		return 0
	}
	for i := 0; i < len(form); i++ {
		if form[i] == 'd' && !isDigit(s[i]) || form[i] != 'd' && s[i] != form[i] {
			return 0
		}
	}
	return len(form) + fractionLen(s[len(form):])
}

// fractionLen is the length of the fraction of a second s starts with
// (".0047503"), or 0.
func fractionLen(s string) int {
	if s != "" && s[0] == '.' {
		return 1 + digits(s[1:])
	}
	return 0
}
