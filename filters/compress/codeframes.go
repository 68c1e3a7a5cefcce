package compress

import "strings"

// Graphical diagnostic reports, as the miette crate draws them (oxlint,
// SWC and so Next.js's and Turbopack's compile errors, rspack, nushell),
// put what went wrong on a headline with a severity mark and where on the
// code frame under it:
//
//	  x eslint(no-unused-vars): Variable 'n' is declared but never used.
//	   ,-[src/count.tsx:7:8]
//	 7 |   const n = 0;
//	   :         ^
//	   `----
//
// The headline names neither "error" nor a location, so no line form reads
// it: it is found from the frame's opener, on the line above. The
// Unicode theme draws "×", "⚠" and "╭─[" where the ASCII one draws "x",
// "!" and ",-["; a report with causes lists them between the two
// ("├─▶ …", "╰─▶ …" or "|-> …", "`-> …").

// maxFrameCauses bounds the cause lines read between a frame and its
// headline.
const maxFrameCauses = 6

// isFrameOpener reports whether t, a line without its surrounding spaces,
// opens a code frame at a location: ",-[path:12:5]" or "╭─[path:12:5]".
func isFrameOpener(t string) bool {
	return (strings.HasPrefix(t, ",-[") || strings.HasPrefix(t, "╭─[")) && strings.HasSuffix(t, "]")
}

// frameSeverity is a headline's severity, by its mark.
type frameSeverity uint8

const (
	frameNone frameSeverity = iota
	frameError
	frameWarning
)

// frameHeadline finds the headline of the code frame opened at line i: the
// line above it, or above the causes between them, when it starts with a
// severity mark. It returns -1 when there is none.
func frameHeadline(p *plan, i int) (int, frameSeverity) {
	for j := i - 1; j >= 0 && j >= i-1-maxFrameCauses; j-- {
		t := trimLeft(p.viewLine(j))
		if isFrameCause(t) {
			continue
		}
		if sev := headlineSeverity(t); sev != frameNone {
			return j, sev
		}
		return -1, frameNone
	}
	return -1, frameNone
}

// headlineSeverity reads a headline's severity mark from t, a line without
// its leading spaces.
func headlineSeverity(t string) frameSeverity {
	switch {
	case strings.HasPrefix(t, "x "), strings.HasPrefix(t, "× "):
		return frameError
	case strings.HasPrefix(t, "! "), strings.HasPrefix(t, "⚠ "):
		return frameWarning
	}
	return frameNone
}

func isFrameCause(t string) bool {
	return strings.HasPrefix(t, "├─▶") || strings.HasPrefix(t, "╰─▶") || strings.HasPrefix(t, "|->") || strings.HasPrefix(t, "`->")
}

// maxFrameLines bounds the lines read for a frame's pointed line.
const maxFrameLines = 40

// framePointed returns the line of the code frame opened at line i (whose
// text without spaces is t) that shows the source line its location names
// (" 34 |   }, [titles]);" under ",-[a.tsx:34:6]"), and the label line
// under it when there is one (":      ^^"), or -1s. The names on that line
// are what the agent edits next; the rest of the frame is its context.
func framePointed(p *plan, i int, t string) (src, label int) {
	src, label = -1, -1
	loc := t[strings.IndexByte(t, '[')+1 : len(t)-1]
	c := strings.LastIndexByte(loc, ':')
	if c < 0 {
		return
	}
	loc = loc[:c]
	c = strings.LastIndexByte(loc, ':')
	if c < 0 || digits(loc[c+1:]) != len(loc)-c-1 || c+1 == len(loc) {
		return
	}
	line := loc[c+1:]
	for j := i + 1; j < p.n && j <= i+maxFrameLines; j++ {
		tj := trimLeft(p.viewLine(j))
		if strings.HasPrefix(tj, "`-") || strings.HasPrefix(tj, "╰─") || isFrameOpener(tj) {
			return
		}
		if d := digits(tj); d == len(line) && tj[:d] == line {
			rest := tj[d:]
			if strings.HasPrefix(rest, " |") || strings.HasPrefix(rest, " │") {
				src = j
				if j+1 < p.n {
					if n := trimLeft(p.viewLine(j + 1)); strings.HasPrefix(n, ":") || strings.HasPrefix(n, "·") {
						label = j + 1
					}
				}
				return
			}
		}
	}
	return
}
