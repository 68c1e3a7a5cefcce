package compress

import "strings"

// The runner forms below were missing when round 30's captures joined the
// tuning set (testdata/fixtures/SOURCES-round30a.md and -round30b.md):
// the Test Anything Protocol, which node --test writes whenever its output
// is not a terminal (an agent's shell), minitest-reporters under `rails
// test`, ScalaTest under sbt, behave, valgrind's and ninja's verdicts, and
// pnpm's and the race detector's. Each is asked behind the gates of the
// predicate that reads it (linescan.go).

// isTAPFailure matches a failed test point of the Test Anything Protocol
// (testanything.org): "not ok 3 - sums the cart", indented under a
// subtest as node --test prints it, unless its directive says the failure
// was expected ("not ok 4 - x # TODO later", "# SKIP"). A point without
// its number is legal TAP but no common producer writes one, and a line
// of prose may start "not ok".
func isTAPFailure(lt string) bool {
	r, ok := strings.CutPrefix(lt, "not ok ")
	if !ok {
		return false
	}
	d := digits(r)
	if d == 0 || d < len(r) && r[d] != ' ' {
		return false
	}
	if k := strings.Index(r, " # "); k >= 0 {
		// Directives are case-insensitive: "# TODO", "# skip".
		if d := strings.TrimLeft(r[k+3:], " "); len(d) >= 4 && (strings.EqualFold(d[:4], "TODO") || strings.EqualFold(d[:4], "SKIP")) {
			return false
		}
	}
	return true
}

// isTAPCount matches the counts node --test and tape close a TAP stream
// with: "# tests 4315", "# pass 4294", "# fail 21", and tape's "# ok".
func isTAPCount(t string) bool {
	if t == "# ok" {
		return true
	}
	for _, w := range [...]string{"# tests ", "# pass ", "# fail "} {
		if r, ok := strings.CutPrefix(t, w); ok {
			return r != "" && digits(r) == len(r)
		}
	}
	return false
}

// isMinitestProgressFailure matches a failed or errored test as
// minitest-reporters' ProgressReporter prints it: `FAIL["test_sums",
// #<Minitest::Reporters::Suite:0x… @name="CartTest">, 0.01]`.
func isMinitestProgressFailure(lt string) bool {
	r, ok := strings.CutPrefix(lt, `FAIL["`)
	if !ok {
		r, ok = strings.CutPrefix(lt, `ERROR["`)
	}
	return ok && strings.Contains(r, `", #<`)
}

// isMinitestSpecFailure matches SpecReporter's: the test's name, its
// result aligned in a column, and its time ("  test_0001_sums the cart
// FAIL (0.02s)", "… ERROR (3.27s)").
func isMinitestSpecFailure(t string) bool {
	return hasTimedResult(t, "  FAIL (") || hasTimedResult(t, "  ERROR (")
}

// isScalaTestFailure matches ScalaTest's failed test, "- sums the cart
// *** FAILED ***", as sbt relays it ("[info] - sums … *** FAILED ***").
func isScalaTestFailure(t, lt string) bool {
	if !strings.HasSuffix(t, " *** FAILED ***") {
		return false
	}
	lt = strings.TrimPrefix(lt, "[info] ")
	return strings.HasPrefix(lt, "- ") && len(lt) > len("-  *** FAILED ***")
}

// isScalaTestSummary matches ScalaTest's verdict lines, bare or as sbt
// relays them: "*** 2 TESTS FAILED ***", "Tests: succeeded 93, failed 1,
// canceled 0, ignored 0, pending 1", "All tests passed.".
func isScalaTestSummary(t string) bool {
	t = strings.TrimPrefix(strings.TrimPrefix(t, "[info] "), "[error] ")
	if r, ok := strings.CutPrefix(t, "*** "); ok {
		d := digits(r)
		return d > 0 && (strings.HasPrefix(r[d:], " TESTS FAILED ***") || strings.HasPrefix(r[d:], " TEST FAILED ***"))
	}
	if r, ok := strings.CutPrefix(t, "Tests: succeeded "); ok {
		return digits(r) > 0 && strings.Contains(r, ", failed ")
	}
	return t == "All tests passed."
}

// isCountsSummary matches the closing counts of minitest-reporters ("161
// tests, 237 assertions, 17 failures, 78 errors, 0 skips"; minitest's own
// says "runs") and behave ("1 feature passed, 0 failed, 0 skipped", "9
// scenarios passed, …", "112 steps passed, 0 failed, 0 skipped, 0
// undefined"); r is what follows the first count.
func isCountsSummary(r string) bool {
	if strings.HasPrefix(r, " tests, ") || strings.HasPrefix(r, " test, ") {
		return strings.Contains(r, " assertions, ") || strings.Contains(r, " assertion, ")
	}
	for _, w := range [...]string{" feature", " scenario", " step"} {
		if c, ok := strings.CutPrefix(r, w); ok {
			c = strings.TrimPrefix(c, "s")
			return strings.HasPrefix(c, " passed, ") && strings.Contains(c, " failed")
		}
	}
	return false
}

// cutValgrindPid returns t without valgrind's "==12345== " and the
// indentation after it; ok is false when t does not start with one.
func cutValgrindPid(t string) (string, bool) {
	r, ok := strings.CutPrefix(t, "==")
	if !ok {
		return t, false
	}
	d := digits(r)
	if d == 0 || !strings.HasPrefix(r[d:], "==") {
		return t, false
	}
	return trimLeft(r[d+2:]), true
}

// isValgrindSummary matches memcheck's verdict on a run, "==12345== ERROR
// SUMMARY: 1 errors from 1 contexts (suppressed: 0 from 0)".
func isValgrindSummary(t string) bool {
	r, ok := cutValgrindPid(t)
	if !ok {
		return false
	}
	r, ok = strings.CutPrefix(r, "ERROR SUMMARY: ")
	return ok && digits(r) > 0
}

// isRunnerError matches the verdicts of package scripts and the race
// detector that hold no error word: pnpm's coded failure naming the
// package and script that failed ("ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL
// @app/e2e@0.14.0 test: `playwright test`"), npm's and pnpm's lifecycle
// failure ("ELIFECYCLE  Test failed. See above for more details."), and
// Go's race detector ("WARNING: DATA RACE", "Found 2 data race(s)"), a
// git hook husky ran ("husky - pre-commit script failed (code 1)", older
// "husky > pre-commit hook failed (add --no-verify to bypass)"),
// xcodebuild's "The following build commands failed:", Stack's "Stack
// failed to execute the build plan.", ninja's "ninja: build stopped:
// subcommand failed." ("ninja: error: …" has its error word) and
// minitest's failed assertion, "Minitest::Assertion:   Expected false to
// be truthy." (its errors end in Error already); since round 31, Julia's
// "Got exception outside of a @test", R CMD check's "Running the tests in
// ‘tests/testthat.R’ failed.", lake's "Some required targets logged
// failures:" (and "builds"), Ansible's "ERROR! couldn't resolve
// module/action 'ufw'" and R's "Error in f(x) : object 'y' not found"
// (rlang's "Error in `f()`: …"). pnpm pads its codes with thin
// spaces (U+2009) for their coloured background: "\u2009ERR_PNPM_…\u2009
// @app/api …".
func isRunnerError(t string) bool {
	t = strings.TrimPrefix(t, "\u2009")
	if t == "" {
		return false
	}
	switch t[0] {
	case 'E':
		if strings.HasPrefix(t, "ERR_PNPM_") || strings.HasPrefix(t, "ELIFECYCLE ") || strings.HasPrefix(t, "ELIFECYCLE\u2009") || strings.HasPrefix(t, "ERROR! ") {
			return true
		}
		r, ok := strings.CutPrefix(t, "Error in ")
		return ok && (strings.Contains(r, " : ") || strings.HasPrefix(r, "`") && strings.Contains(r, "`: "))
	case 'W':
		return t == "WARNING: DATA RACE"
	case 'F':
		r, ok := strings.CutPrefix(t, "Found ")
		return ok && digits(r) > 0 && strings.HasSuffix(r, " data race(s)")
	case 'h':
		if r, ok := strings.CutPrefix(t, "husky - "); ok {
			return strings.Contains(r, " script failed (code ") || strings.Contains(r, " hook exited with code ")
		}
		r, ok := strings.CutPrefix(t, "husky > ")
		return ok && strings.Contains(r, " hook failed")
	case 'T':
		return t == "The following build commands failed:"
	case 'S':
		return strings.HasPrefix(t, "Stack failed to execute the build plan") ||
			t == "Some required targets logged failures:" || t == "Some required builds logged failures:"
	case 'G':
		return strings.HasPrefix(t, "Got exception outside of a @test")
	case 'R':
		return strings.HasPrefix(t, "Running the tests in ") && strings.HasSuffix(t, " failed.")
	case 'n':
		return strings.HasPrefix(t, "ninja: build stopped: ")
	case 'M':
		return strings.HasPrefix(t, "Minitest::Assertion:")
	}
	return false
}

// runnerErrorFirst are the first bytes isRunnerError's forms start with.
var runnerErrorFirst = setOf("EWFhTSnM\u2009GR")
