package compress

import (
	"strings"
	"unicode"

	"github.com/tidwall/gjson"
)

// failureMarked reports whether a line isFailingTest accepts says it
// failed in words a runner prints: FAIL or ERROR, or jest's "●" header
// with its "›" path. Outside a test log a "1) step", a "● note" or a
// checklist's "✗ Skipped: …" is prose.
func failureMarked(l string) bool { return failureMarkedIn(l, allBits) }

// failureMarkedIn is failureMarked with the line's bytes (bitsOf) gating
// each search: most lines of a traceback pass isFailingTest's gate, few
// hold the letters of FAIL or ERROR or a character past ASCII.
//
// The duration is read first: it looks at the line's end only, while
// ContainsAny with a non-ASCII set decodes every rune of the line.
func failureMarkedIn(l string, m lineBits) bool {
	return m.has('F') && m.has('A') && m.has('I') && m.has('L') && strings.Contains(l, "FAIL") ||
		m.has('E') && m.has('R') && m.has('O') && strings.Contains(l, "ERROR") ||
		m&bitNonASCII != 0 && (strings.Contains(l, "●") && strings.Contains(l, "›") ||
			endsWithDuration(trimRight(l)) && strings.ContainsAny(l, "✕✗×"))
}

// endsWithDuration reports whether a line ends with a test's run time as
// jest and vitest print it: "(12 ms)", "(3.1 s)", "12ms", and vitest past
// a second "1.20s" (always with its decimals: a bare "12s" is read as
// nothing, so "× 12s" of another tool is not taken for one).
func endsWithDuration(t string) bool {
	t = strings.TrimSuffix(t, ")")
	for _, unit := range [...]string{" ms", "ms", " s", "s"} {
		if r, ok := strings.CutSuffix(t, unit); ok {
			d := digitsBefore(r)
			decimals := d > 0 && d < len(r) && r[len(r)-d-1] == '.'
			if decimals {
				r = r[:len(r)-d-1]
				d = digitsBefore(r)
			}
			return d > 0 && (unit != "s" || decimals)
		}
	}
	return false
}

// maxTextOutcomes bounds the run summaries and failing tests kept at any
// price in an output that is not a test log.
const maxTextOutcomes = 8

// classifyDiagnostic handles the kinds read for what went wrong: test logs,
// tracebacks, logs and plain text. Critical: run summaries, failing tests,
// the first occurrence of each error line. High: section headers, source
// locations, innermost and outermost traceback frames, warnings. Then the
// output of each failure, context around critical lines, the head and the
// tail; passing tests and shell traces last.
func classifyDiagnostic(p *plan, kind Kind) {
	p.cleanView()
	// Summaries and exit notices (rank 0), failing tests (rank 1) and the
	// first and last error lines that name an exception type (rank 2, see
	// rankErrorsFromBothEnds) are kept at any ratio: an agent cannot ask
	// for a failure it was never told of.
	p.mustRank = 2
	if kind == KindTestLog && p.isGoTestJSON() {
		classifyGoTestJSON(p)
		return
	}
	test := kind == KindTestLog
	logKind := kind == KindLog || kind == KindText
	catPass := p.category("passing tests")
	catTrace := p.category("shell trace")
	catFrames := p.category("traceback frames")
	p.frameCat = int(catFrames)
	catRepeat := p.category("repeated errors")
	catPassXML := p.category("passing test cases")
	const catOut = 0

	// The seen-sets hold hashes: eight bytes per distinct line.
	seenErr := newSeenSet(len(p.body))
	seenLoc := newSeenSet(len(p.body))
	seenMust := newSeenSet(len(p.body))
	seenRaw := newSeenSet(len(p.body))
	p.scanned = true
	lastCase := -1    // the last opening <testcase> of an XML report
	inPasses := false // inside pytest's "PASSES" section (output of passing tests, -rA)
	commitLine := -2  // the last git commit summary line
	textOutcomes := 0
	// opener is the last line that says the next one names what failed:
	// minitest's "  1) Failure:" (the test, rank 1), vstest's "Error
	// Message:", Gradle's "* What went wrong:" and a Rust panic's or a
	// Flutter exception's first line (opensMessage: the error, rank 2).
	opener := struct {
		at   int
		rank int
	}{at: -2}
	// why is the failure report a build tool prints under a heading, read
	// up to a blank line: Gradle's "* What went wrong:" and its "> "
	// causes, xcodebuild's "Testing failed:" and its indented reasons
	// ("\tTest target AppUITests encountered an error (Early unexpected
	// exit, …)").
	why := whyNone
	// A status table (kubectl get pods, gh pr checks, docker ps): its
	// failed rows are read, in the outputs that open as a table.
	tabular := logKind && looksTabular(p.allViews())
	// outcome keeps line i at any price with the rank given, while an
	// output that is not a test log has had fewer than maxTextOutcomes.
	outcome := func(i int, l string, rank int) {
		if textOutcomes >= maxTextOutcomes {
			p.set(i, tierHigh, 0, catOut)
			return
		}
		textOutcomes++
		p.set(i, tierCritical, rank, catOut)
		if seenMust.add(hash64(l)) {
			p.set(i, tierFill, 0, catRepeat)
		}
	}
	for i, l := range p.allViews() {
		nf, nbits := p.notes.noteOf(p, i, l)
		var s lineScan
		if nf != 0 {
			s = scanWith(l, nbits)
		} else {
			s = scanLine(l)
		}
		feat := s.features(l)
		var loc uint64
		hasLoc := false
		if feat&featLoc != 0 {
			if loc, hasLoc = locationHashIn(l, s.bits); !hasLoc {
				feat &^= featLoc // exact from here on: the gate said maybe
			}
		}
		p.cls[i].feat = feat
		if test && (s.startsWith('=') || s.startsWith('<')) {
			if title := ruleTitle(l, '='); title != "" {
				inPasses = title == "PASSES"
			}
			switch xmlTestClass(l) {
			case xmlFail:
				p.set(i, tierCritical, 1, catOut)
				if lastCase >= 0 {
					p.raise(lastCase, tierCritical, 1)
					lastCase = -1
				}
				continue
			case xmlSummary:
				p.set(i, tierCritical, 0, catOut)
				continue
			case xmlPass:
				p.set(i, tierNoise, 0, catPassXML)
				continue
			case xmlCase:
				lastCase = i
				p.set(i, tierFill, 0, catOut)
				continue
			}
		}
		if why != whyNone && (isBlank(l) || why == whyXcode && l[0] != '\t' && l[0] != ' ') {
			why = whyNone
		}
		switch {
		case l == "":
			continue
		case s.startsWith('[') && looksLikeMarker(l):
			p.set(i, tierCritical, 0, catOut)
		case s.startsWith('[') && isCommitSummary(l):
			// What a git commit made, and the count of what it changed
			// on the next line: the command's outcome, kept at any ratio.
			p.set(i, tierCritical, 0, catOut)
			commitLine = i
		case i == commitLine+1 && isChangeCount(l):
			p.set(i, tierCritical, 0, catOut)
		case test && (nf.said(sumLine) || nf.unasked(sumAsked) && s.mayBeSummary() && isSummaryLine(l)):
			p.set(i, tierCritical, 0, catOut)
			if seenMust.add(hash64(l)) {
				p.set(i, tierFill, 0, catRepeat) // said already: not kept at any price
			}
		case i == opener.at+1:
			// The line an opener announced, whatever its form: minitest's
			// "CartTest#test_total [test/cart_test.rb:12]:", vstest's
			// "Assert.Equal() Failure: Values differ", Rust's "index out
			// of bounds: …".
			if opener.rank == 1 {
				p.set(i, tierCritical, 1, catOut)
			} else if seenErr.add(collapsedHash(l)) {
				p.set(i, tierFill, 0, catRepeat)
			} else {
				p.set(i, tierCritical, 2, catOut)
			}
		case test && (nf.said(failLine) || nf.unasked(failAsked) && s.mayBeFailingTest() && isFailingTest(l)):
			p.set(i, tierCritical, 1, catOut)
			if seenMust.add(hash64(l)) {
				p.set(i, tierFill, 0, catRepeat)
			}
			if t := trimRight(l); strings.HasSuffix(t, ") Failure:") || strings.HasSuffix(t, ") Error:") {
				opener.at, opener.rank = i, 1
			}
		case test && s.startsWith('E') && strings.TrimSpace(l) == "Error Message:":
			p.set(i, tierHigh, 0, catOut)
			opener.at, opener.rank = i, 2
		case s.startsWith('*') && strings.TrimSpace(l) == "* What went wrong:":
			// Gradle's failure report: the next line says what failed
			// ("Execution failed for task ':app:compileDebugKotlin'."),
			// and the "> " lines under it why, up to a blank line.
			p.set(i, tierHigh, 0, catOut)
			opener.at, opener.rank = i, 2
			why = whyGradle
		case s.startsWith('T') && trimRight(l) == "Testing failed:":
			p.set(i, tierCritical, 0, catOut)
			why = whyXcode
		case why == whyGradle && strings.HasPrefix(trimLeft(l), "> ") || why == whyXcode:
			if seenErr.add(collapsedHash(l)) {
				p.set(i, tierFill, 0, catRepeat)
			} else {
				p.set(i, tierCritical, 2, catOut)
			}
		case s.mayBeChainNotice() && isChainNotice(l):
			p.set(i, tierCritical, 2, catOut)
		case !test && s.mayBeExitNotice() && isExitNotice(strings.TrimSpace(l)):
			p.set(i, tierCritical, 0, catOut)
		case !test && (nf.said(sumLine) || nf.unasked(sumAsked) && s.mayBeSummary() && isSummaryLine(l)):
			// A run's summary in an output not read as a test log (a
			// script or make target that runs the tests among other
			// steps, a test command behind `cd x &&`) says as much as it
			// does in one. Past a few, lines of that shape are something
			// else: high, not kept at any price.
			outcome(i, l, 0)
		case !test && failureMarkedIn(l, s.bits) && (nf.said(failLine) || nf.unasked(failAsked) && s.mayBeFailingTest() && isFailingTest(l)):
			// So does a failing test there, in the forms that say so
			// in words ("--- FAIL: TestX", "x ... FAILED", jest's
			// "● Cart › sums"), not a list's "1) step" or "✗ skipped".
			outcome(i, l, 1)
		case nf.said(errLine) || nf.unasked(errAsked) && isErrorOrLogError(l, s.bits, logKind) || logKind && nf&errAsked != 0 && logErrorNoted(l, s.bits, nf):
			if opensMessage(l) {
				opener.at, opener.rank = i, 2
			}
			if seenErr.add(collapsedHash(l)) {
				if strings.HasPrefix(strings.TrimLeftFunc(l, unicode.IsSpace), "Traceback (most recent call last)") {
					// Each traceback's header frames its block.
					p.set(i, tierHigh, 0, catOut)
				} else if raw := p.line(i); len(raw) != len(l) && !seenRaw.add(collapsedHash(raw)) {
					// The same error where what the view drops differs:
					// another CI step's or job's prefix ("build\tRun
					// clippy\t…" after "build\tBuild\t…"), another line
					// of a numbered read. It says where else it
					// happened: kept while the aim has room, after the
					// lines around critical ones, never past the aim. On
					// the tuning set, error lines at 4x 99.9 -> 100 %,
					// all critical facts 99.5 -> 99.6 % (10x: 97.5 ->
					// 97.6 %); next-step refs, file:line and the achieved
					// ratios unchanged at 4x, 10x and the defaults, and
					// the same figures as a high line (issue 23).
					p.set(i, tierContext, distinctRepeatRank, catRepeat)
				} else {
					p.set(i, tierFill, 0, catRepeat)
				}
			} else {
				p.set(i, tierCritical, 2, catOut)
				if raw := p.line(i); len(raw) != len(l) {
					seenRaw.add(collapsedHash(raw)) // a copy the same in every byte folds
				}
			}
		case tabular && isStatusFailureRow(l, s.bits):
			// A status table (CI checks, pods, jobs): the failed rows are
			// what the agent asked it for.
			if seenErr.add(collapsedHash(l)) {
				p.set(i, tierFill, 0, catRepeat)
			} else {
				p.set(i, tierCritical, 2, catOut)
			}
		case test && (nf.said(passLine) || nf.unasked(passAsked) && s.mayBePassingTest(l) && isPassingTest(l)):
			if strings.HasPrefix(l, "SKIPPED") && location(l) != "" {
				// "SKIPPED [1] tests/x.py:12: needs pint": why, and where.
				p.set(i, tierFill, 1, catPass)
			} else {
				p.set(i, tierNoise, 0, catPass)
			}
		case test && isShellTrace(l):
			p.set(i, tierNoise, 0, catTrace)
		case inPasses:
			p.set(i, tierNoise, 0, catPass)
		case test && (p.cls[i].feat&featSectionStart != 0 || strings.HasSuffix(trimRight(l), "[FAIL]")):
			p.set(i, tierHigh, 0, catOut)
		case test && isProgressLine(l):
			p.set(i, tierNoise, 0, catPass)
		default:
			if (s.startsWith(',') || s.startsWith(0xE2)) && isFrameOpener(s.t) {
				// A graphical report's code frame: its headline says
				// what went wrong (codeframes.go).
				switch h, sev := frameHeadline(p, i); sev {
				case frameError:
					if p.cls[h].tier != tierCritical {
						if seenErr.add(collapsedHash(p.viewLine(h))) {
							p.set(h, tierFill, 0, catRepeat)
						} else {
							p.set(h, tierCritical, 2, catOut)
						}
					}
				case frameWarning:
					p.raise(h, tierHigh, 1)
				}
				if src, label := framePointed(p, i, s.t); src >= 0 {
					p.raise(src, tierContext, 1)
					p.raise(label, tierContext, 1)
				}
			}
			if hasLoc {
				if !seenLoc.add(loc) {
					p.set(i, tierHigh, 0, catOut)
				}
			} else if logKind && isWarnLineIn(l, s.bits) {
				p.set(i, tierHigh, 1, catOut)
			}
		}
	}
	if test {
		readNumberedTitles(p, catOut)
		demoteListedFailures(p)
	}
	rankErrorsFromBothEnds(p)
	rankFrames(p, catFrames)
	if test {
		rankSections(p)
		rankGoTests(p, catPass)
	}
	p.smoothNoise()
	p.foldRepeats()
	p.addContext(tierCritical)
	p.headTail(5, 10)
	if kind == KindText {
		nameRanks(p)
	}
	p.fillRanks()
}

// distinctRepeatRank ranks a repeated error whose raw line differs from
// every one before it after the other context lines of a diagnostic
// output.
const distinctRepeatRank = 1 << 16

// The failure reports classifyDiagnostic reads under their heading.
const (
	whyNone   = iota
	whyGradle // "* What went wrong:", then "> " lines
	whyXcode  // "Testing failed:", then indented lines
)

// rankErrorsFromBothEnds orders the error lines (critical, rank 2 and
// beyond): those naming an exception type first, each group by distance
// from the nearer end of the list of error lines: the
// first error of a build is usually the cause, the last exception of a
// chained Python traceback is the one that was raised, and a tight budget
// should keep both before the ones in between.
//
// Kept at any ratio with the first and the last (rank 2): the first line
// naming each exception type (a second failure of another kind is not the
// first one told again), and the first pytest "E" line of each failure
// report (what that test asserted). A run of many failures of one kind
// costs one line; a run of many kinds is what an agent must be told of.
//
// It reads the features classifyDiagnostic's scan set.
func rankErrorsFromBothEnds(p *plan) {
	var errs []int32
	for i, c := range p.cls {
		if c.tier == tierCritical && c.rank >= 2 {
			errs = append(errs, int32(i))
		}
	}
	m := len(errs)
	types := make(map[uint64]bool)
	sec, lastESec := 0, -1
	next := 0 // the next line to look for a report header at
	for k, i32 := range errs {
		i := int(i32)
		for ; next < i; next++ {
			if p.cls[next].feat&featReportHeader != 0 {
				sec++
			}
		}
		r := 2 + min(k, m-1-k)
		l := p.viewLine(i)
		isE := strings.HasPrefix(l, "E ") || strings.HasPrefix(l, "E\t")
		x := exceptionName(l)
		if x == "" && isPanicLine(l) {
			x = "panic:" // a Go panic is the crash's kind, as an exception type is
		}
		switch {
		case x != "" && !types[hash64(x)]:
			types[hash64(x)] = true
			r = 2
		case isE && sec > 0 && lastESec != sec:
			r = 2
		case !isE && x == "" && !hasExceptionToken(trimLeft(l), false) && !strings.Contains(l, "Traceback (most recent call last)"):
			// Lines that name an exception or error type first: they
			// say what failed; the rest say more about it.
			r += m
		}
		if isE {
			lastESec = sec
		}
		p.cls[i].rank = int32(min(r, 1<<30))
	}
}

// isPanicLine matches the line a Go program's crash opens with, "panic:
// runtime error: …" (with " [recovered]" in a test) or "fatal error: …",
// and Rust's "thread 'main' panicked at src/x.rs:3:5:".
func isPanicLine(l string) bool {
	t := trimLeft(l)
	return strings.HasPrefix(t, "panic: ") || strings.HasPrefix(t, "fatal error: ") ||
		strings.HasPrefix(t, "thread '") && strings.Contains(t, "' panicked at ")
}

// isProgressLine matches pytest's dot lines ("tests/x.py ....s.. [ 40%]");
// lines with F or E in the dots are failures and stay.
func isProgressLine(l string) bool {
	t := trimRight(l)
	if !strings.HasSuffix(t, "%]") {
		return false
	}
	i := strings.LastIndexByte(t, '[')
	if i < 0 {
		return false
	}
	body := strings.TrimSpace(t[:i])
	if sp := strings.LastIndexByte(body, ' '); sp >= 0 {
		body = body[sp+1:]
	}
	return !strings.ContainsAny(body, "FE")
}

// rankSections lifts the output of each failure report (from its header to
// the next header or banner) to tierContext, ranked by distance from the
// nearer end of its section, so the budget goes to the start and end of
// every report before the middle of any; earlier reports first on ties.
// It reads the features classifyDiagnostic's scan set.
func rankSections(p *plan) {
	n := p.n
	sec := 0
	for i := 0; i < n; i++ {
		if p.cls[i].feat&featSectionStart == 0 || p.cls[i].tier == tierNoise {
			continue
		}
		j := i + 1
		for j < n && p.cls[j].feat&(featSectionStart|featSectionEnd) == 0 && !(p.cls[j].tier == tierCritical && p.cls[j].rank == 0) {
			j++
		}
		for k := i + 1; k < j; k++ {
			if p.cls[k].tier >= tierContext && p.cls[k].tier != tierNever {
				d := min(k-i, j-1-k)
				p.cls[k].tier = tierContext
				p.cls[k].rank = int32(min(d+2*sec, 1<<30))
			}
		}
		sec++
		i = j - 1
	}
}

// rankFrames finds traceback frame blocks and ranks their frames by distance
// from the innermost one, the outermost frame right after it: Python prints
// the innermost frame last, Java, JavaScript and Go first.
func rankFrames(p *plan, cat uint8) {
	n := p.n
	// One frame list and one block scratch for every block: a long output
	// can hold thousands of short tracebacks.
	var frames []int32
	var sc blockScratch
	for i := 0; i < n; i++ {
		if p.scanned && p.cls[i].feat&featMaybeFrames == 0 {
			continue
		}
		l := p.viewLine(i)
		t := trimLeft(l)
		switch {
		case strings.HasPrefix(t, "Traceback (most recent call last)"):
			// Frames: `  File "x", line n, in f` plus indented code lines,
			// until a line at the traceback's own indentation.
			indent := len(l) - len(t)
			frames = frames[:0]
			j := i + 1
			for ; j < n; j++ {
				lj := p.viewLine(j)
				tj := trimLeft(lj)
				if tj == "" {
					continue
				}
				if len(lj)-len(tj) <= indent && !strings.HasPrefix(tj, "File \"") {
					break
				}
				if strings.HasPrefix(tj, "File \"") {
					frames = append(frames, int32(j))
				}
			}
			rankBlock(p, &sc, frames, j, false, cat)
			i = j - 1
		case isPytestFrame(l):
			// pytest's long tracebacks: "path.py:262: in f", the code
			// after it, "_ _ _" between frames; innermost last.
			frames = frames[:0]
			j := i
			for ; j < n; j++ {
				lj := p.viewLine(j)
				if isPytestFrame(lj) {
					frames = append(frames, int32(j))
					continue
				}
				if lj == "" || lj[0] == ' ' || lj[0] == '\t' || strings.HasPrefix(lj, "_ _ _") {
					continue
				}
				break
			}
			rankBlock(p, &sc, frames, j, false, cat)
			i = j - 1
		case strings.HasPrefix(t, "at ") && len(t) > 3 && (strings.HasSuffix(t, ")") || strings.Contains(t, ":")):
			// Java / JavaScript stacks, innermost first.
			frames = frames[:0]
			j := i
			for ; j < n; j++ {
				tj := trimLeft(p.viewLine(j))
				if strings.HasPrefix(tj, "at ") {
					frames = append(frames, int32(j))
					continue
				}
				if strings.HasPrefix(tj, "... ") && strings.HasSuffix(tj, " more") {
					continue
				}
				break
			}
			rankBlock(p, &sc, frames, j, true, cat)
			i = j - 1
		case strings.HasPrefix(l, "goroutine ") && strings.HasSuffix(trimRight(l), "]:"):
			// Go: "pkg.fn(...)" then "\t/path/file.go:12 +0x1d", innermost first.
			frames = frames[:0]
			j := i + 1
			for ; j < n; j++ {
				lj := p.viewLine(j)
				if strings.TrimSpace(lj) == "" || strings.HasPrefix(lj, "goroutine ") {
					break
				}
				if strings.HasPrefix(lj, "\t") {
					frames = append(frames, int32(j))
				}
			}
			rankBlock(p, &sc, frames, j, true, cat)
			i = j - 1
		}
	}
}

// rankBlock ranks the frames of one block (frame lines in order; end is the
// line after the block). Each frame's other lines (code, function name) get
// the same tier and rank, so a frame is kept whole or not at all.
func rankBlock(p *plan, sc *blockScratch, frames []int32, end int, innermostFirst bool, cat uint8) {
	nf := len(frames)
	// Recursion repeats frames: a frame whose line was already seen nearer
	// the innermost end ranks after every distinct frame.
	repeat := sc.repeats(p, frames, innermostFirst)
	for k, f32 := range frames {
		f := int(f32)
		d := k
		if !innermostFirst {
			d = nf - 1 - k
		}
		if d == nf-1 && nf > 2 {
			d = 1 // the outermost frame: where the call came from
		}
		if p.mentionsQuery(p.viewLine(f)) {
			d = 0 // a frame in the script or test the agent ran
		}
		t := tierHigh
		if repeat[k] {
			t = tierFill
		}
		// Frame lines take the frame's place, whatever a location rule
		// gave them; only critical lines keep theirs.
		if p.cls[f].tier != tierCritical {
			p.set(f, t, d+1, cat)
		}
		// The lines that belong to this frame.
		from, to := f+1, end
		if k+1 < nf {
			to = int(frames[k+1])
		}
		if innermostFirst {
			// Go prints the function line before its file line.
			from, to = f-1, f
			if from < 0 || (k > 0 && from == int(frames[k-1])) {
				continue
			}
		}
		for x := from; x < to && x < len(p.cls); x++ {
			if p.cls[x].tier >= tierHigh && p.cls[x].tier != tierNever {
				p.set(x, t, d+1, cat)
			}
		}
	}
}

// blockScratch is rankBlock's memory, kept from block to block.
type blockScratch struct {
	hashes []uint64 // frame line hashes, innermost first
	repeat []bool
}

// smallBlock is the most frames a block compares pairwise rather than
// through a set: most tracebacks hold a few dozen frames at most, and a
// set per block was a tenth of a traceback's compression.
const smallBlock = 64

// repeats reports, for each frame of a block, whether its line (trimmed)
// was seen nearer the innermost end.
func (sc *blockScratch) repeats(p *plan, frames []int32, innermostFirst bool) []bool {
	nf := len(frames)
	sc.hashes = sc.hashes[:0]
	if cap(sc.repeat) < nf {
		sc.repeat = make([]bool, nf)
	}
	sc.repeat = sc.repeat[:nf]
	clear(sc.repeat)
	var seen seenSet
	if nf > smallBlock {
		seen = newSeenSet(len(p.body))
	}
	for x := range nf {
		k := x
		if !innermostFirst {
			k = nf - 1 - x
		}
		h := hash64(strings.TrimSpace(p.viewLine(int(frames[k]))))
		if nf > smallBlock {
			sc.repeat[k] = seen.add(h)
			continue
		}
		for _, g := range sc.hashes {
			if g == h {
				sc.repeat[k] = true
				break
			}
		}
		sc.hashes = append(sc.hashes, h)
	}
	return sc.repeat
}

// isPytestFrame matches a frame line of pytest's long traceback format:
// "src/pkg/mod.py:262: in func" (no indentation).
func isPytestFrame(l string) bool {
	c := strings.Index(l, ": in ")
	if c <= 0 || l[0] == ' ' || l[0] == '\t' {
		return false
	}
	k := c
	for k > 0 && isDigit(l[k-1]) {
		k--
	}
	return k < c && k > 1 && l[k-1] == ':' && !strings.ContainsAny(l[:k-1], " \t")
}

// isGoTestJSON reports whether most lines are `go test -json` events.
func (p *plan) isGoTestJSON() bool {
	n, ev := 0, 0
	for i := range min(p.n, 200) {
		l := p.viewLine(i)
		if l == "" {
			continue
		}
		n++
		if strings.HasPrefix(l, "{") && strings.Contains(l, "\"Action\":\"") {
			ev++
		}
	}
	return n > 0 && ev*2 > n
}

// classifyGoTestJSON ranks `go test -json` events: fail events and the output
// of failed tests first, package results next, then the rest; passing tests'
// events are noise.
func classifyGoTestJSON(p *plan) {
	catPass := p.category("passing tests")
	catEvents := p.category("test events")
	const catOut = 0
	type key struct{ pkg, test string }
	failed := make(map[key]bool)
	for _, l := range p.allViews() {
		if !strings.Contains(l, "\"fail\"") {
			continue
		}
		r := gjson.GetMany(l, "Action", "Package", "Test")
		if r[0].String() == "fail" {
			failed[key{r[1].String(), r[2].String()}] = true
			// A failed subtest means its parents failed too.
			t := r[2].String()
			for {
				i := strings.LastIndexByte(t, '/')
				if i < 0 {
					break
				}
				t = t[:i]
				failed[key{r[1].String(), t}] = true
			}
		}
	}
	pos := make(map[key]int)
	seenErr := newSeenSet(len(p.body))
	for i, l := range p.allViews() {
		if l == "" {
			continue
		}
		r := gjson.GetMany(l, "Action", "Package", "Test", "Output")
		action, test := r[0].String(), r[2].String()
		k := key{r[1].String(), test}
		switch action {
		case "fail":
			p.set(i, tierCritical, 0, catOut)
		case "pass", "skip":
			if test == "" {
				p.set(i, tierCritical, 0, catOut)
			} else {
				p.set(i, tierNoise, 0, catPass)
			}
		case "output":
			out := r[3].String()
			switch {
			case isSummaryLine(out) || isFailingTest(out):
				p.set(i, tierCritical, 1, catOut)
			case test != "" && !failed[k]:
				if isErrorLine(trimLeft(out)) || location(out) != "" {
					// A passing test's log line about an error or a
					// place in the code: after everything else of value.
					p.set(i, tierFill, 1, catPass)
				} else {
					p.set(i, tierNoise, 0, catPass)
				}
			case isErrorLine(trimLeft(out)):
				if seenErr.add(collapsedHash(out)) {
					p.set(i, tierContext, pos[k], catOut)
				} else {
					p.set(i, tierCritical, 2, catOut)
				}
			case isPassingTest(out):
				p.set(i, tierNoise, 0, catPass)
			case location(out) != "":
				p.set(i, tierHigh, pos[k], catOut)
			case test != "":
				p.set(i, tierContext, pos[k], catOut)
			default:
				p.set(i, tierFill, 0, catOut)
			}
			pos[k]++
		default:
			p.set(i, tierNoise, 0, catEvents)
		}
	}
	p.headTail(2, 4)
	p.fillRanks()
}

// isChainNotice matches the lines that link chained exceptions.
func isChainNotice(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "The above exception was the direct cause") ||
		strings.HasPrefix(t, "During handling of the above exception") ||
		strings.HasPrefix(t, "Caused by:") || strings.HasPrefix(t, "Suppressed:")
}

// rankGoTests attributes the lines of `go test -v` output to their tests:
// between "=== RUN X" (or "=== CONT X") and the next "=== " or "--- " line,
// or prefixed "X: file_test.go:12: msg". A failed test's lines are raised to
// tierHigh (in -v mode Go prints them before "--- FAIL: X"); a passing
// test's lines become noise.
func rankGoTests(p *plan, catPass uint8) {
	failed := make(map[string]bool)
	for i, c := range p.cls {
		if p.scanned && c.feat&featGoFail == 0 {
			continue
		}
		t := trimLeft(p.viewLine(i))
		if name, ok := strings.CutPrefix(t, "--- FAIL: "); ok {
			if f := strings.Fields(name); len(f) > 0 {
				failed[f[0]] = true
			}
		}
	}
	if len(failed) == 0 {
		return
	}
	isFailed := func(name string) bool {
		for name != "" {
			if failed[name] {
				return true
			}
			i := strings.LastIndexByte(name, '/')
			if i < 0 {
				break
			}
			name = name[:i]
		}
		return false
	}
	current := ""
	pos := 0
	for i, l := range p.allViews() {
		t := trimLeft(l)
		if strings.HasPrefix(t, "=== ") {
			f := strings.Fields(t)
			current, pos = "", 0
			if len(f) >= 3 && (f[1] == "RUN" || f[1] == "CONT" || f[1] == "NAME") {
				current = f[2]
			}
			continue
		}
		if strings.HasPrefix(t, "--- ") {
			current = ""
			continue
		}
		name := current
		if c := strings.Index(t, ": "); c > 0 && strings.HasPrefix(t, "Test") && !strings.ContainsAny(t[:c], " \t") {
			name = t[:c] // "TestX/sub: x_test.go:12: msg"
		}
		if name == "" || p.cls[i].tier == tierCritical {
			continue
		}
		if isFailed(name) {
			if p.cls[i].tier > tierHigh {
				p.set(i, tierHigh, pos, p.cls[i].cat)
			}
			pos++
		} else {
			p.set(i, tierNoise, 0, catPass)
		}
	}
}
