package clamp

import "strings"

// CountLines returns the number of lines in s as the clamp counts them.
//
// Lines are split on '\n' only (seed 001: "lines split on \n"). A "\r\n" pair
// therefore counts as one line end, and a '\r' on its own is ordinary text,
// never a line end. A last line without a terminator still counts, so "" has 0
// lines, "a\n" has 1 and "a\nb" has 2. strings.Count is vectorised, so this is
// one fast pass with no allocation.
func CountLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// endsLine reports whether s ends with a line terminator.
func endsLine(s string) bool {
	return s != "" && s[len(s)-1] == '\n'
}

// lineEnd returns the index just past the n-th '\n' of s, so s[:lineEnd] holds
// the first n lines with their terminators. It returns len(s) when s has no
// more than n lines. It scans with IndexByte and never builds a slice of lines.
func lineEnd(s string, n int) int {
	if n <= 0 {
		return 0
	}
	off := 0
	for ; n > 0; n-- {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return len(s)
		}
		off += i + 1
	}
	return off
}

// lineStart returns the index where the last n lines of s begin, so s[lineStart:]
// holds at most n lines. The final '\n' of s terminates the last line and does
// not start a new one, in line with CountLines.
func lineStart(s string, n int) int {
	if n <= 0 {
		return len(s)
	}
	end := len(s)
	if endsLine(s) {
		end--
	}
	for ; n > 0; n-- {
		i := strings.LastIndexByte(s[:end], '\n')
		if i < 0 {
			return 0
		}
		end = i
	}
	return end + 1
}
