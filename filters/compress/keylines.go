package compress

import "strings"

// KeyLine limits: a summary keeps at most MaxKeyLines lines of at most
// MaxKeyLineBytes each, so one noisy log cannot turn a one-line summary
// back into the log.
const (
	MaxKeyLines     = 12
	MaxKeyLineBytes = 400
)

// KeyLines returns the lines of a tool output an agent must not lose when
// the rest of it goes: failing test ids, error and exception lines, run
// summaries and failing exit notices, the commits git made ("[main
// c9e7dcd] Subject"), verbatim and in order, at most max of them
// (MaxKeyLines when max <= 0). Lines longer than MaxKeyLineBytes are left
// out rather than cut, so every line returned is byte-identical to one of
// text's. more counts the key lines that did not fit.
//
// File contents are not logs: a read of source code is full of "Error"
// identifiers, so callers ask only for outputs of commands and for results
// the tool marked as errors.
func KeyLines(text string, max int) (lines []string, more int) {
	lines, more, _ = keyLines(text, max, false)
	return lines, more
}

// KeyLinesFailed is KeyLines plus whether the output says the command
// behind it failed (a failing test, a failing run summary, an exit notice
// or a traceback, on lines up to 2,000 bytes), in one pass: the tiers ask
// both of every old command output, and the line classifiers they share
// are most of the work (issue 14).
func KeyLinesFailed(text string, max int) (lines []string, more int, failed bool) {
	return keyLines(text, max, true)
}

// keyLines reads the key lines and, with verdict, the failure verdict.
func keyLines(text string, max int, verdict bool) (lines []string, more int, failed bool) {
	if max <= 0 {
		max = MaxKeyLines
	}
	seen := make(map[string]struct{})
	add := func(k string) {
		if _, dup := seen[k]; dup {
			return
		}
		seen[k] = struct{}{}
		if len(lines) == max {
			more++
			return
		}
		lines = append(lines, k)
	}
	// A graphical report's error headline (codeframes.go) is told by the
	// frame under it: it is held until the next line shows whether one
	// opens there.
	headline := ""
	prefix := prefixOf(text) // read a CI job's or a workspace run's log through its prefixes, as the classifiers do
	for rest := text; rest != ""; {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		if prefix != noPrefix {
			l = l[prefix.cut(l):]
		}
		k := strings.TrimSuffix(l, "\r")
		blank := isBlank(k)
		if blank || len(k) > MaxKeyLineBytes {
			headline = ""
		}
		askVerdict := verdict && !failed && len(l) <= 2000
		if (len(k) > MaxKeyLineBytes || blank) && !askVerdict {
			continue
		}
		// One scan of the line gates every predicate below (linescan.go),
		// as in the classifiers: history reads every line of every old
		// result this way (issue 23).
		sl := scanLine(l)
		var failing, summary bool
		if askVerdict {
			failed, failing, summary = lineFailsIn(l, sl)
		}
		if len(k) > MaxKeyLineBytes || blank {
			continue
		}
		var key bool
		switch {
		case len(k) != len(l):
			// The classifiers read a line and the same line without its
			// \r alike but for a few suffix tests: k gets its own scan.
			key = isKeyLineIn(k, scanLine(k))
		case askVerdict:
			key = failing || summary || isErrorLineIn(k, sl.bits) && !strings.Contains(k, "Traceback (most recent call last)") ||
				sl.startsWith('[') && isCommitSummary(k)
		default:
			key = isKeyLineIn(k, sl)
		}
		switch t := strings.TrimSuffix(sl.t, "\r"); {
		case (sl.startsWith(',') || sl.startsWith(0xE2)) && isFrameOpener(t):
			if headline != "" {
				add(headline)
			}
			headline = ""
		case (sl.startsWith('x') || sl.startsWith(0xC3)) && headlineSeverity(t) == frameError:
			headline = k
		case headline != "" && !isFrameCause(t):
			headline = ""
		}
		if key {
			add(k)
		}
	}
	return lines, more, failed
}

// lineFailsIn says whether one line (s its scan) says its command failed,
// and what the two classifiers it asks found (KeyLines asks them too).
// Each predicate runs only when its gate lets it.
func lineFailsIn(l string, s lineScan) (fails, failing, summary bool) {
	failing = s.mayBeFailingTest() && isFailingTest(l)
	summary = s.mayBeSummary() && isSummaryLine(l)
	t := s.t // strings.TrimSpace(l) when the line is plain
	if !s.plain {
		t = strings.TrimSpace(l)
	}
	m := s.bits
	fails = failing || s.mayBeExitNotice() && isExitNotice(t) ||
		m.has('T') && m.has('k') && m.has('(') && strings.Contains(t, "Traceback (most recent call last)") ||
		summary && (strings.Contains(t, "fail") || strings.Contains(t, "FAIL") || strings.Contains(t, "error") || failedCapitalised(t))
	return fails, failing, summary
}

// failedCapitalised says whether a summary says a run failed with a
// capital F, as dotnet test does: "Failed!  - Failed: 1, …", "Test Run
// Failed.", and under it "Failed: 2" (not "Failed: 0").
func failedCapitalised(t string) bool {
	return strings.HasPrefix(t, "Failed!") || t == "Test Run Failed." || strings.HasPrefix(t, "Failed: ") && t != "Failed: 0"
}

// isKeyLineIn reports whether a line (s its scan) is a key line: a
// failing test, a summary or an error line. A pytest "E" detail line is
// the assertion itself: keep it. The traceback banner says nothing the
// exception line does not.
func isKeyLineIn(l string, s lineScan) bool {
	if s.mayBeFailingTest() && isFailingTest(l) || s.mayBeSummary() && isSummaryLine(l) {
		return true
	}
	if isErrorLineIn(l, s.bits) {
		return !strings.Contains(l, "Traceback (most recent call last)")
	}
	return s.startsWith('[') && isCommitSummary(l)
}
