package compress

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkGates fails when a gate of lineScan says a line cannot match a
// predicate that matches it: the gates must be necessary conditions.
func checkGates(t *testing.T, l string) {
	t.Helper()
	s := scanLine(l)
	for _, g := range []struct {
		name       string
		gate, pred bool
	}{
		{"summary", s.mayBeSummary(), isSummaryLine(l)},
		{"exit notice", s.mayBeExitNotice(), isExitNotice(strings.TrimSpace(l))},
		{"failing test", s.mayBeFailingTest(), isFailingTest(l)},
		{"passing test", s.mayBePassingTest(l), isPassingTest(l)},
		{"chain notice", s.mayBeChainNotice(), isChainNotice(l)},
		{"rule title", s.startsWith('='), ruleTitle(l, '=') != ""},
		{"xml", s.startsWith('<'), xmlTestClass(l) != xmlNone},
		{"marker", s.startsWith('['), looksLikeMarker(l)},
		{"commit summary", s.startsWith('['), isCommitSummary(l)},
		{"tree row", s.mayBeTreeRow(), treeDepth(l) >= 0},
		{"path line", s.mayBePathLine(), isPathLine(l)},
		{"hit", s.bits.has('0'), hitPath(l) != ""},
		{"plain hit", s.bits.has(':'), plainHitPath(l) != ""},
		{"timestamp", s.bits.has('0'), hasTimestamp(l)},
	} {
		if g.pred && !g.gate {
			t.Errorf("%s gate rejects %q", g.name, l)
		}
	}
	if s.plain && s.t != strings.TrimSpace(l) {
		t.Errorf("plain line %q: t %q, strings.TrimSpace %q", l, s.t, strings.TrimSpace(l))
	}
	f := s.features(l)
	t0 := trimLeft(l)
	for _, g := range []struct {
		name       string
		feat, want bool
	}{
		{"section start", f&featSectionStart != 0, isSectionStart(l)},
		{"section end", f&featSectionEnd != 0, isSectionEnd(l)},
		{"go fail", f&featGoFail != 0, strings.HasPrefix(t0, "--- FAIL: ")},
		{"report header", f&featReportHeader != 0, len(l) > 0 && l[0] == '_' && ruleTitle(l, '_') != ""},
	} {
		if g.feat != g.want {
			t.Errorf("%s feature of %q is %v, want %v", g.name, l, g.feat, g.want)
		}
	}
	if f&featLoc == 0 && location(l) != "" {
		t.Errorf("location feature rejects %q", l)
	}
	if f&featMaybeFrames == 0 && (strings.HasPrefix(t0, "Traceback (most recent call last)") || isPytestFrame(l) ||
		strings.HasPrefix(t0, "at ") || strings.HasPrefix(l, "goroutine ")) {
		t.Errorf("frames feature rejects %q", l)
	}
	for _, g := range []struct {
		name     string
		in, want bool
	}{
		{"error line", isErrorLineIn(l, s.bits), isErrorLine(l)},
		{"log error", isLogErrorIn(l, s.bits), isLogError(l)},
		{"error line, error word known", isErrorLineIn(l, withErrorWord(l, s.bits)), isErrorLine(l)},
		{"log error, error word known", isLogErrorIn(l, withErrorWord(l, s.bits)), isLogError(l)},
		{"error or log error", isErrorOrLogError(l, s.bits, true), isErrorLine(l) || isLogError(l)},
		{"warning", isWarnLineIn(l, s.bits), isWarnLine(l)},
	} {
		if g.in != g.want {
			t.Errorf("%s: scanned %v, unscanned %v on %q", g.name, g.in, g.want, l)
		}
	}
	if got, want := isPathLine(l), isPathLineOld(l); got != want {
		t.Errorf("isPathLine(%q) = %v, want %v", l, got, want)
	}
	if got, want := isBlank(l), strings.TrimSpace(l) == ""; got != want {
		t.Errorf("isBlank(%q) = %v, want %v", l, got, want)
	}
	if got, want := isDiffHeader(l), isDiffHeaderOld(l); got != want {
		t.Errorf("isDiffHeader(%q) = %v, want %v", l, got, want)
	}
	if got, want := isFailingTest(l), isFailingTestOld(l); got != want {
		t.Errorf("isFailingTest(%q) = %v, want %v", l, got, want)
	}
	if got, want := isPassingTest(l), isPassingTestOld(l); got != want {
		t.Errorf("isPassingTest(%q) = %v, want %v", l, got, want)
	}
	if tr := trimRight(l); strings.HasSuffix(tr, ")") {
		for _, w := range [...]string{" ... ok (", " ... ignored (", " ... FAILED ("} {
			if got, want := hasTimedResult(tr, w), hasTimedResultOld(tr, w); got != want {
				t.Errorf("hasTimedResult(%q, %q) = %v, want %v", tr, w, got, want)
			}
		}
	}
	if got, want := hasTimestamp(l), hasTimestampOld(l); got != want {
		t.Errorf("hasTimestamp(%q) = %v, want %v", l, got, want)
	}
	if got, want := treeDepth(l), treeDepthOld(l); got != want {
		t.Errorf("treeDepth(%q) = %v, want %v", l, got, want)
	}
	p1, l1 := locationParts(l)
	if p2, l2 := locationPartsIn(l, s.bits); p1 != p2 || l1 != l2 {
		t.Errorf("locationPartsIn(%q) = %q, %q; want %q, %q", l, p2, l2, p1, l1)
	}
}

// TestLineGates runs every gate on every line of the samples and on the
// forms the predicates name.
func TestLineGates(t *testing.T) {
	lines := []string{
		"E   assert 1 == 2", "FAILED tests/a.py::t - x", "Traceback (most recent call last):",
		"Segmentation fault (core dumped)", "thread 'main' panicked at src/x.rs:1:2", "error[E0308]: x",
		"2026-03-01 10:00:00 ERROR [orders] x", "2026-03-01 10:00:00 INFO [http] GET /api/orders 200", "level=error msg=x",
		`{"level":"error","msg":"x"}`, "[error] x", "[ERROR] x", "Error: x", "src/a.ts(1,2): error TS2322: x",
		"  Failed Ns.CartTests.Sums [12 ms]", "  Passed Ns.CartTests.Sums(n: 2) [< 1 ms]", "  Skipped Ns.T.X [1 m 3 s]", "  Failed to connect [retry]",
		"└ fatal: not a git repository", "x panic: y", "E 12:00:00 x", "CRITICAL x", "SEVERE x", "KeyError",
		"ValueError", "  File \"a.py\", line 3, in f", "a/b.go:12: x", "==== 1 failed in 0.1s ====",
		"!!!! Interrupted: 1 error during collection !!!!", "12 passing (3s)", "exit status 2",
		"make: *** [x] Error 2", "3 examples, 1 failure", "test_x ... ok", "x ... skipped 'no'",
		"tests/a.py::t PASSED [ 50%]", "PASSED a", "  PASSED a", "SKIPPED a", "XFAIL a", "XPASS a", "--- SKIP: T", "=== RUN T", "=== PAUSE T", "=== CONT T", "=== NAME T", "✓ a", "√ a", "✔ a", "PASS src/a.test.ts", "PASS a", "test_a ok", "test_a f", "  test_a s", "Applying a... OK", "x ... expected failure", "x ... ignored", "a::b SKIPPED", "a::b XFAIL", "a XFAIL", "x ... ok", "✖ fails (1.2ms)", "✖ failing tests:", "ℹ tests 12", "ℹ pass 11", "ℹ fail 1", "ℹ fail", "ℹ fail x", "ℹ suites 0", "sub ... FAILED (1ms)", "add ... ok (2ms)", " ... ok (2ms)", "a ... ok (b (2ms)", "a ... ok (2ms) (3ms)", "x(1ms)", "(2ms)", "a ... ok (1.5s)", "b ... ignored (0ms)", "c ... ok (soon)", "d ... FAILED ()", "ok | 2 passed | 0 failed (5ms)", "FAILED | 1 passed | 1 failed (12ms)", "running 2 tests from ./main_test.ts", "5 tests, 1 failure", "14 doctests, 297 tests, 0 failures, 2 excluded", "3 properties, 10 tests, 0 failures", "5 tests, 1 failure and more", "5 failures", "1 test", "Running ExUnit with seed: 1, max_cases: 8", "(fail) cart > sums [0.29ms]", "  (pass) a [1ms]", "(skip) a", "(todo) a", "(fail)x", " 12 pass", "1 fail", "2 skip", "1 error", "3 errors", "1 fails", "diff --git a b", "deleted file mode 1", "dissimilarity index 9", "--- a", "+++ b", "index 1..2", "new file mode 1", "new mode 1", "old mode 1", "similarity index 9", "rename from a", "rename to b", "copy from a", "copy to b", "Binary files a", "GIT binary patch", "Only in a", "FAILED (failures=1)", "FAILED (x) ... FAIL", "ERROR  x", "ERROR x", "FAIL: t (a.B)", "ERROR: t (a.B)", "FAIL src/a.test.ts", "FAIL  a > b", "FAIL x", "× a", "✗ a", "● a", "rspec ./a_spec.rb:3", "test_a F", "test_a E", "___ x.py:test_a ___", "___ x ... FAIL", "1) a", "12) Cart", "t ... FAIL", "t ... ERROR", "test a ... FAILED", "a::b FAILED", "a::b ERROR", "a ERROR", "  FAILED x", "\u00a0", " \u0085 ", "\u3000x", "\v\f\r", " \xff", "tests/a.py::t FAILED [ 50%]", "?   \tpkg\t[no test files]",
		"\rFAILED x", "\u00a0FAILED x", "✕ sums", "<testcase name=\"x\"/>", "[... 3 lines omitted ...]",
		"The above exception was the direct cause", "Caused by: x", "1) Cart sums", "", " ", "\t",
		"____ test_x ____", "---- x stdout ----", "  --- FAIL: TestX (0.0s)", "===========", "-----------",
		"src/a.py:12: in f", "    at x.y(Z.java:3)", "goroutine 1 [running]:", "\v--- FAIL: x",
		"2024-05-20 12:00:00 E worker died", "level=error msg=x", `{"level":"error"}`, "CRITICAL x", "SEVERE x",
		// A multi-byte character inside a line leaves it plain; one at
		// either end of the trimmed text does not (it may be a space).
		"    28→FAILED tests/a.py::t - x", "    12→Error: x", "     3→==== 1 failed in 0.1s ====", "  ● Calc › adds", "✓ a ✓",
		"FAILED x\u00a0", "x\u2028", "a\u0085", "(fail) a › b [1ms]", "ℹ tests 3 ✓", "Résumé: 3 failed, 1 passed in 0.2s",
		"12→  3 passed in 0.1s", "x → y Traceback (most recent call last):", "é", "a é b", "\u00a0x\u00a0",
		"[ERROR] x", "[error] x", "x ERROR y", "WARN x", "Warning: x", "warning: x", "[warning] x", "level=warn",
		"UserWarning x", "2 failed, 10 passed in 0.42s", "12) x", "2026-03-01 10:00:00 INFO x", "a12:30:45", "x 2024/05/20 y",
		"1a2024-05-20", "12:3:45 12:34:56", "src/a.go:12:x", "src/a.go-12-x", "Found 3 errors in 2 files.", "Found 1 error.", "Found 2 diagnostics", "Found 12 files", "Found 1 errorless", "Success: no issues found in 3 source files", "Error [ERR_X]: y", "TypeError [ERR_X]: y", "zsh:1: command not found: x", "/bin/sh: 1: x: not found", "env: 'node': No such file or directory", "Killed", "Killed: 9", "Summary [ 0.1s] 3 tests run: 3 passed", "  1 failed", "  3 passed (1.2s)", "2 flaky", "Failed!  - Failed: 1, Passed: 2", "Passed!  - Failed: 0, Passed: 2", "BUILD FAILED in 3s", "BUILD SUCCESSFUL in 5s", "3 tests completed, 1 failed", "Tests run: 5, Failures: 1, Errors: 0, Skipped: 0", "[INFO] Tests run: 5, Failures: 0, Errors: 0, Skipped: 0", "[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s - in a.B", "Executed 3 tests, with 1 failure (0 unexpected) in 0.1 (0.2) seconds", "# fail 1", "# pass 12", "# tests x", "src/a.py:    return x", "a (b", "a/b=c", "│   ├── a.go", "|-- b", "`-- c", "a/b.go", "x y/z", "http://x/y", ".env", "thread 'x' panicked at 'y'", "error: x", "Error: x", "ERROR: x",
		// The first-byte and exit-notice gates at their edges.
		"PASS", " PASS ", "PASSED", "PASSING 3", "Passed!", "test result: ok. 1 passed", "tests finished: 3 passed, in 0.1 seconds",
		"test result:", "testenv/body.go:21:func x()", "tests/a.py", "Process exited with EXIT CODE 2", "exit code 1", "Exit 1",
		"text 1", "eXit code 1", "EXIT STATUS 3", "ExIt status 2", "make[1]: *** [x] Error 1", "exits 2", "xit code 1",
	}
	filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		lines = append(lines, strings.Split(string(b), "\n")...)
		return nil
	})
	lines = append(lines, strings.Repeat("x", maxScan)+" E x", strings.Repeat("a/b.go:1 ", maxScan))
	for _, l := range lines {
		checkGates(t, l)
	}
}

func FuzzLineGates(f *testing.F) {
	f.Add("FAILED tests/a.py::t - x")
	f.Add("Traceback (most recent call last):")
	f.Add("    28→FAILED tests/a.py::t - x")
	f.Add("FAILED x\u00a0")
	f.Add("test result: FAILED. 1 passed; 1 failed")
	f.Add("Process exited with EXIT CODE 2")
	f.Add("PASS")
	f.Add("[warn] Code style issues found in 3 files.")
	f.Add("web1 : ok=3 changed=0 unreachable=0 failed=1")
	f.Add("SUMMARY: AddressSanitizer: x")
	f.Add("==1== Invalid read of size 4")
	f.Add("done (warnings were emitted)")
	// Round 27 and 28's runner forms.
	f.Add("00:05 +10 -1: Some tests failed.")
	f.Add("00:03 +4 -1: test/cart_test.dart: Cart totals [E]")
	f.Add("Test Case '-[AppTests.CartTests testSums]' failed (0.002 seconds).")
	f.Add("✘ Test sums() failed after 0.001 seconds with 1 issue.")
	f.Add("􀢄  Test run with 351 tests failed after 3.9 seconds with 6 issues.")
	f.Add("Test Run Failed.")
	f.Add("     Failed: 2")
	f.Add("[INFO] BUILD FAILURE")
	f.Add("    2 Error(s)")
	f.Add("3 issues found. (ran in 1.2s)")
	// Round 29's.
	f.Add("[  FAILED  ] CartTest.Sums (0 ms)")
	f.Add("  6/12 Test  #6: cart ....***Failed    0.03 sec")
	f.Add("\t  6 - cart_sums (Failed)")
	f.Add("[ERROR] com.x.CartTest.sums -- Time elapsed: 0.1 s <<< FAILURE!")
	f.Add("[ERROR]   CartTest.sums:42 expected: <1> but was: <2>")
	f.Add("  sums the cart FAILED [1]")
	f.Add("cart_tests:25: sums_test...*failed*")
	f.Add("%%% cart_SUITE ==> sums: FAILED")
	f.Add("93% tests passed, 8 tests failed out of 123")
	f.Add("[INFO] cart-core ........ FAILURE [ 18.359 s]")
	f.Fuzz(func(t *testing.T, l string) {
		if !strings.Contains(l, "\n") {
			checkGates(t, l)
		}
	})
}

// isPathLineOld and treeDepthOld are the predicates as they were before
// their one-pass forms, to compare with.
func isPathLineOld(l string) bool {
	t := strings.TrimSpace(l)
	if t == "" || len(t) > 512 || strings.ContainsAny(t, " \t\"'<>{}[]()=,;") || strings.Contains(t, "://") {
		return false
	}
	return strings.ContainsAny(t, "/\\") || hasSourceExt(t) || strings.HasPrefix(t, ".")
}

func treeDepthOld(l string) int {
	for _, m := range [...]string{"├── ", "└── ", "|-- ", "`-- "} {
		if i := strings.Index(l, m); i >= 0 {
			return i + len(m)
		}
	}
	return -1
}

// hasTimestampOld is hasTimestamp as it was before it skipped positions.
func hasTimestampOld(l string) bool {
	if len(l) > 48 {
		l = l[:48]
	}
	for i := 0; i+8 <= len(l); i++ {
		if isDigit(l[i]) && isDigit(l[i+1]) && l[i+2] == ':' && isDigit(l[i+3]) && isDigit(l[i+4]) && l[i+5] == ':' && isDigit(l[i+6]) && isDigit(l[i+7]) {
			return true
		}
		if i+10 <= len(l) && isDigit(l[i]) && isDigit(l[i+1]) && isDigit(l[i+2]) && isDigit(l[i+3]) &&
			(l[i+4] == '-' || l[i+4] == '/') && isDigit(l[i+5]) && isDigit(l[i+6]) && l[i+7] == l[i+4] && isDigit(l[i+8]) && isDigit(l[i+9]) {
			return true
		}
	}
	return false
}

// isPassingTestOld is isPassingTest as it was before its first- and
// last-byte switches.
// dartRunning is a Dart test runner's line for a test that has not
// failed: its counter, and neither "[E]" nor the run's verdict.
func dartRunning(lt string) bool {
	r, ok := dartProgress(lt)
	return ok && !strings.HasSuffix(r, " [E]") && !isDartVerdict(lt)
}

func isPassingTestOld(l string) bool {
	t := stripProgress(trimRight(l))
	lt := trimLeft(t)
	switch {
	case strings.HasPrefix(t, "PASSED ") || strings.HasPrefix(t, "SKIPPED ") || strings.HasPrefix(t, "XFAIL ") || strings.HasPrefix(t, "XPASS "):
		return true
	case strings.HasPrefix(lt, "--- PASS: ") || strings.HasPrefix(lt, "--- SKIP: "):
		return true
	case strings.HasPrefix(lt, "=== RUN ") || strings.HasPrefix(lt, "=== PAUSE ") || strings.HasPrefix(lt, "=== CONT ") || strings.HasPrefix(lt, "=== NAME "):
		return true
	case strings.HasSuffix(t, " ... ok") || strings.HasSuffix(t, " ... skipped") ||
		strings.HasSuffix(t, " ... expected failure") || strings.HasSuffix(t, " ... ignored"):
		return true
	case (strings.HasSuffix(t, " PASSED") || strings.HasSuffix(t, " SKIPPED") || strings.HasSuffix(t, " XFAIL")) && strings.Contains(t, "::"):
		return true // pytest -v, its progress column already stripped
	case strings.Contains(t, " ... skipped "): // unittest: "... skipped 'needs pint'"
		return true
	case strings.HasPrefix(lt, "✓ ") || strings.HasPrefix(lt, "√ ") || strings.HasPrefix(lt, "✔ "):
		return true
	case strings.HasPrefix(lt, "PASS ") && (strings.Contains(lt, "/") || strings.Contains(lt, ".")):
		return true
	case strings.HasPrefix(lt, "test_") && (strings.HasSuffix(lt, " ok") || strings.HasSuffix(lt, " f") || strings.HasSuffix(lt, " s")):
		return true
	case strings.HasPrefix(lt, "Applying ") && strings.HasSuffix(lt, "... OK"): // django migrations
		return true
	case strings.HasPrefix(l, "?   \t") && strings.HasSuffix(t, "[no test files]"):
		return true
	case strings.HasPrefix(lt, "(pass) ") || strings.HasPrefix(lt, "(skip) ") || strings.HasPrefix(lt, "(todo) "): // bun test (added with the switch)
		return true
	case (strings.HasPrefix(lt, "Passed ") || strings.HasPrefix(lt, "Skipped ")) && endsWithBracketDuration(lt): // vstest (added later)
		return true
	case strings.HasSuffix(t, ")") && (hasTimedResult(t, " ... ok (") || hasTimedResult(t, " ... ignored (")): // Deno (added with the switch)
		return true
	case dartRunning(lt): // dart test (added with round 28's fixtures)
		return true
	}
	return false
}

// hasTimedResultOld is hasTimedResult as it was before it read the
// duration first.
func hasTimedResultOld(t, word string) bool {
	k := strings.LastIndex(t, word)
	if k <= 0 {
		return false
	}
	d := t[k+len(word) : len(t)-1]
	n := digits(d)
	if n == 0 {
		return false
	}
	if d[n:] != "" && d[n] == '.' {
		n += 1 + digits(d[n+1:])
	}
	switch d[n:] {
	case "ms", "s", "µs":
		return true
	}
	return false
}

// isFailingTestOld is isFailingTest as it was before its byte switches.
func isFailingTestOld(l string) bool {
	t := stripProgress(trimRight(l))
	lt := trimLeft(t)
	switch {
	case strings.HasPrefix(t, "FAILED ") || strings.HasPrefix(t, "ERROR ") && len(t) > 6 && t[6] != ' ': // pytest short summary
		return !strings.HasPrefix(t, "FAILED (")
	case strings.HasPrefix(t, "FAIL: ") || strings.HasPrefix(t, "ERROR: "): // unittest
		return true
	case strings.HasPrefix(lt, "Failed ") && endsWithBracketDuration(lt): // vstest (added later)
		return true
	case strings.HasPrefix(lt, "--- FAIL: "): // go
		return true
	case strings.HasSuffix(t, " ... FAIL") || strings.HasSuffix(t, " ... ERROR") || strings.HasSuffix(t, " ... FAILED"): // unittest -v, cargo
		return true
	case strings.HasSuffix(t, " FAILED") && strings.Contains(t, "::"): // pytest -v
		return true
	case strings.HasSuffix(t, " ERROR") && strings.Contains(t, "::"):
		return true
	case strings.HasPrefix(lt, "✕ ") || strings.HasPrefix(lt, "× ") || strings.HasPrefix(lt, "✗ ") || strings.HasPrefix(lt, "● "): // jest, vitest
		return true
	case strings.HasPrefix(lt, "FAIL ") && (strings.Contains(lt, "/") || strings.Contains(lt, ".") || strings.Contains(lt, "\\")): // jest suite; Pest's (round 29)
		return true
	case strings.HasPrefix(lt, "FAILED  ") && len(lt) > 8 && lt[8] != ' ': // Pest (round 29)
		return true
	case strings.HasPrefix(lt, "rspec ./"):
		return true
	case isNumberedFailure(lt, len(lt) < len(t)): // mocha, rspec, phpunit (a heading at the margin only with a method: stop 58)
		return true
	case strings.HasPrefix(lt, "FAIL ") && strings.Contains(lt, " > "): // vitest: "FAIL  src/a.test.ts > cart > sums"
		return true
	case strings.HasPrefix(lt, "test_") && (strings.HasSuffix(lt, " F") || strings.HasSuffix(lt, " E")): // sympy bin/test
		return true
	case strings.HasPrefix(lt, "___"): // sympy bin/test's report header: "____ sympy/x/tests/test_y.py:test_z ____"
		return isPathTestID(ruleTitle(lt, '_'))
	case strings.HasPrefix(lt, "(fail) "): // bun test (added with the switch)
		return true
	case strings.HasPrefix(lt, "✖ ") && lt != "✖ failing tests:" && !isESLintCount(lt) && !isCypressRunSummary(lt): // node:test (added with the switch; not ESLint's count, round 29, nor Cypress's run, round 31)
		return true
	case strings.HasSuffix(t, ")") && hasTimedResult(t, " ... FAILED ("): // Deno (added with the switch)
		return true
	case strings.HasPrefix(lt, "Test Case '") && strings.Contains(lt[len("Test Case '"):], "' failed ("): // XCTest (added with round 27's fixtures): a name between the quotes
		return true
	case (strings.HasPrefix(lt, "✘ Test ") || strings.HasPrefix(strings.TrimLeft(strings.TrimPrefix(lt, "􀢄"), " "), "Test ") && strings.HasPrefix(lt, "􀢄")) &&
		!strings.HasPrefix(strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(lt, "✘"), "􀢄"), " "), "Test run with ") &&
		strings.Contains(strings.TrimPrefix(strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(lt, "✘"), "􀢄"), " "), "Test "), " failed after "): // swift-testing (likewise): a name before " failed after "
		return true
	case isDartFailure(lt): // dart test (likewise)
		return true
	case strings.HasPrefix(lt, "[  FAILED  ] ") && len(lt) > 13 && !isDigit(lt[13]): // GoogleTest (added with round 29's fixtures)
		return true
	case strings.HasSuffix(t, "<<< FAILURE!") || strings.HasSuffix(t, "<<< ERROR!"): // Maven Surefire (likewise)
		return !strings.Contains(t, "Tests run:")
	case isSurefireResult(lt), isHspecFailure(t), isEUnitFailure(t), isCommonTestFailure(lt), isCTestFailure(lt), isJuliaTestFailure(lt), isRSpecDocFailure(t): // likewise
		return true
	case isTAPFailure(lt), isMinitestProgressFailure(lt), isMinitestSpecFailure(t), isScalaTestFailure(t, lt): // round 30's fixtures
		return true
	case isCabalSuiteFailure(lt), isTestthatFailure(lt), isJuliaSetFailure(t), isXcodeParallelFailure(lt): // round 31's
		return true
	}
	return false
}

// isDiffHeaderOld is isDiffHeader as it was before its byte switch.
func isDiffHeaderOld(l string) bool {
	for _, pre := range [...]string{
		"diff ", "--- ", "+++ ", "index ", "new file mode", "deleted file mode", "old mode", "new mode",
		"similarity index", "dissimilarity index", "rename from", "rename to", "copy from", "copy to",
		"Binary files ", "GIT binary patch", "Only in ",
	} {
		if strings.HasPrefix(l, pre) {
			return true
		}
	}
	return false
}

// TestNumberAndCode: the numbering a line uses and the line after the
// prefix of the style asked for.
func TestNumberAndCode(t *testing.T) {
	for _, c := range []struct {
		l     string
		style numbering
		n     numbering
		code  string
	}{
		{"    12→x := 1", numArrow, numArrow, "x := 1"},
		{"    12→x := 1", numNone, numArrow, "    12→x := 1"},
		{"12\tx", numTab, numTab, "x"},
		{"12:x", numColon, numColon, "x"},
		{" 12:x", numColon, numNone, "x"},
		{"12::x", numColon, numNone, ":x"},
		{"12345678→x", numArrow, numNone, "x"},
		{"→x", numArrow, numNone, "x"},
		{"  plain", numArrow, numNone, "plain"},
		{"7→", numArrow, numArrow, ""},
		{"", numTab, numNone, ""},
	} {
		n, code := numberAndCode(c.l, c.style)
		if n != c.n || code != c.code {
			t.Errorf("numberAndCode(%q, %d) = %d, %q; want %d, %q", c.l, c.style, n, code, c.n, c.code)
		}
	}
}

// lineCase is one row of a line predicate's table test.
type lineCase struct {
	l    string
	want bool
}

// checkLineCases holds pred, named name, to each case's want, and the
// lineScan gates to every predicate they guard on the case's line.
func checkLineCases(t *testing.T, name string, pred func(string) bool, cases []lineCase) {
	t.Helper()
	for _, c := range cases {
		if got := pred(c.l); got != c.want {
			t.Errorf("%s(%q) = %v, want %v", name, c.l, got, c.want)
		}
		checkGates(t, c.l)
	}
}
