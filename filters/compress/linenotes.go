package compress

import "unsafe"

// lineNotes carries what detection's scan read of each line to the
// classifier that reads the same lines next, so a line's bytes are
// scanned once and it is asked once whether it is an error line (issue
// 23: one pass per line). Detection and classification each took about a
// fifth of compressing a new result, and both began every line with
// bitsOf and isErrorLineIn.
//
// A note is kept only for a line the scan read as it stands in the
// output (not with its colour codes, its number or a log prefix cut
// off), and the classifier takes it only for the same line as it stands
// (noteOf): the predicates are pure functions of the line's bytes, and
// the line bits only gate them (linescan.go). Ten bytes a line, for the
// lines of the first scanLimit bytes at most: detection reads no more.
type lineNotes struct {
	bits []lineBits // by line number
	v    []noteFlags
}

// noteFlags says whether a line was noted and the verdicts asked of it.
type noteFlags uint16

const (
	noted      noteFlags = 1 << iota
	errAsked             // isErrorLineIn was asked
	errLine              // and said yes
	logAsked             // isLogErrorIn was asked
	logErrLine           // and said yes
	sumAsked             // isSummaryLine (behind its gate) was asked
	sumLine              // and said yes
	failAsked            // isFailingTest (behind its gate) was asked
	failLine             // and said yes
	passAsked            // isPassingTest (behind its gate) was asked
	passLine             // and said yes
)

// said reports whether a verdict noted was yes (a yes is only ever noted
// with its question); unasked whether its question was not asked, so the
// classifier asks it. A classifier writes
//
//	f.said(sumLine) || f.unasked(sumAsked) && s.mayBeSummary() && isSummaryLine(l)
//
// in place of the predicate: inline, with its scan s in registers.
func (f noteFlags) said(yes noteFlags) bool      { return f&yes != 0 }
func (f noteFlags) unasked(asked noteFlags) bool { return f&asked == 0 }

// note records line n's bits and verdicts (lines come in order; the ones
// skipped stay unnoted).
func (ns *lineNotes) note(n int, m lineBits, f noteFlags) {
	for len(ns.v) < n {
		ns.bits, ns.v = append(ns.bits, 0), append(ns.v, 0)
	}
	if len(ns.v) == n {
		ns.bits, ns.v = append(ns.bits, m), append(ns.v, f|noted)
		return
	}
	ns.bits[n], ns.v[n] = m, f|noted
}

// noteOf returns the flags and bits of line i of p when l is that line as
// it stands in p's body and it was noted; 0 otherwise.
func (ns *lineNotes) noteOf(p *plan, i int, l string) (noteFlags, lineBits) {
	if ns == nil || i >= len(ns.v) || ns.v[i] == 0 || l == "" {
		return 0, 0
	}
	at := int(p.starts[i])
	if len(l) != int(p.starts[i+1])-1-at || unsafe.StringData(l) != unsafe.StringData(p.body[at:]) {
		return 0, 0
	}
	return ns.v[i], ns.bits[i]
}

// logErrorNoted is isErrorOrLogError of a log's line whose noted
// isErrorLineIn said no: isLogErrorIn, as noted when it was.
func logErrorNoted(l string, m lineBits, f noteFlags) bool {
	if f&logAsked != 0 {
		return f&logErrLine != 0
	}
	// isErrorOrLogError's gate, written again: one helper for both costs a
	// call per log line, 3-6 % of compressing a log (BenchmarkStructural).
	if m.has(':') || m.has('[') || m.has('E') || m.has('=') || m.has('"') {
		m = withErrorWord(l, m)
	}
	return isLogErrorIn(l, m)
}
