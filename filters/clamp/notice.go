package clamp

import "strconv"

// The texts the clamp adds to a result. The hint and the placeholder are ASCII
// only (seed 001: "append a short ASCII hint"); the head_tail marker uses
// U+2026 because its format, "[… N lines omitted …]", is the one the issue
// asks for. All of them are single lines, so their line cost is fixed and the
// budget can be reserved before the cut (see plan.go).

// placeholder replaces a later text block once the shared budget is spent,
// so the content array keeps its length (seed 001 §C).
const placeholder = "[toolproc: block omitted, output limit reached]"

// shortHint is used when the limits are too small for the full hint.
const shortHint = "[toolproc: output truncated]"

type hintKind int

const (
	hintNone hintKind = iota
	hintShort
	hintFull
)

// hintText says what was cut and how to get more. The kept and total numbers
// are those of the text the model sees (after repair of invalid UTF-8, which
// for valid input is the original); hint, marker and placeholders are not
// counted as kept.
func hintText(kind hintKind, keep Keep, keptLines, totalLines, keptBytes, totalBytes int) string {
	switch kind {
	case hintNone:
		return ""
	case hintShort:
		return shortHint
	}
	b := make([]byte, 0, 192)
	b = append(b, "[toolproc: tool output truncated, kept "...)
	switch keep {
	case KeepTail:
		b = append(b, "the last "...)
	case KeepHeadTail:
	default:
		b = append(b, "the first "...)
	}
	b = strconv.AppendInt(b, int64(keptLines), 10)
	b = append(b, " of "...)
	b = strconv.AppendInt(b, int64(totalLines), 10)
	b = append(b, " lines ("...)
	b = strconv.AppendInt(b, int64(keptBytes), 10)
	b = append(b, " of "...)
	b = strconv.AppendInt(b, int64(totalBytes), 10)
	b = append(b, " bytes)"...)
	if keep == KeepHeadTail {
		b = append(b, " from the start and the end; request the omitted middle in smaller chunks"...)
	} else {
		b = append(b, "; request smaller chunks"...)
	}
	b = append(b, " (offset/limit) or specific sections]"...)
	return string(b)
}

// markerText is the in-band line that stands for the omitted middle in
// head_tail mode. lines counts every line that lost at least one byte; when a
// cut fell inside a line the omitted bytes are given too, since "N lines"
// alone would then be ambiguous.
func markerText(lines, bytes int, midLine bool) string {
	b := make([]byte, 0, 64)
	b = append(b, "[… "...)
	b = strconv.AppendInt(b, int64(lines), 10)
	if lines == 1 {
		b = append(b, " line"...)
	} else {
		b = append(b, " lines"...)
	}
	if midLine {
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(bytes), 10)
		if bytes == 1 {
			b = append(b, " byte"...)
		} else {
			b = append(b, " bytes"...)
		}
	}
	b = append(b, " omitted …]"...)
	return string(b)
}

// appendHint puts msg on its own line after k, with one blank line between.
// It costs at most 2+len(msg) bytes and exactly 2 lines (1 when k is empty).
func appendHint(k, msg string) string {
	if msg == "" || k == "" {
		return k + msg
	}
	return k + hintSep(k, msg) + msg
}

// hintSep is the separator appendHint puts between k and msg.
func hintSep(k, msg string) string {
	switch {
	case msg == "" || k == "":
		return ""
	case endsLine(k):
		return "\n"
	default:
		return "\n\n"
	}
}

// prependHint is appendHint for KeepTail: the end of the text is what was
// kept, so the hint goes first, where the reader meets it before the text.
func prependHint(msg, k string) string {
	switch {
	case msg == "":
		return k
	case k == "":
		return msg
	default:
		return msg + "\n\n" + k
	}
}
