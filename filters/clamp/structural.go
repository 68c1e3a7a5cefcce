package clamp

import "strconv"

// Cutter is a structural cut of one tool result's text: it keeps the lines
// that matter for the kind of output it is (failing tests, run summaries,
// error lines, diff hunks, ...) and marks every removal in-band, aiming at
// aim bytes. ok is false when it cannot classify the text, or leaves it
// whole; out may exceed aim (an aim, not a cap). The clamp package cannot
// import the strategies (they use its line counting), so the pipeline
// assembly passes one in (extproc: compress.Cut).
type Cutter func(text, toolName, args string, aim int) (out string, ok bool)

// structuralNote ends a result the clamp cut structurally: what it did, in
// one ASCII line (seed 001's hint), sizes of the text the model sees.
func structuralNote(keptBytes, totalBytes, totalLines int) string {
	b := make([]byte, 0, 160)
	b = append(b, "[toolproc: tool output cut to "...)
	b = strconv.AppendInt(b, int64(keptBytes), 10)
	b = append(b, " of "...)
	b = strconv.AppendInt(b, int64(totalBytes), 10)
	b = append(b, " bytes ("...)
	b = strconv.AppendInt(b, int64(totalLines), 10)
	b = append(b, " lines) by what it reports; omitted lines are marked above]"...)
	return string(b)
}

// maxCutTries bounds the aims tried: each try is a linear pass over the
// text, and each aim is smaller than the one before.
const maxCutTries = 4

// StructuralText cuts one text under lim with cut, or returns ok false (the
// caller then clamps as usual). The result ends with the note, holds both
// limits with it, is valid UTF-8 (the text is repaired first, as Apply
// does) and is strictly smaller than the text.
func StructuralText(s, toolName, args string, lim Limits, cut Cutter) (string, bool) {
	maxBytes, maxLines := axis(lim.MaxBytes), axis(lim.MaxLines)
	s = validUTF8(s)
	total, lines := len(s), CountLines(s)
	if total <= maxBytes && lines <= maxLines {
		return "", false // repair alone fits: Apply says so
	}
	// The note's three numbers take at most 19 more digits each, and a
	// line break may go before it.
	room := maxBytes - len(structuralNote(0, 0, 0)) - 3*19 - 1
	aim := min(room, total-1)
	for try := 0; try < maxCutTries && aim >= MinMaxBytes; try++ {
		out, ok := cut(s, toolName, args, aim)
		if !ok || out == s {
			return "", false
		}
		n := CountLines(out)
		if len(out) <= room && n+1 <= maxLines {
			note := structuralNote(len(out), total, lines)
			if out != "" && out[len(out)-1] != '\n' {
				out += "\n"
			}
			if out += note; len(out) >= total {
				return "", false // over the line limit only, and the note does not pay
			}
			return out, true
		}
		next := aim * 2 / 3
		if len(out) > room {
			// The cut's output grows with its aim: scaled to what it
			// overshot by, the next aim misses by little, where two thirds
			// of an aim a few bytes over would throw a third away (150
			// failing examples that fit in 50 KB kept 100).
			next = int(int64(aim) * int64(room) / int64(len(out)) * 19 / 20)
		}
		if n+1 > maxLines {
			// Bytes per kept line tell how many bytes fit the line limit.
			next = min(next, int(int64(aim)*int64(maxLines-1)/int64(n+1)*9/10))
		}
		aim = min(next, aim-1)
	}
	return "", false
}
