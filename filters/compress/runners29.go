package compress

import "strings"

// The forms below are the verdicts of test runners and build tools that
// round 29's captured logs showed the classifiers did not read: GoogleTest,
// CTest, Maven Surefire, Hspec, EUnit and Common Test, Julia's Test, rspec's
// documentation formatter, Gradle, the Kotlin compiler and the GNU linker.

// isGTestFailure matches GoogleTest's failing test, "[  FAILED  ]
// CartTest.Sums (0 ms)", in its run and in the list after it; not the
// count before that list, "[  FAILED  ] 2 tests, listed below:".
func isGTestFailure(lt string) bool {
	r, ok := strings.CutPrefix(lt, "[  FAILED  ] ")
	return ok && r != "" && !isDigit(r[0])
}

// isSurefireFailure matches Maven Surefire's failing test as a run prints
// it, "[ERROR] com.x.CartTest.sums -- Time elapsed: 0.1 s <<< FAILURE!"
// (JUnit 5, Surefire 3), "testSums(com.x.CartTest)  Time elapsed: 0.1 sec
// <<< ERROR!" (JUnit 4); not a class's count, "Tests run: 5, Failures: 1,
// … <<< FAILURE!".
func isSurefireFailure(t string) bool {
	return (strings.HasSuffix(t, "<<< FAILURE!") || strings.HasSuffix(t, "<<< ERROR!")) && !strings.Contains(t, "Tests run:")
}

// isSurefireResult matches an entry of the list Surefire prints under
// "Results:", "[ERROR]   CartTest.sums:42 expected: <1> but was: <2>" or
// "[ERROR]   CartTest.total » NullPointer": the class and test, and the
// line or the exception.
func isSurefireResult(lt string) bool {
	r, ok := strings.CutPrefix(lt, "[ERROR]   ")
	if !ok {
		return false
	}
	r = trimLeft(r)
	end := strings.IndexByte(r, ' ')
	if end < 0 {
		end = len(r)
	}
	name := r[:end]
	if c := strings.LastIndexByte(name, ':'); c > 0 && digits(name[c+1:]) == len(name)-c-1 && c+1 < len(name) {
		name = name[:c]
	} else if !strings.HasPrefix(r[end:], " » ") {
		return false
	}
	dot := strings.LastIndexByte(name, '.')
	return dot > 0 && dot < len(name)-1 && isIdentifier(name[:dot]) && isIdentifier(name[dot+1:])
}

// isIdentifier reports whether s is a (dotted, generic-free) name: word
// bytes, '$' and '.'.
func isIdentifier(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isWordByte(c) && c != '$' && c != '.' {
			return false
		}
	}
	return s != ""
}

// isHspecFailure matches Hspec's failing example: "sums the cart FAILED
// [1]" (its default formatter) or "sums the cart [✘]" (the checks
// formatter).
func isHspecFailure(t string) bool {
	if strings.HasSuffix(t, " [✘]") {
		return true
	}
	return strings.HasSuffix(beforeCount(t, ']'), " FAILED [")
}

// isEUnitFailure matches EUnit's failing test, "cart_tests:12: sums_test
// ...*failed*" or "...*timed out*".
func isEUnitFailure(t string) bool {
	return strings.HasSuffix(t, "...*failed*") || strings.HasSuffix(t, "...*timed out*")
}

// isCommonTestFailure matches Common Test's failed case, "%%% cart_SUITE
// ==> sums: FAILED".
func isCommonTestFailure(lt string) bool {
	return strings.HasPrefix(lt, "%%% ") && strings.Contains(lt, " ==> ") && strings.HasSuffix(lt, ": FAILED")
}

// isCTestFailure matches CTest's failed test: in its run, " 6/12 Test  #6:
// cart_sums ......***Failed    0.03 sec", and in the list after "The
// following tests FAILED:", "6 - cart_sums (Failed)".
func isCTestFailure(lt string) bool {
	d := digits(lt)
	if d == 0 || d >= len(lt) {
		return false
	}
	switch lt[d] {
	case '/':
		return strings.Contains(lt, " Test ") && (strings.Contains(lt, "***Failed") || strings.Contains(lt, "***Exception") ||
			strings.Contains(lt, "***Timeout") || strings.Contains(lt, "***Not Run"))
	case ' ':
		if !strings.HasPrefix(lt[d:], " - ") {
			return false
		}
		for _, v := range [...]string{" (Failed)", " (Timeout)", " (SEGFAULT)", " (Subprocess aborted)", " (Not Run)", " (OTHER_FAULT)", " (ILLEGAL)", " (BUS)", " (INTERRUPT)", " (NUMERICAL)", " (Exception)"} {
			if strings.HasSuffix(lt, v) {
				return true
			}
		}
	}
	return false
}

// isRSpecDocFailure matches a failing example as rspec's documentation
// formatter prints it, "returns 404 (FAILED - 2)".
func isRSpecDocFailure(t string) bool {
	// Read from the end: most lines that end in ')' are code.
	return strings.HasSuffix(beforeCount(t, ')'), " (FAILED - ")
}

// beforeCount returns what comes before the count that t ends with, the
// count's digits followed by closer; "" when t does not end so.
func beforeCount(t string, closer byte) string {
	if len(t) < 2 || t[len(t)-1] != closer {
		return ""
	}
	i := len(t) - 1
	for i > 0 && isDigit(t[i-1]) {
		i--
	}
	if i == len(t)-1 {
		return ""
	}
	return t[:i]
}

// isJuliaTestFailure matches the Test stdlib's "Test Failed at
// /src/test/runtests.jl:12" and "Error During Test at …".
func isJuliaTestFailure(lt string) bool {
	return strings.HasPrefix(lt, "Test Failed at ") || strings.HasPrefix(lt, "Error During Test at ")
}

// isRunnerSummary matches the run verdicts of CTest ("93% tests passed, 8
// tests failed out of 123", "The following tests FAILED:"), GoogleTest
// ("[==========] 6 tests from 2 test suites ran. (1 ms total)", "[  PASSED
// ] 4 tests.", "[  FAILED  ] 2 tests, listed below:", " 2 FAILED TESTS"),
// EUnit ("Failed: 3.  Skipped: 0.  Passed: 45.", "All 45 tests passed."),
// ESLint ("✖ 6786 problems (6781 errors, 5 warnings)"), Julia's Test
// ("Test Summary: | Pass  Fail  Total  Time"), zig build
// ("Build Summary: 0/3 steps succeeded; 1 failed") and Maven's reactor
// ("[INFO] cart-core ........ FAILURE [ 18.359 s]"); since round 31,
// cabal's suites count, testthat's count, R CMD check's "Status:" and
// Cypress's run row (runners31.go).
func isRunnerSummary(t string) bool {
	switch c := t[0]; {
	case isDigit(c):
		r := t[digits(t):]
		return strings.HasPrefix(r, "% tests passed, ") && strings.Contains(r, " failed out of ") ||
			r == " FAILED TESTS" || r == " FAILED TEST" || isCountsSummary(r) || isCabalSuitesCount(r)
	case c == '*':
		return isScalaTestSummary(t)
	case c == '#':
		return isTAPCount(t)
	case c == '=':
		return isValgrindSummary(t)
	case c == 'T':
		return t == "The following tests FAILED:" || strings.HasPrefix(t, "Test Summary:") && strings.Contains(t, " | ")
	case c == '[':
		if r, ok := strings.CutPrefix(t, "[==========] "); ok {
			return digits(r) > 0 && strings.Contains(r, " ran.")
		}
		if r, ok := strings.CutPrefix(t, "[  PASSED  ] "); ok {
			return digits(r) > 0
		}
		if r, ok := strings.CutPrefix(t, "[  FAILED  ] "); ok {
			return digits(r) > 0
		}
		if r, ok := strings.CutPrefix(t, "[INFO] "); ok {
			i := strings.Index(r, " FAILURE [")
			return i > 0 && strings.HasSuffix(r, "]") && strings.Contains(r[:i], " ..")
		}
		return isScalaTestSummary(t) || isTestthatCount(t)
	case c == 'F':
		r, ok := strings.CutPrefix(t, "Failed: ")
		return ok && digits(r) > 0 && strings.Contains(r, ".  Skipped: ") && strings.Contains(r, "Passed: ")
	case c == 'B':
		r, ok := strings.CutPrefix(t, "Build Summary: ")
		return ok && digits(r) > 0 && strings.Contains(r, " steps succeeded")
	case c == "✖"[0]:
		return isESLintCount(t) || isCypressRunSummary(t)
	case c == 'S':
		return isRCheckStatus(t)
	case c == 'A':
		r, ok := strings.CutPrefix(t, "All ")
		return ok && digits(r) > 0 && (strings.HasSuffix(r, " tests passed.") || strings.HasSuffix(r, " test passed.")) || isScalaTestSummary(t)
	}
	return false
}

// isESLintCount matches ESLint's count of what it found, "✖ 3 problems (2
// errors, 1 warning)": a summary, not node:test's failing test ("✖ sums").
func isESLintCount(t string) bool {
	r, ok := strings.CutPrefix(t, "✖ ")
	if !ok {
		return false
	}
	d := digits(r)
	return d > 0 && (strings.HasPrefix(r[d:], " problems (") || strings.HasPrefix(r[d:], " problem ("))
}

// isBuildToolError matches the error lines of build tools whose form no
// other rule reads: Gradle's failed task ("> Task :app:compileKotlin
// FAILED"); the Kotlin compiler's "e: file:///src/A.kt:12:5 Unresolved
// reference: x" and its older "e: /src/A.kt: (12, 5): …"; Maven's own
// "[ERROR] Failed to execute goal …", "[ERROR] COMPILATION ERROR :" and the
// javac errors it relays, "[ERROR] /src/A.java:[12,5] cannot find symbol";
// Starlark's "Error in fail: …" (Bazel); and a linker's "(.text+0x1a):
// undefined reference to `f'" however its line starts.
func isBuildToolError(t string, m lineBits) bool {
	if t == "" {
		return false
	}
	switch t[0] {
	case '>':
		return strings.HasPrefix(t, "> Task :") && strings.HasSuffix(t, " FAILED")
	case 'e':
		r, ok := strings.CutPrefix(t, "e: ")
		return ok && (strings.HasPrefix(r, "file://") || r != "" && r[0] == '/' || len(r) > 2 && r[1] == ':' && (r[2] == '\\' || r[2] == '/'))
	case '[':
		r, ok := strings.CutPrefix(t, "[ERROR] ")
		return ok && (strings.HasPrefix(r, "Failed to execute goal ") || strings.HasPrefix(r, "COMPILATION ERROR") || hasJavacBracketLocation(r))
	case 'E':
		r, ok := strings.CutPrefix(t, "Error in ")
		if !ok {
			return false
		}
		c := strings.IndexByte(r, ':')
		return c > 0 && c < 64 && isIdentifier(r[:c]) && strings.HasPrefix(r[c:], ": ")
	}
	return m.has('`') && m.has('u') && m.has('f') && strings.Contains(t, "undefined reference to `")
}

// buildToolFirst are the first bytes of isBuildToolError's forms but the
// linker's, whose line holds a backquote: the gate before the call.
var buildToolFirst = setOf(">e[E")

// hasJavacBracketLocation reports whether r starts with a path and the
// line and column Maven's compiler plugin writes in brackets,
// "/src/A.java:[12,5] …".
func hasJavacBracketLocation(r string) bool {
	i := strings.Index(r, ":[")
	if i <= 0 || strings.IndexByte(r[:i], ' ') >= 0 {
		return false
	}
	r = r[i+2:]
	d := digits(r)
	if d == 0 || d >= len(r) || r[d] != ',' {
		return false
	}
	r = r[d+1:]
	e := digits(r)
	return e > 0 && e < len(r) && r[e] == ']'
}
