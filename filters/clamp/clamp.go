// Package clamp bounds the text of one tool result to a byte limit and a line
// limit, the hard clamp of seed 001 (50 KB and 2000 lines), without splitting
// a UTF-8 character.
//
// The package is pure: strings and limits in, strings and a Report out. No
// globals, no goroutines, no clocks; the same input always gives the same
// bytes.
package clamp

import (
	"errors"
	"fmt"
	"math"
)

// Seed 001 proposes maxBytesUtf8 = 50 * 1024 and maxLines = 2000.
const (
	DefaultMaxBytes = 50 * 1024
	DefaultMaxLines = 2000
)

// The smallest limits Validate accepts: below them even a short hint leaves
// almost no room for the tool output itself. Apply stays safe below them.
const (
	MinMaxBytes = 256
	MinMaxLines = 4
)

// ErrInvalidLimits is wrapped by every error Validate returns.
var ErrInvalidLimits = errors.New("clamp: invalid limits")

// Keep says which part of an over-limit result survives.
type Keep string

const (
	KeepHead     Keep = "head"      // default: keep the beginning
	KeepTail     Keep = "tail"      // keep the end
	KeepHeadTail Keep = "head_tail" // keep both ends, with an in-band "[… N lines omitted …]" marker between
)

// Limits bound one tool result (all its text blocks together).
//
// Apply treats MaxBytes <= 0 or MaxLines <= 0 as "no limit on that axis"; the
// defaults are for the configuration loader to fill in.
type Limits struct {
	MaxBytes int  // UTF-8 bytes, default DefaultMaxBytes
	MaxLines int  // lines as CountLines counts them, default DefaultMaxLines
	Keep     Keep // "" means KeepHead; an unknown value is treated as KeepHead
}

// Validate checks limits loaded from configuration. Errors name the field and
// the allowed values, and wrap ErrInvalidLimits.
func (l Limits) Validate() error {
	var errs []error
	if l.MaxBytes < MinMaxBytes {
		errs = append(errs, fmt.Errorf("%w: MaxBytes is %d, must be at least %d (default %d)",
			ErrInvalidLimits, l.MaxBytes, MinMaxBytes, DefaultMaxBytes))
	}
	if l.MaxLines < MinMaxLines {
		errs = append(errs, fmt.Errorf("%w: MaxLines is %d, must be at least %d (default %d)",
			ErrInvalidLimits, l.MaxLines, MinMaxLines, DefaultMaxLines))
	}
	switch l.Keep {
	case "", KeepHead, KeepTail, KeepHeadTail:
	default:
		errs = append(errs, fmt.Errorf("%w: Keep is %q, must be one of %q, %q, %q (empty means %q)",
			ErrInvalidLimits, l.Keep, KeepHead, KeepTail, KeepHeadTail, KeepHead))
	}
	return errors.Join(errs...)
}

// Report says what happened to one tool result.
type Report struct {
	Changed                 bool
	BytesBefore, BytesAfter int // summed over all text blocks
	LinesBefore, LinesAfter int
	BlocksReplaced          int // later text blocks replaced by the placeholder
}

// Text is Apply for a single string result (seed 001 §C: "a plain string
// result is clamped and returned as a string").
func Text(s string, lim Limits) (string, Report) {
	n, lines := len(s), CountLines(s)
	if n <= axis(lim.MaxBytes) && lines <= axis(lim.MaxLines) {
		return s, Report{BytesBefore: n, BytesAfter: n, LinesBefore: lines, LinesAfter: lines}
	}
	out, rep := Apply([]string{s}, lim)
	return out[0], rep
}

// Apply clamps the text blocks of ONE tool result with one shared budget.
//
// texts are the text blocks in order; non-text blocks such as images are not
// passed in (the caller keeps them as they are, seed 001 §C). The result has
// the same length as texts.
//
// A result under both limits is returned as is: the very same slice, with
// Changed=false, even if it holds invalid UTF-8 (the caller leaves such a
// result alone, so its bytes are not re-encoded). Otherwise every returned
// string is valid UTF-8 and, together, they respect both limits, counting the
// hint, the head_tail marker and the placeholders:
//
//   - KeepHead walks the blocks from the first, keeps whole blocks while they
//     fit, cuts the first one that does not, appends the hint to it and
//     replaces every later non-empty block with the placeholder.
//   - KeepTail is the mirror: it walks from the last block, keeps the end of
//     the block where the budget runs out with the hint in front of it, and
//     replaces the earlier non-empty blocks.
//   - KeepHeadTail gives half of the budget to the start (walked like
//     KeepHead) and the rest to the end (walked like KeepTail), puts the
//     marker right after the kept start, replaces the blocks in between, and
//     appends the hint to the last block.
//
// Empty blocks stay empty. Invalid UTF-8 in a clamped result is replaced by
// U+FFFD (one per run of invalid bytes) before anything is measured, in every
// block, so a block kept whole may still differ from its input. When the
// limits are too small for the extras, placeholders become "", head_tail
// falls back to head and the hint gets shorter or goes (see plan.go); the
// limits hold for any positive values.
func Apply(texts []string, lim Limits) ([]string, Report) {
	maxBytes, maxLines := axis(lim.MaxBytes), axis(lim.MaxLines)
	var rep Report
	for _, t := range texts {
		rep.BytesBefore += len(t)
		rep.LinesBefore += CountLines(t)
	}
	rep.BytesAfter, rep.LinesAfter = rep.BytesBefore, rep.LinesBefore
	if rep.BytesBefore <= maxBytes && rep.LinesBefore <= maxLines {
		return texts, rep
	}

	c := newClamper(texts, maxBytes, maxLines, lim.Keep)
	if c.totalBytes <= maxBytes && c.totalLines <= maxLines {
		// Repairing invalid UTF-8 alone brought the result under the limits
		// (a run of invalid bytes shrinks to one U+FFFD): nothing to cut.
		copy(c.out, c.src)
	} else {
		c.plan()
		if c.keep == KeepHeadTail {
			c.headTail()
		} else {
			c.oneEnd()
		}
	}

	rep.Changed = true
	rep.BytesAfter, rep.LinesAfter = 0, 0
	for _, t := range c.out {
		rep.BytesAfter += len(t)
		rep.LinesAfter += CountLines(t)
	}
	rep.BlocksReplaced = c.replaced
	return c.out, rep
}

// axis maps a configured limit to the value the clamp compares against:
// zero or negative means no limit on that axis.
func axis(limit int) int {
	if limit <= 0 {
		return math.MaxInt
	}
	return limit
}

// clamper holds the state of one over-limit Apply call.
type clamper struct {
	src   []string // the blocks, with invalid UTF-8 repaired
	lines []int    // CountLines of each src block
	out   []string

	maxBytes, maxLines     int
	totalBytes, totalLines int // over src
	nonEmpty               int // number of non-empty src blocks
	keep                   Keep

	// Set by plan.
	hint        hintKind
	hintBytes   int    // bytes reserved for the hint, separator included
	hintLines   int    // lines reserved for the hint
	markerBytes int    // bytes reserved for the head_tail marker and its line breaks
	placeholder string // placeholder text, or "" when even that does not fit
	replaced    int
}

func newClamper(texts []string, maxBytes, maxLines int, keep Keep) *clamper {
	c := &clamper{
		src:      make([]string, len(texts)),
		lines:    make([]int, len(texts)),
		out:      make([]string, len(texts)),
		maxBytes: maxBytes,
		maxLines: maxLines,
		keep:     keep,
	}
	for i, t := range texts {
		t = validUTF8(t)
		c.src[i] = t
		c.lines[i] = CountLines(t)
		c.totalBytes += len(t)
		c.totalLines += c.lines[i]
		if t != "" {
			c.nonEmpty++
		}
	}
	return c
}

// hintFor renders the hint for what was finally kept.
func (c *clamper) hintFor(keptLines, keptBytes int) string {
	return hintText(c.hint, c.keep, keptLines, c.totalLines, keptBytes, c.totalBytes)
}
