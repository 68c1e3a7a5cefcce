package compress

import (
	"iter"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A plan is the line-level model every text kind shares: the classifier of a
// kind gives each line a tier, a rank inside the tier, a category (what the
// marker calls it) and optionally a group (the file of a search hit, the
// directory of a listing entry); selection keeps lines in (tier, rank, index)
// order within the budget; render writes the kept lines verbatim and one
// marker per gap.

// tier orders lines by how much they matter. Lower is kept first.
type tier uint8

const (
	tierCritical tier = iota // failing tests, run summaries, error lines: kept up to critCap
	tierHigh                 // locations, section headers, first hit per file
	tierContext              // lines around critical ones, failure output
	tierHead                 // the first and last lines of the output
	tierFill                 // everything else, by distance from the ends
	tierNoise                // passing tests, shell trace, progress
	tierNever                // exact repeats of the line above: always folded
)

// lineClass is the per-line state of a plan, eight bytes: plans of
// line-dense outputs hold millions of them (review round 3, N4).
type lineClass struct {
	tier tier
	cat  uint8 // index into plan.cats
	keep bool  // selected for the output
	feat lineFeat
	rank int32
}

// lineFeat is what the diagnostic classifier's one scan of a line found
// that later passes ask again (issue 23: no pass re-reads every line).
// Valid only when plan.scanned; in the padding byte of lineClass, so free.
type lineFeat uint8

const (
	featLoc          lineFeat = 1 << iota // names a location (set when it may, cleared when locationHashIn fails)
	featSectionStart                      // isSectionStart
	featSectionEnd                        // isSectionEnd
	featMaybeFrames                       // may open a block of traceback frames (see rankFrames)
	featGoFail                            // "--- FAIL: " after indentation
	featReportHeader                      // a "____ title ____" failure report header
)

// reasonStyle says how a gap's marker words its reason.
type reasonStyle uint8

const (
	reasonCategory reasonStyle = iota // "passing tests", or "398 passing tests, 14 output" when mixed
	reasonCounted                     // always with counts: "80 added, 30 removed"
	reasonRange                       // "lines 121-360" (file reads)
)

type plan struct {
	src string
	// notes is what detection read of src's lines, for the classifier
	// (nil: nothing).
	notes *lineNotes
	// The lines are spans of body (src without its final '\n'): line i
	// is body[starts[i]:starts[i+1]-1]. Offsets instead of a []string
	// cost 4 bytes a line instead of 16.
	body   string
	starts []int32
	n      int // the number of lines
	// What classifiers read (viewLine): the lines of vbody (body without
	// terminal colour codes; vstarts indexes it, nil when it is body),
	// without the line numbers of style vstyle.
	vbody      string
	vstarts    []int32
	vstyle     numbering
	vprefix    linePrefix // lines open with a CI log's or a task's prefix, which the view drops
	trailingNL bool
	cls        []lineClass
	group      []int32 // index into groups per line, or -1; nil until a classifier groups
	cats       []string
	groups     []string
	groupUnit  string // "hits" or "entries": "[… 5 lines omitted: hits in a.go …]"
	groupLines bool   // list the omitted line numbers of search hits
	groupSplit int    // a gap spanning at most this many groups gets one marker per group
	frameCat   int    // category of traceback frames, or -1
	scanned    bool   // every line's feat is set
	locLists   bool   // name the locations of omitted lines in their markers
	readLocs   bool   // a file read whose omitted ranges name the locations in them
	readReport bool   // a read that may be of a command's saved output (a file without an extension): it may hold a run's outcome
	usedBytes  int    // what selection counted, markers at markCost
	markCost   int    // the bytes a gap marker is reckoned at
	hitLine    []int32
	// hitText[i] is where search hit i's text starts (after "path:12:"),
	// and hitCut, when not 0, the bytes of that text a kept hit shows
	// before a bytes marker: a search cut to its aim keeps more
	// locations, each with the start of its text, instead of fewer hits
	// whole.
	hitText []int32
	hitCut  int
	style   reasonStyle
	lineNo  func(i int) int // for reasonRange: the tool's number of line i, or -1; nil means i+1
	budget  int
	critCap int
	// hard: the budget is a cap for critical lines too (StructuralOptions.Hard).
	hard    bool
	context int
	maxLine int // longer lines are cut in the middle when rendered
	// mustRank: critical lines ranked at or below it (run summaries and
	// failing tests) are kept at any ratio, past critCap; -1 means none.
	// When they alone overflow critCap, each is cut after mustCut bytes
	// (its test id) instead of being dropped.
	mustRank int32
	mustCut  int
	// typeCuts: the must-keep lines cut after the exception type their
	// reason names, not after the test id (planTypeCuts), and where.
	typeCuts map[int32]int32
	// preface is a line written before everything else when the output is
	// compressed (a diff's per-file counts), reckoned in the budget.
	preface string
	// query holds the distinctive words of the call's arguments
	// (queryTerms); frames and lines that mention them rank first.
	query []string
	// listLeft is what is left of the bytes reserved for frame location
	// lists while rendering.
	listLeft int
	// locNeed is what the locations of the omitted lines from at on take
	// in a list (locationNeedAfter); at is -1 until the first list asks.
	locNeed struct{ at, left int }
	listed  map[uint64]bool // hashes of the locations an earlier marker named
	// headingOf[i] is the group whose heading line i is, or -1; nil when
	// the kind has no headings.
	headingOf []int32
	// parent[i] is the line that line i cannot be read without (a diff's
	// hunk header above its changed lines, the file header above the
	// hunk), -1 for none, or onlyWithChild; nil when the kind has none.
	// Selection keeps a line's parents with it, at their cost (take).
	parent []int32
	// coverText, when not nil, is the text whose code names line i shows
	// ("" for none): selection covers them (coverNames) once it reaches
	// the tierHigh lines ranked coverRank or later, up to coverShare
	// percent of the bytes it may take.
	coverText  func(i int) string
	coverRank  int32
	coverShare int
}

// markerCost estimates the bytes one gap marker takes, for the budget.
// Grouped plans reckon more: their markers name a file and line numbers.
const markerCost = 44

func newPlan(text string, kind Kind, opts StructuralOptions) *plan {
	p := &plan{src: text, budget: opts.TargetBytes, context: max(opts.ContextLines, 0), hard: opts.Hard}
	// Critical lines may take 1.75 times the aim (three times in the
	// diagnostic kinds, classifyDiagnostic): a run with 300 failing tests
	// is worth more than hitting the target exactly. selectGreedy then
	// leaves a quarter of the aim for their context.
	p.critCap = p.budget * 7 / 4
	p.maxLine = min(max(p.budget/8, 512), maxLineCap)
	body := text
	if strings.HasSuffix(body, "\n") {
		body = body[:len(body)-1]
		p.trailingNL = true
	}
	p.body, p.vbody = body, body
	p.starts = lineStarts(body)
	p.n = len(p.starts) - 1
	p.cls = make([]lineClass, p.n)
	for i := range p.cls {
		p.cls[i] = lineClass{tier: tierFill}
	}
	p.cats = []string{defaultCategory(kind)}
	p.frameCat = -1
	p.markCost = markerCost
	p.mustRank = -1
	p.locNeed.at = -1
	return p
}

// numberStyle returns the line numbering most of the first lines use.
func (p *plan) numberStyle() numbering {
	n := min(p.n, 400)
	counts := [4]int{}
	for _, l := range p.linesTo(n) {
		counts[numberedLine(l)]++
	}
	style := numNone
	for s := numArrow; s <= numColon; s++ {
		if counts[s]*2 > n && counts[s] > counts[style] {
			style = s
		}
	}
	return style
}

// cleanView sets what classifiers read (viewLine) to the lines without
// terminal colour codes, and without the line numbers of a numbered file
// read (a log or test report opened with Read). The colour codes go in one
// copy of the text: a CSI sequence never spans a line break, so its lines
// are the lines of body.
func (p *plan) cleanView() {
	p.vstyle = p.numberStyle()
	p.vprefix = prefixOf(p.body)
	if strings.Contains(p.body, "\x1b[") {
		p.vbody = stripANSI(p.body)
		if p.vstarts = lineStarts(p.vbody); len(p.vstarts) != len(p.starts) {
			p.vbody, p.vstarts = p.body, nil // cannot happen; read the raw lines then
		}
	}
}

// lineStarts indexes the lines of s: the start of each line, and one past
// the end of s as if a '\n' followed it. Callers keep s under 2 GiB
// (maxPlanBytes).
func lineStarts(s string) []int32 {
	starts := make([]int32, 1, strings.Count(s, "\n")+2)
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		starts = append(starts, int32(i))
	}
	return append(starts, int32(len(s)+1))
}

// spanBytes is the size of lines [i, j) with their line breaks: lines are
// contiguous in body, so it is the distance between their starts.
func (p *plan) spanBytes(i, j int) int { return int(p.starts[j] - p.starts[i]) }

// line returns line i, without its '\n'.
func (p *plan) line(i int) string {
	return p.body[p.starts[i] : p.starts[i+1]-1]
}

// viewLine returns line i as classifiers read it (cleanView).
func (p *plan) viewLine(i int) string {
	l := p.body
	starts := p.starts
	if p.vstarts != nil {
		l, starts = p.vbody, p.vstarts
	}
	l = l[starts[i] : starts[i+1]-1]
	if p.vprefix != noPrefix {
		l = l[p.vprefix.cut(l):]
	}
	if p.vstyle != numNone && numberedLine(l) == p.vstyle {
		l = stripNumber(l, p.vstyle)
	}
	return l
}

// viewOffset is where the text the classifiers read (viewLine) starts in
// line l as it is printed: after a CI runner's or a task's prefix and a
// read's line number; 0 for a bare line. viewLine cuts the same two
// prefixes itself: it runs on every line, and going through this offset
// cost 0.45 % of structural compression's instructions (callgrind).
func (p *plan) viewOffset(l string) int {
	off := 0
	if p.vprefix != noPrefix {
		off = p.vprefix.cut(l)
	}
	if p.vstyle != numNone && numberedLine(l[off:]) == p.vstyle {
		off = len(l) - len(stripNumber(l[off:], p.vstyle))
	}
	return off
}

// allLines yields every line with its index.
func (p *plan) allLines() iter.Seq2[int, string] {
	return p.linesTo(p.n)
}

// linesTo yields the first n lines with their indices.
func (p *plan) linesTo(n int) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for i := range n {
			if !yield(i, p.line(i)) {
				return
			}
		}
	}
}

// allViews yields every line as classifiers read it, with its index.
func (p *plan) allViews() iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for i := range p.n {
			if !yield(i, p.viewLine(i)) {
				return
			}
		}
	}
}

// groupOf returns the group of line i, or -1.
func (p *plan) groupOf(i int) int32 {
	if p.group == nil {
		return -1
	}
	return p.group[i]
}

// setGroup puts line i in group g, making room for groups on first use.
func (p *plan) setGroup(i int, g int32) {
	if p.group == nil {
		p.group = make([]int32, p.n)
		for k := range p.group {
			p.group[k] = -1
		}
	}
	p.group[i] = g
}

// stripANSI removes CSI escape sequences ("\x1b[32m", "\x1b[0K"). A line
// repainted in place reads as a terminal shows it: when the cursor is
// sent back to the line's first column ("\x1b[1000D", "\x1b[1G") and the
// line erased ("\x1b[K"), what was printed before the move is gone, and
// "\x1b[2K" erases all of it (ECMA-48: CUB, CHA, EL). minitest-reporters'
// progress bar and many spinners repaint so; read as bytes, a run's
// " FAIL Cart#test_sums (0.02s)" sat behind the bar it replaced. Text is
// only ever cut where an escape sequence stood, never inside a rune.
func stripANSI(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	lineStart := 0 // where the current line starts in b
	moved := -1    // where the cursor went back to the first column, or -1
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == '?') {
				j++
			}
			if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
				switch n := s[i+2 : j]; s[j] {
				case 'D': // cursor back n columns: to the first when n reaches it
					if d := digits(n); d == len(n) && d > 0 && d <= 7 {
						if k, _ := strconv.Atoi(n); k >= len(b)-lineStart {
							moved = len(b)
						}
					}
				case 'G': // cursor to column n, the first when absent
					if n == "" || n == "0" || n == "1" {
						moved = len(b)
					}
				case 'K': // erase in line
					switch {
					case n == "2":
						b, moved = b[:lineStart], -1
					case moved >= 0 && (n == "" || n == "0"):
						b, moved = append(b[:lineStart], b[moved:]...), -1
					}
				}
				i = j
				continue
			}
		}
		b = append(b, s[i])
		if s[i] == '\n' {
			lineStart, moved = len(b), -1
		}
	}
	return string(b)
}

func defaultCategory(k Kind) string {
	switch k {
	case KindLog:
		return "log lines"
	case KindFileRead:
		return "file lines"
	case KindDirListing:
		return "entries"
	case KindSearch:
		return "hits"
	case KindDiff:
		return "diff lines"
	}
	return "output"
}

// category returns the index of a category name, adding it on first use.
func (p *plan) category(name string) uint8 {
	for i, c := range p.cats {
		if c == name {
			return uint8(i)
		}
	}
	p.cats = append(p.cats, name)
	return uint8(len(p.cats) - 1)
}

func (p *plan) set(i int, t tier, rank int, cat uint8) {
	p.cls[i].tier, p.cls[i].rank, p.cls[i].cat = t, int32(min(rank, 1<<30)), cat
}

// raise moves line i up to tier t (never down), with the given rank.
func (p *plan) raise(i int, t tier, rank int) {
	if i < 0 || i >= len(p.cls) {
		return
	}
	c := &p.cls[i]
	if t < c.tier || (t == c.tier && int32(rank) < c.rank) {
		if c.tier == tierNever {
			return
		}
		c.tier, c.rank = t, int32(min(rank, 1<<30))
	}
}

// addContext raises the lines around every line of tier upTo or better to
// tierContext, nearest first.
func (p *plan) addContext(upTo tier) {
	if p.context == 0 {
		return
	}
	n := p.n
	for i := 0; i < n; i++ {
		if p.cls[i].tier > upTo {
			continue
		}
		for d := 1; d <= p.context; d++ {
			if j := i - d; j >= 0 && p.cls[j].tier > tierContext && p.cls[j].tier != tierNever {
				p.raise(j, tierContext, d)
			}
			if j := i + d; j < n && p.cls[j].tier > tierContext && p.cls[j].tier != tierNever {
				p.raise(j, tierContext, d)
			}
		}
	}
}

// foldRepeats marks exact repeats of the previous line tierNever, so a run
// of identical lines renders as the first one plus "line repeated N times".
// Blank lines are left alone: a blank run costs less than a marker.
// The first line of a run of three or more is raised to tierHigh: "this
// happened 300 times" is worth a line in any log.
func (p *plan) foldRepeats() {
	n := p.n
	for i := 1; i < n; i++ {
		if p.line(i) != p.line(i-1) || strings.TrimSpace(p.line(i)) == "" {
			continue
		}
		j := i
		for j < n && p.line(j) == p.line(i-1) {
			p.cls[j].tier = tierNever
			j++
		}
		if j-i >= 2 {
			p.raise(i-1, tierHigh, 0)
		}
		i = j - 1
	}
}

// smoothNoise turns short runs of unranked lines that sit between two noise
// lines of the same kind into that noise: the continuation lines of a shell
// trace, the blank lines between passing tests. One marker then covers the
// whole region instead of a marker per fragment.
func (p *plan) smoothNoise() {
	n := p.n
	plain := func(c lineClass) bool { return c.tier == tierFill && c.rank == 0 && c.cat == 0 }
	for i := 0; i < n; {
		if !plain(p.cls[i]) {
			i++
			continue
		}
		j := i
		for j < n && plain(p.cls[j]) {
			j++
		}
		if i > 0 && j < n && j-i <= 50 {
			a, b := p.cls[i-1], p.cls[j]
			if a.tier == tierNoise && b.tier == tierNoise && a.cat == b.cat {
				for k := i; k < j; k++ {
					p.cls[k].tier, p.cls[k].cat = tierNoise, a.cat
				}
			}
		}
		i = j
	}
}

// headTail gives the first and last lines of the output tierHead (when they
// are below it), so a reader sees how the output starts and ends.
// Noise stays noise: a log that opens with a shell trace gains nothing from
// keeping it.
func (p *plan) headTail(head, tail int) {
	n := p.n
	for i := 0; i < head && i < n; i++ {
		if p.cls[i].tier == tierFill {
			p.raise(i, tierHead, i)
		}
	}
	for j := 0; j < tail && n-1-j >= 0; j++ {
		if p.cls[n-1-j].tier == tierFill {
			p.raise(n-1-j, tierHead, j)
		}
	}
}

// fillRanks ranks the tierFill lines that have no rank yet by their
// distance from the nearer end of the output, the start weighing double, so
// filling grows the head twice as fast as the tail.
func (p *plan) fillRanks() {
	n := p.n
	for i := range p.cls {
		if p.cls[i].tier == tierFill && p.cls[i].rank == 0 {
			p.cls[i].rank = int32(min(i, 2*(n-1-i)))
		}
	}
}

func (p *plan) lineCost(i int) int {
	l := len(p.line(i))
	if p.mustCut > 0 && p.must(i) {
		l = len(p.cutMust(i))
	} else if c := p.hitCutAt(i); c > 0 {
		l = c + cutMarkCost
	} else if l > p.maxLine {
		l = p.maxLine + 32
	}
	return l + 1
}

// hitCutAt is where kept line i is cut when it is a search hit whose text
// runs past hitCut by more than the marker would take, or 0.
func (p *plan) hitCutAt(i int) int {
	if p.hitCut == 0 || p.hitText == nil || p.hitText[i] <= 0 {
		return 0
	}
	l := p.line(i)
	c := int(p.hitText[i]) + p.hitCut
	if len(l) <= c+cutMarkCost || c > p.maxLine {
		return 0
	}
	for c > 0 && !utf8.RuneStart(l[c]) {
		c--
	}
	return c
}

// must reports whether line i is kept at any ratio. A kind that sets no
// mustRank (-1) has no such line, whatever its critical lines' ranks.
func (p *plan) must(i int) bool {
	c := p.cls[i]
	return p.mustRank >= 0 && c.tier == tierCritical && c.rank <= p.mustRank
}

// minMustCut is the least of a must-keep line that a cut keeps: test ids
// are rarely longer.
const minMustCut = 120

// planMustCut sets mustCut when the must-keep lines alone overflow critCap:
// the largest cut at which they fit, but never under minMustCut.
func (p *plan) planMustCut() {
	if p.mustRank < 0 {
		return
	}
	var lens []int32
	total, fixed := 0, 0
	for i, l := range p.allLines() {
		if !p.must(i) {
			continue
		}
		n := min(len(l), p.maxLine+32) + 1
		total += n
		off := p.viewOffset(l)
		if strings.HasPrefix(l[off:], "{") || p.cls[i].rank == 0 {
			fixed += n // JSON events and summaries are never cut
		} else {
			// A CI runner's or a read's prefix is kept whole before the
			// cut, which counts from the line's own start (cutMust).
			fixed += off
			lens = append(lens, int32(n-off))
		}
	}
	if total <= p.critCap {
		return
	}
	lo, hi := minMustCut, p.maxLine // the largest cut that fits, by bisection
	fits := func(cut int) bool {
		n := fixed
		for _, l := range lens {
			n += min(int(l), cut+cutMarkCost)
		}
		return n <= p.critCap
	}
	if !fits(lo) {
		p.mustCut = lo
		p.planTypeCuts()
		return
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	p.mustCut = lo
	p.planTypeCuts()
}

// maxTypePastCut is how far past the cut the first line of an exception
// type is kept to name it: a project's own type comes with its module path
// ("wakil.app.git_service.GitServiceError"), which a 120-byte cut after a
// long test id left out.
const maxTypePastCut = 120

// planTypeCuts marks, among the must-keep lines cut at pytest's " - ",
// the first line of each exception type its reason names
// (AssertionError, a project's own GitServiceError): that line is cut
// after the type instead of after the id, when the type ends before the
// cut or at most maxTypePastCut bytes past it.
// The kind of each failure is news once, as rankErrorsFromBothEnds keeps
// the first error line of each type; 300 failures of one kind repeat it
// only once.
func (p *plan) planTypeCuts() {
	var seen map[string]bool
	for i, l := range p.allLines() {
		if !p.must(i) || p.cls[i].rank == 0 {
			continue
		}
		off := p.viewOffset(l)
		if l = l[off:]; strings.HasPrefix(l, "{") {
			continue
		}
		d := strings.Index(l, " - ")
		if d <= 0 || d >= p.mustCut {
			continue
		}
		x := leadingExceptionEnd(l[d+3:])
		if x == 0 || d+3+x > p.mustCut+maxTypePastCut || d+3+x < idEnd(l) {
			continue
		}
		if typ := l[d+3 : d+3+x]; !seen[typ] {
			if seen == nil {
				seen, p.typeCuts = map[string]bool{}, map[int32]int32{}
			}
			seen[typ] = true
			p.typeCuts[int32(i)] = int32(off + d + 3 + x)
		}
	}
}

// idEnd returns where the second word of a line ends ("FAILED <id>",
// "--- FAIL: <id>" counts "FAIL:" as the first word after the dashes):
// the test id of a failing-test line.
func idEnd(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '-') {
		i++
	}
	for w := 0; w < 2; w++ {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		for i < len(s) && s[i] != ' ' {
			i++
		}
	}
	return i
}

// maxLineCap bounds how long a kept line may stay before it is cut.
const maxLineCap = 16384

// cutMarkCost is what "[… 1234 bytes omitted …]" takes.
const cutMarkCost = 28

// cutMust renders must-keep line i under mustCut: its start up to the cut,
// or up to pytest's " - " that ends the test id when that comes first (but
// never inside the id), then a bytes marker. Lines the cut would not
// shorten stay whole, and so do run summaries and JSON events.
func (p *plan) cutMust(i int) string {
	s := p.line(i)
	// The cut counts from where the line's own text starts: a CI
	// runner's timestamp or a read's line number before it is kept whole
	// and costs nothing of the cut (it used to take 29 bytes of it, and
	// the cut fell inside the test id).
	off := p.viewOffset(s)
	cut := off + p.mustCut
	if strings.HasPrefix(s[off:], "{") || p.cls[i].rank == 0 {
		// A summary is short and says everything at once; a `go test
		// -json` event names its test after the time, action and
		// package, and half an event is no event.
		return p.cutLong(s)
	}
	if d := strings.Index(s[off:], " - "); d > 0 && off+d < cut {
		cut = off + d
		if e, ok := p.typeCuts[int32(i)]; ok {
			cut = int(e) // through the reason's exception type (planTypeCuts)
		}
	}
	cut = max(cut, off+idEnd(s[off:])) // never inside the test id itself
	if len(s) <= cut+cutMarkCost {
		return p.cutLong(s)
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + countMarker(len(s)-cut, "bytes")
}

// leadingExceptionEnd returns the length of the exception type r starts
// with ("AssertionError", "wakil.mcp.tools.ToolError", with its module
// path; exceptionName's test on its last part), or 0.
func leadingExceptionEnd(r string) int {
	j := 0
	for j < len(r) && (isWordByte(r[j]) || r[j] == '.' && j+1 < len(r) && isWordByte(r[j+1])) {
		j++
	}
	last := r[strings.LastIndexByte(r[:j], '.')+1 : j]
	if j < len(r) && r[j] != ':' || exceptionName(last) != last {
		return 0
	}
	return j
}

// gapDelta says how the number of gaps changes when line i is kept.
func (p *plan) gapDelta(i int) int {
	left := i == 0 || p.cls[i-1].keep
	right := i == p.n-1 || p.cls[i+1].keep
	switch {
	case left && right:
		return -1
	case !left && !right:
		return 1
	}
	return 0
}

// selectGreedy keeps lines in (tier, rank, index) order: all critical lines
// that fit in critCap, then the rest while they fit in the budget, noise
// excepted.
func (p *plan) selectGreedy() {
	// Noise (passing tests, shell traces) is never chosen to fill the
	// budget: when everything else fits, a shorter output is better.
	order := p.selectionOrder()
	if p.hard {
		p.critCap = min(p.critCap, p.budget)
	}
	p.planMustCut()
	used := p.markCost
	if p.preface != "" {
		used += len(p.preface) + 1
	}
	misses := 0
	limit := p.critCap
	reserve, listCost := p.locationListReserve()
	prev := tierCritical // the tier of the line before in order
	var skipped []int32  // critical lines critCap left out, in their order
	covered := p.coverText == nil
	for k, key := range order {
		i := int(uint32(key))
		if p.cls[i].tier != tierCritical && (k == 0 || prev == tierCritical) {
			// The critical lines are in: the rest gets the aim, or a
			// quarter of it beyond the critical lines when they took more.
			limit = max(p.budget, used+p.budget/4) - reserve
			if p.hard {
				limit = p.budget - reserve
			}
			// That room goes to the critical lines critCap left out
			// first: an error line outranks the location line under it.
			for _, j32 := range skipped {
				j := int(j32)
				if p.cls[j].keep {
					continue
				}
				if cost, taken := p.take(j); used+cost <= limit {
					used += cost
				} else {
					p.untake(j, taken)
				}
			}
			skipped = nil
		}
		// A kind with a name cover (diffs) runs it once, here, before the
		// lines it would otherwise take in rank order.
		if !covered && (p.cls[i].tier > tierHigh || p.cls[i].tier == tierHigh && p.cls[i].rank >= p.coverRank) {
			covered = true
			if room := limit * p.coverShare / 100; room > used {
				p.coverNamesWithin(&used, room)
			}
		}
		prev = p.cls[i].tier
		if p.cls[i].keep || p.parent != nil && p.parent[i] == onlyWithChild {
			continue // taken as another line's parent, or only ever so
		}
		cost, taken := p.take(i)
		// A hard budget holds must-keep lines to it too: a clamp that
		// cannot cut under its limit falls back to the head alone, which
		// keeps none of them (a run with 150 failing examples).
		if used+cost > limit && (!p.must(i) || p.hard) {
			p.untake(i, taken)
			if p.cls[i].tier == tierCritical {
				skipped = append(skipped, int32(i))
			} else {
				// A few smaller lines may still fit; stop once it is clear
				// nothing more will.
				misses++
				if misses > 64 {
					break
				}
			}
			continue
		}
		used += cost
	}
	// Lists take what selection left of the aim, and at least the reserve.
	// Beyond that they may pass the aim by half of it, and by the whole aim
	// when must-keep lines alone overflowed it: a location is where the
	// next read goes, a marker's `path:line` is a few dozen bytes where the
	// frame it stands for is a hundred or more, and the reserve alone is
	// two or three locations in a short traceback aimed at the floor. The
	// reserve taken from selection stays as it was, so the lines kept whole
	// (the innermost frame) are the same. Measured on the tuning set
	// (issue 23): file:line at 4x 89.5 -> 96.4 %, at 10x 79.2 -> 85.2 %, the
	// achieved ratios 5.27 -> 5.25x and 11.51 -> 11.44x.
	p.listLeft = max(p.budget-used, reserve, min(listCost, reserve+p.budget/2))
	if used > p.budget {
		p.listLeft = max(p.listLeft, min(listCost, p.budget))
	}
	// Critical lines that did not fit (a compiler's hundred errors past
	// what critical lines may take) are named by their locations, within
	// half the aim: where the next edit goes.
	if c := p.omittedCriticalLocations(); c > 0 {
		p.listLeft = max(p.listLeft, min(c, p.budget/2))
	}
	if p.hard {
		p.listLeft = max(p.budget-used, 0) // what selection left, no more
	}
	p.usedBytes = used + p.listLeft
	p.fillSmallGaps()
}

// maxCoverLines bounds the lines whose names selection's cover reads (a
// diff of 500 KB or more has that many): past them the order of the
// classes alone decides, and the cover's tables stay within a megabyte or
// two (TestCompressionMemoryBounded).
const maxCoverLines = 1 << 14

// coverNamesWithin keeps the lines that show the most code names no kept
// line shows yet (coverNames), each with its parents (take), while *used
// stays within limit. The names are read only here: when the budget is
// spent before selection reaches them (a tight aim), reading them would be
// a second pass over the text for nothing.
func (p *plan) coverNamesWithin(used *int, limit int) {
	names := nameScratchPool.Get().(*nameScratch)
	defer names.release()
	names.reset(min(p.n, maxCoverLines))
	for i := 0; i < names.n; i++ {
		names.addLine(p.coverText(i))
	}
	coverNames(p, names, func(i, limit int) bool {
		if p.cls[i].keep {
			return true
		}
		cost, taken := p.take(i)
		if *used+cost > limit {
			p.untake(i, taken)
			return false
		}
		*used += cost
		return true
	}, limit)
}

// take keeps line i and those of its parents not kept yet, and returns
// what they cost (the gap markers they add or remove included) and how
// many it kept, for untake.
func (p *plan) take(i int) (cost, taken int) {
	if p.parent != nil {
		if a := p.parent[i]; a >= 0 && !p.cls[a].keep {
			cost, taken = p.take(int(a))
		}
	}
	cost += p.lineCost(i) + p.gapDelta(i)*p.markCost
	p.cls[i].keep = true
	return cost, taken + 1
}

// untake undoes take(i): line i and the taken-1 parents above it.
func (p *plan) untake(i, taken int) {
	for ; taken > 0; taken-- {
		p.cls[i].keep = false
		if p.parent == nil || p.parent[i] < 0 {
			return
		}
		i = int(p.parent[i])
	}
}

// onlyWithChild as a line's parent marks a line that is kept only as
// another line's parent: a header that says nothing the lines under it
// do not need it for.
const onlyWithChild = -2

// setParent records that line i is read under line j (or onlyWithChild).
func (p *plan) setParent(i, j int) {
	if p.parent == nil {
		p.parent = make([]int32, p.n)
		for k := range p.parent {
			p.parent[k] = -1
		}
	}
	p.parent[i] = int32(j)
}

// selectionOrder lists the lines below tierNoise in (tier, rank, index)
// order, each as its rank (sign bit flipped, so unsigned order is signed
// order) over its index: grouped by tier in one counting pass, each tier
// sorted as plain integers, which is several times faster than sorting
// indices with a comparison function that reads the classes (issue 23),
// and only as far as selection reads it (inOrder).
func (p *plan) selectionOrder() iter.Seq2[int, uint64] {
	var count [tierNoise + 1]int
	for _, c := range p.cls {
		if c.tier < tierNoise {
			count[c.tier+1]++
		}
	}
	for t := 1; t <= int(tierNoise); t++ {
		count[t] += count[t-1]
	}
	order := make([]uint64, count[tierNoise])
	next := count
	for i, c := range p.cls {
		if c.tier < tierNoise {
			order[next[c.tier]] = uint64(uint32(c.rank)^1<<31)<<32 | uint64(uint32(i))
			next[c.tier]++
		}
	}
	return inOrder(order, count[:])
}

// locationListReserve is the part of the budget kept back for the
// location lists of omitted lines, in the diagnostic kinds (those with a
// frame category): what listing every distinct `path:line` of a line that
// is not critical would take, written out as gapLocations writes them, up
// to three fifths of the budget (critical lines, and the innermost and
// outermost frame lines, which name their own location, come first). A
// location is worth more to an agent than the line it is on: it is where
// the next read goes. Traceback frames, warnings, compiler notes and log
// lines alike (issue 23: on the tuning set, listing all of them rather than
// frames only took file:line at 10x from 65 to 79 %). all is what listing
// every one would take, counted up to the budget.
func (p *plan) locationListReserve() (reserve, all int) {
	switch {
	case p.frameCat >= 0:
		return p.locationCost(p.budget * 3 / 5)
	case p.groupLines:
		// Search hits: the markers of omitted hits name them literally
		// (hitLocations), from a smaller reserve, since every kept hit
		// shows its own location and its text besides.
		return p.locationCost(p.budget / searchLocations)
	}
	return 0, 0
}

// searchLocations: the location lists of omitted search hits take up to
// 1/searchLocations of the aim from selection, and, as diagnostic lists,
// may pass the aim by half of it. Chosen on the tuning set (issue 23):
// a quarter or a half held back, passing the aim by nothing, a quarter,
// half or all of it: file:line at 4x 78.4-86.5 %, at 10x 65.9-70.0 %,
// next-step references 54.7-54.8 % throughout; lists without any bound
// reach 92.8 % and 83.2 %, but pass the aim of a long search several times.
const searchLocations = 2

// locationCost is what listing every distinct location of a line that is
// neither critical nor never-kept would take (all, counted up to the
// budget), and that up to most (reserve).
func (p *plan) locationCost(most int) (reserve, all int) {
	tally := newLocationTally(len(p.body))
	for k, c := range p.cls {
		if tally.bytes >= p.budget {
			break
		}
		if c.tier == tierNever || c.tier == tierCritical || p.scanned && c.feat&featLoc == 0 {
			continue
		}
		// Every location of the line, which a list names when it has
		// room: its path:line ones, else the one locationParts finds in
		// another form (File "a.py", line 3; a.ts(3,1)).
		v := p.viewLine(k)
		found := false
		for path, line := range colonLocations(v) {
			tally.add(path, line)
			found = true
			if tally.bytes >= p.budget {
				break
			}
		}
		if !found {
			tally.add(locationParts(v))
		}
	}
	return min(tally.bytes, most), tally.bytes
}

// omittedCriticalLocations is what listing the distinct locations of the
// critical lines selection left out would take, counted up to the budget.
func (p *plan) omittedCriticalLocations() int {
	var tally locationTally
	for k, c := range p.cls {
		if c.tier != tierCritical || c.keep || p.scanned && c.feat&featLoc == 0 {
			continue
		}
		if tally.bytes >= p.budget {
			break
		}
		if tally.seen.m == nil {
			tally = newLocationTally(len(p.body))
		}
		tally.add(locationParts(p.viewLine(k)))
	}
	return tally.bytes
}

// locationTally counts what listing distinct locations takes, each as a
// list writes it ("path:line, ").
type locationTally struct {
	seen  seenSet
	bytes int
}

func newLocationTally(textBytes int) locationTally {
	return locationTally{seen: newSeenSet(textBytes)}
}

// add counts a location unless it is empty or counted before.
func (t *locationTally) add(path, line string) {
	if path == "" && line == "" || t.seen.add(locationKey(path, line)) {
		return
	}
	t.bytes += len(path) + len(line) + 3
}

// fillSmallGaps keeps single omitted lines that are hardly longer than the
// marker that would stand for them: "[… 1 line omitted …]" in place of a
// 60-byte line saves little and reads badly. It may exceed the budget by a
// tenth.
func (p *plan) fillSmallGaps() {
	extra := p.budget / 10
	n := p.n
	for i := 0; i < n && extra > 0; i++ {
		if p.cls[i].keep || p.cls[i].tier == tierNever {
			continue
		}
		left := i == 0 || p.cls[i-1].keep
		right := i == n-1 || p.cls[i+1].keep
		if !left || !right {
			continue
		}
		c := p.lineCost(i) - markerCost
		if len(p.line(i)) > 2*markerCost || c > extra {
			continue
		}
		p.cls[i].keep = true
		extra -= max(c, 0)
	}
}

// render writes kept lines and a marker for each gap. It returns the output
// and the number of input lines omitted. Markers of diagnostic outputs name
// the locations of the lines they stand for ("… traceback frames at
// a.py:12, a.py:40, b.py:7"), within what selection reserved (gapLocations).
func (p *plan) render() (string, int) {
	p.locLists = p.frameCat >= 0 || p.readLocs
	// What rendering spends of the lists' room, and the locations it
	// has named, start over if it renders again.
	listLeft, locNeed := p.listLeft, p.locNeed
	out, omitted := p.renderOnce()
	if p.growLongLines(len(out)) {
		p.listLeft, p.locNeed, p.listed = listLeft, locNeed, nil
		return p.renderOnce()
	}
	return out, omitted
}

// growLongLines lets the kept lines cut at maxLine take what an output of
// size bytes leaves of the aim, shared evenly, and reports whether it
// did. A result that is one long line (a JSON reply under a harness's
// header, a minified file) was cut to an eighth of the aim and left the
// rest unused.
func (p *plan) growLongLines(size int) bool {
	if size >= p.budget || p.maxLine >= maxLineCap {
		return false
	}
	k := 0
	for i := 0; i < p.n; i++ {
		if p.cls[i].keep && len(p.line(i)) > p.maxLine && !(p.mustCut > 0 && p.must(i)) && p.hitCutAt(i) == 0 {
			k++
		}
	}
	if k == 0 {
		return false
	}
	p.maxLine = min(p.maxLine+(p.budget-size)/k, maxLineCap)
	return true
}

func (p *plan) renderOnce() (string, int) {
	var b strings.Builder
	// Selection's count of the bytes (must-keep lines may pass the aim by
	// far) sizes the output at once; an output that grows to the input's
	// size is given up, since finish would return the input anyway.
	b.Grow(min(len(p.src), max(p.critCap+p.budget, p.usedBytes+p.usedBytes/8)))
	omitted := 0
	n := p.n
	first := true
	emit := func(s string) {
		if !first {
			b.WriteByte('\n')
		}
		first = false
		b.WriteString(s)
	}
	if p.preface != "" {
		emit(p.preface)
	}
	for i := 0; i < n; {
		if b.Len() >= len(p.src) {
			return p.src, 0
		}
		if p.cls[i].keep {
			if p.mustCut > 0 && p.must(i) {
				emit(p.cutMust(i))
			} else if c := p.hitCutAt(i); c > 0 {
				l := p.line(i)
				emit(l[:c] + countMarker(len(l)-c, "bytes"))
			} else {
				emit(p.cutLong(p.line(i)))
			}
			i++
			continue
		}
		j := i
		for j < n && !p.cls[j].keep {
			j++
		}
		omitted += p.renderGap(i, j, emit)
		i = j
	}
	if p.trailingNL {
		b.WriteByte('\n')
	}
	return b.String(), omitted
}

// renderGap writes the lines [i, j) as markers. A run that repeats the kept
// line above becomes a repeat marker; a gap cheaper than its marker is
// written out instead; with groups, each group gets its own marker.
func (p *plan) renderGap(i, j int, emit func(string)) int {
	omitted := 0
	if i > 0 && p.cls[i-1].keep {
		r := i
		for r < j && p.line(r) == p.line(i-1) {
			r++
		}
		if r-i >= 2 || (r-i == 1 && len(p.line(i-1)) > 40) {
			emit(repeatMarker(r - i))
			omitted += r - i
			i = r
		}
	}
	if i >= j {
		return omitted
	}
	if p.groups != nil {
		// One marker per group, unless that is many markers.
		cuts := []int{i}
		for k := i + 1; k < j && len(cuts) <= p.groupSplit; k++ {
			if p.groupOf(k) != p.groupOf(k-1) {
				cuts = append(cuts, k)
			}
		}
		if len(cuts) <= p.groupSplit {
			cuts = append(cuts, j)
			for c := 0; c+1 < len(cuts); c++ {
				omitted += p.renderRun(cuts[c], cuts[c+1], emit)
			}
			return omitted
		}
	}
	return omitted + p.renderRun(i, j, emit)
}

// renderRun writes the lines [i, j) as one marker, or verbatim when they
// take no more room than the marker would.
func (p *plan) renderRun(i, j int, emit func(string)) int {
	// size is the bytes of the lines, counted only as far as needed to
	// tell whether they exceed limit.
	size := func(limit int) int {
		n := 0
		for k := i; k < j && n <= limit; k++ {
			n += len(p.line(k)) + 1
		}
		return n
	}
	m := linesMarker(j-i, "") // the shortest this marker can be
	if size(len(m)+1) > len(m)+1 {
		m = linesMarker(j-i, p.reason(i, j))
	}
	if size(len(m)+1) <= len(m)+1 {
		for k := i; k < j; k++ {
			emit(p.cutLong(p.line(k)))
		}
		return 0
	}
	emit(m)
	return j - i
}

// reason words what the lines [i, j) were.
func (p *plan) reason(i, j int) string {
	if p.style == reasonRange {
		// The range in the file: the tool's own numbers when it printed
		// them (the first and last numbered lines of the gap), else the
		// position in the output.
		a, z := i+1, j
		if p.lineNo != nil {
			a, z = -1, -1
			for k := i; k < j && a < 0; k++ {
				a = p.lineNo(k)
			}
			for k := j - 1; k >= i && z < 0; k-- {
				z = p.lineNo(k)
			}
		}
		var r string
		switch {
		case a < 0:
			r = p.cats[0]
		case a == z:
			r = "line " + strconv.Itoa(a)
		default:
			r = "lines " + strconv.Itoa(a) + "-" + strconv.Itoa(z)
		}
		if p.locLists {
			r += p.gapLocations(i, j, " naming ")
		}
		return r
	}
	if p.groups != nil {
		g := p.groupOf(i)
		same := g >= 0
		for k := i + 1; k < j && same; k++ {
			same = p.groupOf(k) == g
		}
		if same {
			return p.groupReason(i, j, int(g))
		}
		if g >= 0 || p.groupOf(j-1) >= 0 {
			return p.groupsReason(i, j)
		}
	}
	r := p.categoryReason(i, j)
	if p.locLists {
		r += p.gapLocations(i, j, " at ")
	}
	return r
}

// andMore closes a location list that left some out.
const andMore = ", and more"

// gapLocations lists the locations of the lines in [i, j) (traceback
// frames, warnings, compiler and log lines) that no earlier marker named
// (tracebacks repeat their outer frames), each
// written out literally, innermost last as in the trace:
// " at /x/query.py:1376, /x/query.py:1398, /x/manager.py:85". A literal
// path:line is what an agent pastes into its next call (an editor's goto, a
// read with an offset, grep); a shared directory written once in brace form
// is shorter but no tool reads it (issue 23). When not all fit, the ends of
// the run are named before its middle. The list stays under two thirds
// of the bytes it stands for (half left the second frame of a short gap
// with long absolute paths out; on the tuning set two thirds and three
// quarters gave the same file:line, 82.4 to 82.9 % at 4x, at the same
// achieved ratio), and all lists together within what selection
// reserved for them (listLeft), so a marker never costs much of what it
// saves and the output stays near its aim.
func (p *plan) gapLocations(i, j int, lead string) string {
	gapBytes := p.spanBytes(i, j)
	limit := min(gapBytes*2/3, p.listLeft)
	if p.scanned {
		// Passing tests name their files too (Playwright's "✓ 3 [chromium]
		// › tests/a.spec.ts:12:7 › …"); a run of them early in the output
		// must not spend the room of the failure's frames after it. A
		// list whose gap holds such lines leaves what the later gaps'
		// other locations need.
		if p.noiseLocationIn(i, j) {
			after := p.locationNeedAfter(j)
			limit = min(limit, p.listLeft-after)
		}
	}
	// parts is line k's location, empty when it names none.
	parts := func(k int) (path, line string) {
		if c := p.cls[k]; c.tier == tierNever || p.scanned && c.feat&featLoc == 0 {
			return "", ""
		}
		return locationParts(p.viewLine(k))
	}
	// location is line k's part of the list, or "" when it names none or
	// an earlier marker named it (a repeated frame).
	label := func(path, line string) (string, uint64) {
		h := locationKey(path, line)
		if path == "" && line == "" || p.listed[h] {
			return "", 0
		}
		return cleanLabel(path+":"+line, 240), h
	}
	location := func(k int) (string, uint64) { return label(parts(k)) }
	list := func(h uint64) {
		if p.listed == nil {
			p.listed = make(map[uint64]bool)
		}
		p.listed[h] = true
	}
	// Whether every location fits, counted without building the parts
	// (a repeat is counted again, so a run of repeats may be taken for one
	// that does not fit; it is then listed from both ends, below).
	size := len(lead)
	for k := i; k < j && size <= limit+2; k++ {
		if path, line := parts(k); path != "" || line != "" {
			size += min(len(path)+1+len(line), 240) + 2
		}
	}
	var b strings.Builder
	b.WriteString(lead)
	n, more := 0, false
	add := func(part string) {
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(part)
		n++
	}
	if size <= limit+2 {
		// Room the lines' first locations leave goes to their others, in
		// line order: a report's prose names several a line ("store.go:136
		// … store.go:119"), and each is a place the agent may open next.
		extra := limit - size
		for k := i; k < j; k++ {
			path, line := parts(k)
			if path == "" && line == "" {
				continue
			}
			if part, h := label(path, line); part != "" {
				if sep := 2 * min(n, 1); b.Len()+sep+len(part) > limit {
					more = true
					continue // a shorter one may still fit
				}
				add(part)
				list(h)
			}
			if extra <= 0 {
				continue
			}
			for path, line := range colonLocations(p.viewLine(k)) {
				part, h := label(path, line)
				if part == "" {
					continue // the first, or named before
				}
				if len(part)+2 > extra || b.Len()+2+len(part) > limit {
					more = true
					continue
				}
				extra -= len(part) + 2
				add(part)
				list(h)
			}
		}
	} else {
		// Not all fit: the ends of the run are named, half the list each,
		// the middle left out. The innermost frame is the last of a
		// Python traceback and the first of a Java or Go one, and the
		// outermost is the caller's own code.
		half := len(lead) + (limit-len(lead))/2
		// Frames of the machinery around the program give way to the
		// program's own, where the fix goes: a Go test's panic opens and
		// closes in the runtime and testing packages.
		own := false
		for k := i; k < j && !own; k++ {
			if path, line := parts(k); (path != "" || line != "") && !isMachineryPath(path) {
				own = true
			}
		}
		skipped := 0 // machinery locations pick passed over
		pick := func(k int) (string, uint64) {
			path, line := parts(k)
			if path == "" && line == "" {
				return "", 0
			}
			if own && isMachineryPath(path) {
				skipped++
				return "", 0
			}
			return label(path, line)
		}
		k := i
		for ; k < j; k++ {
			part, h := pick(k)
			if part == "" {
				continue
			}
			// When the list has room for one end only, the end that
			// ranks first takes it: the innermost frame of a
			// JavaScript, Java or Go stack is the first of its run,
			// where the half split gave the slot to the last.
			if b.Len()+len(part)+2 > half &&
				!(n == 0 && b.Len()+len(part)+2 <= limit && p.outranksLast(k, j, parts)) {
				break
			}
			add(part)
			list(h)
		}
		var tail []int32 // the end's lines, last first
		room := limit - b.Len()
		for z := j - 1; z >= k; z-- {
			part, h := pick(z)
			if part == "" {
				continue
			}
			if len(part)+2 > room {
				more = true
				break
			}
			room -= len(part) + 2
			tail = append(tail, int32(z))
			list(h)
		}
		for x := len(tail) - 1; x >= 0; x-- {
			path, line := parts(int(tail[x]))
			add(cleanLabel(path+":"+line, 240))
		}
		// What the program's frames left of the list goes to the
		// machinery's, in their order.
		for z := i; skipped > 0 && z < j && b.Len()+8 <= limit; z++ {
			if path, line := parts(z); path == "" && line == "" || !isMachineryPath(path) {
				continue
			}
			skipped--
			part, h := location(z)
			if part == "" {
				continue
			}
			if b.Len()+2+len(part) > limit {
				more = true
				continue
			}
			add(part)
			list(h)
		}
	}
	if n == 0 {
		return "" // nothing fitted
	}
	if more {
		b.WriteString(andMore)
	}
	p.listLeft -= b.Len()
	return b.String()
}

// locationNeedAfter is what the locations of the omitted lines from j on
// would take in a list, passing tests' and noise's left out: the room a
// list before them leaves them. Lists are written in line order, so the
// need is counted once in all, then a cursor takes off what lies before j.
func (p *plan) locationNeedAfter(j int) int {
	if p.locNeed.at < 0 {
		p.locNeed.at = 0
		p.locNeed.left = p.locationNeed(0, p.n)
	}
	if j > p.locNeed.at {
		p.locNeed.left -= p.locationNeed(p.locNeed.at, j)
		p.locNeed.at = j
	}
	return p.locNeed.left
}

// locationNeed is what the locations of the omitted lines of [i, j) that
// are not noise take in a list.
func (p *plan) locationNeed(i, j int) int {
	need := 0
	for k := i; k < j; k++ {
		c := p.cls[k]
		if c.keep || c.tier == tierNever || c.tier == tierNoise || c.feat&featLoc == 0 {
			continue
		}
		if path, line := locationParts(p.viewLine(k)); path != "" || line != "" {
			need += min(len(path)+1+len(line), 240) + 2
		}
	}
	return need
}

// noiseLocationIn reports whether a noise line of [i, j) names a location.
func (p *plan) noiseLocationIn(i, j int) bool {
	for k := i; k < j; k++ {
		if c := p.cls[k]; c.tier == tierNoise && c.feat&featLoc != 0 {
			return true
		}
	}
	return false
}

// isMachineryPath reports whether a frame's path is in the machinery that
// runs a program or reports its crash rather than in the program: Go's
// runtime and testing packages under a GOROOT (…/go/src/runtime/, a
// test's panic opens and closes in them), Python's frozen import system,
// Node's internals, Rust's standard library sources (/rustc/). A library
// the program calls is not machinery: the frame where it raised is the
// innermost that matters. One search for "src" does the Go part: the
// lists call it for every location they weigh.
func isMachineryPath(path string) bool {
	for off := 0; ; {
		k := strings.Index(path[off:], "src")
		if k < 0 {
			break
		}
		k += off
		off = k + 3
		if k < 3 || path[k-2] != 'o' || path[k-3]|0x20 != 'g' || k+4 >= len(path) {
			continue
		}
		sep := path[k-1]
		if sep != '/' && sep != '\\' || path[k+3] != sep {
			continue
		}
		rest := path[k+4:]
		for _, pkg := range [...]string{"runtime", "testing"} {
			if len(rest) > len(pkg) && rest[len(pkg)] == sep && rest[:len(pkg)] == pkg {
				return true
			}
		}
	}
	return strings.HasPrefix(path, "<frozen ") || strings.Contains(path, "node:internal") || strings.Contains(path, "/rustc/")
}

// outranksLast reports whether line first, which names a location, ranks
// before the last line of (first, j) that names one (a more important
// tier, or the same tier and a lower rank: rankFrames ranks the innermost
// frame first).
func (p *plan) outranksLast(first, j int, parts func(int) (string, string)) bool {
	for k := j - 1; k > first; k-- {
		if path, line := parts(k); path != "" || line != "" {
			a, b := p.cls[first], p.cls[k]
			return a.tier < b.tier || a.tier == b.tier && a.rank < b.rank
		}
	}
	return false
}

// categoryReason words a gap by the categories of its lines.
func (p *plan) categoryReason(i, j int) string {
	counts := make([]int, len(p.cats))
	for k := i; k < j; k++ {
		counts[p.cls[k].cat]++
	}
	type cc struct{ cat, n int }
	var list []cc
	for c, n := range counts {
		if n > 0 {
			list = append(list, cc{c, n})
		}
	}
	// Most frequent first; ties by category order, which is fixed by the
	// classifier, so the wording is deterministic.
	slices.SortStableFunc(list, func(a, b cc) int { return b.n - a.n })
	if len(list) == 1 && p.style != reasonCounted {
		return p.cats[list[0].cat]
	}
	if len(list) > 3 {
		rest := 0
		for _, c := range list[2:] {
			rest += c.n
		}
		list = list[:2]
		// The rest reads "other": a category of that name among the
		// first two takes it ("9 context, 9 other", not "9 context,
		// 5 other, 4 other").
		if k := slices.IndexFunc(list, func(c cc) bool { return p.cats[c.cat] == "other" }); k >= 0 {
			list[k].n += rest
			slices.SortStableFunc(list, func(a, b cc) int { return b.n - a.n })
		} else {
			list = append(list, cc{-1, rest})
		}
	}
	var b strings.Builder
	for k, c := range list {
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(c.n))
		b.WriteByte(' ')
		if c.cat < 0 {
			b.WriteString("other")
		} else {
			b.WriteString(p.cats[c.cat])
		}
	}
	return b.String()
}

// groupReason words a gap inside one group: "hits in a.go at lines 3, 9".
// Under its own heading (ls -R's "dir:"), with only the group's own lines
// kept between, the group is not named again.
func (p *plan) groupReason(i, j, g int) string {
	var b strings.Builder
	b.WriteString(p.groupUnit)
	if p.headingOf != nil {
		k := i - 1 // back over the kept lines of this group to its heading
		for k >= 0 && p.cls[k].keep && p.groupOf(k) == int32(g) {
			k--
		}
		if k >= 0 && p.cls[k].keep && p.headingOf[k] == int32(g) {
			return b.String()
		}
	}
	if p.groupLines && p.hitLine != nil && p.hitLocations(&b, i, j, p.groups[g]) {
		return b.String()
	}
	b.WriteString(" in ")
	b.WriteString(p.groups[g])
	return b.String()
}

// maxLinesListed bounds the bare line numbers one marker lists after its
// literal locations. The literal ones are bounded by bytes alone (the gap's
// and listLeft): a count of 48 for both stopped long lists of one file's
// hits while the aim still had room for them, which a Rust project's
// searches (round 19's tuning source) showed: file:line at 4x 81.1 ->
// 82.5 %, at the defaults 80.9 -> 82.8 %, at 10x 46.2 -> 46.6 %, the
// achieved ratios unchanged (issue 23). Stop 41 had measured 24 -> 48 at
// 79.2 -> 80.7 %, more than 48 changing nothing then.
const maxLinesListed = 48

// hitLocations writes where the omitted hits of one file were, as literal
// locations, " at a.go:12, a.go:40": what an agent pastes into its next
// read or edit (issue 23: a bare line number is not a location any tool
// takes). The first is always literal (it costs no more than naming the
// file would); once the list reaches the bytes the gap stands for, or
// what is left of the aim's lists (listLeft), the rest of the one file's
// hits are line numbers, ", and lines 88, 90", up to maxLinesListed of
// them. It writes nothing and reports false when the gap holds no hit.
func (p *plan) hitLocations(b *strings.Builder, i, j int, path string) bool {
	gapBytes := p.spanBytes(i, j)
	limit := b.Len() + min(gapBytes, p.listLeft)
	n, bare, literal := 0, 0, true
	for k := i; k < j; k++ {
		if p.hitLine[k] <= 0 {
			continue
		}
		no := strconv.Itoa(int(p.hitLine[k]))
		switch {
		case n == 0:
			b.WriteString(" at ")
		case literal && b.Len()+2+len(path)+1+len(no) > limit:
			literal = false
			b.WriteString(", and lines ")
		default:
			b.WriteString(", ")
		}
		if !literal && bare == maxLinesListed {
			b.WriteString("…")
			break
		}
		if literal {
			b.WriteString(path)
			b.WriteByte(':')
			p.listLeft -= len(path) + 1 + len(no) + 2
		} else {
			bare++
		}
		b.WriteString(no)
		n++
	}
	return n > 0
}

// groupsReason words a gap that spans many groups, naming each with its
// count while that stays short: "hits in 48 files: a.go (12), b/c.go (3), …".
func (p *plan) groupsReason(i, j int) string {
	if p.groupLines && p.hitLine != nil {
		if r, ok := p.gapHitLocations(i, j); ok {
			return r
		}
	}
	// The names cost at most a sixth of the lines they stand for and a
	// third of the budget; a name with its count takes five bytes at
	// least, so no more runs than that are held.
	gapBytes := p.spanBytes(i, j)
	limit := min(gapBytes/6, p.budget/3)
	type gc struct{ g, n int32 }
	var list []gc
	runs, held, last := 0, false, int32(-1)
	for k := i; k < j; k++ {
		g := p.groupOf(k)
		if g < 0 {
			continue
		}
		if runs > 0 && g == last {
			if held {
				list[len(list)-1].n++
			}
			continue
		}
		runs, last = runs+1, g
		held = len(list) <= limit/5
		if held {
			list = append(list, gc{g, 1})
		}
	}
	noun := "groups"
	switch p.groupUnit {
	case "hits":
		noun = "files"
	case "entries":
		noun = "directories"
	}
	if runs == 1 {
		switch noun {
		case "files":
			noun = "file"
		case "directories":
			noun = "directory"
		default:
			noun = "group"
		}
	}
	var b strings.Builder
	b.WriteString(p.groupUnit)
	b.WriteString(" in ")
	b.WriteString(strconv.Itoa(runs))
	b.WriteByte(' ')
	b.WriteString(noun)
	for x, c := range list {
		part := p.groups[c.g] + " (" + strconv.Itoa(int(c.n)) + ")"
		if b.Len()+len(part)+2 > limit {
			if x > 0 {
				b.WriteString(", …")
			}
			break
		}
		if x == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(part)
	}
	return b.String()
}

// gapHitLocations words a gap over several files' hits as their literal
// locations, "hits at a.go:12, b/c.go:7, and 23 more in 9 files", within
// the bytes the gap stands for and what is left of the aim's lists
// (listLeft), as hitLocations does for one file. ok is false when not even
// one location fits.
func (p *plan) gapHitLocations(i, j int) (string, bool) {
	gapBytes := p.spanBytes(i, j)
	limit := min(gapBytes, p.listLeft)
	var b strings.Builder
	b.WriteString(p.groupUnit)
	b.WriteString(" at ")
	n, more := 0, 0
	var rest map[int32]bool // the files of the hits not listed
	for k := i; k < j; k++ {
		g := p.groupOf(k)
		if g < 0 || p.hitLine[k] <= 0 {
			continue
		}
		no := strconv.Itoa(int(p.hitLine[k]))
		if more == 0 && b.Len()+2+len(p.groups[g])+1+len(no) <= limit {
			if n > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.groups[g])
			b.WriteByte(':')
			b.WriteString(no)
			n++
			continue
		}
		if rest == nil {
			rest = make(map[int32]bool)
		}
		rest[g] = true
		more++
	}
	if n == 0 {
		return "", false
	}
	p.listLeft -= b.Len()
	if more > 0 {
		b.WriteString(", and ")
		b.WriteString(strconv.Itoa(more))
		b.WriteString(" more in ")
		b.WriteString(strconv.Itoa(len(rest)))
		if len(rest) == 1 {
			b.WriteString(" file")
		} else {
			b.WriteString(" files")
		}
	}
	return b.String(), true
}

// cutLong keeps the start and end of a line longer than maxLine, with a
// byte-count marker between, cut on rune boundaries, and the exit statuses
// of the part cut (cutMiddleKeeping).
func (p *plan) cutLong(s string) string {
	return cutMiddleKeeping(s, p.maxLine)
}

func cutMiddle(s string, maxLen int) string {
	if len(s) <= maxLen {
		return s
	}
	head, ts := middleBounds(s, maxLen)
	return s[:head] + countMarker(ts-head, "bytes") + s[ts:]
}

// middleBounds is where cutMiddle's cut of s starts and ends: three
// quarters of maxLen kept before it and the rest after, on rune boundaries.
func middleBounds(s string, maxLen int) (head, ts int) {
	head = maxLen * 3 / 4
	tail := maxLen - head
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	ts = len(s) - tail
	for ts < len(s) && !utf8.RuneStart(s[ts]) {
		ts++
	}
	return head, ts
}
