package compress

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
)

// selectFileRead keeps the head and the tail of a file read, then its
// definition lines (func, type, class, def, ...) while the budget allows,
// then the lines that show the most recurring code names not shown yet
// (coverNames), then grows head and tail. Line numbers stay as the tool printed them
// (Claude Code "   12→", cat -n, SWE-agent "12:"); the markers give the
// omitted range: "[… 240 lines omitted: lines 121-360 …]", so the reader can
// ask for exactly that range.
func selectFileRead(p *plan) {
	p.style = reasonRange
	n := p.n
	style := p.numberStyle()
	if style != numNone {
		p.lineNo = func(i int) int {
			if numberedLine(p.line(i)) == style {
				return lineNumber(p.line(i))
			}
			return -1
		}
	}

	used := p.markCost
	// add keeps line i when it fits in limit; it reports false when not.
	add := func(i int, limit int) bool {
		if p.cls[i].keep {
			return true
		}
		c := p.lineCost(i) + p.gapDelta(i)*p.markCost
		if used+c > limit {
			return false
		}
		p.cls[i].keep = true
		used += c
		return true
	}
	// One pass reads each line once for all that selection needs below:
	// the harness lines around the file, the number stripped once, the
	// line's code names hashed as it goes, the landmarks, and the
	// locations the markers may name; the line's byte set (bitsOf) gates
	// the substring searches of the last two.
	//
	// Harness lines around the file (SWE-agent's "[File: ...]" and "(12 more
	// lines above)", Claude Code's <system-reminder>) are kept whole.
	//
	// Landmarks, in file order: definitions and the lines that raise,
	// catch or report errors; an outline first, within fileReadOutline,
	// the rest after the names. Those already kept (the head and tail
	// chosen next) cost nothing when added again.
	//
	// A read that names locations (a plan, a review note or a log citing
	// `src/a.ts:12`) points at the next read: the markers of its omitted
	// ranges name them literally, "[… 90 lines omitted: lines 40-129
	// naming src/a.ts:12, src/b.ts:7 …]", as diagnostic markers do. A
	// location costs a marker a few dozen bytes where its line costs a
	// hundred (issue 23, item 2). Up to a quarter of the aim is held back
	// for them; listCost is what listing every one would take, counted up
	// to the aim (as locationCost counts).
	names := nameScratchPool.Get().(*nameScratch)
	defer names.release()
	names.reset(min(n, maxNameLines))
	var marks, outcomes []int
	locs := newLocationTally(len(p.body))
	for i, l := range p.allLines() {
		code, numbered := l, false
		if style != numNone {
			var n numbering
			n, code = numberAndCode(l, style)
			numbered = n == style
		}
		if !numbered && isReadFrame(l) {
			p.cls[i].keep = true
			used += p.lineCost(i)
		}
		if i < names.n {
			names.addLine(code)
		}
		// code is a suffix of l (stripNumber cuts the number off its
		// start): the line's bytes are code's and the number's.
		var sl lineScan // read only for a saved output's outcomes below
		if p.readReport {
			sl = scanLine(code)
		} else {
			sl.bits = bitsOf(code)
		}
		m := sl.bits
		if isDefinition(code) || isErrorLineIn(code, m) {
			marks = append(marks, i)
		}
		if p.readReport {
			// A run saved to a file and read back is read as the
			// output it holds when the file has an output's extension
			// (.log, .txt, .out, .output: detect); one without an
			// extension (a CI job's log fetched to disk) is read as a
			// file, and its summary and failing tests still say how
			// the run went. Only such files (readsOutcome): in code
			// `ok = True`, and in a plan "8 pending todo(s):", are not
			// summaries. Reading all but source code would keep a
			// plan's lines, for 0.5 % more of the summaries a note
			// quotes (issue 23).
			if sl.mayBeSummary() && isSummaryLine(code) || sl.mayBeFailingTest() && isFailingTest(code) {
				outcomes = append(outcomes, i)
			}
		} else if mayHoldExitFailure(m) && hasExitFailure(code) {
			// Any file that names a failed exit status ("both failed in CI
			// with exit code 1", "# returns exit code 100 when …") says
			// how a run ends: an outcome, kept before the outline. It is
			// rare in any file, so it costs a line or two where the
			// outline's definitions would otherwise crowd it out.
			outcomes = append(outcomes, i)
		}
		if locs.bytes < p.budget {
			if len(code) < len(l) && m != allBits {
				m |= bitsOf(l[:len(l)-len(code)])
			}
			locs.add(locationPartsIn(l, m))
		}
	}
	listCost := locs.bytes
	reserve := min(listCost, p.budget/fileReadLocations)
	b := p.budget - reserve
	for _, i := range outcomes {
		add(i, b/2)
	}
	h, t := 0, n-1
	for h <= t && add(h, b*fileReadHead/100) {
		h++
	}
	for t >= h && add(t, b*fileReadTail/100) {
		t--
	}
	landmarks := func(limit int) {
		for _, i := range marks {
			add(i, limit)
		}
	}
	landmarks(b * fileReadOutline / 100)
	// The names that recur: lines that bring the most code names the
	// output does not show yet (self.rtol, np.allclose, MEDIA_ROOT), names
	// used more often first. The names an agent quotes, greps or edits
	// next are the file's own recurring ones far more often than its
	// comments or blank runs (issue 23).
	coverNames(p, names, add, b*fileReadNames/100)
	landmarks(b * 95 / 100)
	// Grow head and tail, two head lines per tail line.
	for h <= t {
		okH := add(h, b)
		if okH {
			h++
		}
		okH2 := h <= t && add(h, b)
		if okH2 {
			h++
		}
		okT := h <= t && add(t, b)
		if okT {
			t--
		}
		if !okH && !okH2 && !okT {
			break
		}
	}
	if listCost > 0 {
		p.readLocs = true
		p.listLeft = max(p.budget-used, reserve, min(listCost, reserve+p.budget/fileReadLocations))
	}
}

// isReadFrame matches the lines a read tool wraps around the file.
func isReadFrame(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "[File: ") || strings.HasPrefix(t, "(") && (strings.HasSuffix(t, "lines above)") || strings.HasSuffix(t, "lines below)")) ||
		strings.HasPrefix(t, "<system-reminder>") || strings.HasPrefix(t, "</system-reminder>") || looksLikeMarker(t)
}

// numberAndCode reads a line's number prefix once: the numbering the line
// uses (numNone when it has none) and the line after the prefix of style's
// kind (the line itself for numNone). A read's every line asks both.
func numberAndCode(l string, style numbering) (numbering, string) {
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	d := digits(l[i:])
	rest := l[i+d:]
	n := numNone
	if d > 0 && d <= 7 {
		switch {
		case strings.HasPrefix(rest, "→"):
			n = numArrow
		case strings.HasPrefix(rest, "\t"):
			n = numTab
		case i == 0 && strings.HasPrefix(rest, ":") && !strings.HasPrefix(rest, "::"):
			n = numColon
		}
	}
	switch style {
	case numArrow:
		return n, strings.TrimPrefix(rest, "→")
	case numTab:
		return n, strings.TrimPrefix(rest, "\t")
	case numColon:
		return n, strings.TrimPrefix(rest, ":")
	}
	return n, l
}

// stripNumber removes a line-number prefix of the given style.
func stripNumber(l string, style numbering) string {
	_, code := numberAndCode(l, style)
	return code
}

// definitionStarts are the keywords that open a definition in common
// languages, as a line starts after its indentation.
var definitionStarts = [...]string{
	"func ", "type ", "class ", "def ", "async def ", "interface ", "struct ", "enum ", "trait ", "impl ", "impl<",
	"fn ", "pub fn ", "pub(crate) fn ", "pub struct ", "pub enum ", "pub trait ", "pub type ", "pub mod ", "mod ",
	"async fn ", "pub async fn ", "function ", "async function ", "export ", "module ", "namespace ",
	"public ", "private ", "protected ", "internal ", "static ", "abstract ", "sealed ", "object ", "data class ",
	"fun ", "package ", "var (", "const (", "#define ", "template<", "template <", "CREATE ", "message ", "service ",
}

// isDefinition reports whether a code line opens a definition. Deeply
// indented lines (bodies) do not count.
func isDefinition(code string) bool {
	t := trimLeft(code)
	if len(code)-len(t) > 8 || t == "" {
		return false
	}
	for _, k := range definitionsByByte[t[0]] {
		if strings.HasPrefix(t, k) {
			return true
		}
	}
	return false
}

// definitionsByByte indexes definitionStarts by their first byte, so a
// line is compared with the few keywords it could start, not all sixty.
var definitionsByByte = func() (idx [256][]string) {
	for _, k := range definitionStarts {
		idx[k[0]] = append(idx[k[0]], k)
	}
	return idx
}()

// The shares of a read's aim (percent) its head, its tail and its
// recurring names may take before the definitions and the growth of both
// ends; chosen on the tuning set's reads (split_test.go): the names an
// agent uses next sit in the middle of a file as often as at its ends.
const (
	fileReadHead    = 15
	fileReadTail    = 10
	fileReadOutline = 35
	fileReadNames   = 80
	// fileReadLocations: a read's location lists take up to 1/4 of its
	// aim from selection, and may pass the aim by another 1/4.
	fileReadLocations = 4
)

// maxNameLines bounds the lines coverNames scores: past it a read is cut
// by head, tail and definitions alone, and the pass stays linear.
const maxNameLines = 1 << 16

// maxNames bounds the names coverNames counts (and so its table, 12 bytes
// a slot, two slots a name): later lines of a huge read get none.
const maxNames = 1 << 18

// coverNames keeps, while add allows under limit, the lines that show the
// most weight of code names (identifiers of six bytes or more with an
// underscore, a digit, a dot or an inner capital, as an agent writes them
// in its next call) that no kept line shows yet. A name's weight is how
// often it occurs in the read, capped: a name used across the file is the
// one an edit or a grep reaches for. Lazy greedy: a line's score only
// falls as names get covered, so a popped line whose fresh score still
// beats the next one is the best. Names are kept as 64-bit hashes in one
// flat array and counted in an open-addressing table, so the pass
// allocates per read, not per line or name.
func coverNames(p *plan, sc *nameScratch, add func(i, limit int) bool, limit int) {
	n, start, ids := sc.n, sc.start, sc.ids
	// Each name's count, negative once a kept line shows it: an
	// open-addressing table indexed by the hash itself, a slot per name.
	size := 1
	for size < 2*len(ids) {
		size *= 2
	}
	keys := grown(sc.keys, size)
	vals := grown(sc.vals, size)
	clear(keys)
	clear(vals)
	mask := uint64(size - 1)
	slot := func(id uint64) int {
		k := (id ^ id>>29) & mask
		for keys[k] != id && keys[k] != 0 {
			k = (k + 1) & mask
		}
		keys[k] = id
		return int(k)
	}
	// Each id becomes its slot as it is counted, so the greedy below
	// never hashes again.
	slots := grown(sc.slots, len(ids))
	for k, id := range ids {
		if id == 0 {
			id = 1 // 0 marks an empty slot
		}
		x := slot(id)
		vals[x]++
		slots[k] = int32(x)
	}
	// live counts the names no kept line shows yet: once it is 0 every
	// line scores 0, and popping the rest of the heap could add nothing.
	live := 0
	for x := range vals {
		if vals[x] > 0 {
			live++
		}
	}
	show := func(i int) {
		for _, x := range slots[start[i]:start[i+1]] {
			if c := vals[x]; c > 0 {
				vals[x] = -c
				live--
			}
		}
	}
	for i := 0; i < n; i++ {
		if p.cls[i].keep {
			show(i)
		}
	}
	score := func(i int) int {
		s := 0
		for _, x := range slots[start[i]:start[i+1]] {
			if c := vals[x]; c > 0 {
				s += int(min(c, 8))
			}
		}
		// Per byte, in 1/1024ths: a short line with the same names wins.
		// The bytes are the line's and the gap markers it adds or saves:
		// a line next to a kept one costs a marker less than one alone,
		// and a run of kept lines reads as code where lines scattered
		// between markers spend a third of a read's aim on the markers
		// (issue 23: next-step references in the tuning set's file reads
		// at 4x 53.4 -> 54.3 %, at 10x 25.9 -> 26.7 %, at the defaults
		// 89.9 -> 90.5 %).
		return s * 1024 * 64 / max(p.lineCost(i)+p.gapDelta(i)*p.markCost+64, 16)
	}
	// Sized once: a read of 65,536 lines grew it by doubling, 2 MB more.
	h := &lineHeap{items: slices.Grow(sc.heap[:0], n)}
	defer func() { sc.keys, sc.vals, sc.slots, sc.heap = keys, vals, slots, h.items }()
	for i := 0; i < n; i++ {
		if !p.cls[i].keep && start[i+1] > start[i] {
			if sc := score(i); sc > 0 {
				h.items = append(h.items, scoredLine{i, sc})
			}
		}
	}
	h.init()
	misses := 0
	// A line is popped again only when a kept line covered one of its
	// names; names shared in adversarial patterns could make every add
	// stale every line, so the pops are bounded to keep the pass linear.
	for pops := 0; h.Len() > 0 && live > 0 && pops < 4*n+1024; pops++ {
		top := h.items[0]
		sc := score(top.i)
		if sc <= 0 {
			h.pop()
			continue
		}
		if next := h.second(); next >= 0 && sc < h.items[next].score {
			// Stale: it sinks in place, which pops the same lines in
			// the same order as a pop and a push (the order is total).
			h.items[0].score = sc
			h.down(0)
			continue
		}
		h.pop()
		if add(top.i, limit) {
			show(top.i)
			misses = 0
			// Its neighbours now cost a marker less: the lazy heap
			// only ever lowers a score in place, so a raised one goes
			// in again (a stale copy pops later and finds its line
			// kept). Only while it holds fewer than n lines, the size
			// it was grown to: never reallocated, and (unlike the
			// capacity of a slice the pool hands back) the same bound
			// whatever was read before, so the output is too.
			for _, j := range [2]int{top.i - 1, top.i + 1} {
				if j >= 0 && j < n && !p.cls[j].keep && len(h.items) < n {
					if s := score(j); s > 0 {
						h.push(scoredLine{j, s})
					}
				}
			}
		} else if misses++; misses > 64 {
			break // the budget is spent: a few smaller lines may fit, not more
		}
	}
}

// nameScratch holds coverNames' per-read arrays between reads: a 1 MB read
// fills about 2 MB of them, and allocating them afresh for every read made
// the collector, not the pass, a sixth of a read's CPU.
type nameScratch struct {
	n                  int     // lines whose names are held
	start, vals, slots []int32 // start[i]: line i's first name in ids
	ids, keys          []uint64
	heap               []scoredLine
}

var nameScratchPool = sync.Pool{New: func() any { return new(nameScratch) }}

// reset readies the scratch for the names of n lines.
func (sc *nameScratch) reset(n int) {
	sc.n = n
	sc.start = grown(sc.start, n+1)[:0]
	sc.ids = sc.ids[:0]
	if n == 0 {
		sc.start = append(sc.start, 0)
	}
}

// addLine hashes the code names of the next line (its first 1000 bytes;
// none once maxNames are held) and closes the list at the last line.
func (sc *nameScratch) addLine(code string) {
	sc.start = append(sc.start, int32(len(sc.ids)))
	if len(code) > 1000 {
		code = code[:1000]
	}
	if len(sc.ids) < maxNames {
		sc.ids = appendCodeNames(code, sc.ids, int(sc.start[len(sc.start)-1]))
	}
	if len(sc.start) == sc.n {
		sc.start = append(sc.start, int32(len(sc.ids)))
	}
}

// release returns the scratch to the pool unless its arrays passed 1 Mi
// entries. maxNames keeps them under that today (ids ≤ 2^18, the table ≤
// 2^19 slots, about 10 MB in all), so the bound is a guard for a later
// maxNames; the pool holds no more than the reads in flight held, and the
// collector empties it within two cycles of disuse.
func (sc *nameScratch) release() {
	if cap(sc.keys) > 1<<20 || cap(sc.ids) > 1<<20 {
		return
	}
	nameScratchPool.Put(sc)
}

// grown returns s resliced to n elements, reallocated when its capacity
// is short; the contents are whatever was there.
func grown[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// appendCodeNames appends to ids the hashes of the distinct code names of
// a line (ids[from:] are the line's so far), at most 32 per line.
func appendCodeNames(code string, ids []uint64, from int) []uint64 {
	// Indentation is most of the bytes between names in code: eight
	// spaces are skipped with one load.
	i := 0
	for i+8 <= len(code) && binary.LittleEndian.Uint64([]byte(code[i:i+8])) == 0x2020202020202020 {
		i += 8
	}
	for i < len(code) {
		if !isWordByte(code[i]) {
			i++
			continue
		}
		// The word's end and isCodeName's answer in one pass, one table
		// load a byte: an underscore, a digit or a dot anywhere, or a
		// capital after the first byte.
		first, inner := byteClass[code[i]], uint8(0)
		j := i + 1
		for j < len(code) {
			k := byteClass[code[j]]
			if k&classWord == 0 && !(code[j] == '.' && j+1 < len(code) && isWordByte(code[j+1])) {
				break
			}
			inner |= k
			j++
		}
		name := (first|inner)&classNameMark != 0 || inner&classUpper != 0
		if w := code[i:j]; len(w) >= 6 && name && len(ids)-from < 32 {
			id := nameHash(w)
			dup := false
			for _, x := range ids[from:] {
				if x == id {
					dup = true
					break
				}
			}
			if !dup {
				ids = append(ids, id)
			}
		}
		i = j
	}
	return ids
}

// nameHash hashes a code name eight bytes at a time (a multiply and a
// shift per word instead of a multiply per byte); names are only compared
// by it, so any well-mixed 64-bit hash keeps the counts.
func nameHash(w string) uint64 {
	h := uint64(len(w)) * 0x9e3779b97f4a7c15
	for ; len(w) >= 8; w = w[8:] {
		v := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		h = (h ^ v) * 0xff51afd7ed558ccd
		h ^= h >> 32
	}
	var v uint64
	for k := 0; k < len(w); k++ {
		v |= uint64(w[k]) << (8 * k)
	}
	h = (h ^ v) * 0xc4ceb9fe1a85ec53
	return h ^ h>>29
}

// codeNames appends the distinct code names of a line to out.
func codeNames(code string, out []string) []string {
	for i := 0; i < len(code); {
		c := code[i]
		if !isWordByte(c) {
			i++
			continue
		}
		j := i
		for j < len(code) && (isWordByte(code[j]) || code[j] == '.' && j+1 < len(code) && isWordByte(code[j+1])) {
			j++
		}
		if w := code[i:j]; len(w) >= 6 && isCodeName(w) {
			dup := false
			for _, x := range out {
				if x == w {
					dup = true
					break
				}
			}
			if !dup && len(out) < 32 {
				out = append(out, w)
			}
		}
		i = j
	}
	return out
}

// isCodeName: a word with an underscore, a digit, a dot or an inner
// capital, not a plain word of prose.
func isCodeName(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c == '_' || c == '.' || isDigit(c) || i > 0 && c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

type scoredLine struct{ i, score int }

// lineHeap is a max-heap of lines by score, earlier lines first on ties,
// written out so a pop does not box its line into an interface.
type lineHeap struct{ items []scoredLine }

func (h *lineHeap) Len() int { return len(h.items) }

func (h *lineHeap) less(a, b int) bool {
	x, y := h.items[a], h.items[b]
	return x.score > y.score || x.score == y.score && x.i < y.i
}

func (h *lineHeap) down(k int) {
	n := len(h.items)
	for {
		c := 2*k + 1
		if c >= n {
			return
		}
		if c+1 < n && h.less(c+1, c) {
			c++
		}
		if !h.less(c, k) {
			return
		}
		h.items[k], h.items[c] = h.items[c], h.items[k]
		k = c
	}
}

func (h *lineHeap) init() {
	for k := len(h.items)/2 - 1; k >= 0; k-- {
		h.down(k)
	}
}

// second is the index of the best item after the top, or -1.
func (h *lineHeap) second() int {
	switch len(h.items) {
	case 0, 1:
		return -1
	case 2:
		return 1
	}
	if h.less(2, 1) {
		return 2
	}
	return 1
}

func (h *lineHeap) pop() scoredLine {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	h.down(0)
	return top
}

// push adds x in its place.
func (h *lineHeap) push(x scoredLine) {
	h.items = append(h.items, x)
	for k := len(h.items) - 1; k > 0; {
		up := (k - 1) / 2
		if !h.less(k, up) {
			return
		}
		h.items[k], h.items[up] = h.items[up], h.items[k]
		k = up
	}
}
