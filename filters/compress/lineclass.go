package compress

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line predicates shared by detection and the classifiers. They are written
// by hand rather than as regular expressions: they run on every line of
// megabyte outputs and most lines are rejected on their first bytes.

func trimLeft(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}

func trimRight(s string) string {
	j := len(s)
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t' || s[j-1] == '\r') {
		j--
	}
	return s[:j]
}

// isBlank reports whether l is empty or white space only, as
// strings.TrimSpace(l) == "" does, without trimming both ends: a line of
// text returns at its first byte that is not a space (the detection and
// history scans ask it of every line).
func isBlank(l string) bool {
	for i := 0; i < len(l); i++ {
		switch c := l[i]; c {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			continue
		default:
			if c < utf8.RuneSelf {
				return false
			}
			return strings.TrimSpace(l[i:]) == "" // Unicode spaces: U+0085, U+00A0, U+2000…
		}
	}
	return true
}

func isWordByte(c byte) bool { return byteClass[c]&classWord != 0 }

// byteClass holds, per byte, the classes the scanners ask of it: one load
// instead of a chain of range tests, in loops that read every byte of a
// file read's names or a path (issue 23).
var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		if b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' {
			t[c] |= classWord | classPath
		}
		switch b {
		case '.', '/', '\\', '-', '+', '@', '~':
			t[c] |= classPath
		}
		if b == '_' || b == '.' || b >= '0' && b <= '9' {
			t[c] |= classNameMark
		}
		if b >= 'A' && b <= 'Z' {
			t[c] |= classUpper
		}
	}
	return t
}()

const (
	classWord     uint8 = 1 << iota // isWordByte
	classPath                       // isPathByte
	classNameMark                   // makes any word a code name (isCodeName)
	classUpper                      // a capital: makes a code name after a word's first byte
)

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// collapseSpace is the whitespace-normalized form of a line, the key used to
// recognise a repeated error line.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// isShellTrace matches `set -x` trace lines: "+ cmd", "++ cmd".
func isShellTrace(l string) bool {
	i := 0
	for i < len(l) && l[i] == '+' {
		i++
	}
	return i > 0 && i < len(l) && l[i] == ' ' && !strings.HasPrefix(l, "+++ ")
}

// isRule matches separator lines: "=====", "-----", "_____" (10 or more).
func isRule(l string) bool {
	t := strings.TrimSpace(l)
	if len(t) < 10 {
		return false
	}
	c := t[0]
	if c != '=' && c != '-' && c != '_' && c != '*' && c != '~' {
		return false
	}
	for i := 1; i < len(t); i++ {
		if t[i] != c {
			return false
		}
	}
	return true
}

// ruleTitle returns the title of a "==== title ====" or "____ title ____"
// banner, or "" when l is not one.
func ruleTitle(l string, c byte) string {
	t := strings.TrimSpace(l)
	if len(t) < 7 || t[0] != c || t[len(t)-1] != c {
		return ""
	}
	i, j := 0, len(t)
	for i < j && t[i] == c {
		i++
	}
	for j > i && t[j-1] == c {
		j--
	}
	if i < 3 || len(t)-j < 3 {
		return ""
	}
	return strings.TrimSpace(t[i:j])
}

// isSummaryLine matches run summaries of the common test runners and the
// last line of the common type checkers and linters.
func isSummaryLine(l string) bool {
	t := strings.TrimSpace(l)
	if t == "" {
		return false
	}
	if title := ruleTitle(t, '='); title != "" {
		// pytest: "==== 3 failed, 10 passed in 1.2s ====", "no tests ran".
		if strings.Contains(title, " in ") && (strings.Contains(title, "passed") || strings.Contains(title, "failed") ||
			strings.Contains(title, "error") || strings.Contains(title, "skipped") || strings.Contains(title, "deselected") ||
			strings.Contains(title, "xfailed") || strings.Contains(title, "warning")) || strings.Contains(title, "no tests ran") ||
			strings.HasPrefix(title, "tests finished") {
			return true
		}
		return false
	}
	if t[0] == '!' {
		// pytest's banner when a run stops early: "!!!! Interrupted: 1
		// error during collection !!!!" is all the summary it prints.
		return strings.HasPrefix(ruleTitle(t, '!'), "Interrupted: ")
	}
	if t[0] == 'N' && strings.HasPrefix(t, "No issues found!") {
		// The analyzers' clean run: "No issues found! (ran in 1.5s)".
		return true
	}
	if t[0] == 'Y' || t[0] == 'C' {
		// pylint's "Your code has been rated at 5.00/10", Biome's "Checked
		// 42 files in 12ms. No fixes applied."
		if strings.HasPrefix(t, "Your code has been rated at ") {
			return true
		}
		if r, ok := strings.CutPrefix(t, "Checked "); ok && digits(r) > 0 && strings.Contains(r, " file") && strings.Contains(r, " in ") {
			return true
		}
	}
	if isToolOutcome(t) || isRunnerSummary(t) {
		return true
	}
	if !summaryStart[t[0]] {
		// Every pattern below but three starts with one of summaryStart's
		// bytes; most lines of a log do not, and skip the prefix tests
		// (the classifier's hottest predicate, issue 14).
		return isRSpecCount(t) || isExitNotice(t) || t[0] == "ℹ"[0] && isNodeTestCount(t) || isLabelledCountSummary(t) ||
			t[0] >= utf8.RuneSelf && isSwiftTestingRun(t)
	}
	// Deno: "ok | 2 passed | 0 failed (5ms)", "FAILED | 1 passed | 1 failed (12ms)".
	if (strings.HasPrefix(t, "ok | ") || strings.HasPrefix(t, "FAILED | ")) && strings.Contains(t, " passed | ") {
		return true
	}
	switch {
	case strings.HasPrefix(t, "Ran ") && strings.Contains(t, " test"): // unittest
		return true
	case t == "OK" || strings.HasPrefix(t, "OK (") || strings.HasPrefix(t, "FAILED (") || t == "FAILED":
		return true
	case t == "PASS" || t == "FAIL": // go test
		return true
	case (strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "ok\t")) && isGoTestPackageOK(t): // go test package
		return true
	case strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "FAIL ") && len(strings.Fields(t)) >= 2 && !strings.HasPrefix(t, "FAIL: "):
		return true
	case strings.HasPrefix(t, "tests finished:"), strings.HasPrefix(t, "DO *NOT* COMMIT"): // sympy bin/test
		return true
	case strings.HasPrefix(t, "Tests:"), strings.HasPrefix(t, "Test Suites:"), strings.HasPrefix(t, "Snapshots:"),
		strings.HasPrefix(t, "Test Files "): // jest, vitest
		return true
	case strings.HasPrefix(t, "test result:"): // cargo
		return true
	case strings.HasPrefix(t, "error: test failed"), strings.HasPrefix(t, "error: could not compile"):
		return true
	case isRSpecCount(t):
		return true
	case strings.HasPrefix(t, "Tests: ") && strings.Contains(t, "Assertions:"), t == "FAILURES!", t == "ERRORS!": // phpunit
		return true
	case strings.HasPrefix(t, "Tests ") && (strings.Contains(t, " failed") || strings.Contains(t, " passed")) && strings.HasSuffix(t, ")"): // vitest
		return true
	case isPytestQuietSummary(t):
		return true
	case strings.HasPrefix(t, "Found ") && isCheckerCount(t[len("Found "):]): // tsc, mypy, ruff, ty
		return true
	case strings.HasPrefix(t, "Success: no issues found"): // mypy
		return true
	case isJVMOrDotnetOrSwiftSummary(t):
		return true
	case strings.HasPrefix(t, "Summary [") && strings.Contains(t, " tests run: "): // cargo nextest
		return true
	case t[0] == '#' && (strings.HasPrefix(t, "# fail ") || strings.HasPrefix(t, "# pass ") || strings.HasPrefix(t, "# tests ")) &&
		digits(t[strings.LastIndexByte(t, ' ')+1:]) == len(t)-strings.LastIndexByte(t, ' ')-1: // TAP's closing counts
		return true
	}
	if strings.HasPrefix(t, "=") {
		// A summary in a rule too narrow for ruleTitle: "= 1 failed, 877
		// passed in 15.78s =" (a terminal a few columns wide).
		if in := strings.Trim(t, "= "); isPytestQuietSummary(in) || strings.HasPrefix(in, "tests finished:") {
			return true
		}
	}
	// mocha: "12 passing (3s)", "2 failing", "1 pending"; bun test's
	// counts, a line each: "12 pass", "1 fail", "2 skip", "1 error".
	if d := digits(t); d > 0 && d < len(t) {
		rest := t[d:]
		if strings.HasPrefix(rest, " passing") || strings.HasPrefix(rest, " failing") || strings.HasPrefix(rest, " pending") {
			return true
		}
		switch rest {
		case " pass", " fail", " skip", " todo", " error", " errors":
			return true
		case " Error(s)", " Warning(s)": // MSBuild's counts under "Build FAILED." or "Build succeeded."
			return true
		case " failed", " flaky", " skipped", " did not run", " interrupted": // Playwright's counts, a line each
			return true
		}
		if strings.HasPrefix(rest, " passed (") && strings.HasSuffix(rest, ")") { // Playwright: "12 passed (5.2s)"
			return true
		}
		if strings.HasPrefix(rest, " tests completed, ") && strings.HasSuffix(rest, " failed") { // Gradle
			return true
		}
		if strings.HasPrefix(rest, " runs, ") && strings.Contains(rest, " assertions, ") { // minitest
			return true
		}
		if strings.HasPrefix(rest, " success / ") && strings.Contains(rest, " failure") { // busted (Lua)
			return true
		}
		if isExUnitSummary(t) {
			return true
		}
		// dart analyze and flutter analyze: "3 issues found.", "1 issue
		// found. (ran in 2.1s)".
		if strings.HasPrefix(rest, " issues found.") || strings.HasPrefix(rest, " issue found.") {
			return true
		}
		if rest[0] == ':' && isDartVerdict(t) {
			return true
		}
	}
	return isExitNotice(t) || isLabelledCountSummary(t)
}

// isToolOutcome matches the line a tool that is not a test runner ends
// its run with, when it says how the run went: Prettier's "[warn] Code
// style issues found in 3 files. Run Prettier with --write to fix.",
// CMake's "-- Configuring incomplete, errors occurred!", a sanitizer's
// "SUMMARY: AddressSanitizer: heap-buffer-overflow /app/a.c:8:10 in main",
// systemctl status's "Active: failed (Result: exit-code) since …",
// Dialyzer's "done (warnings were emitted)", xcodebuild's "** BUILD
// FAILED **" and a row of Ansible's PLAY RECAP ("web1 : ok=31 changed=0
// unreachable=0 failed=1 …").
func isToolOutcome(t string) bool {
	switch t[0] {
	case '[':
		return strings.HasPrefix(t, "[warn] Code style issues found in ") // "… in 3 files.", "… in the above file."
	case '-':
		return strings.HasPrefix(t, "-- Configuring incomplete, errors occurred!")
	case 'S':
		return strings.HasPrefix(t, "SUMMARY: ") && strings.Contains(t[len("SUMMARY: "):min(len(t), 40)], "Sanitizer: ")
	case 'A':
		return strings.HasPrefix(t, "Active: ") && strings.Contains(t, " since ") && strings.Contains(t, " (")
	case 'd':
		// Dialyzer's last line.
		return t == "done (warnings were emitted)" || t == "done (passed successfully)"
	case '*':
		// xcodebuild's last line: "** BUILD FAILED **", "** TEST
		// SUCCEEDED **", "** ARCHIVE FAILED **".
		r, ok := strings.CutPrefix(t, "** ")
		return ok && (strings.HasSuffix(r, " FAILED **") || strings.HasSuffix(r, " SUCCEEDED **") || strings.HasSuffix(r, " INTERRUPTED **")) && len(r) < 40
	}
	return isAnsibleRecapRow(t)
}

// isAnsibleRecapRow matches a host's row of Ansible's PLAY RECAP: "host :
// ok=N changed=N unreachable=N failed=N …".
func isAnsibleRecapRow(t string) bool {
	i := strings.Index(t, " : ok=")
	if i <= 0 {
		return false
	}
	r := t[i+len(" : ok="):]
	return digits(r) > 0 && strings.Contains(r, " unreachable=") && strings.Contains(r, " failed=")
}

// isJVMOrDotnetOrSwiftSummary matches the run summaries of Gradle ("BUILD
// FAILED in 3s", "BUILD SUCCESSFUL in 5s"), Maven ("[INFO] BUILD
// FAILURE"; Surefire's "Tests run: 5, Failures: 1, Errors: 0, Skipped: 0",
// after its "[INFO] " or "[ERROR] " level; a test class's own line, with
// its "Time elapsed", only when it failed: a build prints one for each
// class), MSBuild ("Build FAILED.", "Build succeeded."), dotnet test
// ("Failed!  - Failed:     1, Passed:    12, …" in its minimal verbosity;
// at normal verbosity, as `dotnet test --verbosity normal` and CI logs
// print it, "Test Run Failed.", then "Total tests: 6" and a count a line
// for each outcome, "     Passed: 4", "     Failed: 2") and XCTest
// ("Executed 12 tests, with 1 failure (0 unexpected) in 0.5 (0.6)
// seconds", "Test Suite 'All tests' failed at 2024-01-01 10:00:00.051.",
// and the line of each suite that failed).
func isJVMOrDotnetOrSwiftSummary(t string) bool {
	switch t[0] {
	case 'B':
		return strings.HasPrefix(t, "BUILD FAILED") || strings.HasPrefix(t, "BUILD SUCCESSFUL") ||
			t == "Build FAILED." || t == "Build succeeded." ||
			// The .NET 8+ terminal logger: "Build failed with 2 error(s)
			// in 3.1s", "Build succeeded with 1 warning(s) in 2.0s".
			strings.HasPrefix(t, "Build failed with ") || strings.HasPrefix(t, "Build succeeded with ")
	case '[':
		for _, level := range [...]string{"[INFO] ", "[ERROR] ", "[WARNING] "} {
			if r, ok := strings.CutPrefix(t, level); ok {
				return isSurefireCount(r) || r == "BUILD FAILURE" || r == "BUILD SUCCESS"
			}
		}
	case 'T':
		if r, ok := strings.CutPrefix(t, "Test Run "); ok {
			return r == "Failed." || r == "Successful." || r == "Aborted."
		}
		if r, ok := strings.CutPrefix(t, "Total tests: "); ok {
			return r != "" && digits(r) == len(r)
		}
		if r, ok := strings.CutPrefix(t, "Test Suite '"); ok {
			return strings.Contains(r, "' failed at ") || strings.HasPrefix(r, "All tests' passed at ")
		}
		if r, ok := strings.CutPrefix(t, "Test summary: total: "); ok { // dotnet test's terminal logger (.NET 9)
			return digits(r) > 0
		}
		return isSurefireCount(t)
	case 'F', 'P':
		return (strings.HasPrefix(t, "Failed!") || strings.HasPrefix(t, "Passed!")) && strings.Contains(t, " - Failed: ") ||
			isOutcomeCount(t, "Failed: ") || isOutcomeCount(t, "Passed: ")
	case 'S':
		return isOutcomeCount(t, "Skipped: ")
	case 'E':
		return strings.HasPrefix(t, "Executed ") && strings.Contains(t, " test") && strings.Contains(t, " failure")
	}
	return false
}

// isOutcomeCount matches a line that is label and a count and nothing
// else, as vstest writes its outcomes under "Total tests: 6": "Failed: 2".
func isOutcomeCount(t, label string) bool {
	r, ok := strings.CutPrefix(t, label)
	return ok && r != "" && digits(r) == len(r)
}

// isSwiftTestingRun matches swift-testing's verdict on a run, "✘ Test run
// with 4 tests in 2 suites failed after 1.2 seconds with 3 issues." or "✔
// Test run with 12 tests passed after 0.5 seconds.", and on a suite that
// failed, "✘ Suite CartTests failed after 0.2 seconds with 1 issue.", after
// its mark (on macOS an SF Symbol and two spaces).
func isSwiftTestingRun(t string) bool {
	_, size := utf8.DecodeRuneInString(t)
	r := strings.TrimLeft(t[size:], " ")
	if suite, ok := strings.CutPrefix(r, "Suite "); ok {
		return strings.Contains(suite, " failed after ")
	}
	r, ok := strings.CutPrefix(r, "Test run with ")
	return ok && digits(r) > 0 && (strings.Contains(r, " failed after ") || strings.Contains(r, " passed after "))
}

// isSurefireCount matches Surefire's "Tests run: 5, Failures: 1, Errors:
// 0, Skipped: 0": the run's total, or a class's line when it failed.
func isSurefireCount(r string) bool {
	if !strings.HasPrefix(r, "Tests run: ") || !strings.Contains(r, ", Failures: ") {
		return false
	}
	return !strings.Contains(r, "Time elapsed") || strings.Contains(r, "FAILURE!") || strings.Contains(r, "ERROR!")
}

// isGoTestPackageOK matches go test's line for a package that passed,
// "ok  \tpkg\t0.12s": a package after "ok", not TAP's test number ("ok 12 -
// name" is one passing test, and a TAP stream has hundreds).
func isGoTestPackageOK(t string) bool {
	f := strings.Fields(t)
	return len(f) >= 2 && digits(f[1]) != len(f[1])
}

// isCheckerCount matches the count a type checker or linter ends with,
// after "Found ": "3 errors in 2 files." (tsc, mypy), "1 error." (ruff),
// "2 diagnostics" (ty), "1 warning and 2 errors." (oxlint). A checker's
// last line says whether the check passed, as a test run's summary does.
func isCheckerCount(r string) bool {
	d := digits(r)
	if d == 0 {
		return false
	}
	rest := r[d:]
	if w, ok := strings.CutPrefix(rest, " warning"); ok {
		// Warnings first: the count that decides comes after them.
		if rest, ok = strings.CutPrefix(strings.TrimPrefix(w, "s"), " and "); !ok {
			return false
		}
		if d = digits(rest); d == 0 {
			return false
		}
		rest = rest[d:]
	}
	for _, w := range [...]string{" errors", " error", " diagnostics", " diagnostic"} {
		if after, ok := strings.CutPrefix(rest, w); ok {
			return after == "" || after[0] == '.' || after[0] == ' ' || after[0] == '('
		}
	}
	return false
}

// summaryStart are the first bytes of the summaries isSummaryLine knows:
// Ran, OK, FAILED, PASS, ok, tests finished, DO *NOT* COMMIT, Tests, Found, Success,
// Snapshots, test result, error:, ERRORS!, a rule, the digits that start
// pytest -q's, rspec's, mocha's and Playwright's counts, BUILD (Gradle),
// "[INFO] Tests run:" (Maven), Executed (XCTest), Summary (nextest) and
// TAP's "# fail N".
var summaryStart = func() (set [256]bool) {
	for _, c := range []byte("ROFPotDTSeE=0123456789B[#") {
		set[c] = true
	}
	return set
}()

// isPytestQuietSummary matches pytest -q's summary, which has no rule
// around it: "2 failed, 10 passed, 1 warning in 0.42s", and past a
// minute "... in 606.73s (0:10:06)" (pytest adds the clock time then).
// isRSpecCount matches rspec's count line, "3 examples, 1 failure" or "1
// example, 0 failures, 1 pending", anywhere in the line.
func isRSpecCount(t string) bool {
	k := strings.Index(t, "xample")
	if k < 0 {
		return false
	}
	r := strings.TrimPrefix(t[k+len("xample"):], "s")
	return strings.HasPrefix(r, ", ") && (containsWord(t, "examples, ") || containsWord(t, "example, ")) && strings.Contains(r, " failure")
}

// isLabelledCountSummary matches a run's counts after a short label, as
// wrappers and plugins print them: "Results: 3 passed, 1 failed in 2.3s",
// "pytest: 3 failed in 0.2s", "✓ 12 passed in 1.2s". The label is at most
// 32 bytes and ends in a space; what follows is isPytestQuietSummary's form.
func isLabelledCountSummary(t string) bool {
	for i := 1; i < len(t) && i <= 32; i++ {
		if isDigit(t[i]) {
			return t[i-1] == ' ' && isPytestQuietSummary(t[i:])
		}
	}
	return false
}

func isPytestQuietSummary(t string) bool {
	d := digits(t)
	if d == 0 || len(t) > 300 {
		return false
	}
	rest := t[d:]
	if !(strings.HasPrefix(rest, " failed") || strings.HasPrefix(rest, " passed") || strings.HasPrefix(rest, " error")) {
		return false
	}
	k := strings.LastIndex(t, " in ")
	return k > 0 && (strings.HasSuffix(t, "s") || strings.HasSuffix(t, ")") && isClockSuffix(t[k:]))
}

// isNodeTestCount matches the counts node:test's spec reporter ends with,
// a line each: "ℹ tests 12", "ℹ pass 11", "ℹ fail 1".
func isNodeTestCount(t string) bool {
	for _, p := range [...]string{"ℹ tests ", "ℹ pass ", "ℹ fail "} {
		if rest, ok := strings.CutPrefix(t, p); ok {
			return rest != "" && digits(rest) == len(rest)
		}
	}
	return false
}

// isExUnitSummary matches the count line of Elixir's ExUnit (`mix test`):
// "5 tests, 1 failure", "14 doctests, 297 tests, 0 failures, 2 excluded",
// "3 properties, 10 tests, 0 failures": counted items separated by ", ",
// one of them the failures.
func isExUnitSummary(t string) bool {
	if len(t) > 200 {
		return false
	}
	failures, tests := false, false
	for item := range strings.SplitSeq(t, ", ") {
		d := digits(item)
		if d == 0 || d >= len(item) || item[d] != ' ' {
			return false
		}
		switch item[d+1:] {
		case "failure", "failures":
			failures = true
		case "test", "tests", "doctest", "doctests", "property", "properties", "feature", "features":
			tests = true
		case "excluded", "skipped", "invalid":
		default:
			return false
		}
	}
	return failures && tests
}

// isClockSuffix matches the end of a pytest summary that ran a minute or
// more: " in 606.73s (0:10:06)".
func isClockSuffix(t string) bool {
	p := strings.LastIndex(t, "s (")
	if p < 0 || !strings.HasSuffix(t, ")") {
		return false
	}
	clock := t[p+3 : len(t)-1]
	colons := 0
	for i := 0; i < len(clock); i++ {
		switch c := clock[i]; {
		case c == ':':
			colons++
		case !isDigit(c):
			return false
		}
	}
	return colons == 2 && len(clock) >= 7
}

// isExitNotice matches "exit status 1", "Exit code: 2", "exited with code 1",
// "make: *** [x] Error 2": the lines that say a command failed.
func isExitNotice(t string) bool {
	if len(t) > 200 {
		return false
	}
	if strings.HasPrefix(t, "make") {
		return strings.HasPrefix(t, "make: *** ") || strings.HasPrefix(t, "make[") && strings.Contains(t, "*** ")
	}
	if !strings.Contains(t, "xit") && !strings.Contains(t, "XIT") {
		return false
	}
	for _, p := range [...]string{"exit status ", "exit code ", "exit code: ", "exited with code ", "exit code=", "returned non-zero exit status "} {
		if i := indexFoldASCII(t, p); i >= 0 {
			rest := t[i+len(p):]
			d := digits(rest)
			return d > 0 && strings.Trim(rest[:d], "0") != ""
		}
	}
	return false
}

// indexFoldASCII is strings.Index(strings.ToLower(t), p) for a lower-case
// ASCII p, without the copy: only ASCII letters fold, so an index into t
// is an index into the line.
func indexFoldASCII(t, p string) int {
	for i := 0; i+len(p) <= len(t); i++ {
		j := 0
		for ; j < len(p); j++ {
			c := t[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != p[j] {
				break
			}
		}
		if j == len(p) {
			return i
		}
	}
	return -1
}

// stripProgress removes pytest -v's progress column ("… FAILED [ 42%]"),
// which would otherwise hide the outcome at the end of the line.
func stripProgress(t string) string {
	if !strings.HasSuffix(t, "%]") {
		return t
	}
	k := strings.LastIndexByte(t, '[')
	if k <= 0 || t[k-1] != ' ' {
		return t
	}
	d := strings.TrimSpace(t[k+1 : len(t)-2])
	if d == "" || digits(d) != len(d) {
		return t
	}
	return trimRight(t[:k])
}

// isNumberedFailure matches the numbered failure headings of mocha
// ("  1) Cart", "  2) Cart #total sums:"), rspec ("  1) Cart#total sums"),
// ExUnit and minitest, all indented, and PHPUnit's, which are not but
// name a test method ("1) Tests\\CartTest::testTotal"). lt is the line
// without its indentation, indented whether it had one. A numbered
// heading at the margin that names no method is a document's outline,
// "1) Overview": read as a failure it made a cat of a plan a test log
// and its headings failing tests (a Codex session of the tuning set).
func isNumberedFailure(lt string, indented bool) bool {
	d := digits(lt)
	return d > 0 && d <= 4 && strings.HasPrefix(lt[d:], ") ") && len(lt) > d+2 && lt[d+2] != ' ' &&
		(indented || strings.Contains(lt, "::") || strings.IndexByte(lt, '\\') >= 0)
}

// isFailingTest matches lines that name a failing test. Like
// isPassingTest it tells its forms apart by the first byte after the
// indentation, then by the last.
func isFailingTest(l string) bool {
	t := stripProgress(trimRight(l))
	lt := trimLeft(t)
	if lt == "" {
		return false
	}
	switch lt[0] {
	case 'F', 'E':
		if strings.HasPrefix(t, "FAILED ") || strings.HasPrefix(t, "ERROR ") && len(t) > 6 && t[6] != ' ' { // pytest short summary
			return !strings.HasPrefix(t, "FAILED (")
		}
		if strings.HasPrefix(t, "FAIL: ") || strings.HasPrefix(t, "ERROR: ") { // unittest
			return true
		}
		// A jest suite ("FAIL src/a.test.ts"), a vitest test ("FAIL  src/a.test.ts > cart > sums"),
		// a Pest suite ("FAIL  Tests\Unit\CartTest").
		if strings.HasPrefix(lt, "FAIL ") && (strings.Contains(lt, "/") || strings.Contains(lt, ".") || strings.Contains(lt, " > ") || strings.Contains(lt, "\\")) {
			return true
		}
		// Pest (Collision's printer), indented: "  FAILED  Tests\Unit\CartTest > it sums   Error".
		if strings.HasPrefix(lt, "FAILED  ") && len(lt) > 8 && lt[8] != ' ' {
			return true
		}
		// dotnet test (vstest's console logger): "Failed Ns.CartTests.Sums [12 ms]".
		if strings.HasPrefix(lt, "Failed ") && endsWithBracketDuration(lt) {
			return true
		}
		if isJuliaTestFailure(lt) || isMinitestProgressFailure(lt) {
			return true
		}
	case 'n': // TAP: "not ok 3 - sums the cart"
		if isTAPFailure(lt) {
			return true
		}
	case '-':
		if strings.HasPrefix(lt, "--- FAIL: ") || isTestthatFailure(lt) { // go; testthat in an ASCII session
			return true
		}
	case "✕"[0]: // jest, vitest: ✕, ✗ and ● share their first byte; node:test's spec reporter ✖
		if strings.HasPrefix(lt, "✕ ") || strings.HasPrefix(lt, "✗ ") || strings.HasPrefix(lt, "● ") || strings.HasPrefix(lt, "✖ ") && lt != "✖ failing tests:" && !isESLintCount(lt) && !isCypressRunSummary(lt) {
			return true
		}
		// swift-testing: "✘ Test sums() failed after 0.001 seconds with 1
		// issue." (not its run's verdict, "✘ Test run with 4 tests failed
		// after …", a summary).
		if strings.HasPrefix(lt, "✘ Test ") && isSwiftTestingFailure(lt[len("✘ Test "):]) {
			return true
		}
		if isTestthatFailure(lt) {
			return true
		}
	case "􀢄"[0]:
		// swift-testing on macOS marks a failure with an SF Symbol
		// (U+100884) and two spaces: "􀢄  Test sums() failed after …".
		if r, ok := strings.CutPrefix(strings.TrimLeft(strings.TrimPrefix(lt, "􀢄"), " "), "Test "); ok && isSwiftTestingFailure(r) {
			return true
		}
	case 'T':
		// XCTest: "Test Case '-[AppTests.CartTests testSums]' failed
		// (0.002 seconds)." on macOS, "Test Case 'CartTests.testSums'
		// failed (0.002 seconds)" on Linux.
		if r, ok := strings.CutPrefix(lt, "Test Case '"); ok {
			return strings.Contains(r, "' failed (")
		}
		if isXcodeParallelFailure(lt) {
			return true
		}
		if isJuliaTestFailure(lt) || isCabalSuiteFailure(lt) {
			return true
		}
	case '[':
		if isGTestFailure(lt) || isSurefireResult(lt) {
			return true
		}
	case '%':
		if isCommonTestFailure(lt) {
			return true
		}
	case "×"[0]:
		if strings.HasPrefix(lt, "× ") {
			return true
		}
	case 'r':
		if strings.HasPrefix(lt, "rspec ./") {
			return true
		}
	case 't': // sympy bin/test
		if strings.HasPrefix(lt, "test_") && (strings.HasSuffix(lt, " F") || strings.HasSuffix(lt, " E")) {
			return true
		}
	case '_': // sympy bin/test's report header: "____ sympy/x/tests/test_y.py:test_z ____"
		if strings.HasPrefix(lt, "___") && isPathTestID(ruleTitle(lt, '_')) {
			return true
		}
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if isNumberedFailure(lt, len(lt) < len(t)) || isDartFailure(lt) || isCTestFailure(lt) { // mocha, rspec, phpunit; dart test; ctest
			return true
		}
	case '(': // bun test, its output not a terminal: "(fail) cart > sums [0.29ms]"
		if strings.HasPrefix(lt, "(fail) ") {
			return true
		}
	}
	switch t[len(t)-1] {
	case 'L', 'R', 'D':
		return strings.HasSuffix(t, " ... FAIL") || strings.HasSuffix(t, " ... ERROR") || strings.HasSuffix(t, " ... FAILED") || // unittest -v, cargo
			(strings.HasSuffix(t, " FAILED") || strings.HasSuffix(t, " ERROR")) && strings.Contains(t, "::") // pytest -v
	case ')': // Deno: "sub ... FAILED (1ms)"; CTest's list: "6 - cart_sums (Failed)"; rspec: "returns 404 (FAILED - 2)"
		return hasTimedResult(t, " ... FAILED (") || isCTestFailure(lt) || isRSpecDocFailure(t) || isMinitestSpecFailure(t)
	case '!':
		return isSurefireFailure(t)
	case ']':
		return isHspecFailure(t)
	case '*':
		return isEUnitFailure(t) || isScalaTestFailure(t, lt)
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return isJuliaSetFailure(t)
	}
	return false
}

// hasDartCounter is the gates' test for dartProgress: t starts like
// Dart's counter, "00:05 +".
func hasDartCounter(t string) bool {
	return len(t) > 7 && isDigit(t[0]) && isDigit(t[1]) && t[2] == ':' && t[6] == '+'
}

// dartProgress returns what follows the counter of Dart's test runner
// (dart test, flutter test) at the start of t, "00:05 +10 ~1 -2: ": the
// time, the passed count, and the skipped and failed counts when not
// zero; ok is false when t does not start with one.
func dartProgress(t string) (rest string, ok bool) {
	if !hasDartCounter(t) || len(t) < 9 || digits(t) != 2 || digits(t[3:]) != 2 || t[5] != ' ' {
		return "", false
	}
	r := t[7:]
	d := digits(r)
	if d == 0 {
		return "", false
	}
	r = r[d:]
	for _, mark := range [...]string{" ~", " -"} {
		if c, ok := strings.CutPrefix(r, mark); ok {
			if d := digits(c); d > 0 {
				r = c[d:]
			}
		}
	}
	return strings.CutPrefix(r, ": ")
}

// isDartVerdict matches the last line of Dart's test runner: "00:05 +10
// -1: Some tests failed.", "00:02 +3: All tests passed!", "00:00 +0: No
// tests ran."
func isDartVerdict(t string) bool {
	r, ok := dartProgress(t)
	return ok && (r == "Some tests failed." || r == "All tests passed!" || r == "No tests ran.")
}

// isDartFailure matches the line of Dart's test runner for a test that
// failed: its counter, the test's name and " [E]" ("00:03 +4 -1:
// test/cart_test.dart: Cart totals [E]").
func isDartFailure(t string) bool {
	r, ok := dartProgress(t)
	return ok && strings.HasSuffix(r, " [E]")
}

// isSwiftTestingFailure matches what follows "Test " on swift-testing's
// line for a failed test, "sums() failed after 0.001 seconds with 1
// issue.", but not its run's verdict ("run with 4 tests failed after …").
func isSwiftTestingFailure(r string) bool {
	return !strings.HasPrefix(r, "run with ") && strings.Contains(r, " failed after ")
}

// endsWithBracketDuration reports whether t ends in a test's run time as
// vstest's console logger writes it: "[12 ms]", "[< 1 ms]", "[1 s]",
// "[1 m 3 s]".
func endsWithBracketDuration(t string) bool {
	k := strings.LastIndexByte(t, '[')
	if k <= 0 || t[len(t)-1] != ']' || t[k-1] != ' ' {
		return false
	}
	d := strings.TrimPrefix(t[k+1:len(t)-1], "< ")
	units := 0
	for d != "" {
		n := digits(d)
		if n == 0 {
			return false
		}
		d = d[n:]
		if d != "" && d[0] == '.' {
			d = d[1:]
			d = d[digits(d):]
		}
		u, rest, _ := strings.Cut(strings.TrimPrefix(d, " "), " ")
		switch u {
		case "ms", "s", "m", "h":
		default:
			return false
		}
		units++
		d = rest
	}
	return units > 0
}

// hasTimedResult reports whether t ends in word and a duration, as Deno
// writes a test's result: "add ... ok (2ms)", "sub ... FAILED (1s)". word
// ends in " (". The duration is read first, from the last '(' (it holds
// none), so the many lines that end in a call's ")" cost one backward byte
// search, not a substring search for each word.
func hasTimedResult(t, word string) bool {
	k := strings.LastIndexByte(t, '(')
	if k <= 0 || t[len(t)-1] != ')' {
		return false
	}
	d := t[k+1 : len(t)-1]
	n := digits(d)
	if n == 0 {
		return false
	}
	if d[n:] != "" && d[n] == '.' {
		n += 1 + digits(d[n+1:])
	}
	switch d[n:] {
	case "ms", "s", "µs":
		return k+1 > len(word) && strings.HasSuffix(t[:k+1], word)
	}
	return false
}

// isPathTestID matches "path.py:test_name", the id sympy's bin/test names a
// failure by: a source path, a colon, an identifier, no spaces.
func isPathTestID(s string) bool {
	c := strings.LastIndexByte(s, ':')
	if c <= 0 || c == len(s)-1 || !hasSourceExt(s[:c]) || strings.IndexByte(s, ' ') >= 0 {
		return false
	}
	for i := c + 1; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return true
}

// exceptionName returns the first word of t that names an exception,
// error or warning type ("ValueError", "django.db.utils.OperationalError",
// "DeprecationWarning"), without its module path, or "".
func exceptionName(t string) string {
	for i := 0; i < len(t); {
		if !isWordByte(t[i]) {
			i++
			continue
		}
		j := i
		for j < len(t) && isWordByte(t[j]) {
			j++
		}
		w := t[i:j]
		if len(w) > 5 && w[0] >= 'A' && w[0] <= 'Z' &&
			(strings.HasSuffix(w, "Error") || strings.HasSuffix(w, "Exception") || strings.HasSuffix(w, "Warning")) {
			return w
		}
		i = j
	}
	return ""
}

// isPassingTest matches lines that report a passed or skipped test. Its
// forms are told apart by their first byte (after the indentation) and
// their last: a line of code or a path that passes mayBePassingTest's gate
// is turned away after two switches, not twenty prefix and suffix tests
// (it runs on every line detection reads, issue 23 item 4).
func isPassingTest(l string) bool {
	t := stripProgress(trimRight(l))
	lt := trimLeft(t)
	if lt == "" {
		return false
	}
	switch lt[0] {
	case 'P':
		if strings.HasPrefix(t, "PASSED ") || strings.HasPrefix(lt, "PASS ") && (strings.Contains(lt, "/") || strings.Contains(lt, ".")) {
			return true
		}
		// dotnet test (vstest's console logger): "Passed Ns.CartTests.Sums [12 ms]".
		if strings.HasPrefix(lt, "Passed ") && endsWithBracketDuration(lt) {
			return true
		}
	case 'S':
		if strings.HasPrefix(t, "SKIPPED ") || strings.HasPrefix(lt, "Skipped ") && endsWithBracketDuration(lt) {
			return true
		}
	case 'X':
		if strings.HasPrefix(t, "XFAIL ") || strings.HasPrefix(t, "XPASS ") {
			return true
		}
	case '-':
		if strings.HasPrefix(lt, "--- PASS: ") || strings.HasPrefix(lt, "--- SKIP: ") {
			return true
		}
	case '=':
		if strings.HasPrefix(lt, "=== RUN ") || strings.HasPrefix(lt, "=== PAUSE ") || strings.HasPrefix(lt, "=== CONT ") || strings.HasPrefix(lt, "=== NAME ") {
			return true
		}
	case "✓"[0]: // ✓, √ and ✔ share their first byte
		if strings.HasPrefix(lt, "✓ ") || strings.HasPrefix(lt, "√ ") || strings.HasPrefix(lt, "✔ ") {
			return true
		}
	case 't':
		if strings.HasPrefix(lt, "test_") && (strings.HasSuffix(lt, " ok") || strings.HasSuffix(lt, " f") || strings.HasSuffix(lt, " s")) {
			return true
		}
	case 'A': // django migrations
		if strings.HasPrefix(lt, "Applying ") && strings.HasSuffix(lt, "... OK") {
			return true
		}
	case '?':
		if strings.HasPrefix(l, "?   \t") && strings.HasSuffix(t, "[no test files]") {
			return true
		}
	case '(': // bun test: "(pass) cart > sums [0.12ms]", "(skip) …", "(todo) …"
		if strings.HasPrefix(lt, "(pass) ") || strings.HasPrefix(lt, "(skip) ") || strings.HasPrefix(lt, "(todo) ") {
			return true
		}
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// Dart's test runner names each test as it runs, after its
		// counter: "00:03 +4: test/cart_test.dart: Cart sums"; a failure
		// ends "[E]", the run's verdict is a summary.
		if r, ok := dartProgress(lt); ok {
			return !strings.HasSuffix(r, " [E]") && !isDartVerdict(lt)
		}
	}
	switch t[len(t)-1] {
	case 'k', 'd', 'e':
		if strings.HasSuffix(t, " ... ok") || strings.HasSuffix(t, " ... skipped") ||
			strings.HasSuffix(t, " ... expected failure") || strings.HasSuffix(t, " ... ignored") {
			return true
		}
	case 'D', 'L':
		if (strings.HasSuffix(t, " PASSED") || strings.HasSuffix(t, " SKIPPED") || strings.HasSuffix(t, " XFAIL")) && strings.Contains(t, "::") {
			return true // pytest -v, its progress column already stripped
		}
	case ')': // Deno: "add ... ok (2ms)", "later ... ignored (0ms)"
		if hasTimedResult(t, " ... ok (") || hasTimedResult(t, " ... ignored (") {
			return true
		}
	}
	// unittest: "... skipped 'needs pint'". A byte search for its 'k'
	// first: most lines that get here (ls rows, paths) hold none.
	return strings.IndexByte(t, 'k') >= 0 && strings.Contains(t, " ... skipped ")
}

// isSectionStart matches the headers that open one failure's report:
// pytest "____ test_x ____", unittest "FAIL: test (Class)", cargo
// "---- x stdout ----", go "--- FAIL: TestX".
func isSectionStart(l string) bool {
	lt := trimLeft(l)
	if lt == "" {
		return false
	}
	switch lt[0] {
	case '_', '-', "●"[0]:
	case 'F', 'E':
		// Not a space, so strings.TrimSpace(l) starts at lt too: no rule
		// title, no cargo banner, none of the prefixes after a blank. A
		// traceback's "  File ..." lines come here.
		return strings.HasPrefix(l, "FAIL: ") || strings.HasPrefix(l, "ERROR: ")
	default:
		return false // the hot path: most lines open with none of these
	}
	if title := ruleTitle(l, '_'); title != "" {
		return true
	}
	t := strings.TrimSpace(l)
	if strings.HasPrefix(t, "---- ") && strings.HasSuffix(t, " ----") {
		return true
	}
	return strings.HasPrefix(l, "FAIL: ") || strings.HasPrefix(l, "ERROR: ") || strings.HasPrefix(trimLeft(l), "--- FAIL: ") ||
		strings.HasPrefix(trimLeft(l), "● ")
}

// isSectionEnd matches banners that close a failure report.
func isSectionEnd(l string) bool {
	if isRule(l) {
		c := strings.TrimSpace(l)[0]
		return c == '=' || c == '-'
	}
	return ruleTitle(l, '=') != ""
}

// isErrorLine matches error lines: exception lines, tracebacks, pytest "E"
// lines, panics, fatal errors, compiler errors, failing exits.
func isErrorLine(l string) bool { return isErrorLineIn(l, allBits) }

// isErrorLineIn is isErrorLine for a line whose bytes m holds (see
// scanLine): each substring search runs only when its bytes occur.
func isErrorLineIn(l string, m lineBits) bool {
	if len(l) == 0 {
		return false
	}
	if l[0] == 'E' && len(l) > 1 && (l[1] == ' ' || l[1] == '\t') { // pytest assertion detail
		return true
	}
	if (l[0] == 'F' || l[0] == 'E') && (strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "ERROR")) {
		return true
	}
	t := trimLeft(l)
	// A long line is read by its start, and by its end for how a process
	// ended: cargo reports a failed test binary or build script as
	// "process didn't exit successfully: `<command>` (exit status: 101)",
	// after a command line that can run to kilobytes (a rustc invocation
	// under sccache).
	end := ""
	if len(t) > 2000 {
		end = t[len(t)-exitTail:]
		t = t[:2000]
	}
	// Node's coded errors need the bracket and underscore of "[ERR_":
	// prose starts most lines with a capital, and searched each (issue 23).
	if hasErrorPrefix(t) || m.has('[') && m.has('_') && t != "" && t[0] >= 'A' && t[0] <= 'Z' && isNodeCodedError(t) ||
		m.has(':') && t != "" && t[0] >= 'A' && t[0] <= 'Z' && isPowerShellError(t) ||
		// cmd.exe's "'nmake' is not recognized as an internal or external
		// command,", PowerShell's "x : The term 'x' is not recognized as
		// the name of a cmdlet, …" ('-', 'g' and 'z' are not in the set).
		t != "" && t[0] == '\'' && strings.Contains(t, "' is not recognized as ") ||
		m.has('T') && m.has(':') && isPowerShellUnknownTerm(t) ||
		m.has(':') && t != "" && (t[0] >= 'a' && t[0] <= 'z' || t[0] == '/') && isToolError(t, m) ||
		m&bitNonASCII != 0 && isCrossMarkedLocation(t) || (m.has('`') || t != "" && buildToolFirst[t[0]]) && isBuildToolError(t, m) ||
		t != "" && runnerErrorFirst[t[0]] && isRunnerError(t) {
		return true
	}
	if m.has('k') && (m.has('T') && m.has('(') && m.has('b') || m.has('p') && m.has('d') && m.has('n')) && hasTracebackOrPanic(t) ||
		m.has('S') && m.has('g') && m.has('f') && m.has('m') && m.has('u') && strings.Contains(t, "Segmentation fault") ||
		m.has('u') && m.has('m') && m.has('p') && m.has('c') && m.has('d') && m.has('o') && m.has('r') && strings.Contains(t, "core dumped") {
		return true
	}
	// "error:", "Error:", "ERROR:", "error[", "fatal:", "panic:".
	rror := m.mayHoldRror()
	if (m.has(':') || m.has('[')) && (rror && (m.has('r') && m.has('o') && (m.has('e') || m.has('E')) || m.has('E') && m.has('R') && m.has('O')) ||
		m.has(':') && m.has('a') && (m.has('f') && m.has('t') && m.has('l') || m.has('p') && m.has('n') && m.has('c'))) && hasErrorWord(t, rror) {
		return true
	}
	// A process that ended badly: "exit status 1", "Exit code: 143".
	if mayHoldExitFailure(m) && (hasExitFailure(t) || end != "" && hasExitFailure(end)) {
		return true
	}
	// A word ending in Error or Exception.
	return m.has('E') && (rror && m.has('r') && m.has('o') || m.has('x') && m.has('c') && m.has('p')) && hasExceptionToken(t, true)
}

// isCrossMarkedLocation matches the compiler errors xcpretty and
// xcbeautify write for xcodebuild: a cross mark, the file:line:column, and
// the message without "error:" ("❌ /src/A.swift:12:5: cannot find 'x' in
// scope"). A cross mark before prose ("❌ Not supported") is not one.
func isCrossMarkedLocation(t string) bool {
	r, ok := strings.CutPrefix(t, "❌")
	if !ok {
		return false
	}
	_, _, hit := parseHit(trimLeft(r))
	return hit
}

// exitTail is how much of a long line's end isErrorLineIn reads for an
// exit status.
const exitTail = 64

// isErrorOrLogError is isErrorLineIn or, when logKind, isLogErrorIn. In
// a log, most lines hold the bytes of an error word (a timestamp's ':', an
// 'E' in "GET", the letters of "orders") and no error word: one search for
// one (see bitRror) spares both predicates their scans. In a test log the
// lines that pass the byte gates are fewer and hold error words more
// often, and the search costs more than it spares.
func isErrorOrLogError(l string, m lineBits, logKind bool) bool {
	if !logKind {
		return isErrorLineIn(l, m)
	}
	// Only a line with one of the marks the costly searches need (a
	// colon, a bracket, an 'E', '=' or '"') is worth the search: prose
	// has the letters and none of them.
	if m.has(':') || m.has('[') || m.has('E') || m.has('=') || m.has('"') {
		m = withErrorWord(l, m)
	}
	return isErrorLineIn(l, m) || isLogErrorIn(l, m)
}

// hasTracebackOrPanic finds "Traceback (most recent call last)" or a
// " panicked at " (Rust) in one scan for the 'k' both hold, a byte that
// is rare in the code lines a search returns, where two substring
// searches read every line twice.
func hasTracebackOrPanic(t string) bool {
	for off := 0; ; {
		k := strings.IndexByte(t[off:], 'k')
		if k < 0 {
			return false
		}
		k += off
		off = k + 1
		if k >= 8 && t[k-8:k+1] == "Traceback" && strings.HasPrefix(t[k+1:], " (most recent call last)") {
			return true
		}
		if s := k - 5; s > 0 && t[s-1] == ' ' && strings.HasPrefix(t[s:], "panicked at ") {
			return true
		}
	}
}

// hasExitFailure finds "exit status N" or "exit code N" (either case of
// each word's first letter, as Gemini CLI's shell tool writes "Exit Code:
// 127"; an optional colon) with N not 0: the line where a command, a child
// process or a CI step reports that it failed.
// mayHoldExitFailure gates hasExitFailure: "exit" and a digit.
func mayHoldExitFailure(m lineBits) bool {
	return m.has('x') && m.has('i') && m.has('t') && m.has('0')
}

func hasExitFailure(t string) bool {
	for off := 0; ; {
		k := strings.Index(t[off:], "xit ")
		if k < 0 {
			return false
		}
		k += off
		off = k + 1
		if k == 0 || t[k-1] != 'e' && t[k-1] != 'E' || k >= 2 && isWordByte(t[k-2]) {
			continue
		}
		rest := t[k+4:]
		switch {
		case strings.HasPrefix(rest, "status") || strings.HasPrefix(rest, "Status"):
			rest = rest[6:]
		case strings.HasPrefix(rest, "code") || strings.HasPrefix(rest, "Code"):
			rest = rest[4:]
		default:
			continue
		}
		rest = strings.TrimPrefix(rest, ":")
		if len(rest) >= 2 && rest[0] == ' ' && rest[1] >= '1' && rest[1] <= '9' {
			return true
		}
	}
}

// hasErrorPrefix matches the lines that open with what they are: a panic,
// a fatal error, a Java cause or thread exception, "error ".
func hasErrorPrefix(t string) bool {
	if t == "" {
		return false
	}
	switch t[0] {
	case 'p':
		return strings.HasPrefix(t, "panic: ")
	case 'f':
		return strings.HasPrefix(t, "fatal: ") || strings.HasPrefix(t, "fatal error: ")
	case 'F':
		// rspec's line under a failing example: "Failure/Error: expect(x).to eq 1".
		return strings.HasPrefix(t, "FATAL") || strings.HasPrefix(t, "Failure/Error: ")
	case 'C':
		// git merge and rebase: "CONFLICT (content): Merge conflict in src/a.go";
		// Claude Code's Bash tool: "Command timed out after 2m 0.0s"; rake:
		// "Command failed with status (1)".
		return strings.HasPrefix(t, "Caused by: ") || strings.HasPrefix(t, "CONFLICT (") || strings.HasPrefix(t, "Command timed out after ") ||
			strings.HasPrefix(t, "CMake Error") || // "CMake Error at CMakeLists.txt:23 (find_package):", "CMake Error: …"
			strings.HasPrefix(t, "Command failed with status (") && !strings.HasPrefix(t, "Command failed with status (0)")
	case 'r':
		return strings.HasPrefix(t, "rake aborted!")
	case 'E':
		// Java's uncaught exception, docker's daemon, Python's bare
		// `raise Exception("…")`.
		return strings.HasPrefix(t, "Exception in thread ") || strings.HasPrefix(t, "Error response from daemon: ") ||
			strings.HasPrefix(t, "Exception: ")
	case 'A':
		// The AWS CLI: "An error occurred (AccessDenied) when calling the PutObject operation: …".
		return strings.HasPrefix(t, "An error occurred (")
	case 'H':
		return isHTTPErrorStatus(t)
	case 'g':
		return isGoModError(t)
	case 'e':
		return strings.HasPrefix(t, "error ") || isShellError(t)
	case 'K':
		return t == "Killed" || strings.HasPrefix(t, "Killed: ") // the shell's word for a SIGKILL (the OOM killer)
	case 'T':
		// Flutter: "The following _TypeError was thrown building HomePage(dirty):".
		return strings.HasPrefix(t, "The following ") && strings.Contains(t, " was thrown ")
	case '[':
		// Node: "[UnhandledPromiseRejection: This error originated …]".
		return strings.HasPrefix(t, "[UnhandledPromiseRejection: ")
	case "═"[0]:
		// Flutter: "══╡ EXCEPTION CAUGHT BY WIDGETS LIBRARY ╞═══…".
		return strings.HasPrefix(t, "══╡ EXCEPTION CAUGHT BY ")
	case 'n':
		return strings.HasPrefix(t, "npm ERR! ") || strings.HasPrefix(t, "npm error ") // npm 6-9, npm 10
	case '*':
		// Elixir: "** (ArgumentError) argument error", "** (EXIT from #PID<0.1.0>) shutdown".
		return strings.HasPrefix(t, "** (") && len(t) > 4 && t[4] >= 'A' && t[4] <= 'Z'
	case 'P':
		return strings.HasPrefix(t, "Permission denied") // ssh, a shell's redirect
	case 'b', 'd', 'a':
		// git status's unmerged paths: "both modified:   src/a.go".
		if isUnmergedPath(t) {
			return true
		}
		return t[0] == 'b' && isShellError(t)
	case 'z', 's', '/':
		return isShellError(t)
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return isESLintError(t)
	case '=':
		return isValgrindError(t)
	}
	return false
}

// valgrindErrors open the reports valgrind's Memcheck writes, after the
// "==pid== " every line of its own carries (valgrind.org, Memcheck's
// manual, "Explanation of error messages from Memcheck"), and the leak
// check's "definitely lost" record.
var valgrindErrors = [...]string{
	"Invalid read of size ", "Invalid write of size ", "Invalid free()", "Mismatched free()",
	"Conditional jump or move depends on uninitialised value", "Use of uninitialised value of size ",
	"Syscall param ", "Source and destination overlap in ", "Process terminating with default action of signal ",
	"Argument 'size' of function ",
}

// isValgrindError matches a Memcheck error report's first line:
// "==12345== Invalid read of size 4", "==7== 40 bytes in 1 blocks are
// definitely lost in loss record 1 of 1".
func isValgrindError(t string) bool {
	r, ok := cutValgrindPid(t)
	if !ok {
		return false
	}
	for _, e := range valgrindErrors {
		if strings.HasPrefix(r, e) {
			return true
		}
	}
	return strings.Contains(r, " are definitely lost in loss record ")
}

// isPowerShellError matches the first line of a Windows PowerShell error
// record, "Get-Item : Cannot find path 'C:\x' because it does not exist.":
// the command's Verb-Noun name, then " : " and the message (PowerShell 7
// prints "Get-Item: …" and the message on a later "| " line, which its
// location line leads to).
func isPowerShellError(t string) bool {
	i := 0
	for part := 0; part < 2; part++ {
		if i >= len(t) || t[i] < 'A' || t[i] > 'Z' {
			return false
		}
		j := i + 1
		for j < len(t) && j-i < 40 && isLetter(t[j]) {
			j++
		}
		if j-i < 2 {
			return false
		}
		i = j
		if part == 0 {
			if i >= len(t) || t[i] != '-' {
				return false
			}
			i++
		}
	}
	// The message is a sentence: a capital (or a quoted name) first and a
	// full stop last, which a Format-List row ("Content-Type : text/html")
	// is not.
	msg, ok := strings.CutPrefix(t[i:], " : ")
	msg = strings.TrimRight(msg, " ")
	return ok && msg != "" && (msg[0] >= 'A' && msg[0] <= 'Z' || msg[0] == '\'' || msg[0] == '"') && msg[len(msg)-1] == '.'
}

// isPowerShellUnknownTerm matches PowerShell's report of a name it could
// not run, "foo : The term 'foo' is not recognized as …" (PowerShell 7
// writes "foo: The term …"): the text after the line's first colon, which
// in a log line is a timestamp's, so the test stops there.
func isPowerShellUnknownTerm(t string) bool {
	i := strings.IndexByte(t, ':')
	if i == 1 && len(t) > 2 && (t[2] == '\\' || t[2] == '/') {
		// A script's path on a drive: "C:\src\build.ps1 : The term …".
		if j := strings.IndexByte(t[2:], ':'); j >= 0 {
			i = j + 2
		}
	}
	return i >= 0 && strings.HasPrefix(t[i:], ": The term '")
}

// isToolError matches a command-line tool's report, "tool: what failed",
// where the rest says how in the words the C library and coreutils use:
// "cp: cannot stat 'x': No such file or directory", "curl: (7) Failed to
// connect to localhost port 8080", "rm: x: Permission denied", "ld: …:
// undefined reference to `foo'". The tool is a lower-case word or a path
// (/usr/bin/ld) of at most 24 bytes.
func isToolError(t string, m lineBits) bool {
	// One pass over the name, which most lines leave at their first space
	// or capital.
	c := -1
	for i := 0; i < len(t) && i < 25; i++ {
		b := t[i]
		if b == ':' {
			c = i
			break
		}
		if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '/' || b == '-' || b == '_' || b == '.') {
			return false
		}
	}
	if c <= 0 || c+2 > len(t) || t[c+1] != ' ' {
		return false
	}
	r := t[c+2:]
	if v, ok := strings.CutPrefix(r, "cannot "); ok {
		// coreutils' verbs ("cannot stat", "cannot create directory"),
		// not a commit subject's "cannot be empty".
		verb, _, _ := strings.Cut(v, " ")
		switch verb {
		case "stat", "access", "remove", "create", "open", "move", "overwrite", "read", "write", "find", "execute",
			"change", "set", "copy", "fork", "allocate", "connect", "run":
			return true
		}
		return false
	}
	if strings.HasPrefix(r, "(") && digits(r[1:]) > 0 && t[:c] == "curl" {
		return true
	}
	// The reasons' first letters gate their searches: most lines that
	// get here are a YAML key's or a code line's "name: value".
	return m.has('N') && strings.Contains(r, "No such file or directory") ||
		m.has('P') && strings.Contains(r, "Permission denied") ||
		m.has('O') && strings.Contains(r, "Operation not permitted") ||
		m.has('`') && strings.Contains(r, "undefined reference to ")
}

// isHTTPErrorStatus matches an HTTP response's status line with a client
// or server error, as curl -i and -v print it: "HTTP/1.1 500 Internal
// Server Error", "HTTP/2 404".
func isHTTPErrorStatus(t string) bool {
	r, ok := strings.CutPrefix(t, "HTTP/")
	if !ok {
		return false
	}
	sp := strings.IndexByte(r, ' ')
	if sp < 0 || sp > 4 || len(r) < sp+4 || digits(r[sp+1:]) != 3 {
		return false
	}
	return r[sp+1] == '4' || r[sp+1] == '5'
}

// isGoModError matches the go command's module errors, which name no error
// word: "go: x imports y: cannot find module providing package y", "go:
// x@v1: missing go.sum entry for go.mod file".
func isGoModError(t string) bool {
	r, ok := strings.CutPrefix(t, "go: ")
	if !ok {
		return false
	}
	for _, why := range [...]string{"cannot find module", "missing go.sum entry", "no matching versions", "unknown revision",
		"no required module provides package", "updates to go.mod needed", "invalid version"} {
		if strings.Contains(r, why) {
			return true
		}
	}
	return false
}

// isUnmergedPath matches git status's lines for a path a merge left in
// conflict: "both modified:   src/a.go", "deleted by them: b.go".
func isUnmergedPath(t string) bool {
	var r string
	var ok bool
	switch t[0] {
	case 'b':
		if r, ok = strings.CutPrefix(t, "both "); ok {
			return strings.HasPrefix(r, "modified:") || strings.HasPrefix(r, "added:") || strings.HasPrefix(r, "deleted:")
		}
	case 'd':
		r, ok = strings.CutPrefix(t, "deleted by ")
	case 'a':
		r, ok = strings.CutPrefix(t, "added by ")
	}
	return ok && (strings.HasPrefix(r, "us:") || strings.HasPrefix(r, "them:"))
}

// isShellError matches a shell's report that a command could not run:
// "bash: foo: command not found", "zsh: command not found: foo",
// "/bin/sh: 1: foo: not found", "env: 'node': No such file or directory",
// "bash: ./run.sh: Permission denied".
func isShellError(t string) bool {
	// The longest shell name below is 12 bytes: a line whose colon comes
	// later is not one, and is not read further.
	c := strings.IndexByte(t[:min(len(t), 13)], ':')
	if c <= 0 {
		return false
	}
	switch sh := t[:c]; sh {
	case "bash", "zsh", "sh", "dash", "fish", "/bin/sh", "/bin/bash", "/bin/zsh", "/usr/bin/env", "env":
	default:
		return false
	}
	r := t[c:]
	return strings.Contains(r, "command not found") || strings.HasSuffix(r, ": not found") ||
		strings.Contains(r, "No such file or directory") || strings.Contains(r, "Permission denied") ||
		strings.Contains(r, "segmentation fault")
}

// isNodeCodedError matches Node.js's errors with a code, which no
// "Error:" test sees: "Error [ERR_MODULE_NOT_FOUND]: Cannot find package
// 'x'", "TypeError [ERR_INVALID_ARG_TYPE]: The \"path\" argument must be
// of type string".
func isNodeCodedError(t string) bool {
	// The name is the first word: look no further than its end.
	k := strings.IndexByte(t, ' ')
	if k < 5 || t[k-5:k] != "Error" || !strings.HasPrefix(t[k:], " [ERR_") {
		return false
	}
	for i := range k {
		if !isWordByte(t[i]) {
			return false
		}
	}
	e := strings.IndexByte(t[k:], ']')
	return e > 0 && strings.HasPrefix(t[k+e:], "]:")
}

// isESLintError matches a problem line of ESLint's default (stylish)
// formatter, "12:5  error  'x' is defined but never used  no-unused-vars":
// line and column, then the severity between runs of spaces.
func isESLintError(t string) bool {
	i := digits(t)
	if i == 0 || i >= len(t) || t[i] != ':' {
		return false
	}
	j := i + 1 + digits(t[i+1:])
	if j == i+1 || j >= len(t) || t[j] != ' ' {
		return false
	}
	for j < len(t) && t[j] == ' ' {
		j++
	}
	return strings.HasPrefix(t[j:], "error ")
}

// digitsBefore counts the ASCII digits s ends with.
func digitsBefore(s string) int {
	n := 0
	for n < len(s) && isDigit(s[len(s)-1-n]) {
		n++
	}
	return n
}

// hasErrorWord reports whether t holds "error:", "Error:", "ERROR:" or
// "error[" (rustc's "error[E0308]"), or "fatal:" or "panic:" as a word:
// two byte scans instead of six substring searches, in the hottest
// predicate of the diagnostic classifier. Without rror (t holds neither
// "rror" nor "RROR") only "fatal:" and "panic:" are looked for.
func hasErrorWord(t string, rror bool) bool {
	for off := 0; ; {
		k := strings.IndexByte(t[off:], ':')
		if k < 0 {
			break
		}
		k += off
		if k >= 5 {
			if w := t[k-5 : k]; rror && (w == "error" || w == "Error" || w == "ERROR") {
				return true
			}
			// TypeScript's compiler: "src/a.ts(12,5): error TS2322: …"
			// and, under --pretty, "src/a.ts:12:5 - error TS2322: …".
			if d := k - digitsBefore(t[:k]); rror && d < k && d >= 8 && t[d-8:d] == "error TS" {
				return true
			}
			// "fatal:" and "panic:" after a prompt or a tree
			// glyph ("└ fatal: not a git repository"), not only
			// at the start of a line.
			if w := t[k-5 : k]; (w == "fatal" || w == "panic") && (k == 5 || !isWordByte(t[k-6])) {
				return true
			}
		}
		off = k + 1
	}
	if !rror {
		return false
	}
	for off := 0; ; {
		k := strings.IndexByte(t[off:], '[')
		if k < 0 {
			return false
		}
		k += off
		if k >= 5 && t[k-5:k] == "error" {
			return true
		}
		off = k + 1
	}
}

// hasExceptionToken finds a word ending in Error or Exception. With
// lineLevel it must look like the exception line of a traceback (followed by
// ':' or the end of the line), not a mention inside code or prose.
func hasExceptionToken(t string, lineLevel bool) bool {
	// One scan for the 'E' both words start with; neither holds another
	// 'E', so no occurrence starts inside another.
	for off := 0; ; {
		i := strings.IndexByte(t[off:], 'E')
		if i < 0 {
			return false
		}
		abs := off + i
		off = abs + 1
		var end int
		switch rest := t[abs:]; {
		case strings.HasPrefix(rest, "Error"):
			end = abs + len("Error")
		case strings.HasPrefix(rest, "Exception"):
			end = abs + len("Exception")
		default:
			continue
		}
		if abs > 0 && isWordByte(t[abs-1]) {
			next := byte(0)
			if end < len(t) {
				next = t[end]
			}
			if !lineLevel && !isWordByte(next) {
				return true
			}
			if next == ':' || (next == 0 && startsLikeException(t)) {
				return true
			}
		}
	}
}

// startsLikeException: a bare "ValueError" or "pkg.errors.MyError" line.
func startsLikeException(t string) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !isWordByte(c) && c != '.' {
			return false
		}
	}
	return true
}

// isWarnLine matches warnings in logs.
func isWarnLine(l string) bool { return isWarnLineIn(l, allBits) }

// isWarnLineIn is isWarnLine for a line whose bytes m holds.
func isWarnLineIn(l string, m lineBits) bool {
	if len(l) > 2000 {
		l = l[:2000]
	}
	upperW, colon := m.has('W'), m.has(':')
	// Every search below needs "arn" but the first, which needs "ARN".
	if !(upperW && m.has('N') && m.has('A') && m.has('R')) && !(m.has('a') && m.has('r') && m.has('n')) {
		return false
	}
	lowerW, arning := m.has('w'), m.has('i') && m.has('g')
	return upperW && m.has('N') && strings.Contains(l, "WARN") || upperW && colon && arning && strings.Contains(l, "Warning:") ||
		lowerW && colon && arning && strings.Contains(l, "warning:") || lowerW && m.has('[') && strings.Contains(l, "[warn") ||
		lowerW && m.has('=') && strings.Contains(l, "level=warn") || upperW && arning && strings.Contains(l, "Warning ")
}

// isLogError matches error-level log records that isErrorLine misses.
func isLogError(l string) bool { return isLogErrorIn(l, allBits) }

// isLogErrorIn is isLogError for a line whose bytes m holds.
func isLogErrorIn(l string, m lineBits) bool {
	if len(l) > 2000 {
		l = l[:2000]
	}
	upperE, bracket := m.has('E'), m.has('[')
	// containsWord(l, w) is strings.Contains(l, " "+w) without a search
	// that stops at every space.
	rror := m.mayHoldRror()
	upperRO, lowerEro := rror && m.has('R') && m.has('O'), rror && m.has('e') && m.has('r') && m.has('o')
	return upperE && upperRO && containsWord(l, "ERROR ") || bracket && upperE && upperRO && strings.Contains(l, "[ERROR]") ||
		bracket && lowerEro && strings.Contains(l, "[error]") || m.has('=') && lowerEro && strings.Contains(l, "level=error") ||
		m.has('C') && m.has('L') && strings.Contains(l, "CRITICAL") || m.has('S') && m.has('V') && strings.Contains(l, "SEVERE") ||
		m.has('"') && lowerEro && strings.Contains(l, "\"level\":\"error\"") || upperE && containsWord(l, "E ") && hasTimestamp(l)
}

// hasTimestamp looks for a date (2024-05-20, 2024/05/20) or a clock time
// (12:30:45) near the start of a line.
func hasTimestamp(l string) bool {
	if len(l) > 48 {
		l = l[:48]
	}
	for i := 0; i+8 <= len(l); i++ {
		if !isDigit(l[i+1]) {
			i++ // both forms need digits at i and i+1: neither starts here or at i+1
			continue
		}
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

// location returns the first source location in a line as "path:line"
// (Python's `File "p", line n` included), or "" when there is none.
func location(l string) string {
	path, line := locationParts(l)
	if path == "" && line == "" {
		return ""
	}
	return path + ":" + line
}

// locationParts is location in its two parts, without building the string.
func locationParts(l string) (path, line string) { return locationPartsIn(l, allBits) }

// locationPartsIn is locationParts for a line whose bytes m holds.
func locationPartsIn(l string, m lineBits) (path, line string) {
	if len(l) > 4000 {
		l = l[:4000]
	}
	if m.has('"') && m.has('F') {
		if i := strings.Index(l, "File \""); i >= 0 {
			rest := l[i+6:]
			if q := strings.IndexByte(rest, '"'); q > 0 {
				after := rest[q+1:]
				if strings.HasPrefix(after, ", line ") {
					d := digits(after[7:])
					if d > 0 {
						return rest[:q], after[7 : 7+d]
					}
				}
			}
		}
	}
	if !m.has('0') {
		return "", ""
	}
	if !m.has(':') {
		if m.has('(') && m.has(',') {
			return parenLocation(l)
		}
		return "", ""
	}
	if path, line, _ := colonLocation(l, 0); path != "" {
		return path, line
	}
	if m.has('(') && m.has(',') {
		return parenLocation(l)
	}
	return "", ""
}

// colonLocation finds the first "path:line" of l at or after byte from:
// the path (a name with a source extension, a drive before it kept), the
// line, and the offset just past the line's digits; empty parts when
// there is none.
func colonLocation(l string, from int) (path, line string, end int) {
	for i := from; i < len(l); i++ {
		if k := strings.IndexByte(l[i:], ':'); k < 0 {
			break
		} else {
			i += k
		}
		num := i + 1 // where the line's number starts
		if num >= len(l) {
			continue
		}
		switch c := l[num]; {
		case isDigit(c):
		case c == 'l' && num+5 < len(l) && isDigit(l[num+5]) && l[num:num+5] == "line ":
			num += 5 // .NET's stack frames: "in /src/Cart.cs:line 42"
		case c == '[' && num+1 < len(l) && isDigit(l[num+1]):
			num++ // javac's errors as Maven prints them: "Cart.java:[31,17]"
		default:
			continue
		}
		start := i
		for start > 0 && i-start < 512 && isPathByte(l[start-1]) {
			start--
		}
		start = withDrive(l, start)
		path := l[start:i]
		if !hasSourceExt(path) {
			continue
		}
		if strings.HasPrefix(path, "///") && start >= 5 && l[start-5:start] == "file:" {
			path = path[2:] // a file URL, "file:///app/App.kt:12:9" (kotlinc)
		}
		d := digits(l[num:])
		if end := num + d; end < len(l) && isDigit(l[end]) {
			continue
		}
		return path, l[num : num+d], num + d
	}
	return "", "", len(l)
}

// colonLocations yields every "path:line" of l (colonLocation's form), as
// far as locationParts reads a line.
func colonLocations(l string) iter.Seq2[string, string] {
	return func(yield func(path, line string) bool) {
		if len(l) > 4000 {
			l = l[:4000]
		}
		for from := 0; from < len(l); {
			path, line, end := colonLocation(l, from)
			if path == "" || !yield(path, line) {
				return
			}
			from = end
		}
	}
}

// withDrive moves the start of a path found in l back over a Windows
// drive before it, "D:/src/a.go:12" or "C:\app\a.cs(4,1)", when the drive
// opens the line or follows a byte no path holds.
func withDrive(l string, start int) int {
	c := start - 2
	if c < 0 || start >= len(l) || l[c+1] != ':' || l[start] != '/' && l[start] != '\\' ||
		!(l[c]|0x20 >= 'a' && l[c]|0x20 <= 'z') || c > 0 && isPathByte(l[c-1]) {
		return start
	}
	return c
}

// parenLocation finds the "path(line,col)" form TypeScript's compiler (and
// MSBuild) opens a line with, "src/cart.ts(12,5): error TS2322: …": the
// path and the line, or empty parts. Only a line that starts with its path
// is read, so a line of code costs one byte search.
func parenLocation(l string) (path, line string) {
	k := strings.IndexByte(l, '(')
	if k <= 0 {
		return "", ""
	}
	d := digits(l[k+1:])
	if d == 0 || k+1+d >= len(l) || l[k+1+d] != ',' {
		return "", ""
	}
	e := digits(l[k+2+d:])
	if e == 0 || k+2+d+e >= len(l) || l[k+2+d+e] != ')' {
		return "", ""
	}
	start := k
	for start > 0 && k-start < 512 && isPathByte(l[start-1]) {
		start--
	}
	start = withDrive(l, start)
	if !isBlank(l[:start]) || !hasSourceExt(l[start:k]) {
		return "", ""
	}
	return l[start:k], l[k+1 : k+1+d]
}

// locationHashIn is the hash of location(l) (locationKey), without
// building it, for a line whose bytes m holds; ok is false when l names no
// location.
func locationHashIn(l string, m lineBits) (h uint64, ok bool) {
	path, line := locationPartsIn(l, m)
	if path == "" && line == "" {
		return 0, false
	}
	return locationKey(path, line), true
}

// hashAdd is the keys of the classifiers' seen-sets, which hold eight
// bytes per distinct line rather than the line (review round 3, N4). A
// collision merges two lines' "seen" once in 2^64; the hash is fixed, so
// compression stays deterministic. It reads eight bytes a step (each a
// multiply by an odd constant and a shift-xor, both bijections), the rest
// a byte a step as FNV-1a does: a per-byte FNV-1a was a tenth of a
// traceback's compression (issue 23).
const (
	hashSeed  = 14695981039346656037
	fnvPrime  = 1099511628211
	wordPrime = 0x9E3779B97F4A7C15
)

func hashAdd(h uint64, s string) uint64 {
	for ; len(s) >= 8; s = s[8:] {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = (h ^ w) * wordPrime
		h ^= h >> 32
	}
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func hash64(s string) uint64 { return hashAdd(hashSeed, s) }

// collapsedHash is an FNV-1a hash of collapseSpace(s), without building
// the collapsed string (it feeds hashAdd a rune at a time, so it equals
// no hash64 of a string: its keys meet only each other).
func collapsedHash(s string) uint64 {
	h := uint64(hashSeed)
	started, pending := false, false
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			// ASCII, the common case, inline: the same steps as below
			// without a call per byte.
			if asciiSpace[c] {
				pending = started
			} else {
				if pending {
					h = (h ^ ' ') * fnvPrime
					pending = false
				}
				started = true
				h = (h ^ uint64(c)) * fnvPrime
			}
			i++
			continue
		}
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if unicode.IsSpace(r) {
			pending = started
		} else {
			if pending {
				h = (h ^ ' ') * fnvPrime
				pending = false
			}
			started = true
			h = hashAdd(h, s[i:i+size])
		}
		i += size
	}
	return h
}

// asciiSpace are the ASCII bytes unicode.IsSpace accepts.
var asciiSpace = setOf("\t\n\v\f\r ")

func isPathByte(c byte) bool { return byteClass[c]&classPath != 0 }

// hasSourceExt: "a/b.py", "x.go", "C:\\x\\y.cs" — a name with a short
// alphanumeric extension that is not all digits (so 12.5:30 is not a path).
func hasSourceExt(path string) bool {
	dot := strings.LastIndexByte(path, '.')
	if dot <= 0 || dot == len(path)-1 || len(path)-dot-1 > 8 {
		return false
	}
	ext := path[dot+1:]
	letter := false
	for i := 0; i < len(ext); i++ {
		c := ext[i]
		if !isWordByte(c) {
			return false
		}
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			letter = true
		}
	}
	if !letter {
		return false
	}
	// The name before the extension needs a letter too (not "1.5").
	for i := 0; i < dot; i++ {
		c := path[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' {
			return true
		}
	}
	return false
}

// xmlClass is what a line of a JUnit, NUnit or TRX report says.
type xmlClass uint8

const (
	xmlNone    xmlClass = iota
	xmlFail             // <failure>, <error>, a failed result
	xmlSummary          // a suite or run total with failures
	xmlPass             // a passed or skipped test case
	xmlCase             // an opening <testcase> (its children decide)
)

func xmlTestClass(l string) xmlClass {
	t := strings.TrimSpace(l)
	if len(t) < 3 || t[0] != '<' {
		return xmlNone
	}
	switch {
	case strings.HasPrefix(t, "<failure") || strings.HasPrefix(t, "<error") || strings.HasPrefix(t, "<ErrorInfo") ||
		strings.Contains(t, `outcome="Failed"`) || strings.Contains(t, `result="Failed"`) && strings.HasPrefix(t, "<test-case"):
		return xmlFail
	case strings.HasPrefix(t, "<testsuite") || strings.HasPrefix(t, "<test-suite") || strings.HasPrefix(t, "<test-run") ||
		strings.HasPrefix(t, "<Counters") || strings.HasPrefix(t, "<ResultSummary"):
		if nonZeroAttr(t, "failures") || nonZeroAttr(t, "errors") || nonZeroAttr(t, "failed") ||
			strings.Contains(t, `result="Failed"`) || strings.Contains(t, `outcome="Failed"`) {
			return xmlSummary
		}
		return xmlNone
	case strings.HasPrefix(t, "<testcase") && strings.HasSuffix(t, "/>"),
		strings.Contains(t, `outcome="Passed"`), strings.Contains(t, `outcome="NotExecuted"`),
		strings.HasPrefix(t, "<test-case") && (strings.Contains(t, `result="Passed"`) || strings.Contains(t, `result="Skipped"`)),
		strings.HasPrefix(t, "<UnitTest ") || strings.HasPrefix(t, "<TestMethod ") || strings.HasPrefix(t, "<Execution ") ||
			strings.HasPrefix(t, "<TestEntry ") || strings.HasPrefix(t, "</UnitTest>") || strings.HasPrefix(t, "</testcase>"):
		return xmlPass
	case strings.HasPrefix(t, "<testcase"):
		return xmlCase
	}
	return xmlNone
}

// nonZeroAttr reports whether an XML tag has name="N" with N > 0.
func nonZeroAttr(tag, name string) bool {
	i := strings.Index(tag, " "+name+"=\"")
	if i < 0 {
		return false
	}
	v := tag[i+len(name)+3:]
	d := digits(v)
	return d > 0 && strings.Trim(v[:d], "0") != ""
}

// containsWord is strings.Contains(t, " "+w) without searching for the
// space: strings.Index finds candidates by the needle's first byte, and on
// a long line a space is a candidate every few bytes.
func containsWord(t, w string) bool {
	for off := 0; ; {
		k := strings.Index(t[off:], w)
		if k < 0 {
			return false
		}
		if k += off; k > 0 && t[k-1] == ' ' {
			return true
		}
		off = k + 1
	}
}

// seenSet is a set of line hashes with a cap on its size: past the cap
// nothing more is added and every new line reads as unseen. The
// classifiers use it to tell a repeat from a first occurrence; with more
// distinct lines than the cap, the cap keeps the set within the memory
// bound (review round 3, N4) and the first lines are the ones told apart.
type seenSet struct {
	m    map[uint64]struct{}
	most int
}

// newSeenSet makes a set for a text of n bytes: one entry per 256 bytes
// (an entry costs up to 40 bytes with growth, and a plan may hold three).
func newSeenSet(n int) seenSet {
	return seenSet{m: make(map[uint64]struct{}), most: max(n/256, 1024)}
}

// add adds h and reports whether it was there already.
func (s seenSet) add(h uint64) (seen bool) {
	if _, ok := s.m[h]; ok {
		return true
	}
	if len(s.m) < s.most {
		s.m[h] = struct{}{}
	}
	return false
}

// isCommitSummary matches the line git prints for a commit it made
// (`git commit`, `merge`, `cherry-pick`, `revert`, `rebase`):
// "[main c9e7dcd] Subject", "[feat/x (root-commit) 1a2b3c4] Subject",
// "[detached HEAD 1a2b3c4] Subject". It is the outcome of the command,
// and the hash in it is what the agent pushes, shows or reverts next; a
// pre-commit hook's test and lint output after it must not bury it.
func isCommitSummary(l string) bool {
	t := strings.TrimSpace(l)
	if len(t) < 11 || t[0] != '[' || len(t) > 1000 {
		return false
	}
	end := strings.Index(t, "] ")
	if end < 0 {
		end = len(t) - 1
		if t[end] != ']' {
			return false
		}
	}
	head := t[1:end]
	sp := strings.LastIndexByte(head, ' ')
	if sp <= 0 {
		return false // no branch before the hash
	}
	hash := head[sp+1:]
	if len(hash) < 7 || len(hash) > 40 {
		return false
	}
	for i := 0; i < len(hash); i++ {
		if c := hash[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return !strings.ContainsAny(head[:sp], "[]")
}

// isChangeCount matches git's count of a change, " 2 files changed, 115
// insertions(+), 29 deletions(-)", the line after a commit summary.
func isChangeCount(l string) bool {
	t := strings.TrimSpace(l)
	d := digits(t)
	if d == 0 {
		return false
	}
	rest := t[d:]
	return strings.HasPrefix(rest, " files changed") || strings.HasPrefix(rest, " file changed")
}

// isStatusFailureRow reports whether l is a table's row whose status column
// says it failed: a column (set off by a tab or two spaces, as columns are
// and words in prose are not) that is one of the words CI checks (gh pr
// checks' "fail"), Kubernetes pods (kubectl get pods) and job tables say
// it with. "api-7d9f   0/1   CrashLoopBackOff   12   3h", "test / unit\tfail\t3m12s\thttps://…".
// The row is split once; the classifier asks only in outputs whose first
// lines are a table's (looksTabular).
func isStatusFailureRow(l string, m lineBits) bool {
	if !(m.has('a') && m.has('i') && m.has('l') || m.has('r') && m.has('o') || m.has('R') && m.has('O') ||
		m.has('B') && m.has('k') || m.has('O') && m.has('K') || m.has('E') && m.has('v')) {
		return false
	}
	t := trimRight(trimLeft(l))
	cols, failed := 0, false
	for t != "" {
		end := len(t)
		for i := 0; i < len(t); i++ {
			if t[i] == '\t' || t[i] == ' ' && i+1 < len(t) && t[i+1] == ' ' {
				end = i
				break
			}
		}
		if end > 0 {
			cols++
			failed = failed || isStatusFailure(t[:end])
		}
		t = trimLeft(t[end:])
	}
	return failed && cols >= 2
}

// isStatusFailure reports whether a table's column says its row failed.
func isStatusFailure(col string) bool {
	switch col {
	case "fail", "failed", "failure", "FAIL", "FAILED", "FAILURE", "error", "Error", "ERROR",
		"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError", "OOMKilled",
		"Evicted", "Init:Error", "Init:CrashLoopBackOff", "timed_out", "startup_failure":
		return true
	}
	return false
}

// looksTabular reports whether most of the first non-blank lines of text
// (at most eight) hold two column edges or more after their indentation
// (a tab, or two spaces): a table's header and rows, as kubectl, docker,
// gh and most status commands print them.
func looksTabular(lines iter.Seq2[int, string]) bool {
	seen, rows := 0, 0
	for _, l := range lines {
		t := trimRight(trimLeft(l))
		if t == "" {
			continue
		}
		edges := 0
		for i := 1; i < len(t) && edges < 2; i++ {
			if t[i] == '\t' || t[i] == ' ' && t[i-1] == ' ' && (i+1 == len(t) || t[i+1] != ' ') {
				edges++
			}
		}
		if edges >= 2 {
			rows++
		}
		if seen++; seen == 8 {
			break
		}
	}
	return seen > 0 && rows*2 > seen
}

// opensMessage reports whether error line t says its message comes on the
// next line: Rust's "thread 'main' panicked at src/main.rs:5:10:" (since
// Rust 1.73) and Flutter's "The following _TypeError was thrown building
// X:". That line is what went wrong.
func opensMessage(t string) bool {
	t = trimRight(t)
	if !strings.HasSuffix(t, ":") {
		return false
	}
	return strings.Contains(t, "' panicked at ") || strings.HasPrefix(trimLeft(t), "The following ") && strings.Contains(t, " was thrown ")
}
