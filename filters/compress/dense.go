package compress

import (
	"math"
	"strings"
)

// A plan holds per line its offset (4 bytes), its class (8), its place in
// the selection order (8: rank and index, see selectionOrder) and one
// classifier's extra (4: a group, a hit's line number, a heading, an offset
// into the colour-stripped copy): planLineBytes at most.
// Outputs whose lines are so short that this passes maxPlanPerByte bytes
// per input byte (blank lines, `seq`, one-character lines) are cut by
// denseCut instead, which holds nothing per line: compression memory stays
// under four bytes per input byte on any input (review round 3, N4).
const (
	planLineBytes  = 24
	maxPlanPerByte = 3
)

// tooDense reports whether text gets denseCut rather than a plan: its
// lines are too short on average, or it is too long for int32 offsets.
func tooDense(text string) bool {
	if len(text) >= math.MaxInt32-1 {
		return true
	}
	lines := strings.Count(text, "\n") + 1
	return lines*planLineBytes > maxPlanPerByte*len(text)
}

// span is a kept line of denseCut: text[start:end], without the '\n'.
type span struct{ start, end int }

// denseCut compresses a line-dense output in one streaming pass and a
// bounded list of kept lines: the first lines in two thirds of the aim,
// the last in a sixth, and between them failing tests, run summaries and
// error lines in what is left, each gap one marker. It is the plan's
// head-and-tail without its per-line state; on outputs like these, lines
// are numbers and names, and what they report is where a plan would look
// anyway.
func denseCut(text string, kind Kind, budget int) (string, int) {
	body, trailingNL := strings.CutSuffix(text, "\n")
	maxLine := min(max(budget/8, 512), 16384)
	cost := func(s span) int { return min(s.end-s.start, maxLine+32) + 1 }
	next := func(pos int) span { // the line that starts at pos
		e := strings.IndexByte(body[pos:], '\n')
		if e < 0 {
			return span{pos, len(body)}
		}
		return span{pos, pos + e}
	}

	// The head and tail are a prefix and a suffix of whole lines, kept
	// as offsets: an aim of 400 KB over blank lines is 400k lines.
	used, headEnd, headLines := markerCost, 0, 0 // body[:headEnd] is kept
	for headEnd <= len(body) {
		s := next(headEnd)
		if used+cost(s) > budget*2/3 {
			break
		}
		used += cost(s)
		headEnd = s.end + 1
		headLines++
	}
	tailStart, tailUsed := len(body)+1, 0 // body[tailStart:] is kept
	for tailStart > headEnd {
		st := strings.LastIndexByte(body[:tailStart-1], '\n') + 1
		if st < headEnd || tailUsed+cost(span{st, tailStart - 1}) > budget/6 {
			break
		}
		tailUsed += cost(span{st, tailStart - 1})
		tailStart = st
	}
	used += tailUsed
	// Between them, the lines that report, while they fit with a marker
	// each; the list is bounded by the aim over the marker's size.
	var mid []span
	for p := headEnd; p < tailStart; {
		if p < len(body) && body[p] == '\n' { // a blank line, the commonest here
			p++
			continue
		}
		s := next(p)
		p = s.end + 1
		l := body[s.start:s.end]
		if len(l) < 4 || !hasLetter(l) || !(isFailingTest(l) || isSummaryLine(l) || isErrorLine(l)) {
			continue
		}
		c := cost(s) + markerCost
		if used+c > budget {
			continue
		}
		mid = append(mid, s)
		used += c
	}

	var b strings.Builder
	b.Grow(used + 2*markerCost)
	omitted, first := 0, true
	emit := func(s string) {
		if !first {
			b.WriteByte('\n')
		}
		first = false
		b.WriteString(s)
	}
	lines := func(from, to int) { // the whole lines of body[from:to]
		for from < to {
			s := next(from)
			emit(cutMiddle(body[s.start:s.end], maxLine))
			from = s.end + 1
		}
	}
	reason := defaultCategory(kind)
	gap := func(from, to int) { // the lines of body[from:to], to the start of a line
		if n := strings.Count(body[from:to], "\n"); n > 0 {
			emit(linesMarker(n, reason))
			omitted += n
		}
	}
	lines(0, headEnd)
	at := headEnd
	for _, s := range mid {
		gap(at, s.start)
		emit(cutMiddle(body[s.start:s.end], maxLine))
		at = s.end + 1
	}
	if tailStart > len(body) && at <= len(body) {
		n := strings.Count(body[at:], "\n") + 1
		emit(linesMarker(n, reason))
		omitted += n
	} else if tailStart <= len(body) {
		gap(at, tailStart)
		lines(tailStart, len(body)+1)
	}
	if trailingNL {
		b.WriteByte('\n')
	}
	return b.String(), omitted
}

// hasLetter reports whether l has an ASCII letter: every line that reports
// does, and the numbers of a `seq` listing are passed over without the
// predicates.
func hasLetter(l string) bool {
	for i := 0; i < len(l); i++ {
		if c := l[i] | 0x20; c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}
