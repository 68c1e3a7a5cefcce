package compress

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// TestCodeModeCommand reads the shell commands out of Codex code-mode
// programs as Codex CLI 0.14x writes them (the inputs below are the shapes
// of the committed codex-cli-hk and codex-cli-mise sessions).
func TestCodeModeCommand(t *testing.T) {
	for _, c := range []struct {
		name, program, want string
		ok                  bool
	}{
		{"one command",
			`const r = await tools.exec_command({cmd:"sed -n '1,240p' src/tera.rs","workdir":"/w/hk","yield_time_ms":10000,"max_output_tokens":20000}); text(r.output);` + "\n",
			"sed -n '1,240p' src/tera.rs", true},
		{"a batch, escaped quotes and a line break",
			`const r = await tools.exec_command({cmd:"sed -n '1,125p' src/tera.rs\nrg -n \"fn run_cmd|run_cmd\\(\" src/step","workdir":"/w"}); text(r.output);`,
			"sed -n '1,125p' src/tera.rs\nrg -n \"fn run_cmd|run_cmd\\(\" src/step", true},
		{"Promise.all of several calls",
			"const results = await Promise.all([\n  tools.exec_command({cmd:\"git describe --tags --always --dirty\",\"workdir\":\"/w\"}),\n  tools.exec_command({\"cmd\": 'git status --short', workdir:\"/w\"}),\n]);\ntext(JSON.stringify(results));",
			"git describe --tags --always --dirty\ngit status --short", true},
		{"a template literal", "await tools.exec_command({cmd: `cargo test -p hk`}); text(r.output)", "cargo test -p hk", true},
		{"unicode escapes", `await tools.exec_command({cmd:"echo \u00e9\u{1F600}\x41"})`, "echo é😀A", true},
		{"a cmd member of another name is not it", `await tools.exec_command({subcmd:"x", cmd:"ls -la"})`, "ls -la", true},
		{"polling a session runs no command", `const r = await tools.write_stdin({session_id:38995,chars:"",yield_time_ms:30000}); text(JSON.stringify(r));`, "", true},
		{"a command in a variable is not read", "const c = \"ls\"; await tools.exec_command({cmd: c});", "", true},
		{"a template with a substitution is not read", "await tools.exec_command({cmd: `ls ${dir}`});", "", true},
		{"an unterminated literal", `await tools.exec_command({cmd:"ls -la`, "", true},
		{"a plain command line is not a program", "ls -la src/", "", false},
		{"a command that names exec_command is a program only when called", "grep -rn exec_command src/", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := codeModeCommand(c.program)
			if got != c.want || ok != c.ok {
				t.Errorf("codeModeCommand(%q) = %q, %v; want %q, %v", c.program, got, ok, c.want, c.ok)
			}
		})
	}
	// CommandLine reads a program's commands for the summaries; the
	// compressor's own reading (commandOf) keeps the program as it is.
	args := `{"input":"const r = await tools.exec_command({cmd:\"rg -n 'PickFirst' src\",\"workdir\":\"/w\"}); text(r.output);"}`
	if got := CommandLine(gjson.Parse(args)); got != "rg -n 'PickFirst' src" {
		t.Errorf("CommandLine = %q", got)
	}
	if got := commandOf(Hint{ToolName: "exec", Args: args}); !strings.HasPrefix(got, "const r = ") {
		t.Errorf("commandOf = %q, want the program", got)
	}
	if got := CommandLine(gjson.Parse(`{"input":"ls -la"}`)); got != "ls -la" {
		t.Errorf("CommandLine of a plain input = %q", got)
	}
}

// FuzzCodeModeCommand: any program, however hostile, is read without a
// panic, its commands are valid UTF-8 when it is, and a program that is
// not one gives none.
func FuzzCodeModeCommand(f *testing.F) {
	f.Add(`const r = await tools.exec_command({cmd:"sed -n '1,240p' a.rs\nrg -n x src","workdir":"/w"}); text(r.output);`)
	f.Add("await tools.exec_command({cmd: `ls ${d}`}); tools.exec_command({\"cmd\" : 'a\\u{41}\\uD800'})")
	f.Add(`exec_command(cmd:"\`)
	f.Add(strings.Repeat(`exec_command({cmd:"`, 50))
	f.Fuzz(func(t *testing.T, program string) {
		cmd, ok := codeModeCommand(program)
		if !ok && cmd != "" {
			t.Fatalf("not a program, yet commands %q", cmd)
		}
		if utf8.ValidString(program) && !utf8.ValidString(cmd) {
			t.Fatalf("invalid UTF-8 out of a valid program: %q", cmd)
		}
		if !strings.Contains(program, execCall) && cmd != "" {
			t.Fatalf("commands %q without a call", cmd)
		}
	})
}
