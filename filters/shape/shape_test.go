package shape

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestTextOnlyGolden pins the exact rendering of a tool loop for each
// dialect: the bytes are what the prompt cache keys on.
func TestTextOnlyGolden(t *testing.T) {
	for _, tc := range []struct {
		file string
		d    wire.Dialect
		want Report
	}{
		{"chat_tool_loop", wire.OpenAIChat, Report{SystemMessages: 2, SystemBytes: 50, Tools: 2, Calls: 3, Results: 2, Missing: 1, Unmatched: 1, Merged: 3, Changed: true}},
		{"anthropic_tool_loop", wire.Anthropic, Report{SystemMessages: 1, SystemBytes: 23, Tools: 2, Calls: 3, Results: 2, Missing: 1, Unmatched: 1, Changed: true}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", tc.file+".json"))
			if err != nil {
				t.Fatal(err)
			}
			out, rep, err := TextOnly(tc.d, in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep != tc.want {
				t.Errorf("report %+v, want %+v", rep, tc.want)
			}
			golden := filepath.Join("testdata", tc.file+".golden.json")
			if *update {
				os.WriteFile(golden, out, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != string(want) {
				t.Errorf("rendering differs from %s:\n%s", golden, out)
			}
			checkTextOnly(t, tc.d, out)
			// Deterministic and stable: the same bytes again, and rendering
			// the rendered request changes nothing more.
			again, _, _ := TextOnly(tc.d, in, Options{})
			if string(again) != string(out) {
				t.Error("not deterministic")
			}
		})
	}
}

// checkTextOnly asserts what a text-only upstream checks: no tools, no
// tool calls or results, no system messages, strict alternation.
func checkTextOnly(t *testing.T, d wire.Dialect, out []byte) {
	t.Helper()
	if !jsonsafe.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	for _, k := range []string{"tools", "tool_choice", "functions", "function_call", "system"} {
		if gjson.GetBytes(out, k).Exists() {
			t.Errorf("%s still sent", k)
		}
	}
	prev := ""
	gjson.GetBytes(out, "messages").ForEach(func(_, m gjson.Result) bool {
		role := m.Get("role").String()
		if role != "user" && role != "assistant" {
			t.Errorf("role %q sent", role)
		}
		if role == prev {
			t.Errorf("two %s messages in a row", role)
		}
		prev = role
		if m.Get("tool_calls").Exists() || m.Get("function_call").Exists() {
			t.Error("tool_calls sent")
		}
		m.Get("content").ForEach(func(_, p gjson.Result) bool {
			if typ := p.Get("type").String(); typ == "tool_use" || typ == "tool_result" {
				t.Errorf("%s block sent", typ)
			}
			return true
		})
		return true
	})
	if first := gjson.GetBytes(out, "messages.0"); first.Get("role").String() != "user" {
		t.Errorf("first message is %s", first.Get("role"))
	}
}

func TestTextOnlyChatDetails(t *testing.T) {
	in, _ := os.ReadFile("testdata/chat_tool_loop.json")
	out, _, _ := TextOnly(wire.OpenAIChat, in, Options{})
	s := string(out)
	for _, want := range []string{
		"<system_context>\n=== Agent Instructions ===\nYou are a coding agent. Be brief.\n\n=== System Context 2 ===\nRepository: /repo\n\n=== Tools ===\n",
		"Tool: run\nDescription: Run a shell command.\nParameters (JSON schema): {\"type\":\"object\"",
		"Let me run it.\n\n<invoke name=\"run\">\n<parameter name=\"command\">pytest tests/test_cart.py -q</parameter>\n<parameter name=\"timeout\">60</parameter>\n</invoke>",
		"<!-- result of tool call call_a1 (run): success -->\nF.",
		"<!-- result of tool call call_a2 (read_file): missing -->\nno result received",
		"<!-- result of tool call call_b1 (read_file): success -->\nRATE = 0.1",
		"Call at least one tool in this reply",
	} {
		if !strings.Contains(gjson.GetBytes(out, "messages").Raw, jsonEscape(want)) {
			t.Errorf("missing %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "stray result") {
		t.Error("an unmatched result was sent")
	}
	if gjson.GetBytes(out, "stream").Raw != "true" || gjson.GetBytes(out, "temperature").Raw != "0" {
		t.Error("other members must pass through")
	}
	// The seed's stateful rule: systems dropped once the conversation has
	// an assistant turn, tools still rendered.
	out2, rep, _ := TextOnly(wire.OpenAIChat, in, Options{InjectSystem: InjectNewConversations})
	if strings.Contains(string(out2), "Be brief") || !strings.Contains(string(out2), "=== Tools ===") || rep.SystemMessages != 2 {
		t.Errorf("new_conversations: %s", out2)
	}
}

func jsonEscape(s string) string {
	q := string(wire.QuoteString(s))
	return q[1 : len(q)-1]
}
