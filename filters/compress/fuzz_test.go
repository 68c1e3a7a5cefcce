package compress

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// fuzzSeeds are short inputs of every kind, plus the start of every
// testdata sample, with the tool names that steer detection.
func fuzzSeeds(f *testing.F) []struct{ text, tool, args string } {
	seeds := []struct{ text, tool, args string }{
		{"FAILED tests/a.py::t - x\n=== 1 failed in 0.1s ===\n", "Bash", `{"command":"pytest"}`},
		{"=== RUN   TestA\n--- FAIL: TestA (0.00s)\n    a_test.go:3: no\nFAIL\tx\t0.1s\n", "shell", `{"command":["bash","-lc","go test ./..."]}`},
		{"Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    x()\nNameError: x\n", "", ""},
		{"goroutine 1 [running]:\nmain.main()\n\t/a/main.go:5 +0x1d\n", "", ""},
		{"a.go:1:x\na.go:2:y\nb.go:3-z\n--\n", "Grep", "{}"},
		{"     1→package a\n     2→func A() {}\n", "Read", `{"file_path":"a.go"}`},
		{`{"a":[1,2,3,{"b":"c\u00e9\"\\"}],"d":null}`, "http", ""},
		{"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n", "Bash", `{"command":"git diff"}`},
		{"total 8\ndrwxr-xr-x 2 u g 4096 Jan 1 .\n-rw-r--r-- 1 u g 1 Jan 1 a\n", "LS", ""},
		{".\n├── a\n│   └── b\n└── c\n", "", ""},
		{"2026-01-01 00:00:00 ERROR x\n2026-01-01 00:00:00 ERROR x\n2026-01-01 00:00:00 ERROR x\n", "", ""},
		{"[… 3 lines omitted: x …]\n[… 12 lines omitted …]\n", "", ""},
		{"\xff\xfe[… \x80", "", ""},
		{"é中🙂\r\n\r\n\x1b[31mE   boom\x1b[0m\n", "", ""},
		// Hostile shapes: JSON-looking text nested past the depth guard
		// (gjson's validator would overflow the stack on megabytes of it),
		// a valid but deep document, and arguments that are deep too.
		{strings.Repeat("[", 50_000), "http", ""},
		{strings.Repeat(`{"a":`, 600) + "1" + strings.Repeat("}", 600), "http", strings.Repeat("[", 10_000)},
		{strings.Repeat("\n", 20_000), "Bash", `{"command":"pytest"}`},
	}
	entries, _ := os.ReadDir("testdata")
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, struct{ text, tool, args string }{string(b[:min(len(b), 6000)]), "", ""})
	}
	return seeds
}

// checkFuzzOutput holds every strategy to its promises on any input.
func checkFuzzOutput(t *testing.T, s Strategy, text string, h Hint, wantJSON bool) {
	out, rep := s.Compress(text, h)
	if len(out) > len(text) {
		t.Fatalf("grew: %d -> %d", len(text), len(out))
	}
	if utf8.ValidString(text) && !utf8.ValidString(out) {
		t.Fatalf("invalid UTF-8 from valid input: %q", out)
	}
	if again, rep2 := s.Compress(text, h); again != out || rep2 != rep {
		t.Fatalf("not deterministic")
	}
	if twice, rep3 := s.Compress(out, h); twice != out || rep3.Changed {
		t.Fatalf("not idempotent:\n%q\n->\n%q", out, twice)
	}
	if rep.Changed != (out != text) || rep.BytesBefore != len(text) || rep.BytesAfter != len(out) ||
		rep.LinesBefore != clamp.CountLines(text) || rep.LinesAfter != clamp.CountLines(out) {
		t.Fatalf("report %+v does not match", rep)
	}
	if rep.Changed && !hasOwnMarker(out) {
		t.Fatalf("changed without a marker")
	}
	if wantJSON && rep.Changed && rep.Kind == KindJSON {
		// A harness's header over JSON (harnessJSON) keeps the header as it
		// is and the JSON after it valid.
		body := out
		if header, _, ok := harnessJSON(text); ok && strings.HasPrefix(out, header) {
			body = out[len(header):]
		}
		if !gjson.Valid(body) {
			t.Fatalf("JSON in, invalid JSON out: %q", out)
		}
	}
}

func FuzzStructural(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.text, s.tool, s.args, 256)
	}
	// Line-dense outputs take denseCut, not a plan.
	f.Add(strings.Repeat("\n", 3000)+"FAILED t.py::x - E\n"+strings.Repeat("1\n", 3000), "bash", `{"command":"pytest"}`, 300)
	f.Add("["+strings.Repeat("1,", 3000)+"2]", "http", "", 299)
	// A test run inside a JSON string (jsonWriter.text).
	f.Add(`{"log": "`+strings.Repeat(`collected 3 items\nt.py::a PASSED\n`, 40)+`FAILED t.py::x - E\n=== 1 failed, 80 passed in 0.1s ===\n"}`, "mcp__ci__log", "", 300)
	// A CI job's log, read through its prefixes (ciLogPrefix), and the
	// forms with a drive or tsc's parenthesised location.
	f.Add(strings.Repeat("test (ubuntu-latest)\tUnit Tests\t2026-07-14T14:03:52.0047503Z ok  \tpkg\t0.1s\n", 40)+
		"test (ubuntu-latest)\tUnit Tests\t2026-07-14T14:03:52.0047503Z --- FAIL: TestX (0.01s)\n2026-07-14T14:03:52Z\n", "Bash", `{"command":"gh run view 1 --log-failed"}`, 400)
	f.Add(strings.Repeat("D:/proj/src/a.go:17:\tx := 1\nsrc/b.ts(3,4): error TS2322: no\n", 60), "Bash", `{"command":"grep -rn x D:/proj"}`, 300)
	// A workspace run and a compose log, read through their task prefixes.
	f.Add(strings.Repeat("@acme/core test: (pass) cart > sums [1.00ms]\n\x1b[33mweb:test: \x1b[0m(fail) x [2ms]\n", 40)+
		"app-1  | Traceback (most recent call last):\napp-1  |\n@acme/core test:  1 fail\n", "Bash", `{"command":"bun run --filter '*' test"}`, 300)
	// A long line whose middle holds exit statuses (cutMiddleKeeping),
	// one of them already behind a marker of an earlier cut.
	f.Add("Output:\n{\"log\":\""+strings.Repeat("step ok; ", 200)+"exit code 2; EXIT STATUS: 1"+strings.Repeat("é; ", 90)+
		"[… 40 bytes omitted …] exit status 7"+strings.Repeat("step ok; ", 200)+"\"}\n", "exec_command", `{"cmd":"gh api x"}`, 300)
	// A pytest run under Codex's header, its command in OpenAI's string of
	// JSON arguments (Hint.decoded).
	f.Add("Chunk ID: 3f9a1c\nWall time: 4.2 seconds\nProcess exited with code 1\nOutput:\n"+strings.Repeat("tests/test_a.py::test_x PASSED [ 10%]\n", 40)+
		"FAILED tests/test_a.py::test_y - AssertionError\n=== 1 failed, 40 passed in 0.3s ===\n", "exec_command", `"{\"cmd\":\"pytest tests/test_a.py\"}"`, 300)
	// A harness's header over a shell result in JSON (harnessJSON).
	f.Add("Script completed\nWall time 9.9 seconds\nOutput:\n{\"exit_code\":1,\"output\":\""+strings.Repeat("test a::b ... ok\\n", 60)+"test result: FAILED. 59 passed; 1 failed\\n\"}", "exec", `{"input":"tools.exec_command({cmd:\"cargo test\"})"}`, 300)
	// Claude Code's TaskOutput and BashOutput: an output in tags
	// (harnessTags), and a read back of a saved output (outputKind).
	f.Add("<retrieval_status>success</retrieval_status>\n\n<task_id>b1</task_id>\n\n<status>completed</status>\n\n<exit_code>1</exit_code>\n\n<output>\n"+
		strings.Repeat("tests/test_a.py::test_x PASSED\n", 40)+"FAILED tests/test_a.py::test_y\n=== 1 failed, 40 passed in 0.3s ===\n</output>", "TaskOutput", `{"task_id":"b1"}`, 300)
	f.Add("<status>completed</status>\n\n<stdout>\n"+strings.Repeat("x\n", 300)+"</stdout>\n\n<timestamp>t</timestamp>", "BashOutput", `{"bash_id":"b1"}`, 200)
	f.Add("Command: pytest\nDirectory: (root)\nOutput: "+strings.Repeat("t.py::x PASSED\n", 40)+"=== 1 failed in 0.1s ===\nError: (none)\nExit Code: 1\nSignal: 0\nBackground PIDs: (none)\nProcess Group PGID: 1", "run_shell_command", `{"command":"pytest"}`, 300)
	f.Add(strings.Repeat("     1→2026-01-01 10:00:00 INFO ok\n", 60)+"    61→Traceback (most recent call last):\n    62→ValueError: x\n", "Read", `{"file_path":"/tmp/tasks/b1.output"}`, 300)
	// Many failing examples under a hard aim (a target that is a multiple
	// of 7), and a CI log read back with Read's numbers before its prefix.
	f.Add(strings.Repeat("rspec ./spec/a_spec.rb:12 # Cart sums the totals of every line\n  1) Cart sums\n     Failure/Error: x\n", 80)+"240 examples, 80 failures\n", "bash", `{"command":"bundle exec rspec"}`, 700)
	f.Add(strings.Repeat("     1→2026-07-14T14:03:52.0047503Z [  FAILED  ] CartTest.Sums (0 ms)\n", 40)+"    41→2026-07-14T14:03:52.0047503Z  1 FAILED TEST\n", "Read", `{"file_path":"/tmp/ci.log"}`, 301)
	f.Fuzz(func(t *testing.T, text, tool, args string, target int) {
		// Small targets exercise the cutting; the default exercises the
		// pass-through of small outputs.
		if target < 0 {
			target = -target
		}
		target %= 4096
		opts := StructuralOptions{TargetBytes: target, ContextLines: target%5 - 1}
		if target%3 == 0 {
			// The ratio mode, alone or with a byte aim.
			opts.TargetRatio = float64(target%17) + 1.5
			if target%2 == 0 {
				opts.TargetBytes = 0
			}
		}
		// The clamp's hard aim (Cut): must-keep lines and lists held to it.
		opts.Hard = opts.TargetBytes > 0 && target%7 == 0
		s := Structural(opts)
		h := Hint{ToolName: tool, Args: args}
		checkFuzzOutput(t, s, text, h, true)
		if rep := Detect(text, h); rep == "" {
			t.Fatalf("empty kind")
		} else if full := detect(text, h, false, nil); rep != full {
			t.Fatalf("detection stopped early says %s, reading every line says %s", rep, full)
		}
		// An object's arguments sent as OpenAI's string of JSON compress
		// as the object does.
		if strings.HasPrefix(args, "{") && strings.TrimSpace(args) == args && jsonsafe.ValidString(args) {
			q, _ := json.Marshal(args)
			a, _ := s.Compress(text, h)
			if b, _ := s.Compress(text, Hint{ToolName: tool, Args: string(q)}); b != a {
				t.Fatalf("the arguments as a string of JSON compress differently from the object")
			}
		}
		if strings.Contains(text, "\x00") {
			return
		}
		// Faithfulness and counts, for line kinds.
		out, rep := s.Compress(text, h)
		// What detection noted of the lines changes no byte (lineNotes).
		if plain, _ := (structural{opts: s.(structural).opts, unnoted: true}).Compress(text, h); plain != out {
			t.Fatalf("compressed through detection's notes:\n%q\nreading every line afresh:\n%q", out, plain)
		}
		if rep.Changed && rep.Kind != KindJSON {
			if err := faithful(text, out, rep); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzSimple(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.text, 5)
	}
	f.Fuzz(func(t *testing.T, text string, words int) {
		words %= 200
		checkFuzzOutput(t, Simple(words), text, Hint{}, false)
	})
}
