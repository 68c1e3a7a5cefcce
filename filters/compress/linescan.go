package compress

import (
	"strings"
	"unicode/utf8"
)

// One pass per line (issue 23, item 4). The diagnostic classifier asks
// about thirty questions of every line, most of them substring searches
// that fail. scanLine reads the line's bytes once, noting which letters
// and marks occur and where the text starts and ends; each mayBe… gate
// below, and each …In form of a predicate, answers from that alone whether
// a search can succeed, and the search runs only when it can. The gates are necessary conditions,
// never sufficient ones, so what the predicates decide is unchanged: a
// gate that says "maybe" costs a predicate call, a gate that says "no"
// wrongly would change the output, and TestLineGates (and FuzzLineGates)
// check each gate against its predicate on every line of the samples.

// lineBits is a set of bytes seen in a line: most letters, any digit,
// twelve marks the predicates look for, bitNonASCII for any byte of a
// multi-byte character, and bitOdd for \r, \v or \f, which
// strings.TrimSpace and trimRight trim differently. Other bytes are not
// tracked: has reports them present.
type lineBits uint64

const (
	bitNonASCII lineBits = 1 << 60
	bitOdd      lineBits = 1 << 63
)

// bitRrorKnown and bitRror record, past the byte set, whether the line
// holds "rror" or "RROR": every error word the predicates look for
// (error:, Error:, ERROR, [error], level=error, a type ending in Error)
// holds one, and most lines, which hold an 'e', an 'r' and an 'o' and so
// pass the byte gates, hold neither. One substring search per line then
// stands in for a scan per predicate (issue 23, item 4). A set without
// bitRrorKnown (bitsOf's, allBits) says nothing: the line may hold one.
const (
	bitRrorKnown lineBits = 1 << 61
	bitRror      lineBits = 1 << 62
)

// allBits is the set of a line not scanned: every byte may occur.
const allBits = ^lineBits(0)

var byteBits = func() (t [256]lineBits) {
	bit := 0
	next := func() lineBits { b := lineBits(1) << bit; bit++; return b }
	for _, c := range []byte("abcdefghiklmnoprstuwxy") {
		t[c] = next()
	}
	for c := 'A'; c <= 'Z'; c++ {
		if c != 'Q' { // no predicate asks for it; its bit is bitNonASCII's
			t[c] = next()
		}
	}
	digit := next()
	for c := '0'; c <= '9'; c++ {
		t[c] = digit
	}
	for _, c := range []byte(":[(\"%,<!=_|`") {
		t[c] = next()
	}
	for c := 0x80; c < 256; c++ {
		t[c] = bitNonASCII
	}
	t['\r'], t['\v'], t['\f'] = bitOdd, bitOdd, bitOdd
	return t
}()

// has reports whether c may occur in the line: false only when c is
// tracked and absent (a non-ASCII byte counts as present when any is, and
// \r, \v or \f when any of them is).
func (m lineBits) has(c byte) bool {
	b := byteBits[c]
	return b == 0 || m&b != 0
}

// lineScan is what scanLine learns of a line.
type lineScan struct {
	bits lineBits
	// t is the line without leading and trailing spaces and tabs. When
	// plain, it is also strings.TrimSpace of the line and trimLeft's
	// result starts where t does: the line holds no \r, \v or \f, and t
	// starts and ends with an ASCII byte, so no Unicode space (U+0085,
	// U+00A0, U+2000…) can lie at either end. A multi-byte character
	// inside it (Claude Code's Read puts "→" after every line number)
	// leaves it plain.
	t     string
	plain bool
}

func scanLine(l string) lineScan {
	m := bitsOf(l)
	t := trimRight(trimLeft(l))
	plain := m&bitOdd == 0 && (m&bitNonASCII == 0 || t[0] < utf8.RuneSelf && t[len(t)-1] < utf8.RuneSelf)
	return lineScan{bits: m, t: t, plain: plain}
}

// scanWith is scanLine of l, whose bits m are known (lineNotes). It is
// scanLine's body, not called by it: scanLine runs on every line of every
// output, and a call more there costs more than these three lines.
func scanWith(l string, m lineBits) lineScan {
	t := trimRight(trimLeft(l))
	plain := m&bitOdd == 0 && (m&bitNonASCII == 0 || t[0] < utf8.RuneSelf && t[len(t)-1] < utf8.RuneSelf)
	return lineScan{bits: m, t: t, plain: plain}
}

// maxScan is the longest line bitsOf reads. A longer one (minified JSON,
// a one-line blob) gets allBits: every gate passes and the predicates,
// most of which stop within a few kilobytes, read it as they did before.
const maxScan = 4096

// bitsOf is the set of l's bytes.
func bitsOf(l string) lineBits {
	if len(l) > maxScan {
		return allBits
	}
	// Four accumulators: the loads overlap instead of waiting on one OR.
	// The loop reslices so the compiler sees every index in range: no
	// bounds check is left in it.
	var m0, m1, m2, m3 lineBits
	for len(l) >= 4 {
		m0 |= byteBits[l[0]]
		m1 |= byteBits[l[1]]
		m2 |= byteBits[l[2]]
		m3 |= byteBits[l[3]]
		l = l[4:]
	}
	for i := 0; i < len(l); i++ {
		m0 |= byteBits[l[i]]
	}
	return m0 | m1 | m2 | m3
}

// withErrorWord adds to m, the bytes of l, whether l holds "rror" or
// "RROR" (see bitRror).
func withErrorWord(l string, m lineBits) lineBits {
	if m == allBits || m&bitRrorKnown != 0 {
		return m
	}
	if m.has('r') && m.has('o') && strings.Contains(l, "rror") || m.has('R') && m.has('O') && strings.Contains(l, "RROR") {
		m |= bitRror
	}
	return m | bitRrorKnown
}

// mayHoldRror reports whether the line may hold "rror" or "RROR".
func (m lineBits) mayHoldRror() bool { return m&bitRrorKnown == 0 || m&bitRror != 0 }

// first is the first byte of the trimmed line, 0 when it is empty.
func (s lineScan) first() byte {
	if s.t == "" {
		return 0
	}
	return s.t[0]
}

// startsWith reports whether the trimmed line may start with c: always
// when the line is not plain.
func (s lineScan) startsWith(c byte) bool { return !s.plain || s.first() == c }

// byteSet is a set of bytes, for the gates' first- and last-byte tests.
type byteSet [256]bool

func setOf(bs string) (set byteSet) {
	for i := 0; i < len(bs); i++ {
		set[bs[i]] = true
	}
	return set
}

// mayBeSummary gates isSummaryLine.
func (s lineScan) mayBeSummary() bool {
	if !s.plain {
		return true
	}
	if s.t == "" {
		return false
	}
	// rspec's "3 examples, 1 failure" and an exit notice may be anywhere;
	// every other summary starts with what its first byte says.
	m := s.bits
	if m.has('x') && m.has(',') && m.has('f') && m.has('m') && m.has('p') && m.has('l') && strings.Contains(s.t, "xample") || s.mayBeExitNotice() ||
		m.has('=') && m.has('k') && m.has('u') && m.has(':') && strings.Contains(s.t, " : ok=") ||
		m.has('0') && m.has('i') && m.has('n') && (m.has('p') && m.has('d') || m.has('f') && m.has('d') || m.has('r') && m.has('o')) && isLabelledCountSummary(s.t) {
		// The predicate itself: it reads at most 33 bytes to the count and
		// the count's word ("1. Install the package" stops there).
		// The letters alone pass a traceback's frame lines ("File
		// \"/app/x.py\", line 12, in f"); one search spares them
		// isSummaryLine, which every kind now asks.
		return true
	}
	switch t := s.t; t[0] {
	case '=', '!':
		return true
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// pytest -q's and mocha's counts: a space after the digits; Dart's
		// test runner's verdict after its clock, "00:05 +10 -1: …".
		d := digits(t)
		return d < len(t) && (t[d] == ' ' || t[d] == '%') || hasDartCounter(t)
	case 'N':
		return strings.HasPrefix(t, "No issues found!")

	case 'E':
		return t == "ERRORS!" || strings.HasPrefix(t, "Executed ")
	case 'e':
		return strings.HasPrefix(t, "error: ")
	case 'S':
		return strings.HasPrefix(t, "Snapshots:") || strings.HasPrefix(t, "Success: ") || strings.HasPrefix(t, "Summary [") || strings.HasPrefix(t, "SUMMARY: ") ||
			strings.HasPrefix(t, "Skipped: ") || strings.HasPrefix(t, "Status: ")
	case 'B':
		return strings.HasPrefix(t, "BUILD ") || strings.HasPrefix(t, "Build ")
	case 'Y':
		return strings.HasPrefix(t, "Your code has been rated at ")
	case 'C':
		return strings.HasPrefix(t, "Checked ")
	case '[':
		return m.has('T') && m.has('F') && strings.Contains(t, "] Tests run: ") || strings.HasPrefix(t, "[warn] Code style issues found in ") ||
			m.has('B') && m.has('U') && (strings.HasSuffix(t, "] BUILD FAILURE") || strings.HasSuffix(t, "] BUILD SUCCESS")) ||
			strings.HasPrefix(t, "[==========] ") || strings.HasPrefix(t, "[  PASSED  ] ") || strings.HasPrefix(t, "[  FAILED  ] ") ||
			m.has('F') && m.has('U') && strings.HasSuffix(t, "]") && strings.Contains(t, " FAILURE [") || isScalaTestSummary(t) ||
			strings.HasPrefix(t, "[ FAIL ")
	case '-':
		return strings.HasPrefix(t, "-- Configuring incomplete")
	case 'A':
		return strings.HasPrefix(t, "Active: ") || strings.HasPrefix(t, "All ")
	case 'd':
		return strings.HasPrefix(t, "done (")
	case '*':
		return strings.HasPrefix(t, "** ") || strings.HasPrefix(t, "*** ") // ScalaTest: "*** 2 TESTS FAILED ***"
	case '#':
		return strings.HasPrefix(t, "# ")
	case 'D':
		return strings.HasPrefix(t, "DO *NOT* COMMIT")
	case 'R':
		return strings.HasPrefix(t, "Ran ")
	case 'O':
		return strings.HasPrefix(t, "OK")
	case 'P':
		// go test's "PASS" alone, dotnet's "Passed!  - …": not pytest
		// -rA's hundred "PASSED tests/a.py::t" lines.
		return t == "PASS" || strings.HasPrefix(t, "Passed!") || strings.HasPrefix(t, "Passed: ")
	case 'o':
		return strings.HasPrefix(t, "ok")
	case 't':
		// cargo's and sympy's; not the paths of a listing or a grep
		// ("tests/a.py", "testenv/body.go:21:").
		return strings.HasPrefix(t, "test result:") || strings.HasPrefix(t, "tests finished:")
	case 'T':
		return strings.HasPrefix(t, "Test") || strings.HasPrefix(t, "Total tests: ") || t == "The following tests FAILED:"
	case 'F':
		return strings.HasPrefix(t, "FAIL") || strings.HasPrefix(t, "Found ") || strings.HasPrefix(t, "Failed!") || strings.HasPrefix(t, "Failed: ")
	}
	return false
}

// mayBeExitNotice gates isExitNotice(strings.TrimSpace(l)): it needs a
// "make" prefix, or "xit" or "XIT" and the status's digits. The letters
// alone pass most lines of a shell trace ("export", "site-packages").
func (s lineScan) mayBeExitNotice() bool {
	m := s.bits
	return !s.plain || s.first() == 'm' || m.has('0') && (m.has('x') && m.has('i') && m.has('t') && strings.Contains(s.t, "xit") ||
		m.has('X') && m.has('I') && m.has('T') && strings.Contains(s.t, "XIT"))
}

// failFirst and failLast are the bytes a line isFailingTest accepts can
// start (trimmed) or end with; passFirst and passLast the same for
// isPassingTest.
var (
	failFirst = setOf("FE-rt_0123456789(T[%n")
	failLast  = setOf("LRD)!]*")
	passFirst = setOf("PSX-=tA?(")
	passLast  = setOf("kdeDL)")
)

// mayBeFailingTest gates isFailingTest. A pytest progress column ("[ 42%]")
// moves the end the predicate reads, so such lines always pass.
func (s lineScan) mayBeFailingTest() bool {
	if !s.plain || strings.HasSuffix(s.t, "%]") {
		return true
	}
	if s.t == "" {
		return false
	}
	if failLast[s.t[len(s.t)-1]] || mayBeJuliaSetFailure(s) {
		return true
	}
	if c := s.t[0]; isDigit(c) {
		// A numbered failure heading: "1) Cart sums"; Dart's failed test,
		// "00:03 +4 -1: Cart totals [E]"; CTest's, " 6/12 Test  #6: x
		// ***Failed" ("6 - x (Failed)" ends in failLast).
		d := digits(s.t)
		return d < len(s.t) && (s.t[d] == ')' || s.t[d] == '/') || hasDartCounter(s.t) && strings.HasSuffix(s.t, " [E]")
	}
	return failFirst[s.t[0]]
}

// mayBeTreeRow gates treeDepth: its marks start with '|', '`' or a
// non-ASCII byte.
func (s lineScan) mayBeTreeRow() bool {
	return !s.plain || s.bits.has('|') || s.bits.has('`')
}

// mayBePathLine gates isPathLine: a path line holds none of the marks
// below (a line too long to scan is read in full).
func (s lineScan) mayBePathLine() bool {
	m := s.bits
	return m == allBits || !(m.has('"') || m.has('(') || m.has('[') || m.has('<') || m.has('=') || m.has(','))
}

// mayBePassingTest gates isPassingTest.
func (s lineScan) mayBePassingTest(l string) bool {
	if !s.plain || strings.HasSuffix(s.t, "%]") {
		return true
	}
	if s.t == "" {
		return false
	}
	return passFirst[s.t[0]] || passLast[s.t[len(s.t)-1]] ||
		s.bits.has('k') && s.bits.has('p') && s.bits.has('d') && containsWord(l, "... skipped ") ||
		hasDartCounter(s.t)
}

// sectionFirst are the first bytes isSectionStart accepts.
var sectionFirst = setOf("_-FE")

// chainFirst are the first bytes of isChainNotice's lines.
var chainFirst = setOf("TDCS")

// mayBeChainNotice gates isChainNotice.
func (s lineScan) mayBeChainNotice() bool { return !s.plain || chainFirst[s.first()] }

// features finds what later passes ask of the line again (see lineFeat).
func (s lineScan) features(l string) lineFeat {
	var f lineFeat
	m := s.bits
	if m.has('"') && m.has('F') || m.has('0') && (m.has(':') || m.has('(') && m.has(',')) { // the caller clears it if locationHashIn fails
		f |= featLoc
	}
	if (!s.plain || sectionFirst[s.first()]) && isSectionStart(l) {
		f |= featSectionStart
	}
	if (s.startsWith('=') || s.startsWith('-')) && isSectionEnd(l) {
		f |= featSectionEnd
	}
	// rankFrames' openers: "Traceback (most recent call last)", "at "
	// frames, "goroutine N [running]:", a pytest frame "path.py:12: in f"
	// (its first space or tab follows the "path:12:").
	if !s.plain || s.first() == 'T' || s.first() == 'a' || len(l) > 0 && l[0] == 'g' || m.has(':') && firstBlankAfterColon(l) {
		f |= featMaybeFrames
	}
	if s.startsWith('-') && strings.HasPrefix(trimLeft(l), "--- FAIL: ") {
		f |= featGoFail
	}
	if len(l) > 0 && l[0] == '_' && ruleTitle(l, '_') != "" {
		f |= featReportHeader
	}
	return f
}

// firstBlankAfterColon reports whether l's first space or tab follows a
// ':', as in a pytest frame line "path.py:12: in f".
func firstBlankAfterColon(l string) bool {
	for i := 0; i < len(l); i++ {
		if l[i] == ' ' || l[i] == '\t' {
			return i > 0 && l[i-1] == ':'
		}
	}
	return false
}

// locationKey is the hash of the location path:line (the key of the
// classifiers' location sets), from its parts: callers that need both the
// parts and the hash read the line once.
func locationKey(path, line string) uint64 {
	return hashAdd(hashAdd(hashAdd(hashSeed, path), ":"), line)
}
