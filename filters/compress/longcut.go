package compress

import (
	"strings"
	"unicode/utf8"
)

// A long line cut in the middle (a JSON reply on one line, a CI job's log
// embedded in an API's answer) may hold a run's outcome in the part cut:
// "… exited with exit code 2 …", "exit status 1". Those stay, each with a
// little of what precedes it, between byte-count markers; everything else
// of the middle goes as before. On the tuning set three such statuses in
// Codex's one-line `gh api` replies were the only summaries lost at 4x.
const (
	maxOutcomeWindows = 4  // outcomes kept from one line's middle
	outcomeLead       = 48 // bytes kept before an outcome
	outcomeTrail      = 8  // bytes kept after its number
)

// cutMiddleKeeping is cutMiddle, keeping the exit statuses of the middle.
func cutMiddleKeeping(s string, maxLen int) string {
	if len(s) <= maxLen {
		return s
	}
	head, ts := middleBounds(s, maxLen)
	var b strings.Builder
	b.WriteString(s[:head])
	at := head // the first byte of the middle not written yet
	found := 0
	for from := head; found < maxOutcomeWindows; {
		i, j := nextExitStatus(s, from, ts)
		if i < 0 {
			break
		}
		lo := max(i-outcomeLead, at)
		for lo > at && !utf8.RuneStart(s[lo]) {
			lo--
		}
		hi := min(j+outcomeTrail, ts)
		for hi < ts && !utf8.RuneStart(s[hi]) {
			hi++
		}
		if lo > at {
			if m := countMarker(lo-at, "bytes"); len(m) < lo-at {
				b.WriteString(m)
			} else {
				lo = at // a gap no longer than its marker is kept as it is
			}
		}
		b.WriteString(s[lo:hi])
		at, from = hi, hi
		found++
	}
	if at < ts {
		if m := countMarker(ts-at, "bytes"); len(m) < ts-at {
			b.WriteString(m)
		} else {
			b.WriteString(s[at:ts])
		}
	}
	b.WriteString(s[ts:])
	if b.Len() >= len(s) {
		return cutMiddle(s, maxLen)
	}
	return b.String()
}

// nextExitStatus finds in s[from:to] the next "exit code N" or "exit
// status N" (either case, an optional colon, N not 0) and returns where it
// starts and where its number ends, or -1.
func nextExitStatus(s string, from, to int) (start, end int) {
	for k := max(from, 1); k+4 <= to; k++ {
		if s[k]|0x20 != 'x' || s[k+1]|0x20 != 'i' || s[k+2]|0x20 != 't' || s[k+3] != ' ' || s[k-1]|0x20 != 'e' {
			continue
		}
		rest := s[k+4 : to]
		var n int
		switch {
		case len(rest) >= 4 && strings.EqualFold(rest[:4], "code"):
			n = 4
		case len(rest) >= 6 && strings.EqualFold(rest[:6], "status"):
			n = 6
		default:
			continue
		}
		j := k + 4 + n
		if j < to && s[j] == ':' {
			j++
		}
		for j < to && s[j] == ' ' {
			j++
		}
		d := j
		for d < to && isDigit(s[d]) {
			d++
		}
		if d == j || s[j] == '0' && d == j+1 {
			continue
		}
		return k - 1, d
	}
	return -1, -1
}
