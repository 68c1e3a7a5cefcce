package compress

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The outputs below are written after the documented and commonly seen
// output of test runners, compilers and tools that the corpus lacks or has
// little of (issue 23: forms, not just fixes), each with passing noise
// around its failures. TestRunnerForms compresses each at 4x and 10x, bare
// and as other harnesses relay it, and asserts that every failing test,
// summary, error line and exception type the quality method finds in it is
// kept.

// formRunner is one runner's output and the command that made it.
type formRunner struct {
	name string
	cmd  string
	gen  func() string
}

// formRep joins n lines made by f.
func formRep(n int, f func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

var formRunners = []formRunner{
	{"cargo-test", "cargo test", func() string {
		return "   Compiling mycrate v0.1.0 (/home/u/mycrate)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 2.34s\n     Running unittests src/lib.rs (target/debug/deps/mycrate-1a2b3c4d5e6f7a8b)\n\nrunning 120 tests\n" +
			formRep(60, func(i int) string { return fmt.Sprintf("test parser::tests::parses_case_%03d ... ok", i) }) +
			"test parser::tests::parses_nested ... FAILED\n" +
			formRep(58, func(i int) string { return fmt.Sprintf("test lexer::tests::lexes_token_%03d ... ok", i) }) +
			"test lexer::tests::rejects_bad_escape ... FAILED\n\nfailures:\n\n---- parser::tests::parses_nested stdout ----\n\nthread 'parser::tests::parses_nested' panicked at src/parser.rs:142:9:\nassertion `left == right` failed\n  left: 3\n right: 4\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n---- lexer::tests::rejects_bad_escape stdout ----\n\nthread 'lexer::tests::rejects_bad_escape' panicked at src/lexer.rs:88:13:\ncalled `Result::unwrap()` on an `Err` value: InvalidEscape { pos: 4 }\n\n\nfailures:\n    lexer::tests::rejects_bad_escape\n    parser::tests::parses_nested\n\ntest result: FAILED. 118 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s\n\nerror: test failed, to rerun pass `--lib`\n"
	}},
	{"rustc", "cargo build", func() string {
		return formRep(40, func(i int) string { return fmt.Sprintf("   Compiling dep-crate-%02d v1.%d.0", i, i) }) +
			"   Compiling mycrate v0.1.0 (/home/u/mycrate)\nerror[E0308]: mismatched types\n  --> src/main.rs:12:18\n   |\n12 |     let x: u32 = \"hello\";\n   |            ---   ^^^^^^^ expected `u32`, found `&str`\n   |            |\n   |            expected due to this\n\n" +
			formRep(12, func(i int) string {
				return fmt.Sprintf("warning: unused variable: `y%d`\n  --> src/lib.rs:%d:9\n   |\n%d |     let y%d = 5;\n   |         ^ help: if this is intentional, prefix it with an underscore: `_y%d`\n", i, 30+i, 30+i, i, i)
			}) +
			"error[E0425]: cannot find value `conf` in this scope\n  --> src/config.rs:44:5\n   |\n44 |     conf.load()?;\n   |     ^^^^ not found in this scope\n\nSome errors have detailed explanations: E0308, E0425.\nFor more information about an error, try `rustc --explain E0308`.\nwarning: `mycrate` (bin \"mycrate\") generated 12 warnings\nerror: could not compile `mycrate` (bin \"mycrate\") due to 2 previous errors; 12 warnings emitted\n"
	}},
	{"rspec", "bundle exec rspec", func() string {
		return "Randomized with seed 12345\n" + strings.Repeat(".", 70) + "F" + strings.Repeat(".", 40) + "*\n" + strings.Repeat(".", 50) + "F\n\nPending: (Failures listed here are expected and do not affect your suite's status)\n\n  1) Order#ship sends email\n     # Not yet implemented\n     # ./spec/models/order_spec.rb:40\n\nFailures:\n\n  1) User#full_name returns the full name\n     Failure/Error: expect(user.full_name).to eq(\"John Smith\")\n\n       expected: \"John Smith\"\n            got: \"John  Smith\"\n\n       (compared using ==)\n     # ./spec/models/user_spec.rb:15:in `block (3 levels) in <top (required)>'\n\n  2) Api::V1::OrdersController GET #index returns orders\n     Failure/Error: expect(response).to have_http_status(:ok)\n       expected the response to have status code :ok (200) but it was :internal_server_error (500)\n     # ./spec/requests/orders_spec.rb:22:in `block (3 levels) in <top (required)>'\n\n" +
			formRep(40, func(i int) string {
				return fmt.Sprintf("DEPRECATION WARNING: Using legacy connection handling in ActiveRecord::Base (called from block in <main> at /app/config/initializers/db_%02d.rb:3)", i)
			}) +
			"\nFinished in 2.12345 seconds (files took 1.23 seconds to load)\n163 examples, 2 failures, 1 pending\n\nFailed examples:\n\nrspec ./spec/models/user_spec.rb:14 # User#full_name returns the full name\nrspec ./spec/requests/orders_spec.rb:20 # Api::V1::OrdersController GET #index returns orders\n\nRandomized with seed 12345\n"
	}},
	{"phpunit", "vendor/bin/phpunit", func() string {
		return "PHPUnit 10.5.0 by Sebastian Bergmann and contributors.\n\nRuntime:       PHP 8.2.12\nConfiguration: /app/phpunit.xml\n\n" +
			formRep(6, func(i int) string {
				return strings.Repeat(".", 63) + fmt.Sprintf("  %3d / 400 ( %2d%%)", (i+1)*63, (i+1)*63*100/400)
			}) +
			"......F.....E.....                                              400 / 400 (100%)\n\nTime: 00:02.123, Memory: 30.00 MB\n\nThere was 1 error:\n\n1) Tests\\Feature\\InvoiceTest::test_pdf_export\nError: Call to undefined method App\\Models\\Invoice::toPdf()\n\n/app/tests/Feature/InvoiceTest.php:48\n\n--\n\nThere was 1 failure:\n\n1) Tests\\Unit\\CalculatorTest::testDivide\nFailed asserting that 2.5 is identical to 2.\n\n/app/tests/Unit/CalculatorTest.php:25\n\n" +
			formRep(40, func(i int) string {
				return fmt.Sprintf("PHP Deprecated:  Creation of dynamic property App\\Legacy\\Thing%02d::$cache is deprecated in /app/src/Legacy/Thing%02d.php on line %d", i, i, 10+i)
			}) +
			"\nERRORS!\nTests: 400, Assertions: 812, Errors: 1, Failures: 1.\n"
	}},
	{"dotnet", "dotnet test", func() string {
		return "  Determining projects to restore...\n  All projects are up-to-date for restore.\n" +
			formRep(30, func(i int) string {
				return fmt.Sprintf("  MyApp.Module%02d -> /src/MyApp.Module%02d/bin/Debug/net8.0/MyApp.Module%02d.dll", i, i, i)
			}) +
			"Test run for /src/MyApp.Tests/bin/Debug/net8.0/MyApp.Tests.dll (.NETCoreApp,Version=v8.0)\nMicrosoft (R) Test Execution Command Line Tool Version 17.8.0 (x64)\nCopyright (c) Microsoft Corporation.  All rights reserved.\n\nStarting test execution, please wait...\nA total of 1 test files matched the specified pattern.\n" +
			formRep(30, func(i int) string {
				return fmt.Sprintf("  Passed MyApp.Tests.ParserTests.Parses_Case_%02d [%d ms]", i, i%7+1)
			}) +
			"  Failed MyApp.Tests.CalculatorTests.Divide_ByZero_Throws [12 ms]\n  Error Message:\n   Assert.Throws() Failure: No exception was thrown\n   Expected: typeof(System.DivideByZeroException)\n  Stack Trace:\n     at MyApp.Tests.CalculatorTests.Divide_ByZero_Throws() in /src/MyApp.Tests/CalculatorTests.cs:line 42\n   at System.RuntimeMethodHandle.InvokeMethod(Object target, Void** arguments, Signature sig, Boolean isConstructor)\n" +
			formRep(27, func(i int) string {
				return fmt.Sprintf("  Passed MyApp.Tests.LexerTests.Lexes_Token_%02d [%d ms]", i, i%5+1)
			}) +
			"\nFailed!  - Failed:     1, Passed:    57, Skipped:     0, Total:    58, Duration: 245 ms - MyApp.Tests.dll (net8.0)\n"
	}},
	{"gradle", "./gradlew test", func() string {
		return formRep(40, func(i int) string { return fmt.Sprintf("> Task :module%02d:compileJava UP-TO-DATE", i) }) +
			"> Task :app:test\n\nCalculatorTest > testDivide() FAILED\n    org.opentest4j.AssertionFailedError: expected: <2> but was: <3>\n        at app//org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)\n        at app//org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:150)\n        at app//com.example.CalculatorTest.testDivide(CalculatorTest.java:25)\n\nOrderServiceTest > placesOrder() FAILED\n    java.lang.NullPointerException: Cannot invoke \"com.example.Repo.save(Object)\" because \"this.repo\" is null\n        at app//com.example.OrderService.place(OrderService.java:31)\n        at app//com.example.OrderServiceTest.placesOrder(OrderServiceTest.java:19)\n\n142 tests completed, 2 failed\n\n> Task :app:test FAILED\n\nFAILURE: Build failed with an exception.\n\n* What went wrong:\nExecution failed for task ':app:test'.\n> There were failing tests. See the report at: file:///app/build/reports/tests/test/index.html\n\n* Try:\n> Run with --scan to get full insights.\n\nBUILD FAILED in 5s\n44 actionable tasks: 2 executed, 42 up-to-date\n"
	}},
	{"maven", "mvn test", func() string {
		return "[INFO] Scanning for projects...\n" + formRep(40, func(i int) string {
			return fmt.Sprintf("[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/lib%02d/lib/1.%d/lib-1.%d.jar (12 kB at 300 kB/s)", i, i, i)
		}) +
			"[INFO] -------------------------------------------------------\n[INFO]  T E S T S\n[INFO] -------------------------------------------------------\n[INFO] Running com.example.AppTest\n[ERROR] Tests run: 5, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! -- in com.example.AppTest\n[ERROR] com.example.AppTest.testAdd -- Time elapsed: 0.01 s <<< FAILURE!\norg.opentest4j.AssertionFailedError: expected: <5> but was: <4>\n\tat org.junit.jupiter.api.AssertionUtils.fail(AssertionUtils.java:55)\n\tat com.example.AppTest.testAdd(AppTest.java:18)\n\n" +
			formRep(20, func(i int) string {
				return fmt.Sprintf("[INFO] Running com.example.Module%02dTest\n[INFO] Tests run: %d, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.0%d s -- in com.example.Module%02dTest", i, i+3, i%9, i)
			}) +
			"[INFO] \n[INFO] Results:\n[INFO] \n[ERROR] Failures: \n[ERROR]   AppTest.testAdd:18 expected: <5> but was: <4>\n[INFO] \n[ERROR] Tests run: 275, Failures: 1, Errors: 0, Skipped: 0\n[INFO] \n[INFO] ------------------------------------------------------------------------\n[INFO] BUILD FAILURE\n[INFO] ------------------------------------------------------------------------\n[INFO] Total time:  4.123 s\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.2:test (default-test) on project app: There are test failures.\n[ERROR] -> [Help 1]\n"
	}},
	{"jest", "npx jest", func() string {
		return formRep(30, func(i int) string { return fmt.Sprintf(" PASS  src/components/Widget%02d.test.tsx", i) }) +
			" FAIL  src/utils/format.test.ts\n  ● formatDate › handles invalid input\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: \"Invalid\"\n    Received: \"NaN-NaN-NaN\"\n\n      12 |   it('handles invalid input', () => {\n    > 13 |     expect(formatDate('x')).toBe('Invalid');\n         |                             ^\n      14 |   });\n\n      at Object.<anonymous> (src/utils/format.test.ts:13:29)\n\n  ● formatDate › pads months\n\n    TypeError: Cannot read properties of undefined (reading 'padStart')\n\n      20 |   const m = parts[1].padStart(2, '0');\n\n      at padMonth (src/utils/format.ts:20:22)\n      at Object.<anonymous> (src/utils/format.test.ts:18:5)\n\n" +
			formRep(30, func(i int) string { return fmt.Sprintf(" PASS  src/hooks/useThing%02d.test.ts", i) }) +
			"\nTest Suites: 1 failed, 60 passed, 61 total\nTests:       2 failed, 498 passed, 500 total\nSnapshots:   0 total\nTime:        13.456 s\nRan all test suites.\n"
	}},
	{"vitest", "npx vitest run", func() string {
		return formRep(50, func(i int) string {
			return fmt.Sprintf(" ✓ src/lib/module%02d.test.ts (%d tests) %dms", i, i%9+1, i*3+2)
		}) +
			" ❯ src/lib/sum.test.ts (3 tests | 1 failed) 20ms\n   × sum > computes sum 5ms\n     → expected 3 to be 4 // Object.is equality\n\n⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯\n\n FAIL  src/lib/sum.test.ts > sum > computes sum\nAssertionError: expected 3 to be 4 // Object.is equality\n\n- Expected\n+ Received\n\n- 4\n+ 3\n\n ❯ src/lib/sum.test.ts:10:17\n      8|   it('computes sum', () => {\n      9|     const r = sum(1, 2)\n     10|     expect(r).toBe(4)\n       |                 ^\n     11|   })\n\n⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯\n\n Test Files  1 failed | 50 passed (51)\n      Tests  1 failed | 260 passed (261)\n   Start at  10:00:00\n   Duration  4.23s (transform 100ms, setup 0ms, collect 200ms, tests 50ms, environment 0ms, prepare 80ms)\n"
	}},
	{"mocha", "npx mocha", func() string {
		return "\n" + formRep(25, func(i int) string {
			return fmt.Sprintf("  Module%02d\n    ✔ handles case %d\n    ✔ handles case %d with options (%dms)", i, i, i+1, i+2)
		}) +
			"  Array\n    #indexOf()\n      ✔ should return -1 when the value is not present\n      1) should return the index when present\n\n\n  76 passing (125ms)\n  1 failing\n\n  1) Array\n       #indexOf()\n         should return the index when present:\n\n      AssertionError [ERR_ASSERTION]: -1 == 0\n      + expected - actual\n\n      --1\n      +0\n      \n      at Context.<anonymous> (test/array.test.js:12:14)\n      at process.processImmediate (node:internal/timers:476:21)\n\n\n"
	}},
	{"swift", "swift test", func() string {
		return "Building for debugging...\nBuild complete! (1.23s)\nTest Suite 'All tests' started at 2024-01-01 10:00:00.000.\nTest Suite 'MyPackageTests.xctest' started at 2024-01-01 10:00:00.001.\nTest Suite 'MyTests' started at 2024-01-01 10:00:00.001.\n" +
			formRep(30, func(i int) string {
				return fmt.Sprintf("Test Case '-[MyPackageTests.MyTests testCase%02d]' started.\nTest Case '-[MyPackageTests.MyTests testCase%02d]' passed (0.001 seconds).", i, i)
			}) +
			"Test Case '-[MyPackageTests.MyTests testDivide]' started.\n/Users/u/pkg/Tests/MyPackageTests/MyTests.swift:15: error: -[MyPackageTests.MyTests testDivide] : XCTAssertEqual failed: (\"2\") is not equal to (\"3\")\nTest Case '-[MyPackageTests.MyTests testDivide]' failed (0.002 seconds).\nTest Suite 'MyTests' failed at 2024-01-01 10:00:00.050.\n\t Executed 31 tests, with 1 failure (0 unexpected) in 0.045 (0.046) seconds\nTest Suite 'All tests' failed at 2024-01-01 10:00:00.051.\n\t Executed 31 tests, with 1 failure (0 unexpected) in 0.045 (0.047) seconds\n"
	}},
	{"gcc-make", "make", func() string {
		return formRep(40, func(i int) string {
			return fmt.Sprintf("gcc -O2 -Wall -Iinclude -c src/mod%02d.c -o build/mod%02d.o", i, i)
		}) +
			"src/main.c: In function 'main':\nsrc/main.c:12:5: error: 'x' undeclared (first use in this function)\n   12 |     x = 5;\n      |     ^\nsrc/main.c:12:5: note: each undeclared identifier is reported only once for each function it appears in\nsrc/util.c:30:10: warning: unused variable 'tmp' [-Wunused-variable]\n   30 |     int tmp;\n      |         ^~~\nmake: *** [Makefile:10: build/main.o] Error 1\n"
	}},
	{"ctest", "ctest --output-on-failure", func() string {
		return "Test project /build\n" + formRep(40, func(i int) string {
			return fmt.Sprintf("    Start %2d: test_case_%02d\n%2d/41 Test #%2d: test_case_%02d .......................   Passed    0.0%d sec", i+1, i, i+1, i+1, i, i%9)
		}) +
			"    Start 41: test_div\n41/41 Test #41: test_div .........................***Failed    0.01 sec\nAssertion failed: (div(4, 2) == 3), function main, file /src/tests/test_div.c, line 9.\n\n98% tests passed, 1 tests failed out of 41\n\nTotal Test time (real) =   0.45 sec\n\nThe following tests FAILED:\n\t 41 - test_div (Subprocess aborted)\nErrors while running CTest\n"
	}},
	{"playwright", "npx playwright test", func() string {
		return "Running 60 tests using 4 workers\n\n" + formRep(58, func(i int) string {
			return fmt.Sprintf("  ✓  %2d [chromium] › tests/page%02d.spec.ts:%d:7 › page %d › renders (%d.%ds)", i+1, i, 10+i, i, i%5+1, i%9)
		}) +
			"  ✘  59 [chromium] › tests/login.spec.ts:12:7 › login › shows error (5.2s)\n  ✘  60 [firefox] › tests/login.spec.ts:12:7 › login › shows error (5.4s)\n\n\n  1) [chromium] › tests/login.spec.ts:12:7 › login › shows error ──────────────────────\n\n    Error: Timed out 5000ms waiting for expect(locator).toBeVisible()\n\n    Locator: getByText('Invalid password')\n    Expected: visible\n    Received: <element(s) not found>\n\n      14 |   await page.click('button[type=submit]');\n    > 15 |   await expect(page.getByText('Invalid password')).toBeVisible();\n         |                                                    ^\n\n        at /app/tests/login.spec.ts:15:52\n\n  2 failed\n    [chromium] › tests/login.spec.ts:12:7 › login › shows error \n    [firefox] › tests/login.spec.ts:12:7 › login › shows error \n  58 passed (30.1s)\n"
	}},
	{"eslint", "npx eslint src", func() string {
		return formRep(25, func(i int) string {
			return fmt.Sprintf("\n/app/src/components/Widget%02d.tsx\n  %d:5  warning  Unexpected console statement  no-console\n  %d:1  warning  Missing return type on function  @typescript-eslint/explicit-module-boundary-types", i, 10+i, 20+i)
		}) + "\n/app/src/api/client.ts\n  12:7  error  'token' is assigned a value but never used  @typescript-eslint/no-unused-vars\n  40:3  error  Unexpected any. Specify a different type  @typescript-eslint/no-explicit-any\n\n✖ 52 problems (2 errors, 50 warnings)\n  0 errors and 25 warnings potentially fixable with the `--fix` option.\n"
	}},
	{"mypy", "mypy src", func() string {
		return formRep(40, func(i int) string {
			return fmt.Sprintf("src/pkg/mod%02d.py:%d: note: By default the bodies of untyped functions are not checked, consider using --check-untyped-defs  [annotation-unchecked]", i, 10+i)
		}) + "src/pkg/api.py:12: error: Incompatible types in assignment (expression has type \"str\", variable has type \"int\")  [assignment]\nsrc/pkg/db.py:88: error: Item \"None\" of \"Optional[Connection]\" has no attribute \"execute\"  [union-attr]\nFound 2 errors in 2 files (checked 41 source files)\n"
	}},
	{"pyright", "pyright", func() string {
		return formRep(40, func(i int) string {
			return fmt.Sprintf("/app/src/pkg/mod%02d.py\n  /app/src/pkg/mod%02d.py:%d:5 - warning: Import \"yaml\" could not be resolved from source (reportMissingModuleSource)", i, i, 3+i)
		}) + "/app/src/pkg/api.py\n  /app/src/pkg/api.py:12:9 - error: Argument of type \"str\" cannot be assigned to parameter \"n\" of type \"int\" in function \"go\" (reportArgumentType)\n2 errors, 40 warnings, 0 informations \n"
	}},
	{"node-crash", "node server.js", func() string {
		return formRep(50, func(i int) string {
			return fmt.Sprintf("[2024-01-01T10:00:%02d.000Z] INFO  request GET /api/items/%d 200 %dms", i%60, i, i%30+1)
		}) +
			"/app/src/server.js:42\n    const rows = result.rows.map(r => r.id);\n                             ^\n\nTypeError: Cannot read properties of undefined (reading 'map')\n    at handler (/app/src/server.js:42:30)\n    at Layer.handle [as handle_request] (/app/node_modules/express/lib/router/layer.js:95:5)\n    at next (/app/node_modules/express/lib/router/route.js:149:13)\n\nNode.js v20.10.0\n"
	}},
	{"java-exc", "java -jar app.jar", func() string {
		return formRep(50, func(i int) string {
			return fmt.Sprintf("2024-01-01 10:00:%02d.123  INFO 1234 --- [           main] com.example.Module%02d    : Started module %d in 0.%03d seconds", i%60, i, i, i*7)
		}) + "2024-01-01 10:01:00.000 ERROR 1234 --- [           main] o.s.boot.SpringApplication               : Application run failed\n\norg.springframework.beans.factory.BeanCreationException: Error creating bean with name 'dataSource': Failed to instantiate [javax.sql.DataSource]\n\tat org.springframework.beans.factory.support.ConstructorResolver.instantiate(ConstructorResolver.java:658)\n\tat com.example.App.main(App.java:10)\nCaused by: java.lang.IllegalStateException: Failed to determine a suitable driver class\n\tat org.springframework.boot.autoconfigure.jdbc.DataSourceProperties.determineDriverClassName(DataSourceProperties.java:186)\n\t... 20 common frames omitted\n"
	}},
	{"ruby-exc", "ruby app.rb", func() string {
		return formRep(50, func(i int) string {
			return fmt.Sprintf("I, [2024-01-01T10:00:%02d.000000 #1234]  INFO -- : Processing job %d", i%60, i)
		}) +
			"/app/lib/worker.rb:23:in `perform': undefined method `fetch' for nil:NilClass (NoMethodError)\n\tfrom /app/lib/runner.rb:10:in `block in run'\n\tfrom /app/lib/runner.rb:8:in `each'\n\tfrom app.rb:5:in `<main>'\n"
	}},
	{"go-test", "go test ./...", func() string {
		return formRep(40, func(i int) string { return fmt.Sprintf("ok  \tgithub.com/acme/app/internal/mod%02d\t0.%03ds", i, i*11) }) +
			"--- FAIL: TestParse (0.00s)\n    parse_test.go:42: got 3, want 4\n--- FAIL: TestParse/nested (0.00s)\n    parse_test.go:58: unexpected error: EOF\nFAIL\nFAIL\tgithub.com/acme/app/internal/parse\t0.012s\n" +
			formRep(10, func(i int) string { return fmt.Sprintf("?   \tgithub.com/acme/app/cmd/tool%02d\t[no test files]", i) }) + "FAIL\n"
	}},

	{"unittest", "python -m unittest -v", func() string {
		return formRep(60, func(i int) string {
			return fmt.Sprintf("test_case_%02d (tests.test_mod.ModTest.test_case_%02d) ... ok", i, i)
		}) +
			"test_div (tests.test_calc.CalcTest.test_div) ... ERROR\ntest_sum (tests.test_calc.CalcTest.test_sum) ... FAIL\n\n======================================================================\nERROR: test_div (tests.test_calc.CalcTest.test_div)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/app/tests/test_calc.py\", line 12, in test_div\n    self.assertEqual(div(1, 0), 0)\n  File \"/app/calc.py\", line 4, in div\n    return a / b\nZeroDivisionError: division by zero\n\n======================================================================\nFAIL: test_sum (tests.test_calc.CalcTest.test_sum)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/app/tests/test_calc.py\", line 8, in test_sum\n    self.assertEqual(sum_(1, 2), 4)\nAssertionError: 3 != 4\n\n----------------------------------------------------------------------\nRan 62 tests in 0.012s\n\nFAILED (failures=1, errors=1)\n"
	}},
	{"go-build", "go build ./...", func() string {
		return formRep(40, func(i int) string { return fmt.Sprintf("go: downloading github.com/lib%02d/pkg v1.%d.0", i, i) }) +
			"# github.com/acme/app/internal/store\ninternal/store/db.go:42:15: undefined: sql.OpenDBx\ninternal/store/db.go:58:2: declared and not used: rows\n# github.com/acme/app/cmd/server\ncmd/server/main.go:12:2: \"fmt\" imported and not used\n"
	}},
	{"tsc", "npx tsc --noEmit", func() string {
		return formRep(30, func(i int) string {
			return fmt.Sprintf("src/components/W%02d.tsx(%d,5): error TS2322: Type 'string' is not assignable to type 'number'.", i, 10+i)
		}) + "src/api/client.ts(40,3): error TS2339: Property 'foo' does not exist on type 'Client'.\n\nFound 31 errors in 31 files.\n\nErrors  Files\n" +
			formRep(31, func(i int) string { return fmt.Sprintf("     1  src/components/W%02d.tsx:%d", i, 10+i) })
	}},
	{"tsc-pretty", "npx tsc --noEmit --pretty", func() string {
		return formRep(15, func(i int) string {
			return fmt.Sprintf("src/components/W%02d.tsx:%d:5 - error TS2322: Type 'string' is not assignable to type 'number'.\n\n%d     const n: number = props.label;\n        ~~~~~~~~~\n", i, 10+i, 10+i)
		}) + "\nFound 15 errors in 15 files.\n"
	}},
	{"javac", "mvn compile", func() string {
		return formRep(40, func(i int) string {
			return fmt.Sprintf("[INFO] Downloading from central: https://repo.maven.apache.org/maven2/org/x%02d/x/1.0/x-1.0.pom", i)
		}) +
			"[INFO] --- compiler:3.11.0:compile (default-compile) @ app ---\n[INFO] Compiling 42 source files with javac [debug target 17] to target/classes\n[ERROR] COMPILATION ERROR : \n[INFO] -------------------------------------------------------------\n[ERROR] /app/src/main/java/com/example/OrderService.java:[31,17] cannot find symbol\n  symbol:   method saveAll(java.util.List<com.example.Order>)\n  location: variable repo of type com.example.Repo\n[INFO] 1 error\n[INFO] -------------------------------------------------------------\n[INFO] BUILD FAILURE\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile (default-compile) on project app: Compilation failure\n"
	}},
	{"kotlin", "./gradlew build", func() string {
		return formRep(40, func(i int) string { return fmt.Sprintf("> Task :lib%02d:compileKotlin UP-TO-DATE", i) }) +
			"> Task :app:compileKotlin FAILED\ne: file:///app/src/main/kotlin/com/example/App.kt:12:9 Unresolved reference: fooBar\ne: file:///app/src/main/kotlin/com/example/Repo.kt:30:20 Type mismatch: inferred type is String but Int was expected\n\nFAILURE: Build failed with an exception.\n\n* What went wrong:\nExecution failed for task ':app:compileKotlin'.\n> A failure occurred while executing org.jetbrains.kotlin.compilerRunner.GradleCompilerRunnerWithWorkers$GradleKotlinCompilerWorkAction\n   > Compilation error. See log for more details\n\nBUILD FAILED in 12s\n"
	}},
	{"terraform", "terraform plan", func() string {
		return formRep(50, func(i int) string {
			return fmt.Sprintf("module.vpc.aws_subnet.private[%d]: Refreshing state... [id=subnet-0a%05d]", i, i)
		}) +
			"╷\n│ Error: Unsupported argument\n│ \n│   on main.tf line 42, in resource \"aws_instance\" \"web\":\n│   42:   instance_typo = \"t3.micro\"\n│ \n│ An argument named \"instance_typo\" is not expected here.\n╵\n"
	}},
	{"docker-build", "docker build .", func() string {
		return formRep(40, func(i int) string {
			return fmt.Sprintf("#%d [%d/12] RUN step %d\n#%d DONE 0.%ds", i+5, i%12+1, i, i+5, i%9)
		}) +
			"#45 [11/12] RUN npm ci\n#45 12.34 npm ERR! code ERESOLVE\n#45 12.34 npm ERR! ERESOLVE unable to resolve dependency tree\n#45 ERROR: process \"/bin/sh -c npm ci\" did not complete successfully: exit code: 1\n------\n > [11/12] RUN npm ci:\n12.34 npm ERR! code ERESOLVE\n------\nDockerfile:14\n--------------------\n  12 |     COPY package*.json ./\n  13 |     \n  14 | >>> RUN npm ci\n--------------------\nERROR: failed to solve: process \"/bin/sh -c npm ci\" did not complete successfully: exit code: 1\n"
	}},
	{"pip", "pip install -r requirements.txt", func() string {
		return formRep(40, func(i int) string {
			return fmt.Sprintf("Collecting lib%02d==1.%d.0\n  Downloading lib%02d-1.%d.0-py3-none-any.whl (12 kB)", i, i, i, i)
		}) +
			"ERROR: Could not find a version that satisfies the requirement torch==9.9.9 (from versions: 2.0.0, 2.1.0)\nERROR: No matching distribution found for torch==9.9.9\n"
	}},
	{"npm-run", "npm run build", func() string {
		return "\n> app@1.0.0 build\n> vite build\n\n" + formRep(50, func(i int) string { return fmt.Sprintf("transforming (%d) src/components/W%02d.tsx", i*10, i) }) +
			"✓ 512 modules transformed.\nerror during build:\n[vite:esbuild] Transform failed with 1 error:\n/app/src/main.tsx:12:4: ERROR: Expected \";\" but found \"}\"\n    at failureErrorWithLog (/app/node_modules/esbuild/lib/main.js:1472:15)\nnpm ERR! Lifecycle script `build` failed with error:\nnpm ERR! Error: command failed\n"
	}},
	{"rubocop", "bundle exec rubocop", func() string {
		return "Inspecting 60 files\n" + strings.Repeat(".", 58) + "CW\n\nOffenses:\n\n" + formRep(20, func(i int) string {
			return fmt.Sprintf("app/models/m%02d.rb:%d:5: C: Style/StringLiterals: Prefer single-quoted strings when you don't need string interpolation or special symbols.", i, 3+i)
		}) + "app/models/user.rb:14:3: W: Lint/UselessAssignment: Useless assignment to variable - x.\n\n60 files inspected, 21 offenses detected, 20 offenses autocorrectable\n"
	}},
	{"shellcheck", "shellcheck scripts/*.sh", func() string {
		return formRep(15, func(i int) string {
			return fmt.Sprintf("\nIn scripts/s%02d.sh line %d:\necho $VAR%d\n     ^---^ SC2086 (info): Double quote to prevent globbing and word splitting.\n\nDid you mean:\necho \"$VAR%d\"", i, 3+i, i, i)
		}) + "\nFor more information:\n  https://www.shellcheck.net/wiki/SC2086 -- Double quote to prevent globbing ...\n"
	}},
	{"pytest-short", "pytest -q", func() string {
		return formRep(30, func(i int) string { return strings.Repeat(".", 70) + fmt.Sprintf(" [%3d%%]", (i+1)*3) }) +
			"..F" + strings.Repeat(".", 20) + "E [100%]\n=================================== FAILURES ===================================\n________________________________ test_parse ________________________________\n\n    def test_parse():\n>       assert parse('x') == 2\nE       AssertionError: assert 1 == 2\nE        +  where 1 = parse('x')\n\ntests/test_p.py:4: AssertionError\n==================================== ERRORS ====================================\n________________________ ERROR at setup of test_db _________________________\nfile /app/tests/test_db.py, line 7\n  def test_db(conn):\nE       fixture 'conn' not found\n/app/tests/test_db.py:7\n=========================== short test summary info ============================\nFAILED tests/test_p.py::test_parse - AssertionError: assert 1 == 2\nERROR tests/test_db.py::test_db\n1 failed, 2120 passed, 1 error in 12.34s\n"
	}},
	{"cargo-clippy", "cargo clippy", func() string {
		return formRep(30, func(i int) string { return fmt.Sprintf("    Checking dep%02d v0.%d.0", i, i) }) + formRep(10, func(i int) string {
			return fmt.Sprintf("warning: this `if` has identical blocks\n  --> src/m%02d.rs:%d:9\n   |\n%d |         if a { x } else { x }\n   |         ^^^^^^^^^^^^^^^^^^^^^\n   |\n   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#if_same_then_else\n", i, 10+i, 10+i)
		}) + "error: this comparison involving the minimum or maximum element for this type contains a case that is always true or always false\n  --> src/main.rs:5:8\n   |\n5  |     if x >= 0 {\n   |        ^^^^^^\n\nwarning: `app` (bin \"app\") generated 10 warnings\nerror: could not compile `app` (bin \"app\") due to 1 previous error; 10 warnings emitted\n"
	}},
	{"elixir-compile", "mix compile", func() string {
		return formRep(40, func(i int) string {
			return fmt.Sprintf("==> dep%02d\nCompiling %d files (.ex)\nGenerated dep%02d app", i, i+1, i)
		}) +
			"==> app\nCompiling 12 files (.ex)\n    error: undefined function fetch_user/1 (expected App.Accounts to define such a function or for it to be imported, but none are available)\n    │\n 42 │     user = fetch_user(id)\n    │            ^^^^^^^^^^\n    │\n    └─ lib/app/accounts.ex:42:12: App.Accounts.get/1\n\n\n== Compilation error in file lib/app/accounts.ex ==\n** (CompileError) lib/app/accounts.ex: cannot compile module App.Accounts (errors have been logged)\n"
	}},

	{"java-chain", "./gradlew bootRun", func() string {
		return formRep(80, func(i int) string {
			return fmt.Sprintf("2024-01-01 10:00:%02d.123  INFO 1234 --- [           main] com.example.Module%02d    : Started module %d in 0.%03d seconds", i%60, i, i, i*7)
		}) + "org.springframework.context.ApplicationContextException: Unable to start web server\n" +
			formRep(30, func(i int) string {
				return fmt.Sprintf("\tat org.springframework.boot.Frame%02d.run(Frame%02d.java:%d)", i, i, 100+i)
			}) +
			"Caused by: org.springframework.boot.web.server.WebServerException: Unable to start embedded Tomcat\n" +
			formRep(30, func(i int) string {
				return fmt.Sprintf("\tat org.apache.catalina.Frame%02d.start(Frame%02d.java:%d)", i, i, 200+i)
			}) +
			"Caused by: java.lang.IllegalStateException: StandardEngine[Tomcat].StandardHost[localhost] failed to start\n" +
			formRep(30, func(i int) string {
				return fmt.Sprintf("\tat org.apache.catalina.core.Frame%02d.init(Frame%02d.java:%d)", i, i, 300+i)
			}) +
			"Caused by: java.net.BindException: Address already in use\n" +
			formRep(20, func(i int) string {
				return fmt.Sprintf("\tat java.base/sun.nio.ch.Frame%02d.bind(Frame%02d.java:%d)", i, i, 400+i)
			}) +
			"\t... 42 common frames omitted\n"
	}},
	{"py-chain", "python manage.py migrate", func() string {
		return formRep(60, func(i int) string { return fmt.Sprintf("  Applying app%02d.0001_initial... OK", i) }) +
			"Traceback (most recent call last):\n" + formRep(15, func(i int) string {
			return fmt.Sprintf("  File \"/usr/lib/python3.11/site-packages/django/db/m%02d.py\", line %d, in execute\n    return self.cursor.execute(sql, params)", i, 80+i)
		}) + "psycopg2.errors.UndefinedTable: relation \"app_user\" does not exist\n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n" +
			formRep(15, func(i int) string {
				return fmt.Sprintf("  File \"/usr/lib/python3.11/site-packages/django/core/n%02d.py\", line %d, in handle\n    output = self.handle(*args, **options)", i, 90+i)
			}) + "django.db.utils.ProgrammingError: relation \"app_user\" does not exist\n"
	}},
	{"js-cause", "node scripts/sync.js", func() string {
		return formRep(60, func(i int) string { return fmt.Sprintf("[sync] fetched page %d of 100 (%d items)", i, 50+i) }) +
			"Error: sync failed\n    at sync (/app/scripts/sync.js:40:11)\n    at async main (/app/scripts/sync.js:60:3) {\n  [cause]: FetchError: request to https://api.example.com/items?page=61 failed, reason: getaddrinfo ENOTFOUND api.example.com\n      at ClientRequest.<anonymous> (/app/node_modules/node-fetch/lib/index.js:1505:11)\n      at ClientRequest.emit (node:events:517:28) {\n    type: 'system',\n    errno: 'ENOTFOUND',\n    code: 'ENOTFOUND'\n  }\n}\n"
	}},
	{"pytest-many", "pytest", func() string {
		var b strings.Builder
		b.WriteString("============================= test session starts ==============================\ncollected 400 items\n\n")
		b.WriteString(formRep(5, func(i int) string {
			return fmt.Sprintf("tests/test_m%02d.py %s [%3d%%]", i, strings.Repeat(".", 60), (i+1)*18)
		}))
		b.WriteString("\n=================================== FAILURES ===================================\n")
		types := []string{"KeyError", "ValueError", "TypeError", "AttributeError", "ZeroDivisionError", "IndexError", "RuntimeError", "AssertionError"}
		for i, ty := range types {
			fmt.Fprintf(&b, "_________________________________ test_case_%d _________________________________\n\n    def test_case_%d():\n", i, i)
			b.WriteString(formRep(12, func(k int) string { return fmt.Sprintf("        value_%d = compute_%d(input_%d)", k, k, k) }))
			fmt.Fprintf(&b, ">       result = run_step_%d(value_11)\n\ntests/test_m%02d.py:%d: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\n", i, i, 40+i)
			b.WriteString(formRep(8, func(k int) string { return fmt.Sprintf("    def run_step_%d(v):\n        helper_%d(v)", k, k) }))
			fmt.Fprintf(&b, "E       %s: bad input %d\n\nsrc/app/steps.py:%d: %s\n", ty, i, 100+i, ty)
		}
		b.WriteString("=========================== short test summary info ============================\n")
		for i, ty := range types {
			fmt.Fprintf(&b, "FAILED tests/test_m%02d.py::test_case_%d - %s: bad input %d\n", i, i, ty, i)
		}
		b.WriteString("======================== 8 failed, 392 passed in 12.34s ========================\n")
		return b.String()
	}},
}

// formKeyLine is what formWrappers colour: the lines that say what failed.
var formKeyLine = regexp.MustCompile(`(?m)^(.*(?:FAIL|Error|error|failed|passed|Failed|panicked|E  ).*)$`)

// formWrappers relay an output as harnesses and terminals do (`gh run
// view --log`'s job, step and time; journalctl's time, host and program;
// a Jenkins pipeline's timestamps; kubectl logs --prefix);
// unwrap is what the check reads of the compressed output.
var formWrappers = []struct {
	name   string
	wrap   func(string) string
	unwrap func(string) string
}{
	{"bare", func(s string) string { return s }, nil},
	{"ansi", func(s string) string { return formKeyLine.ReplaceAllString(s, "\x1b[31m\x1b[1m$1\x1b[0m") }, stripANSI},
	{"crlf", func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }, func(s string) string { return strings.ReplaceAll(s, "\r", "") }},
	{"compose", prefixLines("app-1  | "), func(s string) string { return strings.ReplaceAll(s, "app-1  | ", "") }},
	{"workspace", prefixLines("@acme/core test: "), func(s string) string { return strings.ReplaceAll(s, "@acme/core test: ", "") }},
	{"ci", prefixLines("2024-05-01T10:00:00.1234567Z "), func(s string) string { return strings.ReplaceAll(s, "2024-05-01T10:00:00.1234567Z ", "") }},
	{"gh", prefixLines("test (ubuntu-latest)\tRun tests\t2024-05-01T10:00:00.1234567Z "), func(s string) string {
		return strings.ReplaceAll(s, "test (ubuntu-latest)\tRun tests\t2024-05-01T10:00:00.1234567Z ", "")
	}},
	{"journal", prefixLines("Nov 28 10:00:00 build-host runner[4242]: "), func(s string) string {
		return strings.ReplaceAll(s, "Nov 28 10:00:00 build-host runner[4242]: ", "")
	}},
	{"jenkins", prefixLines("[2024-05-01T10:00:00.123Z] "), func(s string) string { return strings.ReplaceAll(s, "[2024-05-01T10:00:00.123Z] ", "") }},
	{"kubectl", prefixLines("[pod/web-1/app] "), func(s string) string { return strings.ReplaceAll(s, "[pod/web-1/app] ", "") }},
	{"heroku", prefixLines("2024-05-01T10:00:00.123456+00:00 app[web.1]: "), func(s string) string {
		return strings.ReplaceAll(s, "2024-05-01T10:00:00.123456+00:00 app[web.1]: ", "")
	}},
	{"clock", prefixLines("10:00:00 "), func(s string) string { return strings.ReplaceAll(s, "10:00:00 ", "") }},
	{"clock-bracket", prefixLines("[10:00:00] "), func(s string) string { return strings.ReplaceAll(s, "[10:00:00] ", "") }},
	{"mini-swe-agent", func(s string) string { return "<returncode>1</returncode>\n<output>\n" + s + "</output>" }, nil},
	{"codex", func(s string) string {
		return "Chunk ID: 3f2a\nWall time: 2.1 seconds\nProcess exited with code 1\nOriginal token count: 4000\nOutput:\n" + s
	}, nil},
	{"json", func(s string) string {
		b, _ := json.Marshal(map[string]any{"stdout": s, "stderr": "", "exit_code": 1})
		return string(b)
	}, func(s string) string {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return s
		}
		out, _ := m["stdout"].(string)
		return out
	}},
}

func prefixLines(p string) func(string) string {
	return func(s string) string {
		lines := strings.Split(s, "\n")
		for i := range lines {
			lines[i] = p + lines[i]
		}
		return strings.Join(lines, "\n")
	}
}

func TestRunnerForms(t *testing.T) {
	for _, r := range formRunners {
		base := r.gen()
		h := bash(r.cmd)
		var crit []fact
		for _, f := range extractFacts(base, Detect(base, h)) {
			switch f.class {
			case factT, factS, factE, factX:
				crit = append(crit, f)
			}
		}
		for _, w := range formWrappers {
			text := w.wrap(base)
			for _, ratio := range []float64{4, 10} {
				s := Structural(StructuralOptions{TargetRatio: ratio})
				out, _ := s.Compress(text, h)
				if w.unwrap != nil {
					out = w.unwrap(out)
				}
				m := newMatcher(out, len(crit))
				for _, f := range crit {
					if !m.survives(f) {
						t.Errorf("%s, %s, %gx: lost %s %q", r.name, w.name, ratio, f.class, f.text)
					}
				}
				if w.name == "bare" {
					if err := checkGuards(s, text, h); err != nil {
						t.Errorf("%s %gx: %v", r.name, ratio, err)
					}
				}
			}
		}
	}
}
