package compress

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// kindCase is one real sample: what Detect must say, what the compressed
// output must still contain, which markers it must carry, and how small it
// must get.
type kindCase struct {
	name     string
	file     string // in testdata/, or "" when text is set
	text     string
	hint     Hint
	target   int // TargetBytes; 0 means the default
	kind     Kind
	keep     []string // substrings that must survive
	markers  []string // regular expressions some output line must match
	maxRatio float64  // out/in must be at most this
}

func bash(cmd string) Hint {
	return Hint{ToolName: "Bash", Args: fmt.Sprintf(`{"command":%q}`, cmd)}
}

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goTestText turns a `go test -json` stream into what `go test -v` prints:
// the Output fields in order.
func goTestText(jsonl string) string {
	var b strings.Builder
	for _, l := range strings.Split(jsonl, "\n") {
		if gjson.Get(l, "Action").String() == "output" {
			b.WriteString(gjson.Get(l, "Output").String())
		}
	}
	return b.String()
}

// synthLog is a deterministic service log: periodic INFO lines, a burst of
// 313 identical retry lines, warnings and two distinct errors.
func synthLog(lines int) string {
	var b strings.Builder
	for i := 0; i < lines; i++ {
		ts := fmt.Sprintf("2026-03-%02d 10:%02d:%02d.%03d", 1+i/86400%28, i/60%60, i%60, i%1000)
		switch {
		case i == lines/3:
			for k := 0; k < 313; k++ {
				b.WriteString("2026-03-01 10:00:00.000 INFO  [pool] retrying connection to db-primary:5432\n")
			}
		case i%997 == 500:
			fmt.Fprintf(&b, "%s WARN  [cache] eviction took %dms (budget 50ms)\n", ts, 50+i%40)
		case i == lines/2:
			fmt.Fprintf(&b, "%s ERROR [orders] order 8812 failed: payment gateway timeout after 30s\n", ts)
			b.WriteString("java.net.SocketTimeoutException: Read timed out\n")
			b.WriteString("\tat java.base/java.net.SocketInputStream.read(SocketInputStream.java:168)\n")
			b.WriteString("\tat com.example.pay.Gateway.charge(Gateway.java:212)\n")
		case i == lines-40:
			fmt.Fprintf(&b, "%s ERROR [orders] reconciliation aborted: 3 orders left unpaid\n", ts)
		default:
			fmt.Fprintf(&b, "%s INFO  [http] GET /api/orders/%d 200 %dms\n", ts, 1000+i, 3+i%17)
		}
	}
	return b.String()
}

func kindCases(t testing.TB) []kindCase {
	return []kindCase{
		{
			name: "pytest collection error", file: "pytest_collection_error.log",
			hint: bash("pytest -rA tests/unittest_pyreverse_writer.py"), target: 2048, kind: KindTestLog,
			keep: []string{
				"E   ImportError: cannot import name 'get_annotation' from 'pylint.pyreverse.utils' (/testbed/pylint/pyreverse/utils.py)",
				"ERROR tests/unittest_pyreverse_writer.py",
				"========================= 1 warning, 1 error in 0.09s ==========================",
				"tests/unittest_pyreverse_writer.py:32: in <module>",
				"!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!", // a summary
			},
			markers:  []string{`^\[… \d+ lines omitted: shell trace …\]$`},
			maxRatio: 0.15,
		},
		{
			name: "pytest failures", file: "pytest_failures.log",
			hint: bash("pytest -rA lib/matplotlib/tests/test_figure.py"), kind: KindTestLog,
			keep: []string{
				"FAILED lib/matplotlib/tests/test_figure.py::test_subfigures_wspace_hspace",
				"= 7 failed, 131 passed, 7 skipped in 19.35s =",
			},
			markers:  []string{`passing tests`},
			maxRatio: 0.25,
		},
		{
			name: "pytest with 200+ errors", file: "pytest_many_errors.log",
			hint: bash("pytest -rA tests/test_requests.py"), kind: KindTestLog,
			keep: []string{
				"ERROR tests/test_requests.py::TestRequests::test_no_content_length[GET]",
				"ERROR tests/test_requests.py::TestRequests::test_params_are_merged_case_sensitive",
				"E       recursive dependency involving fixture 'httpbin' detected",
				"E       ModuleNotFoundError: No module named 'trustme'",
			},
			markers:  []string{`repeated errors`},
			maxRatio: 0.1,
		},
		{
			name: "django unittest errors", file: "django_errors.log",
			hint: bash("./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 expressions.tests"), kind: KindTestLog,
			keep: []string{
				"ERROR: test_expressions_in_lookups_join_choice (expressions.tests.IterableLookupInnerExpressionsTests)",
				"TypeError: 'CombinedExpression' object is not iterable",
				"Ran 149 tests in 0.348s",
				"FAILED (errors=5, skipped=2)",
				`File "/testbed/django/db/models/sql/query.py", line 1082, in resolve_lookup_value`,
			},
			markers:  []string{`passing tests`},
			maxRatio: 0.3,
		},
		{
			name: "sympy bin/test", file: "sympy_failures.log",
			hint:   bash("PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose sympy/core/tests/test_assumptions.py"),
			target: 4096, kind: KindTestLog,
			keep: []string{
				"test_other_symbol F",
				"sympy/core/tests/test_assumptions.py:test_infinity", // the report headers name the failures
				"sympy/core/tests/test_assumptions.py:test_neg_infinity",
				"sympy/core/tests/test_assumptions.py:test_other_symbol",
				"tests finished: 76 passed, 3 failed, 1 skipped, 3 expected to fail,",
				`File "/testbed/sympy/core/tests/test_assumptions.py", line 622, in test_other_symbol`,
				"DO *NOT* COMMIT!",
			},
			maxRatio: 0.3,
		},
		{
			name: "go test -json", file: "gotest_parallel_fails.jsonl",
			hint: bash("go test -json ./..."), target: 4096, kind: KindTestLog,
			keep: []string{
				`--- FAIL: TestNestedParallelFailures/a (0.00s)`,
				`--- FAIL: TestParallelTheSecond (0.01s)`,
				`"Action":"fail","Package":"gotest.tools/gotestsum/testjson/internal/parallelfails","Elapsed"`,
				`FAIL\tgotest.tools/gotestsum/testjson/internal/parallelfails\t0.026s`,
			},
			markers:  []string{`passing tests`},
			maxRatio: 0.3,
		},
		{
			name: "go test -json panic", file: "gotest_panic.jsonl",
			hint: bash("go test -json ./poll"), target: 1500, kind: KindTestLog,
			keep: []string{
				`panic: runtime error: index out of range [1] with length 1`,
				`FAIL\tgotest.tools/v3/poll\t0.005s`,
				`result.go:102 +0x9f`,
			},
			maxRatio: 0.4,
		},
		{
			name: "go test -v text", text: goTestText(readTestdata(t, "gotest_parallel_fails.jsonl")),
			hint: bash("go test -v ./..."), target: 1024, kind: KindTestLog,
			keep: []string{
				"--- FAIL: TestParallelTheFirst (0.01s)",
				"FAIL\tgotest.tools/gotestsum/testjson/internal/parallelfails\t0.026s",
			},
			markers:  []string{`passing tests`},
			maxRatio: 0.6,
		},
		{
			name: "junit xml read", file: "junit_jest.xml",
			hint: Hint{ToolName: "Read", Args: `{"file_path":"reports/jest-junit.xml"}`}, target: 1500, kind: KindTestLog,
			keep: []string{
				`<testsuites name="jest tests" tests="6" failures="4" errors="0" time="1.36">`,
				`<testcase classname="Test 1 › Test 1.1" name="Failing test" time="0.002">`,
				"<failure>Error: Some error",
			},
			markers:  []string{`traceback frames`},
			maxRatio: 0.55, // must-keep lines pass the 1500-byte aim; frame locations listed beyond it
		},
		{
			name: "python traceback", file: "py_traceback.txt",
			hint: bash("python3 inventory.py"), target: 2048, kind: KindTraceback,
			keep: []string{
				"KeyError: 'Z-999'",
				"The above exception was the direct cause of the following exception:",
				"StockError: unknown sku 'Z-999'",
				`File "/home/dev/shop/inventory.py", line 23, in reserve`,  // innermost
				`File "/home/dev/shop/inventory.py", line 40, in <module>`, // outermost
			},
			markers:  []string{`^\[… \d+ lines omitted: traceback frames at /home/dev/shop/inventory.py:19, /home/dev/shop/inventory.py:14 …\]$`},
			maxRatio: 0.2,
		},
		{
			name: "go panic", file: "go_panic.txt",
			hint: bash("go run ."), target: 400, kind: KindTraceback,
			keep: []string{
				"panic: runtime error: index out of range [3] with length 3",
				"goroutine 1 [running]:",
				"/home/dev/shop/gopanic/main.go:16", // a frame line, or named in a marker
				"exit status 2",
			},
			maxRatio: 0.6,
		},
		{
			name: "java stack", file: "java_stack.txt",
			hint: bash("java Billing.java"), target: 900, kind: KindTraceback,
			keep: []string{
				`Exception in thread "main" Billing$InvoiceException: cannot bill globex`,
				`Caused by: java.lang.NumberFormatException: For input string: "12,50"`,
				"at Billing.parseAmount(Billing.java:9)",
			},
			markers:  []string{`^\[… line repeated \d+ times …\]$`},
			maxRatio: 0.5,
		},
		{
			name: "grep hits", file: "grep_hits.txt",
			hint: bash(`git grep -n -e "func " -- filters extproc testenv`), kind: KindSearch,
			keep: []string{
				"extproc/bench_test.go:14:func oneMBRequest() []byte {",
				"filters/clamp/clamp.go:",
				"testenv/",
			},
			// Omitted hits are named as literal locations; past half of
			// what the gap held, or what the aim leaves, by line number.
			markers: []string{`^\[… \d+ lines? omitted: hits at ([^ ,]+:\d+)(, [^ ,]+:\d+)*(, and lines \d+(, \d+)*)?(, …)? …\]$`},
			// The aim (8 KiB) is 0.19 of the input; location lists may
			// pass it by half of it, as in diagnostic outputs.
			maxRatio: 0.33,
		},
		{
			name: "claude code read", file: "claude_read.txt",
			hint: Hint{ToolName: "Read", Args: `{"file_path":"/repo/filters/clamp/clamp_test.go"}`}, kind: KindFileRead,
			keep: []string{
				"     1→package clamp",
				"   616→}",
				"   114→func TestValidate(t *testing.T) {",
			},
			markers:  []string{`^\[… \d+ lines omitted: lines \d+-\d+ …\]$`},
			maxRatio: 0.35,
		},
		{
			name: "swe-agent open", file: "swe_agent_open.txt",
			hint: Hint{ToolName: "open", Args: "open src/marshmallow/fields.py 1474"}, target: 1500, kind: KindFileRead,
			keep: []string{
				"[File: /marshmallow-code__marshmallow/src/marshmallow/fields.py (1997 lines total)]",
				"(1458 more lines above)",
				"(439 more lines below)",
				"1491:class Mapping(Field):",
			},
			markers:  []string{`^\[… \d+ lines omitted: lines \d+-\d+ …\]$`},
			maxRatio: 0.45,
		},
		{
			name: "git diff", file: "git_patch.diff",
			hint: bash("git diff"), target: 3000, kind: KindDiff,
			keep: []string{
				"diff --git a/astropy/units/format/cds.py b/astropy/units/format/cds.py",
				// The ---/+++ lines that repeat a "diff --git" line's
				// paths go before changed lines; the file is still named.
				"diff --git a/astropy/units/format/cds_parsetab.py b/astropy/units/format/cds_parsetab.py",
			},
			markers:  []string{`^\[… \d+ lines omitted: (\d+ (added|removed|context|other)(, )?)+ …\]$`},
			maxRatio: 0.3,
		},
		{
			name: "unified diff", file: "unified_multi_file.diff",
			hint: bash("diff -u"), target: 600, kind: KindDiff,
			keep: []string{
				"diff --ruN a/oldname1 b/newname1",
				"--- oldname1	2009-10-11 15:12:20.000000000 +0000",
				"newname1 +8 -8, newname2 +8 -8",
				"@@ -1,3 +1,9 @@",
			},
			maxRatio: 0.9,
		},
		{
			name: "github api json", file: "github_get_repository.json",
			hint: Hint{ToolName: "http", Args: `{"url":"https://api.github.com/repos/octokit-fixture-org/hello-world"}`}, target: 2500, kind: KindJSON,
			keep:     []string{`"full_name": "octokit-fixture-org/hello-world"`, `"status": 200`, `"headers": {`},
			markers:  []string{`"\[… \d+ keys omitted …\]"`},
			maxRatio: 0.3,
		},
		{
			name: "tau-bench flights json", file: "tau_search_onestop.json",
			hint: Hint{ToolName: "search_onestop_flight", Args: `{"origin":"ATL","destination":"EWR","date":"2024-05-24"}`}, target: 1200, kind: KindJSON,
			keep:     []string{`"flight_number": "HAT`},
			markers:  []string{`"\[… \d+ items? omitted …\]"`},
			maxRatio: 0.25,
		},
		{
			name: "swebench report json", file: "swebench_report.json",
			hint: Hint{ToolName: "Read", Args: `{"file_path":"report.json"}`}, target: 3000, kind: KindJSON,
			keep:     []string{`"resolved": false`, `"FAIL_TO_PASS"`, `"PASS_TO_PASS"`},
			markers:  []string{`"\[… \d+ items omitted …\]"`},
			maxRatio: 0.25,
		},
		{
			name: "file list", file: "file_list.txt",
			hint: bash("git ls-files"), target: 4096, kind: KindDirListing,
			keep:     []string{".browserslistrc", "lib/mocha.js"},
			markers:  []string{`^\[… \d+ lines omitted: entries in [^ ]+/ …\]$`},
			maxRatio: 0.3,
		},
		{
			name: "ls -laR", file: "ls_laR.txt",
			hint: bash("ls -laR filters extproc testenv envoy"), target: 2500, kind: KindDirListing,
			keep:     []string{"filters/clamp:", "extproc:", "total "},
			markers:  []string{`entries in`},
			maxRatio: 0.4,
		},
		{
			name: "tree", file: "tree.txt",
			hint: Hint{ToolName: "LS", Args: `{"path":"/repo"}`}, target: 1500, kind: KindDirListing,
			keep:     []string{"├── filters", " directories, ", " files"},
			markers:  []string{`entries in`},
			maxRatio: 0.5,
		},
		{
			name: "service log", text: synthLog(6000),
			hint: bash("journalctl -u orders --since today"), kind: KindLog,
			keep: []string{
				"ERROR [orders] order 8812 failed: payment gateway timeout after 30s",
				"java.net.SocketTimeoutException: Read timed out",
				"ERROR [orders] reconciliation aborted: 3 orders left unpaid",
				"WARN  [cache] eviction took",
			},
			markers:  []string{`^\[… line repeated 312 times …\]$`, `^\[… \d+ lines omitted: log lines …\]$`},
			maxRatio: 0.05,
		},
	}
}

func TestKinds(t *testing.T) {
	for _, c := range kindCases(t) {
		t.Run(c.name, func(t *testing.T) {
			text := c.text
			if c.file != "" {
				text = readTestdata(t, c.file)
			}
			if got := Detect(text, c.hint); got != c.kind {
				t.Fatalf("Detect = %q, want %q", got, c.kind)
			}
			s := Structural(StructuralOptions{TargetBytes: c.target})
			out, rep := s.Compress(text, c.hint)
			if !rep.Changed || rep.Kind != c.kind {
				t.Fatalf("report %+v", rep)
			}
			for _, k := range c.keep {
				if !strings.Contains(out, k) {
					t.Errorf("lost %q", k)
				}
			}
			for _, m := range c.markers {
				if !regexp.MustCompile("(?m)" + m).MatchString(out) {
					t.Errorf("no marker matching %s", m)
				}
			}
			ratio := float64(len(out)) / float64(len(text))
			if ratio > c.maxRatio {
				t.Errorf("output is %.2f of the input, want at most %.2f", ratio, c.maxRatio)
			}
			if err := checkGuards(s, text, c.hint); err != nil {
				t.Error(err)
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}
