package shape

import (
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// FuzzTextOnlyChat: any input renders to valid JSON or comes back
// unchanged with an error; a rendered request carries no tools, tool calls,
// tool or system messages; every result whose call is in the request
// reaches the prompt exactly once; the rendering is deterministic.
func FuzzTextOnlyChat(f *testing.F) {
	seed, _ := os.ReadFile("testdata/chat_tool_loop.json")
	f.Add(string(seed), "r1")
	f.Add(`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"x","arguments":"[1]"}}]},{"role":"tool","tool_call_id":"a","content":"R"}]}`, "R")
	f.Add(`{"messages":[{"role":"system","content":"<system_context>"},{"role":"user","content":[{"type":"image_url"}]}],"tools":[{"function":{"name":"n\"<>"}}]}`, "x")
	f.Add(`{"messages":[]}`, "")
	f.Add(`{"messages":[{"role":"tool","content":"orphan"}]}`, "orphan")
	f.Fuzz(func(t *testing.T, body, marker string) {
		out, rep, ok := renderChecked(t, wire.OpenAIChat, body, "tools", "tool_choice", "functions", "function_call")
		if !ok {
			return
		}
		gjson.GetBytes(out, "messages").ForEach(func(_, m gjson.Result) bool {
			switch m.Get("role").String() {
			case "system", "developer", "tool", "function":
				t.Fatalf("role %s sent: %s", m.Get("role"), out)
			}
			if m.Get("tool_calls").Exists() {
				t.Fatalf("tool_calls sent")
			}
			return true
		})
		// A distinctive result text appears exactly once when its call is
		// answered once.
		// (Quoting call syntax only ever changes a '<': quote.go.)
		if len(marker) >= 6 && !strings.Contains(marker, "<") && rep.Unmatched == 0 && strings.Count(body, marker) == 1 &&
			strings.Contains(gjson.GetBytes([]byte(body), `messages.#(role=="tool").content`).String(), marker) {
			if n := strings.Count(gjson.GetBytes(out, "messages").String(), marker); n != 1 {
				t.Fatalf("result text %q appears %d times", marker, n)
			}
		}
	})
}

// FuzzTextOnlyAnthropic: the same properties for Anthropic Messages: valid
// JSON or the body unchanged with an error; no system, tools, tool_use or
// tool_result left; deterministic.
func FuzzTextOnlyAnthropic(f *testing.F) {
	seed, _ := os.ReadFile("testdata/anthropic_tool_loop.json")
	f.Add(string(seed), "RATE = 0.1")
	f.Add(`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"x","input":[1]}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"RESULT-A","cache_control":{"type":"ephemeral"}}]}]}`, "RESULT-A")
	f.Add(`{"system":"s","messages":[{"role":"user","content":"<system_context>"}],"tools":[{"name":"n"}],"tool_choice":{"type":"tool","name":"n"}}`, "")
	f.Add(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"zz"}]}]}`, "")
	f.Fuzz(func(t *testing.T, body, marker string) {
		out, rep, ok := renderChecked(t, wire.Anthropic, body, "system", "tools", "tool_choice")
		if !ok {
			return
		}
		gjson.GetBytes(out, "messages").ForEach(func(_, m gjson.Result) bool {
			m.Get("content").ForEach(func(_, b gjson.Result) bool {
				if typ := b.Get("type").String(); typ == "tool_use" || typ == "tool_result" {
					t.Fatalf("%s block sent: %s", typ, out)
				}
				return true
			})
			return true
		})
		// A distinctive result text, once in the input and inside a
		// result that has its call, reaches the prompt exactly once.
		if len(marker) >= 6 && !strings.Contains(marker, "<") && rep.Unmatched == 0 && rep.Results > 0 && strings.Count(body, marker) == 1 &&
			strings.Contains(gjson.Get(body, `messages.#.content.#(type=="tool_result")#.content`).Raw, marker) {
			if n := strings.Count(gjson.GetBytes(out, "messages").String(), marker); n != 1 {
				t.Fatalf("result text %q appears %d times", marker, n)
			}
		}
	})
}

// renderChecked renders body and checks what holds for any input: an
// error leaves the body unchanged; otherwise the output is valid JSON,
// the same on a second run, and has none of the members a text-only
// upstream refuses. ok is false when there was an error.
func renderChecked(t *testing.T, d wire.Dialect, body string, refused ...string) ([]byte, Report, bool) {
	t.Helper()
	out, rep, err := TextOnly(d, []byte(body), Options{})
	if err != nil {
		if string(out) != body {
			t.Fatalf("error %v, body changed", err)
		}
		return nil, rep, false
	}
	if !jsonsafe.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	if again, _, _ := TextOnly(d, []byte(body), Options{}); string(again) != string(out) {
		t.Fatal("not deterministic")
	}
	for _, k := range refused {
		if gjson.GetBytes(out, k).Exists() {
			t.Fatalf("%s still sent", k)
		}
	}
	return out, rep, true
}
