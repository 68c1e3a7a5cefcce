package clamp

// cutHead returns the longest prefix of s with at most maxLines lines and at
// most maxBytes bytes. Lines are cut first, then bytes (seed 001 §A, §B): the
// line cut keeps whole lines with their terminators, the byte cut then lands
// on a rune boundary. A '\r' left at the end of the prefix whose '\n' was cut
// away is dropped too, so no half of a "\r\n" dangles at the cut.
func cutHead(s string, maxBytes, maxLines int) string {
	if maxBytes <= 0 || maxLines <= 0 {
		return ""
	}
	// Nothing past maxBytes can survive the byte cut, so the line scan stops
	// there: the work is bounded by the budget, not by the input size.
	scan := s
	if len(scan) > maxBytes {
		scan = scan[:maxBytes]
	}
	k := lineEnd(scan, maxLines)
	if k < len(scan) || len(scan) == len(s) {
		// The line limit cut inside the scanned part (on a line boundary), or
		// the whole input fitted in the byte budget.
		return s[:k]
	}
	k = runeFloor(s, maxBytes)
	if k > 0 && s[k-1] == '\r' && s[k] == '\n' {
		k--
	}
	return s[:k]
}

// cutTail returns the longest suffix of s with at most maxLines lines and at
// most maxBytes bytes: the mirror of cutHead. A suffix that starts with the
// '\n' of a "\r\n" pair holds no '\r' at all, so there is nothing to drop.
func cutTail(s string, maxBytes, maxLines int) string {
	if maxBytes <= 0 || maxLines <= 0 {
		return ""
	}
	lo := 0
	if len(s) > maxBytes {
		lo = len(s) - maxBytes
	}
	k := lo + lineStart(s[lo:], maxLines)
	if k > lo || lo == 0 {
		return s[k:]
	}
	return s[runeCeil(s, lo):]
}
