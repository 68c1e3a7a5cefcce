package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func bigAnthropicRequest() string {
	var b strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&b, "line %d héllo 🙂\\n", i)
	}
	return `{"model":"claude","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"` + b.String() + `"}]}]}`
}

func TestRewriteCommand(t *testing.T) {
	clampOnly := filepath.Join(t.TempDir(), "clamp.yaml")
	if err := os.WriteFile(clampOnly, []byte("profiles: {default: {compress: {enabled: false}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		args       []string
		in         string
		code       int
		same       bool
		stderrHas  string
		outChecker func(t *testing.T, out []byte)
	}{
		{
			name: "compresses", args: []string{"--path", "/v1/messages"}, in: bigAnthropicRequest(), code: 0,
			stderrHas: "compress result #0 tool=Bash call=toolu_1",
			outChecker: func(t *testing.T, out []byte) {
				s := gjson.GetBytes(out, "messages.1.content.0.content").String()
				if !strings.HasPrefix(s, "[toolproc shadow_id=sh_") || len(s) > 51200 {
					t.Fatalf("not compressed with a reference: %.100q", s)
				}
				if gjson.GetBytes(out, "tools.0.name").String() != "expand_context" {
					t.Fatal("expand_context not offered")
				}
			},
		},
		{
			name: "clamps", args: []string{"--path", "/v1/messages", "--config", clampOnly}, in: bigAnthropicRequest(), code: 0,
			stderrHas: "clamp result #0 tool=Bash call=toolu_1",
			outChecker: func(t *testing.T, out []byte) {
				if s := gjson.GetBytes(out, "messages.1.content.0.content").String(); len(s) > 51200 || len(s) == 0 {
					t.Fatalf("not clamped: %d bytes", len(s))
				}
			},
		},
		{name: "small unchanged", args: []string{"--path", "/v1/messages"}, in: `{"messages":[]}`, code: 0, same: true, stderrHas: "0 changed"},
		// Echoed unchanged (as the server would pass it), but the exit code
		// and one line on stderr say nothing was rewritten.
		{name: "malformed echoed", args: []string{"--path", "/v1/messages"}, in: `{"messages":[`, code: 1, same: true, stderrHas: "passed through unchanged: body is not a JSON object"},
		{name: "ndjson without --ndjson", args: []string{"--path", "/v1/messages"}, in: "{\"messages\":[]}\n{\"messages\":[]}\n", code: 1, same: true, stderrHas: "passed through unchanged"},
		{name: "deep nesting", args: []string{"--path", "/v1/chat/completions"}, in: strings.Repeat("[", 6_500_000), code: 1, same: true, stderrHas: "nested too deep"},
		{name: "unknown path echoed", args: []string{"--path", "/v1/models"}, in: bigAnthropicRequest(), code: 1, same: true, stderrHas: "not an LLM API path"},
		{name: "missing path", args: nil, in: "{}", code: 2},
		{name: "unknown profile", args: []string{"--path", "/v1/messages", "--profile", "nope"}, in: "{}", code: 2, stderrHas: "unknown profile"},
		{name: "bad config", args: []string{"--path", "/v1/messages", "--config", "/does/not/exist"}, in: "{}", code: 2},
		{name: "stray argument", args: []string{"--path", "/v1/messages", "extra"}, in: "{}", code: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := rewrite(tc.args, strings.NewReader(tc.in), &out, &errOut)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, errOut.String())
			}
			if tc.same && out.String() != tc.in {
				t.Fatal("input must be echoed unchanged")
			}
			if !strings.Contains(errOut.String(), tc.stderrHas) {
				t.Fatalf("stderr %q lacks %q", errOut.String(), tc.stderrHas)
			}
			if tc.outChecker != nil {
				tc.outChecker(t, out.Bytes())
			}
		})
	}
}

// --ndjson: one body per line in, one per line out, in order; a line that
// cannot be parsed passes through and is named.
func TestRewriteNDJSON(t *testing.T) {
	lines := []string{bigAnthropicRequest(), `{"messages":[]}`, `{"messages":[`, bigAnthropicRequest()}
	var out, errOut bytes.Buffer
	code := rewrite([]string{"--path", "/v1/messages", "--ndjson"}, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "line 3: not rewritten") || !strings.Contains(errOut.String(), "1 of 4 lines") {
		t.Fatalf("exit %d, stderr %s", code, errOut.String())
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != 4 || got[1] != lines[1] || got[2] != lines[2] {
		t.Fatalf("%d lines out", len(got))
	}
	for _, i := range []int{0, 3} {
		if !strings.HasPrefix(gjson.Get(got[i], "messages.1.content.0.content").String(), "[toolproc shadow_id=sh_") {
			t.Fatalf("line %d not rewritten", i+1)
		}
	}
	if got[0] != got[3] {
		t.Fatal("the same body rewrote differently within one run")
	}
	out.Reset()
	errOut.Reset()
	if code := rewrite([]string{"--path", "/v1/messages", "--ndjson"}, strings.NewReader(lines[1]+"\n"+lines[1]+"\n"), &out, &errOut); code != 0 {
		t.Fatalf("all good lines: exit %d", code)
	}
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	line := `{"time":"2026-11-01T10:00:00Z","kind":"exchange","dialect":"anthropic","profile":"default","model":"claude-sonnet-4-5","tenant":"t1","tokens_removed":1000,"usage":{"input":100,"cache_read":9000,"cache_write":0,"output":50},"usage_outcome":"read"}` + "\n"
	if err := os.WriteFile(audit, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"table", "csv", "json", "html"} {
		var out, errb bytes.Buffer
		if code := runReport([]string{"--audit", audit, "--format", f}, &out, &errb); code != 0 || !strings.Contains(out.String(), "claude-sonnet-4-5") {
			t.Fatalf("%s: code %d, stderr %s, out %s", f, code, errb.String(), out.String())
		}
	}
	var out, errb bytes.Buffer
	if code := runReport(nil, &out, &errb); code != 2 {
		t.Fatalf("no --audit: code %d", code)
	}
	if code := runReport([]string{"--audit", audit, "--format", "xml"}, &out, &errb); code != 2 {
		t.Fatalf("bad format: code %d", code)
	}
	if code := runReport([]string{"--audit", filepath.Join(dir, "missing")}, &out, &errb); code != 1 {
		t.Fatalf("missing file: code %d", code)
	}
}
