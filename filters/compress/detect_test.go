package compress

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestDetect(t *testing.T) {
	pytestOut := "============================= test session starts ==============================\n" +
		"collected 3 items\n\ntests/test_a.py .F.\n\nFAILED tests/test_a.py::test_b - assert 1 == 2\n" +
		"========================= 1 failed, 2 passed in 0.05s ==========================\n"
	goTestOut := "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n    b_test.go:12: want 2, got 3\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\texample.com/b\t0.01s\n"
	cargoOut := "running 2 tests\ntest tests::a ... ok\ntest tests::b ... FAILED\n\nfailures:\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored\n"
	jestOut := "FAIL src/sum.test.js\n  ● sum › adds\n\n    expect(received).toBe(expected)\n\nTests:       1 failed, 4 passed, 5 total\n"
	diffOut := "diff --git a/x.go b/x.go\nindex 1..2 100644\n--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n"
	grepOut := "src/a.go:12:func A() {}\nsrc/a.go:40:\treturn A()\nsrc/b/c.go:7:// A is\n"
	lsOut := "total 12\ndrwxr-xr-x 2 u g 4096 Jan 1 00:00 .\n-rw-r--r-- 1 u g  120 Jan 1 00:00 a.go\n-rw-r--r-- 1 u g  220 Jan 1 00:00 b.go\n"
	pathsOut := "src/a.go\nsrc/b/c.go\nREADME.md\ndocs/x.md\n"
	readOut := "     1→package a\n     2→\n     3→func A() {}\n"
	pyTB := "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    f()\nValueError: bad\n"
	goPanic := "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:5 +0x1d\nexit status 2\n"
	logOut := strings.Repeat("2026-01-01 10:00:00 INFO  started worker\n", 5) + "2026-01-01 10:00:01 ERROR lost connection\n"
	jsonOut := `{"items":[{"id":1},{"id":2}],"total":2}`
	junit := `<?xml version="1.0"?>` + "\n" + `<testsuites tests="2" failures="1">` + "\n" + `  <testsuite name="s" tests="2" failures="1">` + "\n" +
		`    <testcase name="ok" classname="c"/>` + "\n" + `    <testcase name="bad" classname="c">` + "\n" + `      <failure message="boom"/>` + "\n    </testcase>\n  </testsuite>\n</testsuites>\n"

	tests := []struct {
		name string
		text string
		hint Hint
		want Kind
	}{
		// Tool names decide for reads, searches and listings.
		{"claude Read", readOut, Hint{ToolName: "Read", Args: `{"file_path":"/a.go"}`}, KindFileRead},
		{"copilot read_file", "package a\n\nfunc A() {}\n", Hint{ToolName: "read_file"}, KindFileRead},
		{"openclaw read", "package a\n", Hint{ToolName: "read"}, KindFileRead},
		{"read of a JSON file", jsonOut, Hint{ToolName: "read_file"}, KindJSON},
		{"read of a junit report", junit, Hint{ToolName: "Read"}, KindTestLog},
		// A command's output saved to a file and read back is the
		// command's output behind the read's numbers.
		{"Read of a background task's traceback", numbered(pyTB), Hint{ToolName: "Read", Args: `{"file_path":"/tmp/claude/tasks/b1.output"}`}, KindTraceback},
		{"Read of a saved log", numbered(logOut), Hint{ToolName: "Read", Args: `{"file_path":"/tmp/server.log"}`}, KindLog},
		{"Read of a source file with a traceback in it", numbered(pyTB), Hint{ToolName: "Read", Args: `{"file_path":"/repo/notes.py"}`}, KindFileRead},
		{"Read of a file without an extension", numbered(logOut), Hint{ToolName: "Read", Args: `{"file_path":"/repo/Procfile"}`}, KindFileRead},
		{"nl -ba of a saved run", strings.ReplaceAll(numbered(pyTB), "→", "\t"), bash("nl -ba /tmp/run.out"), KindTraceback},
		{"claude Grep", grepOut, Hint{ToolName: "Grep", Args: `{"pattern":"A"}`}, KindSearch},
		{"copilot grep_search", grepOut, Hint{ToolName: "grep_search"}, KindSearch},
		{"claude Glob", pathsOut, Hint{ToolName: "Glob"}, KindDirListing},
		{"claude LS", "- /repo/\n  - a.go\n  - src/\n    - b.go\n", Hint{ToolName: "LS"}, KindDirListing},
		{"copilot list_dir", "a.go\nsrc/\n", Hint{ToolName: "list_dir"}, KindDirListing},
		{"mcp tool name", grepOut, Hint{ToolName: "mcp__code__search_files"}, KindSearch},
		// Shell tools: the command narrows it down.
		{"claude Bash pytest", pytestOut, bash("cd repo && python -m pytest -q tests"), KindTestLog},
		{"bash pytest piped to tail", "....F\n1 failed\n", bash("pytest -x | tail -5"), KindTestLog},
		{"codex shell argv", goTestOut, Hint{ToolName: "shell", Args: `{"command":["bash","-lc","go test ./..."]}`}, KindTestLog},
		{"codex exec_command", diffOut, Hint{ToolName: "exec_command", Args: `{"cmd":"git diff HEAD~1"}`}, KindDiff},
		{"copilot run_in_terminal", grepOut, Hint{ToolName: "run_in_terminal", Args: `{"command":"rg -n A src"}`}, KindSearch},
		{"openclaw exec ls", lsOut, Hint{ToolName: "exec", Args: `{"command":"ls -la"}`}, KindDirListing},
		{"gh pr diff", diffOut, bash("gh pr diff 10907 | sed -n '1,220p'"), KindDiff},
		{"gh pr diff --name-only", pathsOut, bash("gh pr diff 10907 --name-only"), KindDirListing},
		// A Codex code-mode batch is read by its lines, not by its last
		// command: a diff, then a search's few hits.
		{"codex code mode", diffOut + "src/a.rs:3:use aead;\n", Hint{ToolName: "exec", Args: `{"input":"const r = await tools.exec_command({cmd:\"gh pr diff 7\\nrg -n aead src\"}); text(r.output);"}`}, KindDiff},
		{"bash cat", "package a\nfunc A() {}\n", bash("cat a.go"), KindFileRead},
		{"bash sed -n", "line\n", bash("sed -n 1,20p a.go"), KindFileRead},
		{"bash grep -l is a listing", pathsOut, bash("grep -rl A ."), KindDirListing},
		// A filter reading the pipe passes on what it reads (issue 23).
		{"grep piped to head", grepOut, bash(`grep -rn "A" src | head -20`), KindSearch},
		{"grep piped to grep -v and head -n", grepOut, bash(`grep -rn A src/ --include="*.go" | grep -iv test | head -n 20`), KindSearch},
		{"script piped to tail is not a read", pyTB, bash("python repro.py 2>&1 | tail -30"), KindTraceback},
		{"ls piped to sort", pathsOut, bash("find . -name '*.go' | sort | head"), KindDirListing},
		// PowerShell's cmdlets and aliases, in any case.
		{"powershell read", "package a\nfunc A() {}\n", Hint{ToolName: "PowerShell", Args: `{"command":"Get-Content src\\a.go"}`}, KindFileRead},
		{"powershell search", grepOut, Hint{ToolName: "PowerShell", Args: `{"command":"select-string -Pattern A -Path src\\*.go"}`}, KindSearch},
		{"powershell listing", pathsOut, Hint{ToolName: "PowerShell", Args: `{"command":"Get-ChildItem -Recurse -Name"}`}, KindDirListing},
		// A redirection's & is not a list's: "2>&1" keeps the command whole.
		{"grep with stderr, piped to head", grepOut, bash(`grep -rn "A" src 2>&1 | head -20`), KindSearch},
		{"read with stderr", "package a\nfunc A() {}\n", bash("head -c 2000 a.go 2>&1"), KindFileRead},
		{"a list after a redirection", "package a\nfunc A() {}\n", bash("make 2>/dev/null && cat a.go &> /dev/null; cat b.go"), KindFileRead},
		{"head of a file is a read", "package a\nfunc A() {}\n", bash("head -50 a.go"), KindFileRead},
		{"piped into a reader of files", "package a\nfunc A() {}\n", bash("echo a.go | xargs cat"), KindText},
		{"or is not a pipe", "package a\nfunc A() {}\n", bash("cat a.go || cat b.go"), KindFileRead},
		{"env and wrappers", pytestOut, bash("PYTHONPATH=. timeout 60 pytest"), KindTestLog},
		{"sympy bin/test", "test_a ok\ntest_b F\n tests finished: 1 passed, 1 failed\n", bash("PYTHONWARNINGS='x' bin/test -C a.py"), KindTestLog},
		{"django runtests", "Ran 3 tests in 0.1s\nOK\n", bash("./tests/runtests.py --verbosity 2 x"), KindTestLog},
		{"npm test", jestOut, bash("npm test -- --ci"), KindTestLog},
		{"cargo test", cargoOut, bash("cargo test"), KindTestLog},
		{"git diff command but no diff", "nothing to commit\n", bash("git diff"), KindText},
		{"apply_patch output", "Done!\nM src/a.go\n", Hint{ToolName: "apply_patch"}, KindText},
		// Content alone.
		{"content pytest", pytestOut, Hint{}, KindTestLog},
		{"content go test", goTestOut, Hint{}, KindTestLog},
		{"content cargo", cargoOut, Hint{}, KindTestLog},
		{"content jest", jestOut, Hint{}, KindTestLog},
		{"content go test json", `{"Action":"run","Test":"TestA"}` + "\n" + `{"Action":"pass","Test":"TestA"}` + "\n", Hint{}, KindTestLog},
		{"content diff", diffOut, Hint{}, KindDiff},
		{"content grep", grepOut, Hint{}, KindSearch},
		{"content ls -l", lsOut, Hint{}, KindDirListing},
		{"content paths", pathsOut, Hint{}, KindDirListing},
		{"content tree", ".\n├── a.go\n└── src\n    └── b.go\n\n1 directory, 2 files\n", Hint{}, KindDirListing},
		{"content numbered read", readOut, Hint{}, KindFileRead},
		{"content python traceback", pyTB, Hint{}, KindTraceback},
		{"content go panic", goPanic, Hint{}, KindTraceback},
		{"content java", "Exception in thread \"main\" java.lang.IllegalStateException: x\n\tat a.B.c(B.java:3)\n", Hint{}, KindTraceback},
		{"content log", logOut, Hint{}, KindLog},
		{"content json", jsonOut, Hint{}, KindJSON},
		{"content json array", `[1, 2, 3]`, Hint{ToolName: "get_user_details"}, KindJSON},
		{"content text", "Hello.\nThis is prose.\n", Hint{}, KindText},
		{"empty", "", Hint{}, KindText},
		// A test log that prints the patch under test is still a test log.
		{"test log with a diff in it", diffOut + pytestOut, Hint{}, KindTestLog},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Detect(tc.text, tc.hint); got != tc.want {
				t.Errorf("Detect = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDetectCorpusFormats checks detection against the format labels of the
// shared corpus, where it is present.
// numbered is text as Claude Code's Read tool prints a file.
func numbered(text string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fmt.Fprintf(&b, "%6d→%s\n", i+1, l)
	}
	return b.String()
}

func TestDetectCorpusFormats(t *testing.T) {
	recs := loadRecords(t, corpusDir+"/records.jsonl")
	want := map[string]Kind{
		"pytest-log": KindTestLog, "django-test-log": KindTestLog, "sympy-test-log": KindTestLog,
		"tox-pytest-log": KindTestLog, "go-test-json": KindTestLog, "diff": KindDiff, "json": KindJSON,
		"file-list": KindDirListing, "junit-xml": KindTestLog, "trx-xml": KindTestLog, "nunit-xml": KindTestLog,
	}
	wrong := map[string]int{}
	total := map[string]int{}
	for _, r := range recs {
		k, ok := want[r.Format]
		out := strings.TrimSpace(r.Output)
		switch {
		case !ok || out == "":
			continue
		case r.Format == "json" && !strings.HasPrefix(out, "{") && !strings.HasPrefix(out, "["):
			continue // tau-bench's calculate returns bare numbers such as "255.0"
		case r.Format == "diff" && !strings.Contains(r.Output, "@@ "):
			continue // go-diff's header-only edge-case fixtures
		case strings.HasSuffix(r.Format, "-xml") && !strings.Contains(out, "<testcase") &&
			!strings.Contains(out, "<UnitTestResult") && !strings.Contains(out, "<test-case"):
			continue // reports of empty runs
		}
		total[r.Format]++
		if got := Detect(r.Output, r.hint()); got != k {
			wrong[r.Format]++
			if wrong[r.Format] <= 20 {
				t.Logf("%s: %s detected as %s", r.ID, r.Format, got)
			}
		}
	}
	for f, n := range total {
		t.Logf("%-16s %3d/%3d detected as %s", f, n-wrong[f], n, want[f])
		if float64(wrong[f]) > 0.02*float64(n) {
			t.Errorf("%s: %d of %d misdetected", f, wrong[f], n)
		}
	}
}

// TestParseHitDatedNames: a file name holding "-12-" (a date, a version)
// is not grep's context form "path-12-text" when the same path goes on to
// grep's match form "path:121:text" (issue 23: a history of dated notes
// grouped every hit under ".specstory/history/2026").
func TestParseHitDatedNames(t *testing.T) {
	for _, c := range []struct {
		line  string
		path  string
		n     int
		match bool
	}{
		{".specstory/history/2026-02-12_17-20-59Z-notice.md:121:    58→var x = 1", ".specstory/history/2026-02-12_17-20-59Z-notice.md", 121, true},
		{"logs/run-2024-01-05.txt:7:ERROR x", "logs/run-2024-01-05.txt", 7, true},
		{"src/a.go-12-\tcontext line", "src/a.go", 12, false},
		{"src/a.go:12:func A() {}", "src/a.go", 12, true},
		{"plain text: no hit", "", 0, false},
	} {
		path, n, match := parseHit(c.line)
		if path != c.path || n != c.n || match != c.match {
			t.Errorf("parseHit(%q) = %q, %d, %v; want %q, %d, %v", c.line, path, n, match, c.path, c.n, c.match)
		}
	}
}

// TestScanWant: a scan asked for some groups of counts counts them as a
// full scan does, so Detect decides the same from a partial scan; a scan
// that stopped early (decided) did so on an output the full scan also
// calls a test log.
func TestScanWant(t *testing.T) {
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		text := readTestdata(t, e.Name())
		full := scanAll(text, wantAll, false, false, nil)
		for _, w := range []scanWant{0, wantTest, wantTrace, wantDiag, wantHits, wantList, wantLog, wantTest | wantList} {
			got := scanAll(text, w, true, w&wantHits != 0, nil)
			if got.decided {
				if got.hits > 0 && w&wantHits != 0 {
					if full.hits == 0 {
						t.Errorf("%s, want %b: stopped at a hit the full scan did not count", e.Name(), w)
					}
					continue
				}
				if w&wantTest == 0 || !got.isTest() || full.kind() != KindTestLog {
					t.Errorf("%s, want %b: stopped early (%+v), full scan %+v says %s", e.Name(), w, got, full, full.kind())
				}
				continue
			}
			want := full
			if w&wantTest == 0 {
				want.testStrong, want.testLines = 0, 0
			}
			if w&wantTrace == 0 {
				want.traceback = 0
			}
			if w&wantDiag == 0 {
				want.diagnostics = 0
			}
			if w&wantHits == 0 {
				want.hits, want.plainHits = 0, 0
			}
			if w&wantList == 0 {
				want.lsLines, want.treeLines, want.pathLines = 0, 0, 0
			}
			if w&wantLog == 0 {
				want.logLines = 0
			}
			want.want, want.mayStop, want.stopAtHit = w, true, w&wantHits != 0
			if got != want {
				t.Errorf("%s, want %b: %+v, full scan %+v", e.Name(), w, got, full)
			}
		}
	}
}

// TestDetectEarlyStop: detection that stops once an output is surely a test
// log decides as reading every line does, whatever the hint sends it
// through (a read tool, a search, a listing command, an unknown command,
// none); and on a long pytest log it does stop.
func TestDetectEarlyStop(t *testing.T) {
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	hints := []Hint{{}, {ToolName: "Read"}, {ToolName: "Grep"}, {ToolName: "str_replace_editor", Args: `{"command":"view"}`},
		bash("ls -la"), bash("grep -rn foo ."), bash("cat out.log"), bash("./run_checks.sh"), bash("git diff")}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		text := readTestdata(t, e.Name())
		for _, h := range hints {
			if got, full := Detect(text, h), detect(text, h, false, nil); got != full {
				t.Errorf("%s, hint %+v: %s when stopping early, %s reading every line", e.Name(), h, got, full)
			}
		}
	}
	var b strings.Builder
	b.WriteString("============================= test session starts ==============================\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "tests/test_orders.py::test_case_%d PASSED [%3d%%]\n", i, i/20)
	}
	log := b.String()
	stopped, full := scanAll(log, wantAll, true, false, nil), scanAll(log, wantAll, false, false, nil)
	if !stopped.decided || stopped.nonEmpty > 2 {
		t.Errorf("a long pytest log: %d lines read when stopping early (decided %v), %d in all", stopped.nonEmpty, stopped.decided, full.nonEmpty)
	}
}

// TestSourceReadsDetectAsReads holds readsSourceFile's shortcut to the
// data: every read of a file with a source extension, in the committed
// sessions (and the shared corpus and sessions when present), is a file
// read by its content too, detected without the path; and the shortcut
// takes every such read.
func TestSourceReadsDetectAsReads(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every session")
	}
	recs := loadHeldOutSessions(t)
	recs = append(recs, sharedRecords(t)...)
	reads := 0
	for _, r := range recs {
		h := r.hint()
		if kindFromTool(h) != KindFileRead || !readsSourceFile(h) {
			continue
		}
		reads++
		pathless := Hint{ToolName: h.ToolName}
		if contains(editorTools, strings.ToLower(h.ToolName)) {
			pathless.Args = `{"command":"view"}`
		}
		if got := detect(r.Output, pathless, false, nil); got != KindFileRead {
			t.Errorf("%s: a read of %s detects as %s by its content", r.ID, gjson.Get(h.Args, "file_path|path").String(), got)
		}
		if got := Detect(r.Output, h); got != KindFileRead {
			t.Errorf("%s: Detect = %s", r.ID, got)
		}
	}
	if reads < 1000 {
		t.Errorf("only %d reads of source files: the shortcut is not held to the data", reads)
	}
	t.Logf("%d reads of source files detect as file reads by their content", reads)
}

func TestReadsSourceFile(t *testing.T) {
	for _, c := range []struct {
		args string
		want bool
	}{
		{`{"file_path":"/repo/src/server.py"}`, true},
		{`{"file_path":"/repo/src/App.TSX","offset":10}`, true},
		{`{"path":"C:\\src\\main.rs"}`, true},
		{`{"command":"view","path":"/repo/astropy/table/table.py"}`, true},
		{`{"filePath":"lib/a.ex"}`, true},
		{`{"file_path":"/tmp/pytest-output.log"}`, false},
		{`{"file_path":"/repo/PLAN.md"}`, false},
		{`{"file_path":"/repo/report.xml"}`, false},
		{`{"file_path":"/repo/.github"}`, false},
		{`{"file_path":"/repo/Makefile"}`, false},
		{`{"file_path":"/repo/src"}`, false},
		{`{"file_path":"/repo/a.py.log"}`, false},
		{`{"file_path":42}`, false},
		{`{"file_path":"/repo/a.py"`, false},
		{``, false},
		{`/repo/a.py`, false},
	} {
		if got := readsSourceFile(Hint{ToolName: "Read", Args: c.args}); got != c.want {
			t.Errorf("readsSourceFile(%s) = %v, want %v", c.args, got, c.want)
		}
	}
}

// TestOutlineIsNotATestLog: a plan printed with cat numbers its sections
// at the margin, "1) Overview", as PHPUnit numbers its failures; read as
// failures they made the output a test log and its headings failing tests
// (and history's summary of it FAILED). A heading at the margin is a
// failure only when it names a test method; mocha's, rspec's, ExUnit's
// and minitest's are indented.
func TestOutlineIsNotATestLog(t *testing.T) {
	const id = "codex-cli-testframework__019c0ad7-6b05-73c0-827b-4ac8bc514f16#call_Cbn4kIdAPeQiGjj7j0zSvKya"
	rec := heldOutRecord(t, id)
	if k := Detect(rec.Output, rec.hint()); k == KindTestLog {
		t.Errorf("a cat of a PRD detected as %s", k)
	}
	if lines, _, failed := KeyLinesFailed(rec.Output, 0); failed || len(lines) > 0 {
		t.Errorf("key lines %q, failed %v", lines, failed)
	}
	for _, c := range []struct {
		line string
		want bool
	}{
		{"1) Overview", false},
		{"12) Milestones (Suggested)", false},
		{"  1) Cart", true},
		{"  2) Cart #total sums:", true},
		{"\t1) Cart", true},
		{"1) Tests\\CartTest::testTotal", true},
		{"1) App\\Tests\\InvoiceTest", true},
		{"3) Cart::total sums", true},
	} {
		if got := isFailingTest(c.line); got != c.want {
			t.Errorf("isFailingTest(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}
