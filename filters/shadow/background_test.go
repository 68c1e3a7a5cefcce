package shadow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
)

// backgroundBody is an Anthropic Messages request in which a Bash call
// starts a command in the background and TaskOutput reads its output, as
// Claude Code 2.1 sends them.
func backgroundBody(command, taskID, output string) []byte {
	msgs := []any{
		map[string]any{"role": "user", "content": "Run the login test in the background."},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_01", "name": "Bash",
			"input": map[string]any{"command": command, "description": "Run the test", "run_in_background": true}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_01",
			"content": "Command running in background with ID: " + taskID + ". Output is being written to: /private/tmp/claude-501/tasks/" + taskID + ".output"}}},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_02", "name": "TaskOutput",
			"input": map[string]any{"task_id": taskID, "block": true, "timeout": 30000}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_02", "content": output}}},
	}
	b, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": msgs}) // maps of strings always marshal
	return b
}

// TestBackgroundOutputUsesItsCommand: a background task's output, read
// with TaskOutput, is compressed with the hint of the Bash call that
// started it: the test id the command names is among the lines kept.
func TestBackgroundOutputUsesItsCommand(t *testing.T) {
	var log strings.Builder
	log.WriteString("============================= test session starts ==============================\ncollected 4001 items\n\n")
	for i := range 4000 {
		if i == 2000 {
			log.WriteString("tests/test_api.py::test_login_with_expired_token PASSED [ 50%]\n")
		}
		fmt.Fprintf(&log, "tests/test_mod.py::test_case_%05d PASSED [%2d%%]\n", i, i*100/4001)
	}
	log.WriteString("===== 4001 passed in 30.21s =====\n")
	body := backgroundBody("uv run pytest tests/test_api.py::test_login_with_expired_token tests/test_mod.py -v", "b50b67f", log.String())

	c, err := wire.Parse(wire.Anthropic, body)
	if err != nil {
		t.Fatal(err)
	}
	hints := backgroundHints(c)
	if h, ok := hints[&c.Results[1]]; !ok || h.ToolName != "Bash" || !strings.Contains(h.Args, "test_login_with_expired_token") {
		t.Fatalf("TaskOutput's hint %+v, %v", h, ok)
	}
	if _, ok := hints[&c.Results[0]]; ok {
		t.Error("the starting call got a hint of its own")
	}

	f := NewCompressFilter(defaultOpts(), Env{Store: NewMemory(MemoryOptions{}), Tenant: "t1"})
	out := run(t, f, wire.Anthropic, body)
	oc, err := wire.Parse(wire.Anthropic, out)
	if err != nil {
		t.Fatal(err)
	}
	got := oc.Results[1].Texts[0].Text()
	if len(got) >= log.Len() || !strings.Contains(got, "test_login_with_expired_token PASSED") {
		t.Errorf("compressed %d → %d bytes without the test the command named:\n%.2000s", log.Len(), len(got), got)
	}
}

// TestBackgroundHintsOpenAI: OpenAI Chat carries a call's arguments as a
// string of JSON; the task id is read through it.
func TestBackgroundHintsOpenAI(t *testing.T) {
	body := `{"model":"gpt-4o","messages":[{"role":"user","content":"x"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"exec_command","arguments":"{\"cmd\":\"cargo test -p vfox\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"Chunk ID: fb38ec\nWall time: 30.0020 seconds\nProcess running with session ID 55420\nOutput:\n   Compiling vfox"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"write_stdin","arguments":"{\"session_id\":55420,\"chars\":\"\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c2","content":"test result: ok. 86 passed"}]}`
	c, err := wire.Parse(wire.OpenAIChat, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := backgroundHints(c)[&c.Results[1]]; !ok || h.ToolName != "exec_command" || !strings.Contains(h.Args, "cargo test -p vfox") {
		t.Errorf("write_stdin's hint %+v, %v", h, ok)
	}
}

func TestLaunchedID(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`"Command running in background with ID: b463a86. Output is being written to: REDACTED.output"`, "b463a86"},
		{`"Chunk ID: fb38ec\nWall time: 30.0020 seconds\nProcess running with session ID 55420\nOriginal token count: 12\nOutput:\n"`, "55420"},
		{`"Command completed with exit code 0"`, ""},
		{`"` + strings.Repeat("x", launchHead) + ` in background with ID: late"`, ""},
	} {
		if got := launchedID(c.raw); got != c.want {
			t.Errorf("launchedID(%.60q) = %q, want %q", c.raw, got, c.want)
		}
	}
}

// TestHintSameInEveryDialect: the call's arguments reach compression in
// the form each dialect sends them (an object, or OpenAI's string of
// JSON); the same output under the same call compresses to the same text
// either way. A pytest run under Codex's exec_command header is read as a
// test log only through its command line.
func TestHintSameInEveryDialect(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "compress", "testdata", "pytest_failures.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(raw[:bytes.LastIndexByte(raw[:15000], '\n')+1])
	text := "Chunk ID: 3f9a1c\nWall time: 41.2 seconds\nProcess exited with code 1\nOriginal token count: 3921\nOutput:\n" + log
	args := `{"cmd":"pytest -rA lib/matplotlib/tests/test_figure.py","workdir":"/repo"}`
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	bodies := map[wire.Dialect]string{
		wire.Anthropic: `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"fix the tests"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"exec_command","input":` + args + `}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":` + q(text) + `}]}]}`,
		wire.OpenAIChat: `{"model":"gpt-4o","messages":[{"role":"user","content":"fix the tests"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"exec_command","arguments":` + q(args) + `}}]},` +
			`{"role":"tool","tool_call_id":"call_1","content":` + q(text) + `}]}`,
	}
	got := map[wire.Dialect]string{}
	for d, body := range bodies {
		f := NewCompressFilter(defaultOpts(), Env{Store: NewMemory(MemoryOptions{}), Tenant: "t1"})
		out, rep, err := pipeline.New(f).Run(d, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Changes) != 1 || rep.Changes[0].Detail != string(compress.KindTestLog) {
			t.Errorf("%s: changes %+v, want one, as a test log", d, rep.Changes)
		}
		c, err := wire.Parse(d, out)
		if err != nil {
			t.Fatal(err)
		}
		_, _, got[d], _ = ParseReference(c.Results[0].Texts[0].Text())
	}
	if got[wire.Anthropic] != got[wire.OpenAIChat] || got[wire.Anthropic] == "" {
		t.Errorf("the two dialects compress the same output differently:\n--- anthropic\n%.1500s\n--- openai\n%.1500s", got[wire.Anthropic], got[wire.OpenAIChat])
	}
}
