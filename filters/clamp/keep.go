package clamp

import "strings"

// oneEnd clamps for KeepHead and KeepTail: walk the blocks from the kept end
// with the shared budget (seed 001 §C: "clamp each text block against what
// remains, subtract what was kept"), cut the first block that does not fit,
// and replace every non-empty block after it (in walk order) with the
// placeholder.
//
// At each block the budget set aside is exactly what the blocks still ahead
// would cost as placeholders; keeping a block whole only ever lowers that
// reservation, so the cut block is never left with a negative budget.
func (c *clamper) oneEnd() {
	n := len(c.src)
	tail := c.keep == KeepTail
	remBytes, remLines := c.maxBytes-c.hintBytes, c.maxLines-c.hintLines
	phBytes, phLines := len(c.placeholder), 0
	if c.placeholder != "" {
		phLines = 1
	}
	ahead := c.nonEmpty
	keptBytes, keptLines := 0, 0

	for step := 0; step < n; step++ {
		i := step
		if tail {
			i = n - 1 - step
		}
		t := c.src[i]
		if t == "" {
			continue
		}
		ahead--
		budBytes, budLines := remBytes-ahead*phBytes, remLines-ahead*phLines
		if len(t) <= budBytes && c.lines[i] <= budLines {
			c.out[i] = t
			remBytes -= len(t)
			remLines -= c.lines[i]
			keptBytes += len(t)
			keptLines += c.lines[i]
			continue
		}

		var k string
		if tail {
			k = cutTail(t, budBytes, budLines)
		} else {
			k = cutHead(t, budBytes, budLines)
		}
		keptBytes += len(k)
		keptLines += CountLines(k)
		msg := c.hintFor(keptLines, keptBytes)
		if tail {
			c.out[i] = prependHint(msg, k)
		} else {
			c.out[i] = appendHint(k, msg)
		}
		for s := step + 1; s < n; s++ {
			j := s
			if tail {
				j = n - 1 - s
			}
			c.omit(j)
		}
		return
	}
	// Not reached: the blocks are over the limits, so one of them cannot fit
	// a budget that is smaller still.
}

// omit replaces block i with the placeholder; an empty block stays empty.
func (c *clamper) omit(i int) {
	if c.src[i] == "" {
		return
	}
	c.out[i] = c.placeholder
	c.replaced++
}

// headTail clamps for KeepHeadTail. Half of the budget goes to the start,
// filled like KeepHead; the rest, including whatever the start left unused,
// goes to the end, filled like KeepTail but never reaching back past the
// start. The marker follows the kept start on its own line, the blocks wholly
// in the omitted middle become placeholders, and the hint closes the last
// block.
//
// The start's half is taken after setting aside placeholders for every block
// but the first and last (the most there can be); the end then reserves only
// those it actually needs, as oneEnd does, so it inherits what was spare.
//
// Since the whole result is over the limits and both ends fit within them,
// the omitted middle is never empty.
func (c *clamper) headTail() {
	n := len(c.src)
	phBytes, phLines := len(c.placeholder), 0
	if c.placeholder != "" {
		phLines = 1
	}
	capBytes := c.maxBytes - c.hintBytes - c.markerBytes
	capLines := c.maxLines - c.hintLines - 1
	headBytes, headLines := capBytes, capLines
	if between := c.nonEmpty - 2; between > 0 {
		headBytes -= between * phBytes
		headLines -= between * phLines
	}
	remBytes, remLines := headBytes-headBytes/2, headLines-headLines/2
	keptBytes, keptLines := 0, 0

	// The start.
	a := 0
	for ; a < n; a++ {
		t := c.src[a]
		if len(t) > remBytes || c.lines[a] > remLines {
			break
		}
		c.out[a] = t
		remBytes -= len(t)
		remLines -= c.lines[a]
		keptBytes += len(t)
		keptLines += c.lines[a]
	}
	if a == n {
		return // not reached: see above
	}
	head := cutHead(c.src[a], remBytes, remLines)
	keptBytes += len(head)
	keptLines += CountLines(head)

	// The end, from the last block back to block a at most. ahead counts the
	// non-empty blocks strictly between a and b: the placeholders needed if
	// the end is cut at b.
	ahead := 0
	for j := a + 1; j < n; j++ {
		if c.src[j] != "" {
			ahead++
		}
	}
	b := n - 1
	for ; b > a; b-- {
		t := c.src[b]
		if t != "" {
			ahead--
		}
		remBytes = capBytes - keptBytes - ahead*phBytes
		remLines = capLines - keptLines - ahead*phLines
		if len(t) > remBytes || c.lines[b] > remLines {
			break
		}
		c.out[b] = t
		keptBytes += len(t)
		keptLines += c.lines[b]
	}
	if b == a {
		remBytes, remLines = capBytes-keptBytes, capLines-keptLines
	}

	// The middle: the rest of block a, any blocks between a and b, and the
	// start of block b (which is block a when the end reached back to it).
	rest := c.src[a][len(head):]
	var tailText, gap string // gap: what is omitted just before tailText
	omBytes, omLines := 0, 0
	if b == a {
		tailText = cutTail(rest, remBytes, remLines)
		gap = rest[:len(rest)-len(tailText)]
	} else {
		omBytes, omLines = len(rest), CountLines(rest)
		for j := a + 1; j < b; j++ {
			omBytes += len(c.src[j])
			omLines += c.lines[j]
			c.omit(j)
		}
		tailText = cutTail(c.src[b], remBytes, remLines)
		gap = c.src[b][:len(c.src[b])-len(tailText)]
	}
	omBytes += len(gap)
	omLines += CountLines(gap)
	keptBytes += len(tailText)
	keptLines += CountLines(tailText)

	headMidLine := head != "" && !endsLine(head)
	tailMidLine := tailText != "" && gap != "" && !endsLine(gap)
	if b == a && headMidLine && tailText != "" && strings.IndexByte(gap, '\n') < 0 {
		// Start and end kept pieces of one and the same line: count it once.
		keptLines--
	}
	marker := markerText(omLines, omBytes, headMidLine || tailMidLine)
	msg := c.hintFor(keptLines, keptBytes)

	sep := ""
	if headMidLine {
		sep = "\n"
	}
	if b != a {
		c.out[a] = head + sep + marker
		c.out[b] = tailText
		c.out[n-1] = appendHint(c.out[n-1], msg)
		return
	}
	tailSep := ""
	if tailText != "" {
		tailSep = "\n"
	}
	if a != n-1 {
		c.out[a] = head + sep + marker + tailSep + tailText
		c.out[n-1] = appendHint(c.out[n-1], msg)
		return
	}
	// The common single-block case, built with one allocation.
	last := marker
	if tailText != "" {
		last = tailText
	}
	c.out[a] = head + sep + marker + tailSep + tailText + hintSep(last, msg) + msg
}
