package compress

import (
	"strconv"
	"strings"
	"testing"
)

// TestRound31RunnerForms: the verdicts round 31's captured logs brought
// (cabal's test suites, testthat and R CMD check, Julia's Test inside a
// test set, Cypress's run table, lake, Ansible) are read as failing tests,
// summaries and error lines, and their look-alikes are not.
func TestRound31RunnerForms(t *testing.T) {
	checkRunnerForms(t, []runnerForm{
		// cabal.
		{"Test suite haskell-chess-test: FAIL", true, false, false},
		{"Test suite haskell-chess-test: PASS", false, false, false},
		{"Test suite logged to: /home/u/chess/dist-newstyle/test/chess-test.log", false, false, false},
		{"Test suite of the week: FAIL", false, false, false},
		{"0 of 1 test suites (0 of 1 test cases) passed.", false, true, false},
		{"2 of 2 test suites (2 of 2 test cases) passed.", false, true, false},
		{"1 of 2 test suites failed to build", false, false, false},
		// testthat, R CMD check.
		{"── Failure ('test-cart.R:12:3'): sums the items ───────────────────────", true, false, false},
		{"  ── Error ('test-s7-methods.R:289:5'): S7 method dispatch is faster than S3 ─────", true, false, false},
		{"── 1. Failure: sums the items (@test-cart.R#12) ──────────────────────", true, false, false},
		{"-- Failure ('test-cart.R:12:3'): sums the items ---------------------", true, false, false},
		{"── Test failures ───────────────────────────────────────── testthat ────", false, false, false},
		{"── Failure of the week ──", false, false, false},
		{"  [ FAIL 20 | WARN 2 | SKIP 1 | PASS 111 ]", false, true, false},
		{"[ FAIL 0 | WARN 0 | SKIP 0 | PASS 42 ]", false, true, false},
		{"[ FAIL ] is how the harness marks it", false, false, false},
		{"Status: 1 ERROR, 5 WARNINGs, 6 NOTEs", false, true, false},
		{"Status: 2 NOTEs", false, true, false},
		{"Status: OK", false, true, false},
		{"Status: 200 OK", false, false, false},
		{"Status: shipped", false, false, false},
		{"Running the tests in ‘tests/testthat.R’ failed.", false, false, true},
		{"Running the tests in ‘tests/testthat.R’", false, false, false},
		{"  Error in `as.data.frame.default(bounds)`: cannot coerce class 'c(\"medrobust_bounds\", \"S7_object\")' to a data.frame", false, false, true},
		{"Error in f(x) : object 'y' not found", false, false, true},
		{"Error in the docs, fixed in the next release", false, false, false},
		// Julia's Test inside a test set.
		{"Batched Differentiability: Error During Test at /home/jm/MedImages.jl/test/differentiability_tests/test_gradients.jl:165", true, false, false},
		{"cart totals: Test Failed at /src/test/runtests.jl:12", true, false, false},
		{"cart totals: Test Failed at lunch, 12", false, false, false},
		{"  Got exception outside of a @test", false, false, true},
		{"Got exceptions? Ask at the desk", false, false, false},
		// Cypress's run table: a summary, not a failing test.
		{"    ✖  1 of 1 failed (100%)                     04:06       35       19       16        -        -  ", false, true, false},
		{"    ✔  All specs passed!                        00:12        8        8        -        -        -  ", false, true, false},
		{"✖ renders the cart", true, false, false},
		// xcodebuild's parallel testing.
		{"Test case 'BuildFlagTests.test_failIntentionally()' failed on 'Clone 1 of iPhone 13 mini - xctest (59522)' (0.278 seconds)", true, false, false},
		{"Test case 'CartTests.testSums()' passed on 'Clone 1 of iPhone 13 mini - xctest (59522)' (0.001 seconds)", false, false, false},
		{"Test case '' failed on 'Clone 1' (0.1 seconds)", false, false, false},
		// lake, Ansible.
		{"Some required targets logged failures:", false, false, true},
		{"Some required builds logged failures:", false, false, true},
		{"Some required targets were built", false, false, false},
		{"ERROR! couldn't resolve module/action 'community.general.ufw'. This often indicates a misspelling, missing collection, or incorrect module path.", false, false, true},
		{"ERROR!!! is not how ansible writes it", false, false, true}, // a line opening with ERROR is an error line already
	})
}

// TestNumberedTitlesKeepTheTest: mocha's (and Cypress's) numbered failure
// heading names the outer suite on its first line and the test on the
// last, the one ending in a colon, with what failed after it. A run of
// many such failures among passing tests keeps, at 10x, every test's
// name and the message once, where it kept the suite's name alone. The
// report's form is Cypress's, as captured in round 31
// (testdata/fixtures/SOURCES-round31b.md, fixtures-openfang).
func TestNumberedTitlesKeepTheTest(t *testing.T) {
	var b strings.Builder
	b.WriteString("  Layer 1 — Sidebar Route Smoke\n")
	pages := []string{"chat", "inbox", "approvals", "comms", "workflows", "scheduler", "hands", "agents"}
	for _, pg := range pages {
		b.WriteString("    " + pg + "\n      1) sidebar link opens /" + pg + "\n")
		for k := 0; k < 30; k++ {
			b.WriteString("      ✓ direct URL /" + pg + " loads correctly, case " + strconv.Itoa(k) + " (972ms)\n")
		}
	}
	b.WriteString("\n\n  0 passing (4m)\n  " + strconv.Itoa(len(pages)) + " failing\n\n")
	for n, pg := range pages {
		b.WriteString("  " + strconv.Itoa(n+1) + ") Layer 1 — Sidebar Route Smoke\n       " + pg + "\n         sidebar link opens /" + pg + ":\n\n")
		b.WriteString("      Timed out retrying after 12000ms\n      + expected - actual\n\n      -'/'\n      +'/" + pg + "'\n      \n")
		b.WriteString("      at Context.eval (webpack://app/./cypress/e2e/01-route-smoke.cy.js:100:32)\n\n")
	}
	text := b.String()
	h := bash("npx cypress run --spec cypress/e2e/01-route-smoke.cy.js")
	s := Structural(StructuralOptions{TargetRatio: 10})
	out, rep := s.Compress(text, h)
	if rep.Kind != KindTestLog || !rep.Changed {
		t.Fatalf("kind %s, changed %v", rep.Kind, rep.Changed)
	}
	for _, pg := range pages {
		if l := "\n         sidebar link opens /" + pg + ":\n"; !strings.Contains(out, l) {
			t.Errorf("the test's name %q was dropped", l)
		}
	}
	if !strings.Contains(out, "\n      Timed out retrying after 12000ms\n") {
		t.Error("the failure's message was dropped")
	}
	if err := checkGuards(s, text, h); err != nil {
		t.Error(err)
	}
}

// TestNumberedTitleForms: which lines under a numbered failure heading
// join it. Mocha's title lines, each deeper than the one before and the
// first deeper than the heading's text, do, with the message after them;
// rspec's "Failure/Error:" and "Got 0 failures and 2 other errors:" under
// the heading's text do not, nor does what follows them (a 320 KB rspec
// run under the keyless clamp lost its exception types to them).
func TestNumberedTitleForms(t *testing.T) {
	for _, c := range []struct {
		name, text string
		joined     []string // lines read as the failure's (critical)
		left       []string // lines the title reader must not raise
	}{
		{
			name:   "mocha, two blocks",
			text:   "  2 failing\n\n  1) Cart\n       totals\n         sums the items:\n     Timed out retrying after 4000ms\n      at Context.<anonymous> (test/cart.js:12:5)\n",
			joined: []string{"       totals", "         sums the items:", "     Timed out retrying after 4000ms"},
		},
		{
			name: "rspec, Failure/Error on its own line",
			text: "Failures:\n\n  1) Cart#total sums the items\n     Failure/Error:\n       expect(cart.total)\n         .to eq(3)\n\n       expected: 3\n            got: 2\n",
			left: []string{"       expect(cart.total)"},
		},
		{
			name: "rspec, aggregate failures",
			text: "Failures:\n\n  11) Logout when the user clicks logout\n      Got 0 failures and 2 other errors:\n\n      11.1) Failure/Error: visit root_path\n",
			left: []string{"      Got 0 failures and 2 other errors:"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newPlan(c.text, KindTestLog, StructuralOptions{TargetBytes: 1 << 20})
			classifyDiagnostic(p, KindTestLog)
			tierOf := map[string]tier{}
			for i, l := range p.allLines() {
				tierOf[l] = p.cls[i].tier
			}
			for _, l := range c.joined {
				if tierOf[l] != tierCritical {
					t.Errorf("%q not read as the failure's", l)
				}
			}
			for _, l := range c.left {
				if tierOf[l] == tierCritical {
					t.Errorf("%q raised to the failure's", l)
				}
			}
		})
	}
}
