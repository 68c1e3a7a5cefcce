package compress

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The in-band markers. Each is one line (or, inside a long line or a JSON
// string, one span) that states what was removed and how much. They open
// with "[… " and close with " …]" so a reader, and hasOwnMarker, can tell
// them from tool output.
const (
	markOpen  = "[… "
	markClose = " …]"
)

// linesMarker is "[… 412 lines omitted: passing tests …]". The reason is
// always present: it is what tells our markers from the clamp's
// "[… N lines omitted …]".
func linesMarker(n int, reason string) string {
	b := make([]byte, 0, 48+len(reason))
	b = append(b, markOpen...)
	b = strconv.AppendInt(b, int64(n), 10)
	if n == 1 {
		b = append(b, " line omitted: "...)
	} else {
		b = append(b, " lines omitted: "...)
	}
	b = append(b, reason...)
	b = append(b, markClose...)
	return string(b)
}

// repeatMarker stands for n further copies of the line above it.
func repeatMarker(n int) string {
	b := make([]byte, 0, 40)
	b = append(b, markOpen...)
	b = append(b, "line repeated "...)
	b = strconv.AppendInt(b, int64(n), 10)
	if n == 1 {
		b = append(b, " time"...)
	} else {
		b = append(b, " times"...)
	}
	b = append(b, markClose...)
	return string(b)
}

// countMarker is "[… 97 items omitted …]" for the units "bytes", "items",
// "keys" and "words".
func countMarker(n int, unit string) string {
	b := make([]byte, 0, 40)
	b = append(b, markOpen...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ' ')
	if n == 1 {
		unit = strings.TrimSuffix(unit, "s")
	}
	b = append(b, unit...)
	b = append(b, " omitted"...)
	b = append(b, markClose...)
	return string(b)
}

// fileStat is one file's line counts in a diff.
type fileStat struct {
	path         string
	added, taken int
}

// statMarker is "[… 2 files changed: a/x.py +12 -3, y.go +1 -0 …]": the
// per-file counts of a diff, like git diff --stat, written once at the top
// of a compressed diff. It stands for no input line. The list stays under
// limit bytes; the files it leaves out are counted.
func statMarker(files []fileStat, limit int) string {
	b := make([]byte, 0, 64)
	b = append(b, markOpen...)
	b = strconv.AppendInt(b, int64(len(files)), 10)
	if len(files) == 1 {
		b = append(b, " file changed: "...)
	} else {
		b = append(b, " files changed: "...)
	}
	for k, f := range files {
		part := cleanLabel(f.path, 200) + " +" + strconv.Itoa(f.added) + " -" + strconv.Itoa(f.taken)
		if k > 0 && len(b)+len(part) > limit {
			b = append(b, ", and "...)
			b = strconv.AppendInt(b, int64(len(files)-k), 10)
			b = append(b, " more"...)
			break
		}
		if k > 0 {
			b = append(b, ", "...)
		}
		b = append(b, part...)
	}
	b = append(b, markClose...)
	return string(b)
}

// isStatMarker reports whether a line is a statMarker.
func isStatMarker(l string) bool {
	rest, ok := strings.CutPrefix(l, markOpen)
	if !ok || !strings.HasSuffix(l, markClose) {
		return false
	}
	d := digits(rest)
	return d > 0 && (strings.HasPrefix(rest[d:], " files changed: ") || strings.HasPrefix(rest[d:], " file changed: "))
}

// markerUnits are the units countMarker is used with.
var markerUnits = [...]string{
	" bytes omitted …]", " items omitted …]", " keys omitted …]", " words omitted …]",
	" byte omitted …]", " item omitted …]", " key omitted …]", " word omitted …]",
}

// hasOwnMarker reports whether s holds a marker this package writes. It is
// the idempotence gate: such a text was compressed already.
func hasOwnMarker(s string) bool {
	for {
		i := strings.Index(s, markOpen)
		if i < 0 {
			return false
		}
		s = s[i+len(markOpen):]
		if isOwnMarkerBody(s) {
			return true
		}
	}
}

// isOwnMarkerBody checks what follows "[… ".
func isOwnMarkerBody(s string) bool {
	if rest, ok := strings.CutPrefix(s, "line repeated "); ok {
		d := digits(rest)
		if d == 0 {
			return false
		}
		rest = rest[d:]
		return strings.HasPrefix(rest, " times …]") || strings.HasPrefix(rest, " time …]")
	}
	d := digits(s)
	if d == 0 {
		return false
	}
	rest := s[d:]
	for _, u := range markerUnits {
		if strings.HasPrefix(rest, u) {
			return true
		}
	}
	var ok bool
	if rest, ok = strings.CutPrefix(rest, " lines omitted: "); !ok {
		if rest, ok = strings.CutPrefix(rest, " line omitted: "); !ok {
			if rest, ok = strings.CutPrefix(rest, " files changed: "); !ok {
				if rest, ok = strings.CutPrefix(rest, " file changed: "); !ok {
					return false
				}
			}
		}
	}
	// The reason runs to " …]" on the same line.
	end := strings.Index(rest, markClose)
	if end < 0 {
		return false
	}
	return !strings.ContainsAny(rest[:end], "\n")
}

// digits returns the length of the run of ASCII digits that starts s.
func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// looksLikeMarker reports whether a line is some tool's omission marker,
// ours or the clamp's or a harness's ("[… 12 lines omitted …]",
// "[... omitted 10 of 300 lines ...]"). Such lines are kept: they are the
// only trace of an earlier cut.
func looksLikeMarker(line string) bool {
	t := strings.TrimSpace(line)
	if len(t) < 6 || len(t) > 300 || t[0] != '[' || t[len(t)-1] != ']' {
		return false
	}
	return strings.Contains(t, "omitted") || strings.Contains(t, "truncated") || strings.Contains(t, "repeated")
}

// cleanLabel makes an input-derived label (a path, a test name) safe to put
// inside a marker: one line, at most max bytes, cut on a rune boundary, and
// without the marker's closing sequence.
func cleanLabel(s string, max int) string {
	if strings.ContainsAny(s, "\r\n\t") {
		s = strings.Map(func(r rune) rune {
			if r == '\r' || r == '\n' || r == '\t' {
				return ' '
			}
			return r
		}, s)
	}
	s = strings.ReplaceAll(s, "…]", "…)")
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "?")
	}
	return s
}
