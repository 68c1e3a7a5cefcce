package clamp

// plan decides, before anything is cut, which extras the output will carry
// and reserves their cost, so that the final text, extras included, stays
// within both limits (seed 001 reserves the suffix bytes; we reserve its lines
// too, as seed-requirements A.1 item 7 recommends).
//
// Each extra has a fixed line cost and a byte cost bounded in advance: the
// hint and the marker print numbers that can only be smaller than the totals,
// so they are sized with the totals. When the limits are small, extras are
// given up in this order until at least one byte and one line are left for
// the tool output itself:
//
//  1. placeholders shrink to "" when they would take more than a quarter of
//     either limit;
//  2. head_tail falls back to head when the marker does not fit;
//  3. the full hint falls back to the short hint, then to none.
func (c *clamper) plan() {
	restBytes, restLines := c.maxBytes, c.maxLines

	c.placeholder = placeholder
	if spare := c.nonEmpty - 1; spare > 0 {
		if spare*len(placeholder) > c.maxBytes/4 || spare > c.maxLines/4 {
			c.placeholder = ""
		} else {
			// Worst case: every block but one replaced.
			restBytes -= spare * len(placeholder)
			restLines -= spare
		}
	}

	switch c.keep {
	case KeepHead, KeepTail:
	case KeepHeadTail:
		// Worst-case marker: every line touched, every byte counted, plus a
		// line break on each side.
		need := 2 + len(markerText(c.totalLines, c.totalBytes, true))
		if restBytes-need >= 2 && restLines-1 >= 2 {
			c.markerBytes = need
			restBytes -= need
			restLines--
		} else {
			c.keep = KeepHead
		}
	default:
		c.keep = KeepHead
	}

	for _, kind := range []hintKind{hintFull, hintShort} {
		need := 2 + len(hintText(kind, c.keep, c.totalLines, c.totalLines, c.totalBytes, c.totalBytes))
		if restBytes-need >= 1 && restLines-2 >= 1 {
			c.hint, c.hintBytes, c.hintLines = kind, need, 2
			return
		}
	}
}
