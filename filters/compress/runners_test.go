package compress

import (
	"fmt"
	"strings"
	"testing"
)

// runnerCase is one test runner's output: passing tests around a few
// failures, in the runner's own format, large enough that a 10x aim has to
// drop nearly every passing line. Failing ids, counts and the summary must
// survive at any ratio.
type runnerCase struct {
	name string
	cmd  string
	gen  func(b *strings.Builder, pass int) // writes the log
	keep []string
}

// runnerCases follow the formats the runners document and print (pytest
// -v/-q/-rA, unittest -v, go test -v, go test -race's report, a panicking
// Go test, a Go package that does not build, gotestsum, jest, vitest, cargo
// test, mocha spec reporter, rspec, PHPUnit, mix test, node --test, deno
// test, bun test).
var runnerCases = []runnerCase{
	{
		name: "pytest -v with progress", cmd: "pytest -v tests/",
		gen: func(b *strings.Builder, pass int) {
			b.WriteString("============================= test session starts ==============================\nplatform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0\ncollected 402 items\n\n")
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "tests/test_cart.py::test_line_total[case%03d] PASSED%s[%3d%%]\n", i, strings.Repeat(" ", 20), i*100/(pass+2))
				if i == pass/3 {
					fmt.Fprintf(b, "tests/test_cart.py::test_discount_rounding FAILED%s[ 33%%]\n", strings.Repeat(" ", 24))
				}
				if i == pass/2 {
					fmt.Fprintf(b, "tests/test_orders.py::TestRefund::test_partial ERROR%s[ 50%%]\n", strings.Repeat(" ", 19))
				}
			}
			b.WriteString("\n=========================== short test summary info ============================\nFAILED tests/test_cart.py::test_discount_rounding - AssertionError: assert 9.99 == 10.0\nERROR tests/test_orders.py::TestRefund::test_partial - fixture 'db' not found\n============== 1 failed, 400 passed, 1 error in 3.21s ===============\n")
		},
		keep: []string{"tests/test_cart.py::test_discount_rounding FAILED", "tests/test_orders.py::TestRefund::test_partial ERROR", "1 failed, 400 passed, 1 error in 3.21s"},
	},
	{
		name: "pytest -q", cmd: "pytest -q",
		gen: func(b *strings.Builder, pass int) {
			for i := 0; i < pass/10; i++ {
				line := strings.Repeat(".", 60)
				if i == 2 {
					line = strings.Repeat(".", 30) + "F" + strings.Repeat(".", 29)
				}
				fmt.Fprintf(b, "%s [%3d%%]\n", line, (i+1)*10*100/pass)
			}
			b.WriteString("=================================== FAILURES ===================================\n___________________________ test_tax_for_region[EU] ____________________________\n\n    def test_tax_for_region(region):\n>       assert tax(region) == 0.2\nE       assert 0.21 == 0.2\n\ntests/test_tax.py:18: AssertionError\n=========================== short test summary info ============================\nFAILED tests/test_tax.py::test_tax_for_region[EU] - assert 0.21 == 0.2\n1 failed, 3599 passed in 2.02s\n")
		},
		keep: []string{"FAILED tests/test_tax.py::test_tax_for_region[EU]", "1 failed, 3599 passed in 2.02s", "tests/test_tax.py:18: AssertionError"},
	},
	{
		name: "pytest -rA", cmd: "pytest -rA",
		gen: func(b *strings.Builder, pass int) {
			b.WriteString("=========================== short test summary info ============================\n")
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "PASSED tests/test_api.py::test_get_item[%d]\n", i)
				if i == pass*2/3 {
					b.WriteString("FAILED tests/test_api.py::test_delete_item - requests.exceptions.HTTPError: 500 Server Error\n")
				}
			}
			fmt.Fprintf(b, "=================== 1 failed, %d passed in 9.80s ===================\n", pass)
		},
		keep: []string{"FAILED tests/test_api.py::test_delete_item", "1 failed, 600 passed in 9.80s"},
	},
	{
		name: "unittest -v", cmd: "python -m unittest -v",
		gen: func(b *strings.Builder, pass int) {
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "test_parse_%03d (tests.test_parser.ParserTests.test_parse_%03d) ... ok\n", i, i)
				if i == pass/4 {
					b.WriteString("test_parse_unicode (tests.test_parser.ParserTests.test_parse_unicode) ... FAIL\n")
				}
			}
			b.WriteString("\n======================================================================\nFAIL: test_parse_unicode (tests.test_parser.ParserTests.test_parse_unicode)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/src/tests/test_parser.py\", line 88, in test_parse_unicode\n    self.assertEqual(parse(\"é\"), [\"é\"])\nAssertionError: Lists differ: [] != ['é']\n\n----------------------------------------------------------------------\n")
			fmt.Fprintf(b, "Ran %d tests in 0.412s\n\nFAILED (failures=1)\n", pass+1)
		},
		keep: []string{"FAIL: test_parse_unicode (tests.test_parser.ParserTests.test_parse_unicode)", "Ran 601 tests in 0.412s", "FAILED (failures=1)", "AssertionError: Lists differ"},
	},
	{
		name: "go test -v", cmd: "go test -v ./...",
		gen: func(b *strings.Builder, pass int) {
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "=== RUN   TestRoute/case_%03d\n--- PASS: TestRoute/case_%03d (0.00s)\n", i, i)
				if i == pass/2 {
					b.WriteString("=== RUN   TestRoute/trailing_slash\n    router_test.go:41: got 404, want 200\n--- FAIL: TestRoute/trailing_slash (0.00s)\n")
				}
			}
			b.WriteString("--- FAIL: TestRoute (0.02s)\nFAIL\nFAIL\texample.com/router\t0.031s\nok  \texample.com/router/internal\t0.004s\n")
		},
		keep: []string{"--- FAIL: TestRoute/trailing_slash", "--- FAIL: TestRoute (0.02s)", "FAIL\texample.com/router\t0.031s", "router_test.go:41: got 404, want 200"},
	},
	{
		// The race detector's report (go test -race): two stacks with
		// their file:line frames, then the test failed for it.
		name: "go test -race", cmd: "go test -race -v ./cache/",
		gen: func(b *strings.Builder, pass int) {
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "=== RUN   TestCache/get_%03d\n--- PASS: TestCache/get_%03d (0.00s)\n", i, i)
				if i == pass/2 {
					b.WriteString("=== RUN   TestConcurrentPut\n==================\nWARNING: DATA RACE\nWrite at 0x00c0000a4010 by goroutine 8:\n  example.com/cache.(*Cache).Put()\n      /home/dev/cache/cache.go:42 +0x64\n  example.com/cache.TestConcurrentPut.func1()\n      /home/dev/cache/cache_test.go:18 +0x44\n\nPrevious read at 0x00c0000a4010 by goroutine 7:\n  example.com/cache.(*Cache).Get()\n      /home/dev/cache/cache.go:30 +0x3a\n  example.com/cache.TestConcurrentPut()\n      /home/dev/cache/cache_test.go:21 +0x11c\n\nGoroutine 8 (running) created at:\n  example.com/cache.TestConcurrentPut()\n      /home/dev/cache/cache_test.go:16 +0x9c\n  testing.tRunner()\n      /usr/local/go/src/testing/testing.go:1792 +0x225\n==================\n    testing.go:1490: race detected during execution of test\n--- FAIL: TestConcurrentPut (0.00s)\n")
				}
			}
			b.WriteString("FAIL\nFAIL\texample.com/cache\t1.021s\nFAIL\n")
		},
		keep: []string{"WARNING: DATA RACE", "--- FAIL: TestConcurrentPut (0.00s)", "race detected during execution of test", "/home/dev/cache/cache.go:42", "FAIL\texample.com/cache\t1.021s"},
	},
	{
		// A test that panics: go test prints the panic, "[recovered]",
		// and the goroutine's stack; the package fails, the others pass.
		name: "go test panic", cmd: "go test -v ./...",
		gen: func(b *strings.Builder, pass int) {
			goPackagesPassing(b, pass, pass/2, "=== RUN   TestParseHeader\n--- FAIL: TestParseHeader (0.00s)\npanic: runtime error: index out of range [3] with length 3 [recovered]\n\tpanic: runtime error: index out of range [3] with length 3\n\ngoroutine 21 [running]:\ntesting.tRunner.func1.2({0x6d3e60, 0xc000018150})\n\t/usr/local/go/src/testing/testing.go:1734 +0x21c\ntesting.tRunner.func1()\n\t/usr/local/go/src/testing/testing.go:1737 +0x35e\npanic({0x6d3e60?, 0xc000018150?})\n\t/usr/local/go/src/runtime/panic.go:787 +0x132\nexample.com/svc/parse.Header(...)\n\t/home/dev/svc/parse/header.go:27\nexample.com/svc/parse.TestParseHeader(0xc000102a80)\n\t/home/dev/svc/parse/header_test.go:14 +0x1d\ntesting.tRunner(0xc000102a80, 0x7431b8)\n\t/usr/local/go/src/testing/testing.go:1792 +0xf4\ncreated by testing.(*T).Run in goroutine 1\n\t/usr/local/go/src/testing/testing.go:1851 +0x413\nFAIL\texample.com/svc/parse\t0.012s\n")
		},
		keep: []string{"--- FAIL: TestParseHeader (0.00s)", "panic: runtime error: index out of range [3] with length 3 [recovered]", "/home/dev/svc/parse/header.go:27", "FAIL\texample.com/svc/parse\t0.012s"},
	},
	{
		// A package that does not build while the others' tests run: the
		// compiler's errors under "# pkg", then "[build failed]".
		name: "go test build failure", cmd: "go test -v ./...",
		gen: func(b *strings.Builder, pass int) {
			goPackagesPassing(b, pass, pass/3, "# example.com/svc/router [example.com/svc/router.test]\nrouter/router_test.go:12:2: undefined: newRouter\nrouter/router_test.go:30:9: cannot use n (variable of type int) as string value in argument to route\nFAIL\texample.com/svc/router [build failed]\n")
		},
		keep: []string{"router/router_test.go:12:2: undefined: newRouter", "router/router_test.go:30:9: cannot use n (variable of type int) as string value in argument to route", "FAIL\texample.com/svc/router [build failed]"},
	},
	{
		// gotestsum's default format: a line per package, then the
		// failures again under "=== Failed", and the count.
		name: "gotestsum", cmd: "gotestsum ./...",
		gen: func(b *strings.Builder, pass int) {
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "✓  svc/pkg%03d (%dms)\n", i, 3+i%40)
				if i == pass/2 {
					b.WriteString("✖  svc/router (31ms)\n")
				}
			}
			fmt.Fprintf(b, "\n=== Failed\n=== FAIL: svc/router TestRoute/trailing_slash (0.00s)\n    router_test.go:41: got 404, want 200\n    --- FAIL: TestRoute/trailing_slash (0.00s)\n\n=== FAIL: svc/router TestRoute (0.00s)\n\nDONE %d tests, 2 failures in 4.210s\n", pass*3+2)
		},
		keep: []string{"=== FAIL: svc/router TestRoute/trailing_slash (0.00s)", "--- FAIL: TestRoute/trailing_slash (0.00s)", "router_test.go:41: got 404, want 200", "DONE 1802 tests, 2 failures in 4.210s"},
	},
	{
		name: "jest", cmd: "npx jest",
		gen: func(b *strings.Builder, pass int) {
			b.WriteString("FAIL src/cart.test.js\n  cart\n")
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "    ✓ adds item %d (1 ms)\n", i)
				if i == pass/3 {
					b.WriteString("    ✕ applies coupon (4 ms)\n")
				}
			}
			b.WriteString("\n  ● cart › applies coupon\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 90\n    Received: 100\n\n      at Object.<anonymous> (src/cart.test.js:27:31)\n\n")
			fmt.Fprintf(b, "Test Suites: 1 failed, 1 total\nTests:       1 failed, %d passed, %d total\nSnapshots:   0 total\nTime:        1.234 s\n", pass, pass+1)
		},
		keep: []string{"✕ applies coupon", "● cart › applies coupon", "Tests:       1 failed, 600 passed, 601 total", "FAIL src/cart.test.js", "src/cart.test.js:27:31"},
	},
	{
		name: "vitest", cmd: "npx vitest run",
		gen: func(b *strings.Builder, pass int) {
			b.WriteString(" ❯ src/cart.test.ts (601 tests | 1 failed) 40ms\n")
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "   ✓ cart > adds item %d\n", i)
				if i == pass/3 {
					b.WriteString("   × cart > applies coupon 3ms\n     → expected 100 to be 90 // Object.is equality\n")
				}
			}
			b.WriteString("\n⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯\n\n FAIL  src/cart.test.ts > cart > applies coupon\nAssertionError: expected 100 to be 90 // Object.is equality\n ❯ src/cart.test.ts:27:21\n\n")
			fmt.Fprintf(b, " Test Files  1 failed (1)\n      Tests  1 failed | %d passed (%d)\n   Start at  10:02:11\n   Duration  412ms\n", pass, pass+1)
		},
		keep: []string{"× cart > applies coupon", "FAIL  src/cart.test.ts > cart > applies coupon", "Tests  1 failed | 600 passed (601)", "Test Files  1 failed (1)"},
	},
	{
		name: "cargo test", cmd: "cargo test",
		gen: func(b *strings.Builder, pass int) {
			fmt.Fprintf(b, "running %d tests\n", pass+1)
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "test parser::tests::parses_case_%03d ... ok\n", i)
				if i == pass/2 {
					b.WriteString("test parser::tests::rejects_trailing_comma ... FAILED\n")
				}
			}
			b.WriteString("\nfailures:\n\n---- parser::tests::rejects_trailing_comma stdout ----\nthread 'parser::tests::rejects_trailing_comma' panicked at src/parser.rs:211:9:\nassertion failed: result.is_err()\n\nfailures:\n    parser::tests::rejects_trailing_comma\n\n")
			fmt.Fprintf(b, "test result: FAILED. %d passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.03s\n\nerror: test failed, to rerun pass `--lib`\n", pass)
		},
		keep: []string{"test parser::tests::rejects_trailing_comma ... FAILED", "test result: FAILED. 600 passed; 1 failed", "src/parser.rs:211:9"},
	},
	{
		name: "mocha", cmd: "npx mocha",
		gen: func(b *strings.Builder, pass int) {
			b.WriteString("\n  Cart\n")
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "    ✔ adds item %d\n", i)
				if i == pass/3 {
					b.WriteString("    1) applies coupon\n")
				}
			}
			fmt.Fprintf(b, "\n\n  %d passing (120ms)\n  1 failing\n\n  1) Cart\n       applies coupon:\n\n      AssertionError [ERR_ASSERTION]: 100 == 90\n      at Context.<anonymous> (test/cart.test.js:27:14)\n\n", pass)
		},
		keep: []string{"1) applies coupon", "1) Cart", "600 passing (120ms)", "1 failing", "test/cart.test.js:27:14"},
	},
	{
		name: "rspec", cmd: "bundle exec rspec",
		gen: func(b *strings.Builder, pass int) {
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "Cart adds item %d\n", i)
			}
			b.WriteString("\nFailures:\n\n  1) Cart#total applies the coupon\n     Failure/Error: expect(cart.total).to eq(90)\n\n       expected: 90\n            got: 100\n     # ./spec/cart_spec.rb:27:in `block (3 levels) in <top (required)>'\n\n")
			fmt.Fprintf(b, "Finished in 0.4 seconds (files took 0.2 seconds to load)\n%d examples, 1 failure\n\nFailed examples:\n\nrspec ./spec/cart_spec.rb:25 # Cart#total applies the coupon\n", pass+1)
		},
		keep: []string{"1) Cart#total applies the coupon", "601 examples, 1 failure", "rspec ./spec/cart_spec.rb:25"},
	},
	{
		name: "phpunit", cmd: "vendor/bin/phpunit",
		gen: func(b *strings.Builder, pass int) {
			b.WriteString("PHPUnit 10.5.9 by Sebastian Bergmann and contributors.\n\n")
			for i := 0; i < pass/63; i++ {
				line := strings.Repeat(".", 63)
				if i == 3 {
					line = strings.Repeat(".", 20) + "F" + strings.Repeat(".", 42)
				}
				fmt.Fprintf(b, "%s %4d / %d (%3d%%)\n", line, (i+1)*63, pass, (i+1)*63*100/pass)
			}
			b.WriteString("\nTime: 00:00.412, Memory: 10.00 MB\n\nThere was 1 failure:\n\n1) Tests\\CartTest::testCouponIsApplied\nFailed asserting that 100 matches expected 90.\n\n/app/tests/CartTest.php:27\n\nFAILURES!\n")
			fmt.Fprintf(b, "Tests: %d, Assertions: %d, Failures: 1.\n", pass, pass*2)
		},
		keep: []string{"1) Tests\\CartTest::testCouponIsApplied", "FAILURES!", "Tests: 630, Assertions: 1260, Failures: 1.", "/app/tests/CartTest.php:27"},
	},
	{
		// ExUnit (mix test): a dot per passing test, numbered failure
		// reports, and the counts on one line. The command is not named
		// (a background task's output read back), so the content decides.
		name: "mix test", cmd: "",
		gen: func(b *strings.Builder, pass int) {
			b.WriteString("==> spotter\nCompiling 78 files (.ex)\nGenerated spotter app\nRunning ExUnit with seed: 66112, max_cases: 32\n\n")
			for i := 0; i < pass/60; i++ {
				b.WriteString(strings.Repeat(".", 60) + "\n")
			}
			b.WriteString("\n  1) test mount renders project review page (SpotterWeb.ProjectReviewLiveTest)\n     test/spotter_web/live/project_review_live_test.exs:42\n     ** (MatchError) no match of right hand side value: {:error, :not_found}\n     code: {:ok, view, _html} = live(conn, ~p\"/projects/1/review\")\n     stacktrace:\n       test/spotter_web/live/project_review_live_test.exs:44: (test)\n\n")
			fmt.Fprintf(b, "Finished in 0.9 seconds (0.00s async, 0.9s sync)\n14 doctests, %d tests, 1 failure\n", pass)
		},
		keep: []string{"1) test mount renders project review page (SpotterWeb.ProjectReviewLiveTest)", "14 doctests, 600 tests, 1 failure"},
	},
	{
		// node:test's spec reporter (Node 20 and later): ✔/✖ per test,
		// the counts a line each after "ℹ", the failures listed again.
		name: "node --test", cmd: "node --test",
		gen: func(b *strings.Builder, pass int) {
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "✔ cart line total case %03d (0.%03dms)\n", i, i)
				if i == pass/3 {
					b.WriteString("✖ cart total applies the coupon (1.204ms)\n  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n  100 !== 90\n\n      at TestContext.<anonymous> (file:///repo/test/cart.test.js:21:10)\n")
				}
			}
			fmt.Fprintf(b, "ℹ tests %d\nℹ suites 0\nℹ pass %d\nℹ fail 1\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\nℹ duration_ms 412.5\n\n✖ failing tests:\n\ntest at file:///repo/test/cart.test.js:19:1\n✖ cart total applies the coupon (1.204ms)\n  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n", pass+1, pass)
		},
		keep: []string{"✖ cart total applies the coupon (1.204ms)", "ℹ tests 601", "ℹ pass 600", "ℹ fail 1"},
	},
	{
		name: "deno test", cmd: "deno test",
		gen: func(b *strings.Builder, pass int) {
			b.WriteString("running 601 tests from ./cart_test.ts\n")
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "line total case %03d ... ok (%dms)\n", i, i%9)
				if i == pass/3 {
					b.WriteString("applies the coupon ... FAILED (1ms)\n")
				}
			}
			fmt.Fprintf(b, "\n ERRORS \n\napplies the coupon => ./cart_test.ts:19:6\nerror: AssertionError: Values are not equal.\n\n    [Diff] Actual / Expected\n\n-   100\n+   90\n\n FAILURES \n\napplies the coupon => ./cart_test.ts:19:6\n\nFAILED | %d passed | 1 failed (412ms)\n\nerror: Test failed\n", pass)
		},
		keep: []string{"applies the coupon ... FAILED (1ms)", "FAILED | 600 passed | 1 failed (412ms)", "error: AssertionError: Values are not equal."},
	},
	{
		// bun test writes "(pass)"/"(fail)" when its output is not a
		// terminal, as under an agent's shell tool, and its counts a line
		// each.
		name: "bun test", cmd: "bun test src/",
		gen: func(b *strings.Builder, pass int) {
			b.WriteString("bun test v1.2.19 (aad3abea)\n\nsrc/cart.test.ts:\n")
			for i := 0; i < pass; i++ {
				fmt.Fprintf(b, "(pass) cart > line total > case %03d [0.%02dms]\n", i, i%97)
				if i == pass/3 {
					b.WriteString("21 |     expect(total(cart)).toBe(90);\n                               ^\nerror: expect(received).toBe(expected)\n\nExpected: 90\nReceived: 100\n\n      at <anonymous> (/repo/src/cart.test.ts:21:31)\n(fail) cart > total > applies the coupon [0.31ms]\n")
				}
			}
			fmt.Fprintf(b, "\n %d pass\n 1 fail\n %d expect() calls\nRan %d tests across 1 file. [412.00ms]\n", pass, pass+1, pass+1)
		},
		keep: []string{"(fail) cart > total > applies the coupon [0.31ms]", " 1 fail", "600 pass", "Ran 601 tests across 1 file.", "error: expect(received).toBe(expected)"},
	},
}

// goPackagesPassing writes `go test -v ./...` over packages whose tests
// pass, a package's "ok" line every hundred tests, with failure (one
// package's report) after test at, and the run's closing FAIL.
func goPackagesPassing(b *strings.Builder, pass, at int, failure string) {
	for i := 0; i < pass; i++ {
		fmt.Fprintf(b, "=== RUN   TestEncode/case_%03d\n--- PASS: TestEncode/case_%03d (0.00s)\n", i, i)
		if i%100 == 99 {
			fmt.Fprintf(b, "PASS\nok  \texample.com/svc/pkg%03d\t0.%03ds\n", i/100, i)
		}
		if i == at {
			b.WriteString(failure)
		}
	}
	b.WriteString("FAIL\n")
}

// TestRunnerFormats holds failing ids, counts and the summary line of
// every runner's output at 10x, and checks that most of the passing lines
// went.
func TestRunnerFormats(t *testing.T) {
	for _, c := range runnerCases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			pass := 600
			if strings.HasPrefix(c.name, "phpunit") {
				pass = 630
			}
			c.gen(&b, pass)
			text := b.String()
			h := bash(c.cmd)
			if k := Detect(text, h); k != KindTestLog {
				t.Fatalf("detected %s", k)
			}
			for _, ratio := range []float64{4, 10} {
				out, rep := Structural(StructuralOptions{TargetRatio: ratio}).Compress(text, h)
				for _, k := range c.keep {
					if !strings.Contains(out, k) {
						t.Errorf("at %gx lost %q\n%s", ratio, k, out)
					}
				}
				if !rep.Changed || len(out)*3 > len(text) {
					t.Errorf("at %gx: %d → %d bytes", ratio, len(text), len(out))
				}
				if err := checkGuards(Structural(StructuralOptions{TargetRatio: ratio}), text, h); err != nil {
					t.Errorf("at %gx: %v", ratio, err)
				}
			}
		})
	}
}

// TestNarrowSummaryRule: a summary in a rule narrower than the usual 80
// columns is still a summary.
func TestNarrowSummaryRule(t *testing.T) {
	for _, l := range []string{
		"= 1 failed, 877 passed, 1 skipped, 5 xfailed, 1 xpassed, 259 warnings in 15.78s =",
		"== tests finished: 98 passed, 1 skipped, 1 expected to fail, in 2.65 seconds ===",
	} {
		if !isSummaryLine(l) {
			t.Errorf("%q is not read as a summary", l)
		}
	}
}

// TestLongRunSummary: pytest adds the clock time to the summary of a run
// that took a minute or more; it is still the summary, with or without
// its rule, and a `tail` of the log is read as a test log by it.
func TestLongRunSummary(t *testing.T) {
	checkLineCases(t, "isSummaryLine", isSummaryLine, []lineCase{
		{"2 failed, 19 passed, 718 deselected in 606.73s (0:10:06)", true},
		{"1 passed in 3725.01s (1:02:05)", true},
		{"= 1 failed, 877 passed in 75.20s (0:01:15) =", true},
		{"====== 3 failed, 10 passed in 61.00s (0:01:01) ======", true},
		{"2 failed, 19 passed in 606.73s (see below)", false},
		{"2 failed, 19 passed in 606.73s (0:10)", false},
		{"2 failed in CI (0:10:06)", false},
	})
	log := "E           Failed: scenario failed 1/6 rubric item(s):\n" + strings.Repeat("E           - a rubric item that was not met, with its reason\n", 12) +
		"\ntests/evals/test_skill_evals.py:87: Failed\n" +
		"==================== short test summary info ====================\n" +
		"FAILED tests/evals/test_skill_evals.py::test_skill_eval_scenario[a] - Failed: a failed 1/6 rubric item(s):\n" +
		"FAILED tests/evals/test_skill_evals.py::test_skill_eval_scenario[b] - Failed: b failed 1/6 rubric item(s):\n" +
		"2 failed, 19 passed, 718 deselected in 606.73s (0:10:06)\n"
	h := bash("tail -20 /tmp/tasks/evals.output")
	if k := Detect(log, h); k != KindTestLog {
		t.Fatalf("the tail of a long pytest run detected as %s", k)
	}
	out, _ := Structural(StructuralOptions{TargetRatio: 10}).Compress(log, h)
	for _, k := range []string{"test_skill_eval_scenario[a]", "test_skill_eval_scenario[b]", "in 606.73s (0:10:06)"} {
		if !strings.Contains(out, k) {
			t.Errorf("at 10x lost %q:\n%s", k, out)
		}
	}
}

// TestFailedLineCutKeepsExceptionType: when pytest's FAILED lines must be
// cut to fit, the first line of each exception type keeps the type its
// reason names (the cut reaching past it), the others their id alone. At
// 10x: at 4x critical lines may take critTimes the aim, the whole output.
func TestFailedLineCutKeepsExceptionType(t *testing.T) {
	var b strings.Builder
	b.WriteString("============================= test session starts ==============================\n")
	for i := range 40 {
		fmt.Fprintf(&b, "tests/unit/test_git_service.py::test_landing_%02d FAILED\n", i)
	}
	b.WriteString("=========================== short test summary info ============================\n")
	types := []string{"AssertionError", "wakil.app.git_service.GitServiceError", "AttributeError", "KeyError"}
	for i := range 40 {
		fmt.Fprintf(&b, "FAILED tests/unit/test_git_service.py::test_landing_%02d - %s: %s\n", i, types[i%len(types)], strings.Repeat("the reason of this failure, at length ", 4))
	}
	b.WriteString("40 failed, 624 passed in 38.22s\n")
	text := b.String()
	h := bash("uv run pytest -q")
	out, _ := Structural(StructuralOptions{TargetRatio: 10}).Compress(text, h)
	for i := range 40 {
		want := fmt.Sprintf("test_landing_%02d - %s[… ", i, types[i%len(types)])
		if i >= len(types) {
			want = fmt.Sprintf("test_landing_%02d[… ", i) // the type told once is not repeated
		}
		if !strings.Contains(out, want) {
			t.Errorf("lost %q", want)
		}
	}
	if strings.Contains(out, "at length the reason") {
		t.Errorf("the reasons were not cut:\n%s", out)
	}
	for _, c := range []struct {
		r    string
		want int
	}{
		{"AssertionError: assert 1 == 2", len("AssertionError")},
		{"wakil.mcp.tools.ToolError: Could not read", len("wakil.mcp.tools.ToolError")},
		{"KeyError", len("KeyError")},
		{"assert 1 == 0", 0},
		{"Failed: note-revision failed", 0},
		{"AssertionError assert", 0},
		{"errors.x: y", 0},
		{"", 0},
	} {
		if got := leadingExceptionEnd(c.r); got != c.want {
			t.Errorf("leadingExceptionEnd(%q) = %d, want %d", c.r, got, c.want)
		}
	}
}

// TestOtherRunnersSummaries: the run summaries of cargo nextest,
// Playwright, dotnet test, Gradle, Maven's Surefire, XCTest, TAP and the
// type checkers are summaries; a Surefire line of one passing class, a
// TAP row and a plan's "8 pending" are not run outcomes of that kind.
func TestOtherRunnersSummaries(t *testing.T) {
	checkLineCases(t, "isSummaryLine", isSummaryLine, []lineCase{
		{"     Summary [   0.123s] 12 tests run: 11 passed, 1 failed, 0 skipped", true},
		{"  1 failed", true}, {"  2 flaky", true}, {"  3 did not run", true}, {"  80 passed (1.9m)", true},
		{"Failed!  - Failed:     1, Passed:    12, Skipped:     0, Total:    13, Duration: 2 s - App.Tests.dll (net8.0)", true},
		{"Passed!  - Failed:     0, Passed:    12, Skipped:     0, Total:    12, Duration: 2 s - App.Tests.dll (net8.0)", true},
		{"BUILD FAILED in 3s", true}, {"BUILD SUCCESSFUL in 5s", true}, {"12 tests completed, 1 failed", true},
		{"Tests run: 120, Failures: 1, Errors: 0, Skipped: 2", true},
		{"[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.2 s <<< FAILURE! - in com.acme.CartTest", true},
		{"[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s - in com.acme.CartTest", false},
		{"Executed 12 tests, with 1 failure (0 unexpected) in 0.512 (0.603) seconds", true},
		{"# fail 1", true}, {"# pass 12", true}, {"# tests are flaky", false},
		{"Found 3 errors in 2 files.", true}, {"Found 1 error.", true}, {"Found 12 files", false},
		{"Found 1 warning and 2 errors.", true}, {"Found 0 warnings and 0 errors.", true},
		{"Found 2 warnings and 3 files", false}, {"Found 2 warnings", false}, {"Found 1 warning and errors", false},
		{"ok 12 - adds two numbers", false}, {"ok  \tgithub.com/a/b\t0.12s", true},
		{"BUILDING the docs", false}, {"Passed! Great work", false},
		// Forms read in round 27's captured logs: vstest at normal
		// verbosity, MSBuild, Maven's verdict, XCTest's suites,
		// swift-testing's run (its macOS mark is an SF Symbol).
		{"Test Run Failed.", true}, {"Test Run Successful.", true}, {"Test Run Failed for the third time", false},
		{"Total tests: 6", true}, {"     Passed: 4", true}, {"     Failed: 2", true}, {"    Skipped: 0", true},
		{"Failed: see the log", false}, {"Total tests: many", false},
		{"Build FAILED.", true}, {"Build succeeded.", true}, {"    0 Warning(s)", true}, {"    2 Error(s)", true},
		{"Build failed with 2 error(s) in 3.1s", true}, {"Build the project first", false},
		{"[INFO] BUILD FAILURE", true}, {"[INFO] BUILD SUCCESS", true}, {"[INFO] BUILD FAILURES ahead", false},
		{"Test Suite 'All tests' failed at 2016-09-24 01:12:21.207.", true}, {"Test Suite 'AppUITests' failed at 2016-09-24 01:12:21.204.", true},
		{"Test Suite 'All tests' passed at 2024-01-01 10:00:00.051.", true}, {"Test Suite 'AppTests' passed at 2024-01-01 10:00:00.051.", false},
		{"Test Suite 'All tests' started at 2024-01-01 10:00:00.000.", false},
		{"✘ Test run with 4 tests failed after 1.200 seconds with 3 issues.", true},
		{"✔ Test run with 2 tests passed after 0.001 seconds.", true},
		{"􀢄  Test run with 351 tests failed after 3.912 seconds with 6 issues.", true},
		{"✘ Test sums() failed after 0.001 seconds with 1 issue.", false},
		{"✘ Suite AnalyzeErrorTests failed after 1.199 seconds with 3 issues.", true},
		{"􀢄  Suite \"Runner.Plan Tests\" failed after 2.863 seconds with 1 issue.", true},
		{"✔ Suite CartTests passed after 0.2 seconds.", false},
		// dotnet test's terminal logger (.NET 9), Dart's test runner and
		// the Dart and Flutter analyzers.
		{"Test summary: total: 58, failed: 1, succeeded: 57, skipped: 0, duration: 2.1s", true},
		{"00:05 +10 -1: Some tests failed.", true}, {"00:02 +3: All tests passed!", true}, {"00:00 +0: No tests ran.", true},
		{"00:05 +10 ~2 -1: Some tests failed.", true}, {"00:05 +10: test/cart_test.dart: Cart totals", false},
		{"12:00:01 Some tests failed.", false},
		{"3 issues found. (ran in 1.2s)", true}, {"1 issue found.", true}, {"No issues found! (ran in 0.9s)", true},
		{"No issues here", false},
	})
}

// TestXCTestAndSwiftTestingFailures: a failed XCTest case (macOS and
// Linux forms), a failed swift-testing test (its plain and its SF Symbol
// mark) and a failed Dart test ("[E]") are failing tests; their passes
// and a run's verdict are not.
func TestXCTestAndSwiftTestingFailures(t *testing.T) {
	checkLineCases(t, "isFailingTest", isFailingTest, []lineCase{
		{"Test Case '-[AppUITests.AppUITests testExample]' failed (46.773 seconds).", true},
		{"Test Case 'CaptureGroupTests.testForceFailure' failed (0.001 seconds)", true},
		{"Test Case '-[AppTests.CartTests testSums]' passed (0.002 seconds).", false},
		{"Test Case '-[AppTests.CartTests testSums]' started.", false},
		{"✘ Test testFailTrueIsFalse() failed after 0.001 seconds with 1 issue.", true},
		{"􀢄  Test \"Selected tests by ID\" failed after 0.002 seconds with 1 issue.", true},
		{"✘ Test run with 2 tests failed after 0.001 seconds with 1 issue.", false},
		{"✔ Test testTrueIsTrue() passed after 0.001 seconds.", false},
		{"The tests failed (see above)", false},
		{"00:03 +4 -1: test/cart_test.dart: Cart totals [E]", true},
		{"00:03 +4: test/cart_test.dart: Cart totals", false},
		{"12:00:03 retry [E]", false},
	})
	checkLineCases(t, "isPassingTest", isPassingTest, []lineCase{
		{"00:03 +4: test/cart_test.dart: Cart sums", true},
		{"00:00 +0: loading test/cart_test.dart", true},
		{"00:05 +184 -9: test/badge_test.dart: shows primary colour", true},
		{"00:03 +4 -1: test/cart_test.dart: Cart totals [E]", false},
		{"00:05 +185 -9: Some tests failed.", false},
		{"12:00:03 +4: job started", false},
	})
}

// TestLabelledCountSummaries: a wrapper or plugin prints the run's counts
// after a label of its own, and rspec's singular "1 example"; both are the
// run's summary. A hit or a path before the counts is not a label.
func TestLabelledCountSummaries(t *testing.T) {
	checkLineCases(t, "isSummaryLine", isSummaryLine, []lineCase{
		{"Results: 3 passed, 1 failed in 2.3s", true},
		{"pytest: 3 failed in 0.2s", true},
		{"✓ 12 passed, 0 failed in 1.2s", true},
		{"Summary: 1 errors, 0 failed, 10 passed in 3.1s", true},
		{"1 example, 0 failures, 1 pending", true},
		{"Finished: 1 example, 1 failure", true},
		{"src/x.py:12: 3 passed in 0.5s", false},
		{"Results: 3 apples in 2s", false},
		{"This sentence is long enough that its 3 passed in 2s sits too far", false},
		{"Your code has been rated at 5.00/10 (previous run: 6.00/10, -1.00)", true},
		{"Checked 42 files in 12ms. No fixes applied.", true},
		{"Checked the docs in a hurry", false},
	})
}

// TestMinitestRun: minitest (rake test) names a failing test on the line
// after its numbered header ("  2) Failure:" then "CartTest#test_total
// [test/cart_test.rb:12]:"), ends with its counts ("283 runs, 617
// assertions, 2 failures, 3 errors, 0 skips"), and rake reports the
// failure ("rake aborted!", "Command failed with status (1)"): all kept.
func TestMinitestRun(t *testing.T) {
	var b strings.Builder
	b.WriteString("Run options: --seed 4242\n\n# Running:\n\n")
	for i := range 60 {
		fmt.Fprintf(&b, "D, [2026-02-19T12:59:%02d.684965 #2754604] DEBUG -- :   (0.0ms)  PRAGMA foreign_keys = %d\n", i%60, i%2)
	}
	b.WriteString("..........F....E.....\n\nFinished in 1.468342s, 127.3545 runs/s, 262.2004 assertions/s.\n\n" +
		"  1) Failure:\nCartTest#test_total_with_discount [test/models/cart_test.rb:42]:\nExpected: 27\n  Actual: 28\n\n" +
		"  2) Error:\nOrderTest#test_ships_paid_orders:\nNoMethodError: undefined method `ship!' for nil\n" +
		"    app/models/order.rb:31:in 'Order#ship'\n    test/models/order_test.rb:12:in 'OrderTest#test_ships_paid_orders'\n\n" +
		"187 runs, 385 assertions, 1 failures, 1 errors, 0 skips\nrake aborted!\nCommand failed with status (1)\n\nTasks: TOP => test\n(See full trace by running task with --trace)\n")
	keepsAt(t, "minitest", b.String(), bash("bundle exec rake test"),
		"CartTest#test_total_with_discount [test/models/cart_test.rb:42]:", "OrderTest#test_ships_paid_orders:",
		"187 runs, 385 assertions, 1 failures, 1 errors, 0 skips", "Command failed with status (1)")
	for l, want := range map[string]bool{
		"187 runs, 385 assertions, 1 failures, 1 errors, 0 skips": true,
		"Finished in 1.468342s, 127.3545 runs/s":                  false,
		"12 runs, a fast track":                                   false,
	} {
		if got := isSummaryLine(l); got != want {
			t.Errorf("isSummaryLine(%q) = %v, want %v", l, got, want)
		}
		checkGates(t, l)
	}
}

// TestBuildAndTestVerdicts: the verdicts of runs read in round 27's
// captured logs are kept at 4x and 10x among hundreds of lines of
// build noise: vstest's block at normal verbosity and MSBuild's, XCTest's
// failed cases, swift-testing's failed tests and suites, xcodebuild's
// "Testing failed:" reasons, Dart's failed tests and verdict, and what
// Gradle's "* What went wrong:" says, its "> " cause included.
func TestBuildAndTestVerdicts(t *testing.T) {
	noise := func(n int, f string) string {
		return formRep(n, func(i int) string { return fmt.Sprintf(f, i, i) })
	}
	keepsAt(t, "vstest normal verbosity",
		noise(120, "  Passed Acme.Tests.ParserTests.Parses_%03d [%d ms]")+
			"  Failed Acme.Tests.CartTests.Totals [12 ms]\n  Error Message:\n   Expected total to be 3, but found 4.\n"+
			noise(60, "  Passed Acme.Tests.LexerTests.Lexes_%03d [%d ms]")+
			"Test Run Failed.\nTotal tests: 181\n     Passed: 180\n     Failed: 1\n Total time: 2.1 Seconds\n"+
			noise(40, "     1>Done Building Project \"/src/Acme.Module%02d.csproj\" (VSTest target(s)) -- %d.")+
			"Build FAILED.\n    0 Warning(s)\n    1 Error(s)\n",
		bash("dotnet test --verbosity normal"),
		"Test Run Failed.", "Total tests: 181", "     Failed: 1", "Build FAILED.", "    1 Error(s)")
	keepsAt(t, "xctest",
		noise(150, "Test Case '-[AcmeTests.CartTests testCase%03d]' passed (0.%03d seconds).")+
			"/Users/ci/acme/Tests/CartTests.swift:42: error: -[AcmeTests.CartTests testTotals] : XCTAssertEqual failed: (\"3\") is not equal to (\"4\")\n"+
			"Test Case '-[AcmeTests.CartTests testTotals]' failed (0.004 seconds).\n"+
			noise(150, "Test Case '-[AcmeTests.LexerTests testCase%03d]' passed (0.%03d seconds).")+
			"Test Suite 'All tests' failed at 2026-01-01 10:00:00.051.\n\t Executed 301 tests, with 1 failure (0 unexpected) in 0.512 (0.530) seconds\n",
		bash("swift test"),
		"Test Case '-[AcmeTests.CartTests testTotals]' failed (0.004 seconds).", "Test Suite 'All tests' failed at 2026-01-01 10:00:00.051.")
	keepsAt(t, "swift-testing",
		noise(200, "✔ Test parses%03d() passed after 0.%03d seconds.")+
			"✘ Test totals() recorded an issue at CartTests.swift:17:9: Expectation failed: (total → 4) == 3\n"+
			"✘ Test totals() failed after 0.001 seconds with 1 issue.\n✘ Suite CartTests failed after 0.002 seconds with 1 issue.\n"+
			"✘ Test run with 201 tests in 2 suites failed after 0.5 seconds with 1 issue.\n",
		bash("swift test"),
		"✘ Test totals() failed after 0.001 seconds with 1 issue.", "✘ Suite CartTests failed after", "✘ Test run with 201 tests")
	keepsAt(t, "xcodebuild testing failed",
		noise(120, "CompileSwift normal arm64 /Users/ci/acme/Sources/File%03d.swift (in target 'Acme' from project 'Acme') %d")+
			"Testing failed:\n\tTest target AcmeUITests encountered an error (Early unexpected exit, operation never finished bootstrapping - no restart will be attempted)\n\tAcmeTests.testTotals(): XCTAssertEqual failed: (\"3\") is not equal to (\"4\")\n\n** TEST FAILED **\n",
		bash("xcodebuild test -scheme Acme"),
		"Testing failed:", "\tTest target AcmeUITests encountered an error (Early unexpected exit", "\tAcmeTests.testTotals(): XCTAssertEqual failed", "** TEST FAILED **")
	keepsAt(t, "flutter test",
		noise(150, "00:%02d +%d: test/widgets/widget_test.dart: renders")+
			"00:09 +150 -1: test/cart_test.dart: Cart totals [E]\n  Expected: <3>\n    Actual: <4>\n\n"+
			"00:10 +150 -1: Some tests failed.\n",
		bash("flutter test"),
		"00:09 +150 -1: test/cart_test.dart: Cart totals [E]", "00:10 +150 -1: Some tests failed.")
	keepsAt(t, "gradle what went wrong",
		noise(150, "> Task :module%03d:compileKotlin UP-TO-DATE (%d)")+
			"\nFAILURE: Build failed with an exception.\n\n* What went wrong:\nExecution failed for task ':app:compileDebugKotlin'.\n> A failure occurred while executing org.jetbrains.kotlin.compilerRunner.GradleCompilerRunnerWithWorkers$GradleKotlinCompilerWorkAction\n   > Compilation error. See log for more details\n\n* Try:\n> Run with --stacktrace option to get the stack trace.\n\nBUILD FAILED in 12s\n",
		bash("./gradlew assembleDebug"),
		"Execution failed for task ':app:compileDebugKotlin'.", "   > Compilation error. See log for more details", "BUILD FAILED in 12s")
}

// TestVitestListedFailuresOnce: vitest names each failing test twice, in
// the list under its file ("× rejects … 7ms") and in its "Failed Tests"
// section with the file and suites ("FAIL  src/… > … > rejects …"). The
// section's lines are kept and the list's go first, counted in the marker,
// so at 4x the bytes are not spent on the same names twice. A real run
// (Codex CLI on ivanma9/ship, tuning set).
func TestVitestListedFailuresOnce(t *testing.T) {
	out := keepsLinesAt(t, "codex-cli-shipshape__019ce3fb-1087-7980-8f92-8d0171aaea6a#call_M9CQf97fj9Jfey05lx4qJm2B", 4,
		" FAIL  src/routes/documents.coverage.test.ts > Documents API coverage branches > rejects PATCH requests with no fields to update",
		" FAIL  src/routes/documents.coverage.test.ts > Documents API coverage branches > assigns the next ticket number when converting a creator-owned wiki to an issue",
		"error: VALUES lists must all be the same length",
		"      Tests  6 failed (6)",
	)
	if strings.Contains(out, "× rejects PATCH requests") || !strings.Contains(out, "6 failing tests named again below") {
		t.Errorf("the list under the file kept, or not counted:\n%s", out)
	}
	// A failure the section does not name keeps its line.
	log := " ❯ src/a.test.ts (2 tests | 2 failed) 20ms\n   × sums 1.20s\n   × rounds 9ms\n\n FAIL  src/a.test.ts > cart > sums\nAssertionError: expected 2 to be 3\n"
	p := newPlan(log, KindTestLog, StructuralOptions{TargetBytes: 1 << 20})
	classifyDiagnostic(p, KindTestLog)
	for i := 0; i < p.n; i++ {
		l := p.line(i)
		if strings.Contains(l, "× rounds") && p.cls[i].tier != tierCritical {
			t.Errorf("%q lowered: no section line names it", l)
		}
		if strings.Contains(l, "× sums") && p.cls[i].tier == tierCritical {
			t.Errorf("%q kept critical though the section names it", l)
		}
	}
}

// TestEndsWithDuration: the run times jest and vitest end a test's line
// with, and lines that end in a number of something else.
func TestEndsWithDuration(t *testing.T) {
	for _, c := range []struct {
		t    string
		want bool
	}{
		{"× sums 7ms", true}, {"✕ sums (12 ms)", true}, {"✕ sums (3.1 s)", true},
		{"× sums 1.20s", true}, // vitest past a second
		{"× sums 12s", false}, {"× 3 items", false}, {"× ms", false}, {"× sums .5s", false},
	} {
		if got := endsWithDuration(c.t); got != c.want {
			t.Errorf("endsWithDuration(%q) = %v, want %v", c.t, got, c.want)
		}
	}
}
