package compress

import "strings"

// The runner forms below were missing when round 31's captures joined the
// tuning set (testdata/fixtures/SOURCES-round31a.md and -round31b.md):
// cabal's test suites, testthat and R CMD check, Julia's Test inside a
// test set, Cypress's run table, Lean's lake and Ansible. Each is asked
// behind the gates of the predicate that reads it (linescan.go).

// isCabalSuiteFailure matches cabal's verdict on one test suite, "Test
// suite chess-test: FAIL": the suite is the test that failed, whatever
// framework ran inside it (hspec, tasty, QuickCheck).
func isCabalSuiteFailure(lt string) bool {
	r, ok := strings.CutPrefix(lt, "Test suite ")
	name, ok2 := strings.CutSuffix(r, ": FAIL")
	return ok && ok2 && name != "" && !strings.Contains(name, " ")
}

// isXcodeParallelFailure matches xcodebuild's line for a failed test when
// it runs tests in parallel on simulator clones, "Test case
// 'CartTests.testSums()' failed on 'Clone 1 of iPhone 13 mini - xctest
// (59522)' (0.278 seconds)": a lower-case "case" and the clone it ran on,
// where a serial run writes XCTest's "Test Case '…' failed (…)". Found by
// scanning the tuning set for failure lines no form read (two sources).
func isXcodeParallelFailure(lt string) bool {
	r, ok := strings.CutPrefix(lt, "Test case '")
	if !ok {
		return false
	}
	k := strings.Index(r, "' failed on '")
	return k > 0 && strings.HasSuffix(r, ")")
}

// isCabalSuitesCount matches the rest of cabal's count after its first
// number, "0 of 1 test suites (0 of 1 test cases) passed.": r is " of 1
// test suites (…) passed.".
func isCabalSuitesCount(r string) bool {
	r, ok := strings.CutPrefix(r, " of ")
	if !ok || digits(r) == 0 {
		return false
	}
	r = r[digits(r):]
	return (strings.HasPrefix(r, " test suites (") || strings.HasPrefix(r, " test suite (")) && strings.HasSuffix(r, ") passed.")
}

// isTestthatFailure matches the heading testthat writes over each failed
// expectation, in its third edition "── Failure ('test-cart.R:12:3'):
// sums ───" or "── Error ('test-cart.R:20:5'): totals ──", and before it
// "── 1. Failure: sums (@test-cart.R#12) ──". The rule's dashes are
// U+2500, in R's UTF-8 sessions; an ASCII session writes "--".
func isTestthatFailure(lt string) bool {
	r, ok := strings.CutPrefix(lt, "── ")
	if !ok {
		if r, ok = strings.CutPrefix(lt, "-- "); !ok {
			return false
		}
	}
	if d := digits(r); d > 0 && strings.HasPrefix(r[d:], ". ") {
		r = r[d+2:]
	}
	for _, w := range [...]string{"Failure", "Error"} {
		if rest, ok := strings.CutPrefix(r, w); ok {
			// A location in parentheses, then the test's name: "(…): name",
			// or the older ": name (@file#line)".
			return strings.HasPrefix(rest, " ('") && strings.Contains(rest, "'): ") ||
				strings.HasPrefix(rest, ": ") && strings.Contains(rest, " (@")
		}
	}
	return false
}

// isTestthatCount matches testthat's running count, "[ FAIL 2 | WARN 0 |
// SKIP 1 | PASS 120 ]", which it prints last as its summary.
func isTestthatCount(t string) bool {
	r, ok := strings.CutPrefix(t, "[ FAIL ")
	return ok && digits(r) > 0 && strings.Contains(r, " | PASS ") && strings.HasSuffix(r, " ]")
}

// isRCheckStatus matches R CMD check's verdict, "Status: 1 ERROR, 2
// WARNINGs, 3 NOTEs" or "Status: OK".
func isRCheckStatus(t string) bool {
	r, ok := strings.CutPrefix(t, "Status: ")
	if !ok {
		return false
	}
	if r == "OK" {
		return true
	}
	d := digits(r)
	if d == 0 {
		return false
	}
	r = r[d:]
	return strings.HasPrefix(r, " ERROR") || strings.HasPrefix(r, " WARNING") || strings.HasPrefix(r, " NOTE")
}

// isJuliaSetFailure matches Julia's Test inside a test set, where the set's
// description comes first: "Gradients: Test Failed at
// /src/test/grad.jl:165", "Gradients: Error During Test at …:165". The
// line ends in the line number.
func isJuliaSetFailure(t string) bool {
	for _, w := range [...]string{": Test Failed at ", ": Error During Test at "} {
		if k := strings.Index(t, w); k > 0 {
			r := t[k+len(w):]
			return len(r) > 2 && isDigit(r[len(r)-1]) && strings.Contains(r, ":")
		}
	}
	return false
}

// mayBeJuliaSetFailure gates isJuliaSetFailure: a line ending in a digit
// that holds both forms' letters.
func mayBeJuliaSetFailure(s lineScan) bool {
	m := s.bits
	return isDigit(s.t[len(s.t)-1]) && m.has('T') && m.has('t') && m.has(':') && (m.has('F') || m.has('D'))
}

// isCypressRunSummary matches the last row of Cypress's run table, "✖  1
// of 4 failed (25%)   04:06   35   19   16" or "✔  All specs passed!
// 00:12   8   8": how the whole run went.
func isCypressRunSummary(t string) bool {
	r, ok := strings.CutPrefix(t, "✖")
	if !ok {
		if r, ok = strings.CutPrefix(t, "✔"); !ok {
			return false
		}
	}
	r = strings.TrimLeft(r, " ")
	if strings.HasPrefix(r, "All specs passed!") {
		return true
	}
	d := digits(r)
	if d == 0 {
		return false
	}
	r, ok = strings.CutPrefix(r[d:], " of ")
	d = digits(r)
	return ok && d > 0 && strings.HasPrefix(r[d:], " failed (")
}
