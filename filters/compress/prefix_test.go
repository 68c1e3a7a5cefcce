package compress

import (
	"fmt"
	"strings"
	"testing"
)

func TestTaskPrefixLen(t *testing.T) {
	for _, tc := range []struct {
		l    string
		want string // the prefix cut, "" for none
	}{
		{"@agentv/core test: (pass) cart > sums [1.00ms]", "@agentv/core test: "},
		{"apps/desktop build:    Compiling adler2 v2.0.1", "apps/desktop build: "},
		{"agentv test: test/unit/retry-errors.test.ts:", "agentv test: "},
		{"@acme/web:test: FAIL src/a.test.ts", "@acme/web:test: "},
		{"web:test:unit: ok", "web:test:unit: "},
		{"app-1  | Traceback (most recent call last):", "app-1  | "},
		{"db_1 | LOG:  database system is ready", "db_1 | "},
		{"app-1  |", "app-1  |"},
		{"[pod/web-1/app] Traceback (most recent call last):", "[pod/web-1/app] "},
		{"[pod/web-1] no container", ""},
		// not prefixes
		{"19 | pub use aes::{decrypt_aes_gcm};", ""},
		{"app | no replica number", ""},
		{"Error: connect ECONNREFUSED", ""},
		{"main.c:12:5: error: 'x' undeclared", ""},
		{"http://example.com: down", ""},
		{"  indented test: x", ""},
		{"ERROR  run failed: command exited (1)", ""},
		{"FAIL src/a.test.ts", ""},
		{"Failed:    @acme/web#test", ""},
	} {
		got := tc.l[:taskPrefixLen(tc.l)]
		if got != tc.want {
			t.Errorf("taskPrefixLen(%q) cuts %q, want %q", tc.l, got, tc.want)
		}
	}
}

// TestWorkspaceRunsReadThroughPrefixes: a workspace runner (bun --filter,
// pnpm -r, turbo) or docker compose puts a package's or container's name
// before every line; the failing tests, errors and summaries behind it are
// kept as they are in a plain run, and its passing tests are noise.
func TestWorkspaceRunsReadThroughPrefixes(t *testing.T) {
	for _, tc := range []struct {
		name, prefix, cmd string
		colour            bool
	}{
		{"bun", "@acme/core test: ", "bun run --filter '*' test", false},
		{"pnpm", "packages/core test: ", "pnpm -r test", false},
		{"turbo", "@acme/core:test: ", "npx turbo run test", true},
		{"compose", "core-1  | ", "docker compose up --abort-on-container-exit", false},
	} {
		var b strings.Builder
		line := func(s string) {
			if tc.colour {
				b.WriteString("\x1b[33m" + tc.prefix + "\x1b[0m" + s + "\n")
			} else {
				b.WriteString(tc.prefix + s + "\n")
			}
		}
		line("test/cart.test.ts:")
		for i := range 120 {
			line(fmt.Sprintf("(pass) cart > handles case number %03d of the pricing table [%d.00ms]", i, i%9+1))
			if i == 70 {
				line("(fail) cart > applies the member discount [3.00ms]")
				line("error: expect(received).toBe(expected)")
			}
		}
		line("")
		line(" 120 pass")
		line(" 1 fail")
		line("Ran 121 tests across 14 files. [1.92s]")
		text, h := b.String(), bash(tc.cmd)
		for _, ratio := range []float64{4, 10} {
			s := Structural(StructuralOptions{TargetRatio: ratio})
			out, rep := s.Compress(text, h)
			if !rep.Changed {
				t.Fatalf("%s %gx: unchanged (kind %s)", tc.name, ratio, rep.Kind)
			}
			for _, want := range []string{
				"(fail) cart > applies the member discount", "error: expect(received).toBe(expected)", "1 fail", "Ran 121 tests across 14 files",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("%s %gx: lost %q:\n%s", tc.name, ratio, want, out)
				}
			}
			if !strings.Contains(out, "passing tests") {
				t.Errorf("%s %gx: the (pass) lines are not counted as passing tests:\n%s", tc.name, ratio, out)
			}
			if err := checkGuards(s, text, h); err != nil {
				t.Errorf("%s %gx: %v", tc.name, ratio, err)
			}
		}
	}
}

func TestIsTaskLog(t *testing.T) {
	md := "Note that: the parser is lazy.\nSee also: the lexer.\nAlso this: x\n- item one\n- item two\n"
	if isTaskLog(md) {
		t.Errorf("prose read as a task log")
	}
	mixed := strings.Repeat("web:build: ok\n", 2) + strings.Repeat("plain line\n", 10)
	if isTaskLog(mixed) {
		t.Errorf("two prefixed lines of twelve read as a task log")
	}
	if !isTaskLog(strings.Repeat("app-1  | GET /health 200\n", 5)) {
		t.Errorf("a compose log not read as a task log")
	}
}

// FuzzTaskPrefix: the prefix cut is a prefix of the line, and a line cut
// by it is read the same whether the text is read as a task log or not.
func FuzzTaskPrefix(f *testing.F) {
	for _, l := range []string{"@a/b test: x", "web:build: ok", "app-1  | x", "19 | x", "a:b:", "a b:", "x-1 |", ""} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, l string) {
		n := taskPrefixLen(l)
		if n < 0 || n > len(l) {
			t.Fatalf("taskPrefixLen(%q) = %d", l, n)
		}
		_ = isTaskLog(l + "\n" + l + "\n" + l)
	})
}

func TestSyslogPrefixLen(t *testing.T) {
	for _, tc := range []struct {
		l    string
		want string // the prefix cut, "" for none
	}{
		{"Nov 28 10:00:00 build-host runner[4242]: FAILED tests/a.py::t", "Nov 28 10:00:00 build-host runner[4242]: "},
		{"Nov  8 09:01:02 host kernel: Out of memory: Killed process 12", "Nov  8 09:01:02 host kernel: "},
		{"Nov 28 10:00:00.123456 host app.service[1]: started", "Nov 28 10:00:00.123456 host app.service[1]: "},
		{"2024-11-28T10:00:00+0000 host app[7]: panic: boom", "2024-11-28T10:00:00+0000 host app[7]: "},
		{"2024-11-28T10:00:00.5+00:00 host systemd[1]: app.service: Failed with result 'exit-code'.", "2024-11-28T10:00:00.5+00:00 host systemd[1]: "},
		{"Nov 28 10:00:00 host app[12]:", "Nov 28 10:00:00 host app[12]:"},
		{"Now 28 10:00:00 host app[1]: x", ""},   // not a month
		{"anF 28 10:00:00 host app[1]: x", ""},   // not a month either
		{"Nov 28 10:00 host app[1]: x", ""},      // no seconds
		{"Nov 28 10:00:00 host app[x]: x", ""},   // not a pid
		{"Nov 28 10:00:00 host app[1] x", ""},    // no colon
		{"Nov 28 10:00:00 hostonly", ""},         // no program
		{"2024-11-28T10:00:00 host app: x", ""},  // no offset: not journalctl's
		{"Note: the build on Nov 28 failed", ""}, // prose
		// Heroku's log stream: no host, the dyno in brackets.
		{"2024-05-01T10:00:00.123456+00:00 app[web.1]: FAILED tests/a.py::t", "2024-05-01T10:00:00.123456+00:00 app[web.1]: "},
		{"2024-05-01T10:00:00+00:00 heroku[router]: at=error code=H10", "2024-05-01T10:00:00+00:00 heroku[router]: "},
		{"2024-05-01T10:00:00+00:00 app[web.1] x", ""}, // no colon
		{"2024-05-01T10:00:00+00:00 app[]: x", ""},     // no dyno
	} {
		if got := tc.l[:syslogPrefixLen(tc.l)]; got != tc.want {
			t.Errorf("syslogPrefixLen(%q) cuts %q, want %q", tc.l, got, tc.want)
		}
	}
	log := "Nov 28 10:00:00 h app[1]: a\nNov 28 10:00:01 h app[1]: b\n\nNov 28 10:00:02 h app[1]: c\nplain\n"
	if prefixOf(log) != syslogPrefix {
		t.Errorf("a journal read as %v", prefixOf(log))
	}
	if prefixOf("Nov 28 10:00:00 h app[1]: a\nplain\nplain\nplain\n") == syslogPrefix {
		t.Errorf("one syslog line made an output a journal")
	}
}

// prefixCut is a line and the prefix a prefix test should cut from it
// ("" for none).
type prefixCut struct{ l, want string }

// checkPrefixCuts runs the prefix length function f, named name, on cases.
func checkPrefixCuts(t *testing.T, name string, f func(string) int, cases []prefixCut) {
	t.Helper()
	for _, tc := range cases {
		if got := tc.l[:f(tc.l)]; got != tc.want {
			t.Errorf("%s(%q) cuts %q, want %q", name, tc.l, got, tc.want)
		}
	}
}

// TestClockPrefixLen: a bare time of day before each line (Jenkins'
// Timestamper, gulp) is read through, and only when most lines carry it.
func TestClockPrefixLen(t *testing.T) {
	checkPrefixCuts(t, "clockPrefixLen", clockPrefixLen, []prefixCut{
		{"10:00:00 FAILED tests/a.py::t", "10:00:00 "},
		{"[10:00:00] Starting 'build'...", "[10:00:00] "},
		{"10:00:00.123 + make test", "10:00:00.123 "},
		{"[10:00:00.5] x", "[10:00:00.5] "},
		{"10:00:00", "10:00:00"},
		{"10:00:00x", ""},        // not a time alone
		{"[10:00:00 x", ""},      // unclosed
		{"10:00 x", ""},          // no seconds
		{"1:00:00 x", ""},        // one-digit hour: not this form
		{"10:00:00AM x", ""},     // not followed by a space
		{"Took 10:00:00 to", ""}, // prose
	})
	if prefixOf("10:00:00 a\n10:00:01 b\n\n10:00:02 c\nplain\n") != clockPrefix {
		t.Errorf("a clocked log not read as one")
	}
	if prefixOf("10:00:00 a\nplain\nplain\nplain\n") == clockPrefix {
		t.Errorf("one clocked line made an output a clocked log")
	}
}

// TestBuildkitPrefixLen: docker build's plain progress is read through its
// step numbers and times, so a test run inside a RUN step reads as one.
func TestBuildkitPrefixLen(t *testing.T) {
	checkPrefixCuts(t, "buildkitPrefixLen", buildkitPrefixLen, []prefixCut{
		{"#12 3.210 FAILED tests/a.py::t - assert 1 == 2", "#12 3.210 "},
		{"#12 103.004 === 1 failed, 40 passed in 3.2s ===", "#12 103.004 "},
		{"#12 3.210", "#12 3.210"},
		{"#5 [2/4] RUN pytest -q", "#5 "},
		{"#5 DONE 0.5s", "#5 "},
		{"#5 3.2 x", "#5 "},    // not BuildKit's three decimals: the number only
		{"#5 3.2100 x", "#5 "}, // four
		{"#5 3.210x", "#5 "},   // not followed by a space
		{"# heading", ""},      // Markdown
		{"#define X 1", ""},    // C
		{"#123456 x", ""},      // longer than a step number
		{"#12", ""},
		{"12 3.210 x", ""},
	})
	if prefixOf("#1 [internal] load build definition\n#1 DONE 0.0s\n#5 [2/4] RUN pytest\n#5 1.204 collected 3 items\n#5 1.310 FAILED t.py::x\n") != buildkitPrefix {
		t.Errorf("a BuildKit log not read as one")
	}
	if prefixOf("# Title\n\nSome prose.\n#1 first\nmore prose\nand more\n") == buildkitPrefix {
		t.Errorf("a Markdown note read as a BuildKit log")
	}
	run := "#8 [3/5] RUN pytest -q\n"
	for i := range 200 {
		run += fmt.Sprintf("#8 %d.%03d tests/test_a.py::test_%d PASSED\n", i/100, i%1000, i)
	}
	run += "#8 2.101 FAILED tests/test_a.py::test_y - AssertionError\n#8 2.102 === 1 failed, 200 passed in 2.10s ===\n#8 ERROR: process \"/bin/sh -c pytest -q\" did not complete successfully: exit code: 1\n"
	out, rep := Structural(StructuralOptions{TargetRatio: 10}).Compress(run, bash("docker build ."))
	for _, want := range []string{"FAILED tests/test_a.py::test_y", "=== 1 failed, 200 passed in 2.10s ==="} {
		if !strings.Contains(out, want) {
			t.Errorf("%s: %q dropped:\n%s", rep.Kind, want, out)
		}
	}
}

func FuzzSyslogPrefix(f *testing.F) {
	for _, l := range []string{"Nov 28 10:00:00 h app[1]: x", "2024-11-28T10:00:00+0000 h k: x", "Nov  8 09:01:02 h k:", "Jan 1", "", "2024-05-01T10:00:00+00:00 app[web.1]: x", "[10:00:00.5] x", "10:00:00", "#12 3.210 x", "#5 DONE 0.5s"} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, l string) {
		n := syslogPrefixLen(l)
		if n < 0 || n > len(l) {
			t.Fatalf("syslogPrefixLen(%q) = %d", l, n)
		}
		if n > 0 && l[n-1] != ' ' && n != len(l) {
			t.Fatalf("syslogPrefixLen(%q) = %d: the cut ends inside the line's text", l, n)
		}
		_ = isSyslog(l + "\n" + l + "\n" + l)
		if c := clockPrefixLen(l); c < 0 || c > len(l) || c > 0 && c != len(l) && l[c-1] != ' ' {
			t.Fatalf("clockPrefixLen(%q) = %d", l, c)
		}
		if c := buildkitPrefixLen(l); c < 0 || c > len(l) || c > 0 && c != len(l) && l[c-1] != ' ' {
			t.Fatalf("buildkitPrefixLen(%q) = %d", l, c)
		}
	})
}

// TestMustCutCountsAfterPrefix: when a run's failing-test lines alone
// overflow the aim and are cut, the cut counts from the line's own text.
// Behind a CI runner's timestamp (29 bytes) or a read's line number, a
// cut measured from the start of the printed line fell inside the test
// id, which then matched nothing an agent could rerun.
func TestMustCutCountsAfterPrefix(t *testing.T) {
	var run strings.Builder
	run.WriteString("============================= test session starts ==============================\n")
	for i := range 40 {
		fmt.Fprintf(&run, "tests/unit/test_skills_resolver.py::test_resource_rejects_paths_escaping_the_skill_directory_case_%02d PASSED\n", i)
	}
	run.WriteString("=========================== short test summary info ============================\n")
	var ids []string
	for i := range 80 {
		id := fmt.Sprintf("tests/unit/test_skills_resolver.py::test_resource_rejects_paths_escaping_the_skill_directory[case-%02d]", i)
		ids = append(ids, id)
		fmt.Fprintf(&run, "FAILED %s - wakil.skills.errors.SkillResolutionError: /private/var/folders/qs/vch706c13yl1t0nsg2s6srnm0000gn/T/pytest-of-dev/pytest-122/kb/skills/meeting-synthesis/SKILL.md has invalid metadata\n", id)
	}
	run.WriteString("80 failed, 40 passed in 11.66s\n")
	printed := run.String()
	shapes := map[string]string{"printed": printed}
	var ci, read strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(printed, "\n"), "\n") {
		fmt.Fprintf(&ci, "2026-03-01T10:%02d:%02d.%07dZ %s\n", i/60%60, i%60, i*7919%10000000, l)
		fmt.Fprintf(&read, "%6d→%s\n", i+1, l)
	}
	shapes["CI timestamps"], shapes["read back"] = ci.String(), read.String()
	hints := map[string]Hint{
		"printed":       bash("pytest tests/unit"),
		"CI timestamps": bash("gh run view 42 --log-failed"),
		"read back":     {ToolName: "Read", Args: `{"file_path":"/tmp/claude/tasks/b1.output"}`},
	}
	s := Structural(StructuralOptions{TargetRatio: 10})
	for name, text := range shapes {
		out, rep := s.Compress(text, hints[name])
		if !strings.Contains(out, "bytes omitted") {
			t.Fatalf("%s: the must-keep lines were not cut (%s, %d → %d bytes); the test needs them cut", name, rep.Kind, len(text), len(out))
		}
		for _, id := range ids {
			if !strings.Contains(out, "FAILED "+id) {
				t.Errorf("%s (%s): test id %s not kept whole:\n%s", name, rep.Kind, id, out)
				break
			}
		}
		if err := checkGuards(s, text, hints[name]); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// prefixOfFivePasses is prefixOf as it read before one pass counted every
// kind: each kind's test over the first lines on its own, in order.
func prefixOfFivePasses(text string) linePrefix {
	most := func(prefixLen func(string) int) bool {
		lines, prefixed := 0, 0
		for l := range headLines(text, taskLogLines) {
			if isBlank(l) {
				continue
			}
			lines++
			if prefixLen(l) > 0 {
				prefixed++
			}
		}
		return prefixed >= 3 && prefixed*5 >= lines*3
	}
	ci := false
	for l := range headLines(text, 2) {
		ci = ci || ciLogPrefix(l) > 0
	}
	switch {
	case ci || most(ciLogPrefix):
		return ciPrefix
	case isTaskLog(text):
		return taskPrefix
	case most(syslogPrefixLen):
		return syslogPrefix
	case most(clockPrefixLen):
		return clockPrefix
	case most(buildkitPrefixLen):
		return buildkitPrefix
	}
	return noPrefix
}

// samePrefix says how prefixOf's reading of text differs from the five
// passes', or "": alike where the five passes find a prefix; where a read
// numbered the lines and they find none, prefixOf finds the prefix the five
// passes find after the numbers, if any.
func samePrefix(text string) string {
	got, want := prefixOf(text), prefixOfFivePasses(text)
	if want != noPrefix || got&numberedPrefix == 0 {
		if got != want {
			return fmt.Sprintf("prefixOf = %d, five passes %d", got, want)
		}
		return ""
	}
	var b strings.Builder
	for l := range strings.Lines(text) {
		b.WriteString(l[readNumber(l):])
	}
	if after := prefixOfFivePasses(b.String()); got.kind() != after {
		return fmt.Sprintf("prefixOf = %d, five passes after the numbers %d", got, after)
	}
	return ""
}

// TestPrefixOfOnePass: the one pass reads every committed output's prefix
// as the five did, and finds each kind on some of them.
func TestPrefixOfOnePass(t *testing.T) {
	var recs []record
	if !raceEnabled { // loading them under the race detector takes half a minute
		recs = committedRecords(t)
	}
	found := map[linePrefix]int{}
	for _, r := range recs {
		if err := samePrefix(r.Output); err != "" {
			t.Errorf("%s: %s", r.ID, err)
		}
		found[prefixOf(r.Output)]++
	}
	for _, text := range []string{
		"2026-07-14T14:03:52.0047503Z ##[group]Run pytest\n",
		"web:build: a\nweb:build: b\nweb:build: c\n",
		"Jul 14 14:03:52 host sshd[1]: a\nJul 14 14:03:52 host sshd[1]: b\nJul 14 14:03:52 host sshd[1]: c\n",
		"10:00:00 a\n10:00:01 b\n10:00:02 c\n",
		"#5 0.101 a\n#5 0.102 b\n#5 0.103 c\n",
	} {
		if err := samePrefix(text); err != "" || prefixOf(text) == noPrefix {
			t.Errorf("%q: %s, prefixOf %d", text, err, prefixOf(text))
		}
		if got, want := prefixOf(numbered(text)), prefixOf(text)|numberedPrefix; got != want {
			t.Errorf("%q read with numbers: prefixOf = %d, want %d", text, got, want)
		}
	}
	t.Logf("prefixes of committed outputs: %v", found)
}

// FuzzPrefixOf: one pass and five agree on any text.
func FuzzPrefixOf(f *testing.F) {
	for _, s := range []string{"", "\n\n", "     1→2026-07-14T14:03:52.0047503Z a\n     2→b\n", "     1\tapp-1  | a\n     2\tapp-1  | b\n     3\tapp-1  | c\n", "2026-07-14T14:03:52.0047503Z a\n", "x\n2026-07-14T14:03:52.0047503Z a\n", "\x1b[32mweb:build:\x1b[0m a\nweb:build: b\nweb:build: c\n", "10:00:00 a\n\n10:00:01 b\nx\n10:00:02 c\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if err := samePrefix(text); err != "" {
			t.Fatalf("%q: %s", text, err)
		}
	})
}

// isTaskLog and isSyslog are prefixOf's task and syslog tests on their
// own: most of text's first lines carry the prefix (for a task, one task on
// three lines at least).
func isTaskLog(text string) bool {
	var r taskRun
	for l := range headLines(text, taskLogLines) {
		r.add(l)
	}
	return r.is()
}

func isSyslog(text string) bool {
	h := headPrefixesAfter(text, false)
	return h.most(h.syslog)
}
