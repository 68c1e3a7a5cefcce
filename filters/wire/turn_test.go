package wire_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// Answers in the shapes each API returns (each provider's API reference), each
// mixing a real call with expand_context calls.
const (
	chatMixed  = `{"id":"chatcmpl-9","object":"chat.completion","created":1742498842,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"Let me look.","refusal":null,"annotations":[],"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}},{"id":"call_2","type":"function","function":{"name":"expand_context","arguments":"{\"id\":\"sh_9\"}"}},{"id":"call_3","type":"custom","custom":{"name":"apply_patch","input":"*** Begin Patch"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15},"system_fingerprint":"fp_1"}`
	chatLegacy = `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"function_call":{"name":"expand_context","arguments":"{\"id\":\"sh_L\"}"}},"finish_reason":"function_call"}]}`

	responsesMixed = `{
  "id": "resp_1",
  "object": "response",
  "status": "completed",
  "output": [
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB"},
    {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": "Looking.", "annotations": []}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell", "arguments": "{}", "status": "completed"},
    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "expand_context", "arguments": "{\"id\":\"sh_q\"}", "status": "completed"},
    {"type": "custom_tool_call", "call_id": "call_3", "name": "apply_patch", "input": "x"}
  ],
  "usage": {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13}
}`

	anthropicMixed = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"I need the full log.","signature":"EqQBCkYIARgCIkB"},{"type":"redacted_thinking","data":"EmwKAhgBEgy"},{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_a","name":"Bash","input":{"command":"ls"}},{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},{"type":"tool_use","id":"toolu_b","name":"expand_context","input":{"id":"sh_b"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":20}}`

	geminiMixed = `{"candidates":[{"content":{"parts":[{"text":"ok","thought":true},{"functionCall":{"name":"run_shell","args":{"command":"ls"}},"thoughtSignature":"CrUEAdHt"},{"functionCall":{"name":"expand_context","args":{"id":"sh_g"}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":170},"modelVersion":"gemini-2.5-pro","responseId":"5I7J"}`
	geminiIDs   = `{"candidates":[{"content":{"role":"model","parts":[{"function_call":{"id":"fc-1","name":"expand_context","args":{"id":"sh_h"}},"thought_signature":"Sig1"},{"function_call":{"id":"fc-2","name":"run_shell","args":{}}},{"function_call":{"name":"expand_context","args":{"id":"sh_i"}}}]}}]}`

	bedrockMixed = `{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"Need the log.","signature":"sig=="}}},{"text":"I'll check."},{"toolUse":{"toolUseId":"tooluse_a","name":"bash","input":{"command":"ls"}}},{"toolUse":{"toolUseId":"tooluse_b","name":"expand_context","input":{"id":"sh_b2"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":10,"outputTokens":3,"totalTokens":13},"metrics":{"latencyMs":100}}`
)

func TestTurnFromAnswer(t *testing.T) {
	cases := []struct {
		name      string
		d         wire.Dialect
		answer    string
		assistant string
		calls     []string // CallIDs
		total     int
	}{
		{"chat mixed", wire.OpenAIChat, chatMixed,
			`{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_2","type":"function","function":{"name":"expand_context","arguments":"{\"id\":\"sh_9\"}"}}]}`,
			[]string{"call_2"}, 3},
		{"chat no content, audio, reasoning", wire.OpenAIChat,
			`{"choices":[{"message":{"role":"assistant","reasoning_content":"hmm","audio":{"id":"audio_1","data":"AAAA","expires_at":1,"transcript":"t"},"refusal":"no","tool_calls":[{"id":"c","type":"function","function":{"name":"expand_context","arguments":"{\"id\":\"sh_1\"}"}}]}}]}`,
			`{"role":"assistant","reasoning_content":"hmm","audio":{"id":"audio_1"},"refusal":"no","tool_calls":[{"id":"c","type":"function","function":{"name":"expand_context","arguments":"{\"id\":\"sh_1\"}"}}],"content":null}`,
			[]string{"c"}, 1},
		{"chat legacy", wire.OpenAIChat, chatLegacy,
			`{"role":"assistant","content":null,"function_call":{"name":"expand_context","arguments":"{\"id\":\"sh_L\"}"}}`,
			[]string{"expand_context"}, 1},
		{"chat only real", wire.OpenAIChat,
			`{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"bash","arguments":"{}"}}]}}]}`,
			"", nil, 1},
		{"responses mixed", wire.OpenAIResponses, responsesMixed,
			`[
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB"},
    {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": "Looking.", "annotations": []}]},
    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "expand_context", "arguments": "{\"id\":\"sh_q\"}", "status": "completed"}
  ]`,
			[]string{"call_2"}, 3},
		{"anthropic mixed with thinking", wire.Anthropic, anthropicMixed,
			`{"role":"assistant","content":[{"type":"thinking","thinking":"I need the full log.","signature":"EqQBCkYIARgCIkB"},{"type":"redacted_thinking","data":"EmwKAhgBEgy"},{"type":"text","text":"Checking."},{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},{"type":"tool_use","id":"toolu_b","name":"expand_context","input":{"id":"sh_b"}}]}`,
			[]string{"toolu_b"}, 2},
		{"gemini mixed, signature moves to the kept call", wire.Gemini, geminiMixed,
			`{"role":"model","parts":[{"text":"ok","thought":true},{"functionCall":{"name":"expand_context","args":{"id":"sh_g"}},"thoughtSignature":"CrUEAdHt"}]}`,
			[]string{"expand_context"}, 2},
		{"gemini snake_case with ids", wire.Gemini, geminiIDs,
			`{"role":"model","parts":[{"function_call":{"id":"fc-1","name":"expand_context","args":{"id":"sh_h"}},"thought_signature":"Sig1"},{"function_call":{"name":"expand_context","args":{"id":"sh_i"}}}]}`,
			[]string{"fc-1", "expand_context"}, 3},
		{"bedrock mixed", wire.Bedrock, bedrockMixed,
			`{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"Need the log.","signature":"sig=="}}},{"text":"I'll check."},{"toolUse":{"toolUseId":"tooluse_b","name":"expand_context","input":{"id":"sh_b2"}}}]}`,
			[]string{"tooluse_b"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turn, total, err := wire.TurnFromAnswer(tc.d, []byte(tc.answer))
			if err != nil {
				t.Fatal(err)
			}
			if total != tc.total {
				t.Errorf("total %d, want %d", total, tc.total)
			}
			if string(turn.Assistant) != tc.assistant {
				t.Errorf("assistant\n got %s\nwant %s", turn.Assistant, tc.assistant)
			}
			if tc.assistant != "" && !gjson.ValidBytes(turn.Assistant) {
				t.Error("assistant is not valid JSON")
			}
			if len(turn.Calls) != len(tc.calls) {
				t.Fatalf("calls %+v, want %v", turn.Calls, tc.calls)
			}
			want, _, _ := wire.FindExpandCalls(tc.d, []byte(tc.answer))
			for i, c := range turn.Calls {
				if c.CallID != tc.calls[i] || c != want[i] {
					t.Errorf("call %d: %+v, want %s (%+v)", i, c, tc.calls[i], want[i])
				}
			}
		})
	}
}

func TestTurnFromAnswerErrors(t *testing.T) {
	if _, _, err := wire.TurnFromAnswer(wire.Anthropic, []byte(`{"content":[`)); !errors.Is(err, wire.ErrNotJSON) {
		t.Errorf("truncated: %v", err)
	}
	if _, _, err := wire.TurnFromAnswer(wire.Unknown, []byte(`{}`)); err == nil {
		t.Error("unknown dialect accepted")
	}
	// Found by FuzzContinue: a message whose role is not "assistant" went
	// back as the turn the tool messages answer.
	for _, role := range []string{`"assiltant"`, `"user"`, `null`, `1`} {
		answer := `{"choices":[{"message":{"role":` + role + `,"content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"expand_context","arguments":"{\"id\":\"sh_9\"}"}}]}}]}`
		if _, _, err := wire.TurnFromAnswer(wire.OpenAIChat, []byte(answer)); !errors.Is(err, wire.ErrBadEdit) {
			t.Errorf("role %s: %v", role, err)
		}
	}
}

func testdataFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func answerFor(d wire.Dialect) string {
	switch d {
	case wire.OpenAIChat:
		return chatMixed
	case wire.OpenAIResponses:
		return responsesMixed
	case wire.Anthropic:
		return anthropicMixed
	case wire.Gemini:
		return geminiMixed
	}
	return bedrockMixed
}

func resultsFor(turn wire.Turn) []wire.ExpandResult {
	var rs []wire.ExpandResult
	for _, c := range turn.Calls {
		rs = append(rs, wire.ExpandResult{Call: c, Text: "original of " + c.ID + "\n\"quoted\" <tag> é🙂"})
	}
	return rs
}

// checkContinued asserts out = in up to the end of the last element of the
// list at path, then the appended elements, then in's bytes from the
// list's closing bracket on, and that the provider's pairing rules hold.
func checkContinued(t *testing.T, d wire.Dialect, in, out []byte, path string, added int) []gjson.Result {
	t.Helper()
	if !gjson.ValidBytes(out) {
		t.Fatalf("invalid JSON:\n%s", out)
	}
	list := gjson.GetBytes(in, path)
	elems := list.Array()
	keep := list.Index + 1
	if n := len(elems); n > 0 {
		keep = elems[n-1].Index + len(elems[n-1].Raw)
	}
	closing := closeAt(t, in, path)
	if !bytes.Equal(out[:keep], in[:keep]) {
		t.Errorf("bytes before the end of %s changed", path)
	}
	if !bytes.HasSuffix(out, in[closing:]) {
		t.Errorf("bytes after %s changed", path)
	}
	got := gjson.GetBytes(out, path).Array()
	if len(got) != len(elems)+added {
		t.Fatalf("%s has %d elements, want %d + %d", path, len(got), len(elems), added)
	}
	if err := wiretest.CheckPairing(d, out); err != nil {
		t.Errorf("pairing: %v\n%s", err, out)
	}
	return got[len(elems):]
}

func continued(t *testing.T, d wire.Dialect, req []byte, answer string) (wire.Turn, []wire.ExpandResult, []byte) {
	t.Helper()
	req, _, err := wire.InjectExpandTool(d, req)
	if err != nil {
		t.Fatal(err)
	}
	turn, _, err := wire.TurnFromAnswer(d, []byte(answer))
	if err != nil || len(turn.Calls) == 0 {
		t.Fatalf("turn %+v err %v", turn, err)
	}
	rs := resultsFor(turn)
	in := bytes.Clone(req)
	out, err := wire.Continue(d, req, turn, rs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(req, in) {
		t.Fatal("request modified in place")
	}
	return turn, rs, out
}

func TestContinue(t *testing.T) {
	t.Run("openai chat fixture", func(t *testing.T) {
		req := testdataFile(t, "openai-chat-tool-results.request.json")
		turn, rs, out := continued(t, wire.OpenAIChat, req, chatMixed)
		injected, _, _ := wire.InjectExpandTool(wire.OpenAIChat, req)
		added := checkContinued(t, wire.OpenAIChat, injected, out, "messages", 2)
		if added[0].Raw != string(turn.Assistant) {
			t.Errorf("assistant %s", added[0].Raw)
		}
		if added[1].Get("role").Str != "tool" || added[1].Get("tool_call_id").Str != "call_2" || added[1].Get("content").Str != rs[0].Text {
			t.Errorf("tool message %s", added[1].Raw)
		}
	})
	t.Run("openai chat legacy", func(t *testing.T) {
		req := []byte(`{"model":"gpt-3.5-turbo","messages":[{"role":"user","content":"hi"}],"functions":[{"name":"f","parameters":{}}]}`)
		_, rs, out := continued(t, wire.OpenAIChat, req, chatLegacy)
		injected, _, _ := wire.InjectExpandTool(wire.OpenAIChat, req)
		added := checkContinued(t, wire.OpenAIChat, injected, out, "messages", 2)
		if added[1].Raw != `{"role":"function","name":"expand_context","content":`+string(wire.QuoteString(rs[0].Text))+`}` {
			t.Errorf("function message %s", added[1].Raw)
		}
	})
	t.Run("responses fixture", func(t *testing.T) {
		req := testdataFile(t, "openai-responses-function-call-output.request.json")
		_, rs, out := continued(t, wire.OpenAIResponses, req, responsesMixed)
		injected, _, _ := wire.InjectExpandTool(wire.OpenAIResponses, req)
		added := checkContinued(t, wire.OpenAIResponses, injected, out, "input", 5)
		types := []string{"reasoning", "message", "web_search_call", "function_call", "function_call_output"}
		for i, a := range added {
			if a.Get("type").Str != types[i] {
				t.Errorf("item %d: %s", i, a.Raw)
			}
		}
		if added[4].Get("call_id").Str != "call_2" || added[4].Get("output").Str != rs[0].Text {
			t.Errorf("output item %s", added[4].Raw)
		}
	})
	t.Run("responses string input", func(t *testing.T) {
		req := []byte(`{"model":"gpt-5","input":"Fix \"the\" build.","store":false}`)
		turn, _, out := continued(t, wire.OpenAIResponses, req, responsesMixed)
		in := gjson.GetBytes(out, "input").Array()
		if len(in) != 6 || in[0].Raw != `{"role":"user","content":"Fix \"the\" build."}` {
			t.Fatalf("input %s", gjson.GetBytes(out, "input").Raw)
		}
		if !bytes.HasPrefix(out, []byte(`{"model":"gpt-5","input":[`)) || !bytes.Contains(out, []byte(`],"store":false,"tools":[`)) {
			t.Errorf("other bytes changed: %s", out)
		}
		if err := wiretest.CheckPairing(wire.OpenAIResponses, out); err != nil {
			t.Error(err)
		}
		_ = turn
	})
	t.Run("responses no input", func(t *testing.T) {
		req := []byte(`{"model":"gpt-5","previous_response_id":"resp_0","input":null}`)
		_, _, out := continued(t, wire.OpenAIResponses, req, responsesMixed)
		if n := len(gjson.GetBytes(out, "input").Array()); n != 5 {
			t.Fatalf("input has %d items: %s", n, out)
		}
		if err := wiretest.CheckPairing(wire.OpenAIResponses, out); err != nil {
			t.Error(err)
		}
		req = []byte(`{"model":"gpt-5","previous_response_id":"resp_0"}`)
		_, _, out = continued(t, wire.OpenAIResponses, req, responsesMixed)
		if n := len(gjson.GetBytes(out, "input").Array()); n != 5 {
			t.Fatalf("input has %d items: %s", n, out)
		}
	})
	t.Run("anthropic thinking kept", func(t *testing.T) {
		req := wiretest.Request(wire.Anthropic, "a\nb", "é🙂")
		_, rs, out := continued(t, wire.Anthropic, req, anthropicMixed)
		injected, _, _ := wire.InjectExpandTool(wire.Anthropic, req)
		added := checkContinued(t, wire.Anthropic, injected, out, "messages", 2)
		if added[0].Get("content.0.signature").Str != "EqQBCkYIARgCIkB" || added[0].Get("content.1.type").Str != "redacted_thinking" {
			t.Errorf("thinking blocks lost: %s", added[0].Raw)
		}
		res := added[1].Get("content").Array()
		if added[1].Get("role").Str != "user" || len(res) != 1 || res[0].Get("tool_use_id").Str != "toolu_b" || res[0].Get("content").Str != rs[0].Text {
			t.Errorf("results %s", added[1].Raw)
		}
	})
	t.Run("anthropic fixture", func(t *testing.T) {
		req := testdataFile(t, "anthropic-tool-use.request.json")
		_, _, out := continued(t, wire.Anthropic, req, anthropicMixed)
		injected, _, _ := wire.InjectExpandTool(wire.Anthropic, req)
		checkContinued(t, wire.Anthropic, injected, out, "messages", 2)
	})
	t.Run("gemini fixture camelCase", func(t *testing.T) {
		req := testdataFile(t, "gemini-function-response.request.json")
		_, rs, out := continued(t, wire.Gemini, req, geminiMixed)
		injected, _, _ := wire.InjectExpandTool(wire.Gemini, req)
		added := checkContinued(t, wire.Gemini, injected, out, "contents", 2)
		want := `{"role":"user","parts":[{"functionResponse":{"name":"expand_context","response":{"content":` + string(wire.QuoteString(rs[0].Text)) + `}}}]}`
		if added[1].Raw != want {
			t.Errorf("response content\n got %s\nwant %s", added[1].Raw, want)
		}
	})
	t.Run("gemini snake_case with ids", func(t *testing.T) {
		req := []byte(`{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"function_call":{"name":"run_shell","args":{}}}]},{"role":"user","parts":[{"function_response":{"name":"run_shell","response":{"output":"ok"}}}]}],"system_instruction":{"parts":[{"text":"s"}]}}`)
		_, _, out := continued(t, wire.Gemini, req, geminiIDs)
		injected, _, _ := wire.InjectExpandTool(wire.Gemini, req)
		added := checkContinued(t, wire.Gemini, injected, out, "contents", 2)
		parts := added[1].Get("parts").Array()
		if len(parts) != 2 || parts[0].Get("function_response.id").Str != "fc-1" || parts[1].Get("function_response.id").Exists() ||
			parts[1].Get("function_response.name").Str != "expand_context" || parts[0].Get("functionResponse").Exists() {
			t.Errorf("responses %s", added[1].Raw)
		}
	})
	t.Run("bedrock", func(t *testing.T) {
		req := wiretest.Request(wire.Bedrock, "out")
		_, rs, out := continued(t, wire.Bedrock, req, bedrockMixed)
		injected, _, _ := wire.InjectExpandTool(wire.Bedrock, req)
		added := checkContinued(t, wire.Bedrock, injected, out, "messages", 2)
		if added[1].Get("content.0.toolResult.toolUseId").Str != "tooluse_b" || added[1].Get("content.0.toolResult.content.0.text").Str != rs[0].Text {
			t.Errorf("results %s", added[1].Raw)
		}
	})
	t.Run("every dialect from the shared builder", func(t *testing.T) {
		for _, d := range wire.Dialects {
			req := wiretest.Request(d, "x", "y")
			_, _, out := continued(t, d, req, answerFor(d))
			if err := wiretest.CheckPairing(d, out); err != nil {
				t.Errorf("%s: %v", d, err)
			}
			// A second round appends after the first.
			turn, _, _ := wire.TurnFromAnswer(d, []byte(answerFor(d)))
			again, err := wire.Continue(d, out, turn, resultsFor(turn))
			// Everything before the end of the first round's messages stays.
			keep := len(out) / 2
			if i := bytes.Index(out, []byte(`],"tools"`)); i > 0 {
				keep = min(keep, i)
			}
			if err != nil || !bytes.HasPrefix(again, out[:keep]) {
				t.Errorf("%s: second round err %v", d, err)
			}
		}
	})
}

func TestContinueErrors(t *testing.T) {
	turn, _, _ := wire.TurnFromAnswer(wire.OpenAIChat, []byte(chatMixed))
	rs := resultsFor(turn)
	badID := wire.Turn{
		Assistant: []byte("{\"role\":\"assistant\",\"content\":[{\"toolUse\":{\"toolUseId\":\"tool\xff_b\",\"name\":\"expand_context\",\"input\":{\"id\":\"sh_b2\"}}}]}"),
		Calls:     []wire.ExpandCall{{CallID: "tool\xff_b", ID: "sh_b2"}},
	}
	cases := []struct {
		name string
		d    wire.Dialect
		req  string
		t    wire.Turn
		rs   []wire.ExpandResult
	}{
		{"no messages", wire.OpenAIChat, `{"model":"gpt-4o"}`, turn, rs},
		{"messages not a list", wire.OpenAIChat, `{"messages":{"role":"user"}}`, turn, rs},
		{"not JSON", wire.OpenAIChat, `{"messages":[`, turn, rs},
		{"array body", wire.OpenAIChat, `[]`, turn, rs},
		{"too few results", wire.OpenAIChat, `{"messages":[]}`, turn, nil},
		{"wrong call", wire.OpenAIChat, `{"messages":[]}`, turn, []wire.ExpandResult{{Call: wire.ExpandCall{CallID: "other"}, Text: "t"}}},
		// Found by FuzzContinue: the id's bytes, copied into the assistant
		// part, and its quoted copy in the result did not pair.
		{"id not UTF-8", wire.Bedrock, `{"messages":[]}`, badID, []wire.ExpandResult{{Call: badID.Calls[0], Text: "t"}}},
		{"no calls", wire.OpenAIChat, `{"messages":[]}`, wire.Turn{}, nil},
		{"bad assistant", wire.OpenAIChat, `{"messages":[]}`, wire.Turn{Assistant: []byte(`{"role":`), Calls: turn.Calls}, rs},
		{"responses assistant not a list", wire.OpenAIResponses, `{"input":[]}`, turn, rs},
		{"responses input number", wire.OpenAIResponses, `{"input":3}`, wire.Turn{Assistant: []byte(`[]`), Calls: turn.Calls}, rs},
		{"gemini no contents", wire.Gemini, `{"contents":"hi"}`, turn, rs},
		{"unknown dialect", wire.Unknown, `{"messages":[]}`, turn, rs},
	}
	for _, tc := range cases {
		out, err := wire.Continue(tc.d, []byte(tc.req), tc.t, tc.rs)
		if err == nil || out != nil {
			t.Errorf("%s: out %s err %v", tc.name, out, err)
		}
	}
	if _, err := wire.Continue(wire.Anthropic, []byte(`{"messages":"x"}`), turn, rs); !errors.Is(err, wire.ErrNoConversation) {
		t.Errorf("want ErrNoConversation, got %v", err)
	}
}

func TestStripExpandCalls(t *testing.T) {
	cases := []struct {
		name string
		d    wire.Dialect
		in   string
		want string // "" = unchanged
	}{
		{"chat mixed keeps real calls", wire.OpenAIChat, chatMixed,
			`{"id":"chatcmpl-9","object":"chat.completion","created":1742498842,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"Let me look.","refusal":null,"annotations":[],"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}},{"id":"call_3","type":"custom","custom":{"name":"apply_patch","input":"*** Begin Patch"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15},"system_fingerprint":"fp_1"}`},
		{"chat only expand", wire.OpenAIChat,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"Reading.","tool_calls":[{"id":"a","type":"function","function":{"name":"expand_context","arguments":"{}"}}],"refusal":null},"finish_reason":"tool_calls"},{"index":1,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"b","type":"function","function":{"name":"expand_context","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"Reading.","refusal":null},"finish_reason":"stop"},{"index":1,"message":{"role":"assistant","content":null},"finish_reason":"stop"}]}`},
		{"chat legacy", wire.OpenAIChat, chatLegacy,
			`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"stop"}]}`},
		{"chat pretty-printed", wire.OpenAIChat,
			"{\n  \"choices\": [\n    {\n      \"message\": {\n        \"role\": \"assistant\",\n        \"tool_calls\": [\n          {\"id\": \"a\", \"type\": \"function\", \"function\": {\"name\": \"expand_context\", \"arguments\": \"{}\"}},\n          {\"id\": \"b\", \"type\": \"function\", \"function\": {\"name\": \"bash\", \"arguments\": \"{}\"}}\n        ]\n      },\n      \"finish_reason\": \"tool_calls\"\n    }\n  ]\n}",
			"{\n  \"choices\": [\n    {\n      \"message\": {\n        \"role\": \"assistant\",\n        \"tool_calls\": [\n          {\"id\": \"b\", \"type\": \"function\", \"function\": {\"name\": \"bash\", \"arguments\": \"{}\"}}\n        ]\n      },\n      \"finish_reason\": \"tool_calls\"\n    }\n  ]\n}"},
		{"chat nothing to strip", wire.OpenAIChat, `{"choices":[{"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}]}`, ""},
		{"responses", wire.OpenAIResponses, responsesMixed,
			`{
  "id": "resp_1",
  "object": "response",
  "status": "completed",
  "output": [
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB"},
    {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": "Looking.", "annotations": []}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell", "arguments": "{}", "status": "completed"},
    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    {"type": "custom_tool_call", "call_id": "call_3", "name": "apply_patch", "input": "x"}
  ],
  "usage": {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13}
}`},
		{"anthropic mixed keeps tool_use stop", wire.Anthropic, anthropicMixed,
			`{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"I need the full log.","signature":"EqQBCkYIARgCIkB"},{"type":"redacted_thinking","data":"EmwKAhgBEgy"},{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_a","name":"Bash","input":{"command":"ls"}},{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":20}}`},
		{"anthropic only expand", wire.Anthropic,
			`{"type":"message","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"t","name":"expand_context","input":{"id":"sh_1"}}],"stop_reason":"tool_use"}`,
			`{"type":"message","content":[{"type":"text","text":"Reading."}],"stop_reason":"end_turn"}`},
		{"gemini mixed", wire.Gemini, geminiMixed,
			`{"candidates":[{"content":{"parts":[{"text":"ok","thought":true},{"functionCall":{"name":"run_shell","args":{"command":"ls"}},"thoughtSignature":"CrUEAdHt"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":170},"modelVersion":"gemini-2.5-pro","responseId":"5I7J"}`},
		{"gemini expand first carries signature", wire.Gemini,
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"expand_context","args":{"id":"sh_1"}},"thoughtSignature":"S1"},{"functionCall":{"name":"run","args":{}}}]},"finishReason":"STOP"}]}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"run","args":{}},"thoughtSignature":"S1"}]},"finishReason":"STOP"}]}`},
		{"gemini only expand", wire.Gemini,
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"expand_context","args":{"id":"sh_1"}}}]},"finishReason":"STOP"}]}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}]}`},
		{"gemini only expand with signature", wire.Gemini,
			`{"candidates":[{"content":{"role":"model","parts":[{"function_call":{"name":"expand_context","args":{}},"thought_signature":"S2"}]}}]}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"","thought_signature":"S2"}]}}]}`},
		{"bedrock mixed", wire.Bedrock, bedrockMixed,
			`{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"Need the log.","signature":"sig=="}}},{"text":"I'll check."},{"toolUse":{"toolUseId":"tooluse_a","name":"bash","input":{"command":"ls"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":10,"outputTokens":3,"totalTokens":13},"metrics":{"latencyMs":100}}`},
		{"bedrock only expand", wire.Bedrock,
			`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t","name":"expand_context","input":{"id":"sh"}}},{"text":"ok"}]}},"stopReason":"tool_use"}`,
			`{"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn"}`},
		{"invalid JSON", wire.Anthropic, `{"content":[`, ""},
		{"unknown dialect", wire.Unknown, anthropicMixed, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, changed := wire.StripExpandCalls(tc.d, []byte(tc.in))
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if changed != (tc.want != "") || string(out) != want {
				t.Errorf("changed=%v\n got %s\nwant %s", changed, out, want)
			}
			if changed {
				if calls, _, _ := wire.FindExpandCalls(tc.d, out); len(calls) != 0 {
					t.Errorf("calls left: %+v", calls)
				}
			}
		})
	}
}
