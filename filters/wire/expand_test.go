package wire_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// The injected bytes are part of every provider's prompt-cache prefix: a
// change here invalidates every cached conversation, so it must be
// deliberate. These goldens catch an accidental one.
const (
	goldenNameDesc = `"name":"expand_context","description":"Full text of a shortened tool result, by its id."`
	goldenSchema   = `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`
	goldenGemini   = `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`
)

var goldenTools = map[wire.Dialect]string{
	wire.OpenAIChat:      `{"type":"function","function":{` + goldenNameDesc + `,"parameters":` + goldenSchema + `}}`,
	wire.OpenAIResponses: `{"type":"function",` + goldenNameDesc + `,"parameters":` + goldenSchema + `}`,
	wire.Anthropic:       `{` + goldenNameDesc + `,"input_schema":` + goldenSchema + `}`,
	wire.Gemini:          `{` + goldenNameDesc + `,"parameters":` + goldenGemini + `}`,
	wire.Bedrock:         `{"toolSpec":{` + goldenNameDesc + `,"inputSchema":{"json":` + goldenSchema + `}}}`,
}

func TestExpandToolJSONGolden(t *testing.T) {
	for _, d := range wire.Dialects {
		got := wire.ExpandToolJSON(d)
		if got != goldenTools[d] {
			t.Errorf("%s: tool JSON changed:\n got %s\nwant %s", d, got, goldenTools[d])
		}
		if !gjson.Valid(got) {
			t.Errorf("%s: not valid JSON", d)
		}
	}
	if wire.ExpandToolJSON(wire.Unknown) != "" {
		t.Error("unknown dialect has a tool")
	}
}

// diff splits out = in[:k] + added + in[k:] and fails when out is not in
// plus one inserted run of bytes.
func diff(t *testing.T, in, out []byte) (k int, added string) {
	t.Helper()
	for k < len(in) && k < len(out) && in[k] == out[k] {
		k++
	}
	rest := len(in) - k
	if len(out) < len(in) || !bytes.Equal(out[len(out)-rest:], in[k:]) {
		t.Fatalf("output is not the input plus one insertion:\n in %s\nout %s", in, out)
	}
	return k, string(out[k : len(out)-rest])
}

// closeAt is the offset of the closing bracket of the value at path.
func closeAt(t *testing.T, body []byte, path string) int {
	t.Helper()
	v := gjson.GetBytes(body, path)
	if !v.Exists() {
		t.Fatalf("no %s in %s", path, body)
	}
	return v.Index + len(v.Raw) - 1
}

func lastBrace(body []byte) int { return bytes.LastIndexByte(body, '}') }

func mustDelete(t *testing.T, body []byte, path string) []byte {
	t.Helper()
	out, err := sjson.DeleteBytes(body, path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// listPath is where the tool lands in a wiretest.Request body.
var listPath = map[wire.Dialect]string{
	wire.OpenAIChat:      "tools",
	wire.OpenAIResponses: "tools",
	wire.Anthropic:       "tools",
	wire.Gemini:          "tools.0.functionDeclarations",
	wire.Bedrock:         "toolConfig.tools",
}

// withoutTools removes the tools list (Bedrock: the whole toolConfig).
var withoutTools = map[wire.Dialect]string{
	wire.OpenAIChat:      "tools",
	wire.OpenAIResponses: "tools",
	wire.Anthropic:       "tools",
	wire.Gemini:          "tools",
	wire.Bedrock:         "toolConfig",
}

// createdAs is what a request without tools gets, after its last member.
func createdAs(d wire.Dialect) string {
	tool := wire.ExpandToolJSON(d)
	switch d {
	case wire.Gemini:
		return `,"tools":[{"functionDeclarations":[` + tool + `]}]`
	case wire.Bedrock:
		return `,"toolConfig":{"tools":[` + tool + `]}`
	}
	return `,"tools":[` + tool + `]`
}

// checkInjected asserts what every successful injection must give: valid
// JSON that Parse reads, pairing kept, the tool present, idempotence.
func checkInjected(t *testing.T, d wire.Dialect, in, out []byte) {
	t.Helper()
	if !gjson.ValidBytes(out) {
		t.Fatalf("not valid JSON: %s", out)
	}
	c, err := wire.Parse(d, out)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if c.ToolsPath == "" {
		t.Fatalf("Parse sees no tools list in %s", out)
	}
	if before, err := wire.Parse(d, in); err == nil && (len(before.Results) != len(c.Results) || len(before.Calls) != len(c.Calls)) {
		t.Fatalf("results/calls changed: %d/%d → %d/%d", len(before.Results), len(before.Calls), len(c.Results), len(c.Calls))
	}
	if wiretest.CheckPairing(d, in) == nil {
		if err := wiretest.CheckPairing(d, out); err != nil {
			t.Fatalf("pairing broken: %v", err)
		}
	}
	again, changed, err := wire.InjectExpandTool(d, out)
	if err != nil || changed || !bytes.Equal(again, out) {
		t.Fatalf("second injection: changed=%v err=%v", changed, err)
	}
}

func TestInjectExpandToolAppends(t *testing.T) {
	for _, d := range wire.Dialects {
		t.Run(string(d), func(t *testing.T) {
			var added []string
			for _, in := range [][]byte{
				wiretest.Request(d, "ok"),
				wiretest.Request(d, wiretest.LongOutput(300), "second", "é🙂"),
			} {
				out, changed, err := wire.InjectExpandTool(d, in)
				if err != nil || !changed {
					t.Fatalf("changed=%v err=%v", changed, err)
				}
				k, a := diff(t, in, out)
				// Everything up to the list's closing bracket is untouched.
				if want := closeAt(t, in, listPath[d]); k < want {
					t.Fatalf("byte %d changed, before the list end %d", k, want)
				}
				if a != ","+wire.ExpandToolJSON(d) {
					t.Fatalf("added %s", a)
				}
				if n := gjson.GetBytes(out, listPath[d]+".#").Int(); n != 2 {
					t.Fatalf("list has %d tools, want 2", n)
				}
				checkInjected(t, d, in, out)
				// Same input, same output.
				out2, _, _ := wire.InjectExpandTool(d, in)
				if !bytes.Equal(out, out2) {
					t.Fatal("injection is not deterministic")
				}
				added = append(added, a)
			}
			if added[0] != added[1] {
				t.Fatal("different requests got different tool bytes")
			}
		})
	}
}

func TestInjectExpandToolCreates(t *testing.T) {
	for _, d := range wire.Dialects {
		t.Run(string(d), func(t *testing.T) {
			var added []string
			for _, req := range [][]byte{wiretest.Request(d), wiretest.Request(d, "x", "y")} {
				in := mustDelete(t, req, withoutTools[d])
				out, changed, err := wire.InjectExpandTool(d, in)
				if err != nil || !changed {
					t.Fatalf("changed=%v err=%v", changed, err)
				}
				k, a := diff(t, in, out)
				if k != lastBrace(in) {
					t.Fatalf("inserted at %d, want before the final brace at %d", k, lastBrace(in))
				}
				if a != createdAs(d) {
					t.Fatalf("added %s\nwant %s", a, createdAs(d))
				}
				checkInjected(t, d, in, out)
				added = append(added, a)
			}
			if added[0] != added[1] {
				t.Fatal("different requests got different tool bytes")
			}
		})
	}
}

func TestInjectExpandToolNoOp(t *testing.T) {
	// A client (or an earlier pass) that already offers expand_context, in
	// bytes other than ours: nothing changes.
	cases := []struct {
		d    wire.Dialect
		body string
	}{
		{wire.OpenAIChat, `{"messages":[],"tools":[{"type":"function","function":{"name":"expand_context"}}]}`},
		{wire.OpenAIChat, `{"messages":[],"functions":[{"name":"expand_context"}]}`},
		{wire.OpenAIResponses, `{"input":[],"tools":[{"type":"function","name":"expand_context","parameters":{}}]}`},
		{wire.Anthropic, `{"messages":[],"tools":[{"name":"a"},{"name":"expand_context","input_schema":{"type":"object"}}]}`},
		{wire.Gemini, `{"contents":[],"tools":[{"googleSearch":{}},{"functionDeclarations":[{"name":"expand_context"}]}]}`},
		{wire.Gemini, `{"contents":[],"tools":[{"function_declarations":[{"name":"expand_context"}]}]}`},
		{wire.Bedrock, `{"messages":[],"toolConfig":{"tools":[{"toolSpec":{"name":"expand_context","inputSchema":{"json":{}}}}]}}`},
	}
	for _, tc := range cases {
		out, changed, err := wire.InjectExpandTool(tc.d, []byte(tc.body))
		if err != nil || changed || string(out) != tc.body {
			t.Errorf("%s %s: changed=%v err=%v out=%s", tc.d, tc.body, changed, err, out)
		}
	}
}

func TestInjectExpandToolShapes(t *testing.T) {
	gem, bed := wire.ExpandToolJSON(wire.Gemini), wire.ExpandToolJSON(wire.Bedrock)
	cases := []struct {
		name string
		d    wire.Dialect
		in   string
		want string
	}{
		{"empty tools list", wire.Anthropic,
			`{"messages":[],"tools":[ ]}`,
			`{"messages":[],"tools":[ ` + wire.ExpandToolJSON(wire.Anthropic) + `]}`},
		{"null tools", wire.OpenAIResponses,
			`{"input":"hi","tools":null}`,
			`{"input":"hi","tools":[` + wire.ExpandToolJSON(wire.OpenAIResponses) + `]}`},
		{"empty body object", wire.OpenAIChat,
			`{}`,
			`{"tools":[` + wire.ExpandToolJSON(wire.OpenAIChat) + `]}`},
		{"pretty printed, trailing newline", wire.Anthropic,
			"{\n  \"messages\": [],\n  \"tools\": [\n    {\"name\": \"a\"}\n  ]\n}\n",
			"{\n  \"messages\": [],\n  \"tools\": [\n    {\"name\": \"a\"}\n  ," + wire.ExpandToolJSON(wire.Anthropic) + "]\n}\n"},
		{"no tools, pretty printed", wire.Anthropic,
			" {\n  \"messages\": []\n}\n",
			" {\n  \"messages\": []\n," + `"tools":[` + wire.ExpandToolJSON(wire.Anthropic) + "]}\n"},
		{"legacy functions", wire.OpenAIChat,
			`{"messages":[],"functions":[{"name":"f"}]}`,
			`{"messages":[],"functions":[{"name":"f"},{` + goldenNameDesc + `,"parameters":` + goldenSchema + `}]}`},
		{"gemini snake_case declarations", wire.Gemini,
			`{"contents":[],"tools":[{"function_declarations":[{"name":"a"}]}],"generation_config":{}}`,
			`{"contents":[],"tools":[{"function_declarations":[{"name":"a"},` + gem + `]}],"generation_config":{}}`},
		{"gemini last declaring entry", wire.Gemini,
			`{"contents":[],"tools":[{"functionDeclarations":[{"name":"a"}]},{"functionDeclarations":[]},{"codeExecution":{}}]}`,
			`{"contents":[],"tools":[{"functionDeclarations":[{"name":"a"}]},{"functionDeclarations":[` + gem + `]},{"codeExecution":{}}]}`},
		{"gemini built-in tools only", wire.Gemini,
			`{"contents":[],"tools":[{"googleSearch":{}}]}`,
			`{"contents":[],"tools":[{"googleSearch":{}},{"functionDeclarations":[` + gem + `]}]}`},
		{"bedrock toolConfig without tools", wire.Bedrock,
			`{"messages":[],"toolConfig":{"toolChoice":{"auto":{}}}}`,
			`{"messages":[],"toolConfig":{"toolChoice":{"auto":{}},"tools":[` + bed + `]}}`},
		{"bedrock empty toolConfig", wire.Bedrock,
			`{"messages":[],"toolConfig":{}}`,
			`{"messages":[],"toolConfig":{"tools":[` + bed + `]}}`},
		{"bedrock null toolConfig", wire.Bedrock,
			`{"messages":[],"toolConfig":null}`,
			`{"messages":[],"toolConfig":{"tools":[` + bed + `]}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := wire.InjectExpandTool(tc.d, []byte(tc.in))
			if err != nil || !changed {
				t.Fatalf("changed=%v err=%v", changed, err)
			}
			if string(out) != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", out, tc.want)
			}
			checkInjected(t, tc.d, []byte(tc.in), out)
		})
	}
}

func TestInjectExpandToolErrors(t *testing.T) {
	cases := []struct {
		d    wire.Dialect
		body string
		want error
	}{
		{wire.Anthropic, `not json`, wire.ErrNotJSON},
		{wire.Anthropic, `[{"tools":[]}]`, wire.ErrNotJSON},
		{wire.Anthropic, `{"tools":"x"}`, wire.ErrToolsShape},
		{wire.OpenAIChat, `{"tools":{}}`, wire.ErrToolsShape},
		{wire.Bedrock, `{"toolConfig":[]}`, wire.ErrToolsShape},
		{wire.Bedrock, `{"toolConfig":{"tools":7}}`, wire.ErrToolsShape},
		{wire.Gemini, `{"tools":true}`, wire.ErrToolsShape},
		{wire.Unknown, `{}`, nil},
	}
	for _, tc := range cases {
		out, changed, err := wire.InjectExpandTool(tc.d, []byte(tc.body))
		if err == nil || changed || string(out) != tc.body {
			t.Errorf("%q %s: changed=%v err=%v out=%s", tc.d, tc.body, changed, err, out)
			continue
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%q %s: err %v, want %v", tc.d, tc.body, err, tc.want)
		}
	}
}

// Paging arguments are read when they are positive integers; null, absent
// or anything else means "not given". The id's "@<line>" suffix gives the
// first line too (what the current declaration offers).
func TestExpandArgsPaging(t *testing.T) {
	for _, tc := range []struct {
		args          string
		id            string
		offset, limit int
	}{
		{`{"id":"sh_1","offset":null,"limit":null}`, "sh_1", 0, 0},
		{`{"id":"sh_1","offset":120,"limit":50}`, "sh_1", 120, 50},
		{`{"id":"sh_1","offset":-3,"limit":"9"}`, "sh_1", 0, 0},
		{`{"id":"sh_1"}`, "sh_1", 0, 0},
		{`"{\"id\":\"sh_2\",\"offset\":7}"`, "sh_2", 7, 0},
		// The next part as a part names it: the first line rides on the id.
		{`{"id":"sh_3@120"}`, "sh_3", 120, 0},
		{`"{\"id\":\"sh_3@9\"}"`, "sh_3", 9, 0},
		{`{"id":"sh_3@0"}`, "sh_3", 0, 0},
		{`{"id":"sh_3@x"}`, "sh_3", 0, 0},
		{`{"id":"sh_3@99999999999"}`, "sh_3", 0, 0},
	} {
		id, off, lim := wire.ExpandArgs(gjson.Parse(tc.args))
		if id != tc.id || off != tc.offset || lim != tc.limit {
			t.Errorf("%s: %q %d %d", tc.args, id, off, lim)
		}
	}
}

func TestFindExpandCalls(t *testing.T) {
	type call = wire.ExpandCall
	cases := []struct {
		name  string
		d     wire.Dialect
		body  string
		want  []call
		total int
	}{
		// OpenAI Chat Completions (platform.openai.com/docs/api-reference/chat): arguments is a JSON string.
		{"chat only expand", wire.OpenAIChat,
			`{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"expand_context","arguments":"{\"id\":\"sh_0123\"}"}},{"id":"call_b","type":"function","function":{"name":"expand_context","arguments":"{\"id\": \"sh_4567\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
			[]call{{CallID: "call_a", ID: "sh_0123", Index: 0}, {CallID: "call_b", ID: "sh_4567", Index: 1}}, 2},
		{"chat mixed", wire.OpenAIChat,
			`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}},{"id":"call_2","type":"function","function":{"name":"expand_context","arguments":"{\"id\":\"sh_9\"}"}},{"id":"call_3","type":"custom","custom":{"name":"apply_patch","input":"*** Begin Patch"}}]},"finish_reason":"tool_calls"}]}`,
			[]call{{CallID: "call_2", ID: "sh_9", Index: 1}}, 3},
		{"chat malformed args", wire.OpenAIChat,
			`{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"expand_context","arguments":"{\"id\":"}},{"id":"c2","type":"function","function":{"name":"expand_context","arguments":"{\"id\":42}"}},{"id":"c3","type":"function","function":{"name":"expand_context","arguments":"\"sh_1\""}},{"id":"c4","type":"function","function":{"name":"expand_context"}}]}}]}`,
			[]call{{CallID: "c1", ID: "", Index: 0}, {CallID: "c2", ID: "", Index: 1}, {CallID: "c3", ID: "", Index: 2}, {CallID: "c4", ID: "", Index: 3}}, 4},
		{"chat no calls", wire.OpenAIChat,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}]}`,
			nil, 0},
		{"chat legacy function_call", wire.OpenAIChat,
			`{"choices":[{"message":{"role":"assistant","content":null,"function_call":{"name":"expand_context","arguments":"{\"id\":\"sh_L\"}"}}}]}`,
			[]call{{CallID: "expand_context", ID: "sh_L", Index: 0}}, 1},

		// Anthropic Messages (§2.4 final message): input is an object.
		{"anthropic only expand", wire.Anthropic,
			`{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"I need the full log.","signature":"EqQB"},{"type":"tool_use","id":"toolu_01","name":"expand_context","input":{"id":"sh_abc"}}],"stop_reason":"tool_use","usage":{"input_tokens":100,"output_tokens":20}}`,
			[]call{{CallID: "toolu_01", ID: "sh_abc", Index: 0}}, 1},
		{"anthropic mixed", wire.Anthropic,
			`{"type":"message","role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_a","name":"Bash","input":{"command":"ls"}},{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},{"type":"tool_use","id":"toolu_b","name":"expand_context","input":{"id":"sh_b"}}],"stop_reason":"tool_use"}`,
			[]call{{CallID: "toolu_b", ID: "sh_b", Index: 1}}, 2},
		{"anthropic malformed", wire.Anthropic,
			`{"type":"message","content":[{"type":"tool_use","id":"toolu_x","name":"expand_context","input":{"ID":"sh_b"}},{"type":"tool_use","id":"toolu_y","name":"expand_context","input":"{\"id\":\"sh_s\"}"},{"type":"tool_use","id":"toolu_z","name":"expand_context","input":[]}]}`,
			[]call{{CallID: "toolu_x", ID: "", Index: 0}, {CallID: "toolu_y", ID: "sh_s", Index: 1}, {CallID: "toolu_z", ID: "", Index: 2}}, 3},
		{"anthropic none", wire.Anthropic,
			`{"type":"message","role":"assistant","content":[{"type":"text","text":"All good."}],"stop_reason":"end_turn"}`,
			nil, 0},

		// OpenAI Responses (§2.3 final response): output items.
		{"responses only expand", wire.OpenAIResponses,
			`{"id":"resp_1","object":"response","status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},{"type":"function_call","id":"fc_1","call_id":"call_x","name":"expand_context","arguments":"{\"id\":\"sh_r\"}","status":"completed"}]}`,
			[]call{{CallID: "call_x", ID: "sh_r", Index: 0}}, 1},
		{"responses mixed", wire.OpenAIResponses,
			`{"object":"response","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Looking."}]},{"type":"web_search_call","id":"ws_1","status":"completed"},{"type":"function_call","call_id":"call_1","name":"shell","arguments":"{}"},{"type":"custom_tool_call","call_id":"call_2","name":"apply_patch","input":"x"},{"type":"function_call","call_id":"call_3","name":"expand_context","arguments":"{\"id\":\"sh_q\"}"},{"type":"mcp_call","id":"mcp_1","name":"x","arguments":"{}","output":"y"}]}`,
			[]call{{CallID: "call_3", ID: "sh_q", Index: 2}}, 3},
		{"responses malformed", wire.OpenAIResponses,
			`{"output":[{"type":"function_call","call_id":"call_m","name":"expand_context","arguments":"not json"}]}`,
			[]call{{CallID: "call_m", ID: "", Index: 0}}, 1},
		{"responses none", wire.OpenAIResponses,
			`{"object":"response","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}]}`,
			nil, 0},

		// Gemini generateContent: args is an object; id is optional.
		{"gemini only expand", wire.Gemini,
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"expand_context","args":{"id":"sh_g"}},"thoughtSignature":"CiQB"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10}}`,
			[]call{{CallID: "expand_context", ID: "sh_g", Index: 0}}, 1},
		{"gemini mixed with ids", wire.Gemini,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"},{"functionCall":{"id":"fc-1","name":"run_shell","args":{"command":"ls"}}},{"function_call":{"id":"fc-2","name":"expand_context","args":{"id":"sh_h"}}}]}}]}`,
			[]call{{CallID: "fc-2", ID: "sh_h", Index: 1}}, 2},
		{"gemini malformed", wire.Gemini,
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"expand_context"}}]}}]}`,
			[]call{{CallID: "expand_context", ID: "", Index: 0}}, 1},
		{"gemini none", wire.Gemini,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"Done"}]},"finishReason":"STOP"}]}`,
			nil, 0},

		// Bedrock Converse: output.message.content[].toolUse.
		{"bedrock only expand", wire.Bedrock,
			`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"expand_context","input":{"id":"sh_b1"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":10,"outputTokens":3,"totalTokens":13}}`,
			[]call{{CallID: "tooluse_1", ID: "sh_b1", Index: 0}}, 1},
		{"bedrock mixed", wire.Bedrock,
			`{"output":{"message":{"role":"assistant","content":[{"text":"I'll check."},{"toolUse":{"toolUseId":"tooluse_a","name":"bash","input":{"command":"ls"}}},{"toolUse":{"toolUseId":"tooluse_b","name":"expand_context","input":{"id":"sh_b2"}}}]}},"stopReason":"tool_use"}`,
			[]call{{CallID: "tooluse_b", ID: "sh_b2", Index: 1}}, 2},
		{"bedrock malformed", wire.Bedrock,
			`{"output":{"message":{"content":[{"toolUse":{"toolUseId":"t","name":"expand_context","input":{"id":null}}}]}}}`,
			[]call{{CallID: "t", ID: "", Index: 0}}, 1},
		{"bedrock none", wire.Bedrock,
			`{"output":{"message":{"role":"assistant","content":[{"text":"Done"}]}},"stopReason":"end_turn"}`,
			nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, total, err := wire.FindExpandCalls(tc.d, []byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if total != tc.total {
				t.Errorf("total %d, want %d", total, tc.total)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("calls %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("call %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestFindExpandCallsErrors(t *testing.T) {
	if _, _, err := wire.FindExpandCalls(wire.Anthropic, []byte(`{"content":[`)); !errors.Is(err, wire.ErrNotJSON) {
		t.Errorf("truncated body: %v", err)
	}
	if _, _, err := wire.FindExpandCalls(wire.Anthropic, []byte(`[]`)); !errors.Is(err, wire.ErrNotJSON) {
		t.Errorf("array body: %v", err)
	}
	if _, _, err := wire.FindExpandCalls(wire.Unknown, []byte(`{}`)); err == nil {
		t.Error("unknown dialect accepted")
	}
}
