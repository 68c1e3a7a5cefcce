package compress

import "testing"

// TestRound29RunnerForms: the verdicts of the runners and build tools
// round 29's captured logs brought (GoogleTest, CTest, Maven Surefire,
// Hspec, EUnit, Common Test, Julia's Test, Gradle, kotlinc, a linker,
// Bazel) are read as failing tests, summaries and error lines, and their
// look-alikes are not.
func TestRound29RunnerForms(t *testing.T) {
	checkRunnerForms(t, []runnerForm{
		// GoogleTest.
		{"[  FAILED  ] CartTest.Sums (0 ms)", true, false, false},
		{"[  FAILED  ] CartTest.Sums", true, false, false},
		{"[  FAILED  ] 2 tests, listed below:", false, true, false},
		{"[==========] 6 tests from 2 test suites ran. (1 ms total)", false, true, false},
		{"[  PASSED  ] 4 tests.", false, true, false},
		{" 2 FAILED TESTS", false, true, false},
		{"[       OK ] CartTest.Total (0 ms)", false, false, false},
		// CTest.
		{"  6/123 Test   #6: cart_sums ....................***Failed    0.03 sec", true, false, false},
		{" 7/123 Test   #7: cart_total ...................   Passed    0.03 sec", false, false, false},
		{"\t  6 - cart_sums (Failed)", true, false, false},
		{"\t 12 - io_read (Timeout)", true, false, false},
		{"93% tests passed, 8 tests failed out of 123", false, true, false},
		{"The following tests FAILED:", false, true, false},
		{"2026/07/14 10:00:00 started", false, false, false},
		// Maven Surefire, JUnit 5 and JUnit 4, and its results list.
		{"[ERROR] com.x.helpers.OcrTest.testVisa -- Time elapsed: 0.130 s <<< FAILURE!", true, false, false},
		{"[ERROR] testCliDriver[acid](org.apache.hadoop.hive.cli.TestCliDriver)  Time elapsed: 27.601 s  <<< ERROR!", true, false, false},
		{"testSums(com.x.CartTest)  Time elapsed: 0.01 sec  <<< FAILURE!", true, false, false},
		{"[ERROR] Tests run: 5, Failures: 3, Errors: 0, Skipped: 0, Time elapsed: 1.098 s <<< FAILURE! -- in com.x.OcrTest", false, true, false},
		{"[ERROR]   OcrTest.testAnz:66 No words recognized. ==> expected: <false> but was: <true>", true, false, false},
		{"[ERROR]   CartTest.total » NullPointer", true, false, false},
		{"[ERROR]   symbol:   variable x", false, false, false},
		{"[ERROR]   location: class Foo", false, false, false},
		{"[INFO] cart-core .................................. FAILURE [ 18.359 s]", false, true, false},
		{"[INFO] cart-api ................................... SUCCESS [  2.101 s]", false, false, false},
		{"[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project cart: There are test failures.", false, false, true},
		{"[ERROR] /src/main/java/Cart.java:[12,5] cannot find symbol", false, false, true},
		{"[ERROR] COMPILATION ERROR : ", false, false, true},
		{"[ERROR] -> [Help 1]", false, false, false},
		// Hspec.
		{"  sums the cart FAILED [1]", true, false, false},
		{"  sums the cart [✘]", true, false, false},
		{"  totals the cart [✔]", false, false, false},
		// EUnit and Common Test.
		{"cart_tests:25: sums_test...*failed*", true, false, false},
		{"cart_tests:31: slow_test...*timed out*", true, false, false},
		{"*** context cleanup failed ***", false, false, false},
		{"  Failed: 3.  Skipped: 0.  Passed: 45.", false, true, false},
		{"  All 45 tests passed.", false, true, false},
		{"%%% cart_SUITE ==> sums: FAILED", true, false, false},
		{"%%% cart_SUITE ==> totals: OK", false, false, false},
		// rspec's documentation formatter.
		{"        returns 404 (FAILED - 2)", true, false, false},
		{"     Failure/Error: expect(response.code).to eql 404", false, false, true},
		{"        returns 404 (FAILED)", false, false, false},
		// Julia.
		{"Test Failed at /src/test/runtests.jl:12", true, false, false},
		{"Error During Test at /src/test/runtests.jl:20", true, false, false},
		{"Test Summary: | Pass  Fail  Total  Time", false, true, false},
		// Pest.
		{"   FAILED  Elliptic\\Backfill\\Tests\\Unit\\RowLimiterServiceTest > it limits   Error   ", true, false, false},
		{"  FAIL  Tests\\Unit\\CartTest", true, false, false},
		{"  FAILED   ", false, true, false}, // unittest's verdict line, not a test
		// ESLint's count, not node:test's failing test.
		{"✖ 6786 problems (6781 errors, 5 warnings)", false, true, false},
		{"✖ 1 problem (1 error, 0 warnings)", false, true, false},
		{"✖ sums the cart", true, false, false},
		// zig build.
		{"Build Summary: 0/3 steps succeeded; 1 failed", false, true, false},
		// Gradle, kotlinc, a linker, Bazel.
		{"> Task :feature:library:compileDebugUnitTestKotlin FAILED", false, false, true},
		{"> Task :feature:library:compileDebugKotlin UP-TO-DATE", false, false, false},
		{"e: file:///app/src/test/LibraryViewModelTest.kt:52:50 No value passed for parameter 'x'.", false, false, true},
		{"e: /app/src/Cart.kt: (52, 50): Unresolved reference: foo", false, false, true},
		{"e: 2.71828", false, false, false},
		{"(.text+0x79): undefined reference to `__cxa_call_unexpected'", false, false, true},
		{"Error in fail: maven_install.json contains an invalid input signature", false, false, true},
		{"Error in the config file", false, false, false},
	})
}

// runnerForm is a line and what the classifiers should read it as.
type runnerForm struct {
	l                      string
	failing, summary, errs bool
}

// checkRunnerForms asserts each line's reading as a failing test, a
// summary and an error line, and that the line gates admit it.
func checkRunnerForms(t *testing.T, forms []runnerForm) {
	t.Helper()
	for _, tc := range forms {
		sl := scanLine(tc.l)
		if got := isFailingTest(tc.l); got != tc.failing {
			t.Errorf("isFailingTest(%q) = %v, want %v", tc.l, got, tc.failing)
		}
		if got := isSummaryLine(tc.l); got != tc.summary {
			t.Errorf("isSummaryLine(%q) = %v, want %v", tc.l, got, tc.summary)
		}
		if got := isErrorLineIn(tc.l, sl.bits); got != tc.errs {
			t.Errorf("isErrorLineIn(%q) = %v, want %v", tc.l, got, tc.errs)
		}
		checkGates(t, tc.l)
	}
}

// TestRound29TestCommands: the runners round 29's logs came from are test
// runs by their command, as phpunit and pytest are; their builds are not.
func TestRound29TestCommands(t *testing.T) {
	checkCommandKinds(t, []commandKind{
		{"vendor/bin/pest --compact", KindTestLog},
		{"vendor/bin/paratest", KindTestLog},
		{"bats test/", KindTestLog},
		{"busted spec/", KindTestLog},
		{"prove -lr t/", KindTestLog},
		{"stack test", KindTestLog},
		{"cabal test all", KindTestLog},
		{"dune test", KindTestLog},
		{"zig build test", KindTestLog},
		{"lein test", KindTestLog},
		{"rebar3 eunit", KindTestLog},
		{"rebar3 ct --suite=cart_SUITE", KindTestLog},
		{"stack build", ""},
		{"zig build", ""},
		{"rebar3 compile", ""},
	})
}

// commandKind is a command and the kind its output is by that command.
type commandKind struct {
	cmd  string
	want Kind
}

func checkCommandKinds(t *testing.T, cases []commandKind) {
	t.Helper()
	for _, tc := range cases {
		if got := classifyProgram(tc.cmd); got != tc.want {
			t.Errorf("classifyProgram(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}
