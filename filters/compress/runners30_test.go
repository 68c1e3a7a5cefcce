package compress

import (
	"strconv"
	"strings"
	"testing"
)

// TestRound30RunnerForms: the verdicts round 30's captured logs brought
// (TAP from node --test, minitest-reporters under rails test, ScalaTest
// under sbt, behave, valgrind, ninja) are read as failing tests,
// summaries and error lines, and their look-alikes are not.
func TestRound30RunnerForms(t *testing.T) {
	checkRunnerForms(t, []runnerForm{
		// TAP.
		{"not ok 2 - src", true, false, false},
		{"    not ok 5 - findSymbolOccurrences fallback on disk should skip string literals", true, false, false},
		{"not ok 7", true, false, false},
		{"not ok 4 - parses dates # TODO not written yet", false, false, false},
		{"not ok 4 - uses the network # SKIP offline", false, false, false},
		{"not ok 4 - parses dates # todo", false, false, false},
		{"ok 3 - sums the cart", false, false, false},
		{"not ok with the plan we made", false, false, false},
		{"# tests 4315", false, true, false},
		{"# pass 4294", false, true, false},
		{"# fail 21", false, true, false},
		{"# ok", false, true, false},
		{"# fail the build when coverage drops", false, false, false},
		{"# Subtest: treats iterator factory failures as empty iterables", false, false, false},
		// minitest-reporters, and minitest's own lines.
		{"  test_0001_can see the arc records in daac review section        FAIL (7.70s)", true, false, false},
		{"  test_0001_add discussion and then update, delete               ERROR (3.27s)", true, false, false},
		{"  test_0002_lists the records                                     PASS (0.02s)", false, false, false},
		{`FAIL["test_advanced_search_2", #<Minitest::Reporters::Suite:0x000000000c9a5518 @name="ObserverControllerTest">, 29.91]`, true, false, true},
		{`ERROR["test_poke_around", #<Minitest::Reporters::Suite:0x000000000353f478 @name="CapybarLurkerTest">, 2.21]`, true, false, true},
		{`FAIL["x"] is what the parser printed`, false, false, true}, // a line opening with FAIL is an error line already
		{"Minitest::Assertion:         Expected false to be truthy.", false, false, true},
		{"161 tests, 237 assertions, 17 failures, 78 errors, 0 skips", false, true, false},
		{"1 test, 1 assertion, 0 failures, 0 errors, 0 skips", false, true, false},
		{"12 tests, a fast track to review", false, false, false},
		// behave.
		{"1 feature passed, 0 failed, 0 skipped", false, true, false},
		{"9 scenarios passed, 0 failed, 0 skipped", false, true, false},
		{"112 steps passed, 0 failed, 0 skipped, 0 undefined", false, true, false},
		{"0 features passed, 1 failed, 0 skipped", false, true, false},
		{"3 steps to reproduce the bug", false, false, false},
		// ScalaTest under sbt.
		{"[info] - should sum the cart *** FAILED ***", true, false, false},
		{"- should sum the cart *** FAILED ***", true, false, false},
		{"[info] - should total the cart", false, false, false},
		{"[info] *** 1 TEST FAILED ***", false, true, false},
		{"*** 2 TESTS FAILED ***", false, true, false},
		{"[info] Tests: succeeded 93, failed 0, canceled 0, ignored 0, pending 1", false, true, false},
		{"[info] All tests passed.", false, true, false},
		{"[info] Suites: completed 10, aborted 0", false, false, false},
		// valgrind's verdict.
		{"==38816== ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 0 from 0)", false, true, false},
		{"==38816== HEAP SUMMARY:", false, false, false},
		// ninja.
		{"ninja: build stopped: subcommand failed.", false, false, true},
		{"ninja: no work to do.", false, false, false},
		// pnpm, npm's lifecycle, Go's race detector.
		{" ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  @cipherbox/e2e@0.14.0 test: `playwright test`", false, false, true},
		{" ELIFECYCLE  Test failed. See above for more details.", false, false, true},
		{"\u2009ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL\u2009 @cipherbox/e2e@0.13.4 test: `playwright test`", false, false, true},
		{"\u2009ELIFECYCLE\u2009 Test failed. See above for more details.", false, false, true},
		{"\u2009", false, false, false},
		{"ERR_PNPM_ is the prefix of pnpm's codes", false, false, true}, // a line that opens so reads as one
		{"WARNING: DATA RACE", false, false, true},
		{"Found 2 data race(s)", false, false, true},
		{"Found 2 data races in the report", false, false, false},
		{"WARNING: DATA RACE detector disabled", false, false, false},
		// husky, xcodebuild, Stack.
		{"husky - pre-commit script failed (code 1)", false, false, true},
		{"husky > pre-commit hook failed (add --no-verify to bypass)", false, false, true},
		{"husky - Git hooks installed", false, false, false},
		{"The following build commands failed:", false, false, true},
		{"The following build commands succeeded:", false, false, false},
		{"Stack failed to execute the build plan.", false, false, true},
		{"Stack failed to parse its own config? Never.", false, false, false},
	})
}

// TestRound30TestCommands: behave, rails and rake test runs, and what
// bundler runs, are test runs by their command.
func TestRound30TestCommands(t *testing.T) {
	checkCommandKinds(t, []commandKind{
		{"behave", KindTestLog},
		{"bin/rails test", KindTestLog},
		{"rails test:system", KindTestLog},
		{"bundle exec rake test", KindTestLog},
		{"bundle exec rspec spec/models", KindTestLog},
		{"bundle exec rails test test/models/user_test.rb", KindTestLog},
		{"bin/rails server", ""},
		{"bundle install", ""},
		{"bundle exec", ""},
		// Read in one pass: a hostile call's 100,000 wrappers cost what
		// their words do.
		{strings.Repeat("bundle exec ", 100000) + "rspec", KindTestLog},
	})
}

// TestTAPRunKeepsFailures: node --test's TAP, as an agent's shell gets it
// (not a terminal), keeps every failing test point and its counts at 10x
// among a thousand passing ones.
func TestTAPRunKeepsFailures(t *testing.T) {
	var b strings.Builder
	b.WriteString("TAP version 13\n")
	failing := map[int]bool{137: true, 522: true, 901: true}
	for i := 1; i <= 1000; i++ {
		b.WriteString("# Subtest: formats fixture case number " + strconv.Itoa(i) + "\n")
		if failing[i] {
			b.WriteString("not ok " + strconv.Itoa(i) + " - formats fixture case number " + strconv.Itoa(i) + "\n  ---\n  duration_ms: 1.2\n  failureType: 'testCodeFailure'\n  error: 'Expected values to be strictly equal'\n  code: 'ERR_ASSERTION'\n  ...\n")
			continue
		}
		b.WriteString("ok " + strconv.Itoa(i) + " - formats fixture case number " + strconv.Itoa(i) + "\n  ---\n  duration_ms: 0.4\n  ...\n")
	}
	b.WriteString("1..1000\n# tests 1000\n# suites 0\n# pass 997\n# fail 3\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 812.5\n")
	text := b.String()
	h := bash("node --test --test-reporter=tap")
	s := Structural(StructuralOptions{TargetRatio: 10})
	out, rep := s.Compress(text, h)
	if rep.Kind != KindTestLog || !rep.Changed {
		t.Fatalf("kind %s, changed %v", rep.Kind, rep.Changed)
	}
	for i := range failing {
		if l := "not ok " + strconv.Itoa(i) + " - formats fixture case number " + strconv.Itoa(i) + "\n"; !strings.Contains(out, l) {
			t.Errorf("%q was dropped", l)
		}
	}
	for _, l := range []string{"# tests 1000", "# pass 997", "# fail 3"} {
		if !strings.Contains(out, l) {
			t.Errorf("%q was dropped", l)
		}
	}
	if err := checkGuards(s, text, h); err != nil {
		t.Error(err)
	}
}
