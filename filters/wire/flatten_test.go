package wire

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// Golden renderings: calls become comments in the assistant's turn,
// results comments plus their text in the user's; everything else stays
// byte for byte, including unknown fields and cache_control markers.
func TestFlattenGolden(t *testing.T) {
	names := map[string]string{"call_1": "bash", "call_2": "read", "toolu_1": "Bash", "tooluse_1": "bash"}
	for _, tc := range []struct {
		name string
		d    Dialect
		in   []string
		want []string
	}{
		{
			name: "chat: parallel calls, results merged into one user message",
			d:    OpenAIChat,
			in: []string{
				`{"role":"assistant","content":"Looking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\": \"ls\"}"}},{"id":"call_2","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}}],"x_vendor":1}`,
				`{"role":"tool","tool_call_id":"call_1","content":"a.go\nb.go"}`,
				`{"role":"tool","tool_call_id":"call_2","content":[{"type":"text","text":"package a"}]}`,
			},
			want: []string{
				`{"role":"assistant","content":"Looking.\n\n<!-- earlier tool call call_1: bash {\"command\":\"ls\"} -->\n<!-- earlier tool call call_2: read {\"path\":\"a.go\"} -->","x_vendor":1}`,
				`{"role":"user","content":"<!-- result of earlier tool call call_1 (bash) -->\na.go\nb.go\n\n<!-- result of earlier tool call call_2 (read) -->\npackage a"}`,
			},
		},
		{
			name: "chat: null content, a comment closer in the arguments",
			d:    OpenAIChat,
			in: []string{
				`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo -->\"}"}}]}`,
				`{"role":"tool","tool_call_id":"call_1","content":"-->"}`,
			},
			want: []string{
				`{"role":"assistant","content":"<!-- earlier tool call call_1: bash {\"command\":\"echo -- >\"} -->"}`,
				`{"role":"user","content":"<!-- result of earlier tool call call_1 (bash) -->\n-->"}`,
			},
		},
		{
			name: "responses: reasoning dropped, calls and outputs merged",
			d:    OpenAIResponses,
			in: []string{
				`{"type":"reasoning","id":"rs_1","encrypted_content":"gAAA"}`,
				`{"type":"function_call","call_id":"call_1","name":"bash","arguments":"{\"cmd\":[\"ls\"]}","id":"fc_1"}`,
				`{"type":"function_call_output","call_id":"call_1","output":"a.go"}`,
			},
			want: []string{
				`{"type":"message","role":"assistant","content":"<!-- earlier tool call call_1: bash {\"cmd\":[\"ls\"]} -->"}`,
				`{"type":"message","role":"user","content":"<!-- result of earlier tool call call_1 (bash) -->\na.go"}`,
			},
		},
		{
			name: "anthropic: thinking kept, cache_control moves to the block written",
			d:    Anthropic,
			in: []string{
				`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"go test"}}]}`,
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":[{"type":"text","text":"FAIL"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}],"cache_control":{"type":"ephemeral"}},{"type":"text","text":"go on"}]}`,
			},
			want: []string{
				`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"<!-- earlier tool call toolu_1: Bash {\"command\":\"go test\"} -->"}]}`,
				`{"role":"user","content":[{"type":"text","text":"<!-- error result of earlier tool call toolu_1 (Bash) -->\nFAIL"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"},"cache_control":{"type":"ephemeral"}},{"type":"text","text":"go on"}]}`,
			},
		},
		{
			name: "bedrock: json result as text, status error",
			d:    Bedrock,
			in: []string{
				`{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"bash","input":{"command":"make"}}}]}`,
				`{"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_1","content":[{"text":"boom"},{"json":{"exit_code":2}}],"status":"error"}}]}`,
			},
			want: []string{
				`{"role":"assistant","content":[{"text":"<!-- earlier tool call tooluse_1: bash {\"command\":\"make\"} -->"}]}`,
				`{"role":"user","content":[{"text":"<!-- error result of earlier tool call tooluse_1 (bash) -->\nboom\nexit_code: 2"}]}`,
			},
		},
		{
			name: "gemini: function role becomes user, a one-string response reads as its string",
			d:    Gemini,
			in: []string{
				`{"role":"model","parts":[{"functionCall":{"name":"run_shell","args":{"command":"ls"}},"thoughtSignature":"Ci=="}]}`,
				`{"role":"function","parts":[{"functionResponse":{"name":"run_shell","response":{"output":"a.go"}}}]}`,
			},
			want: []string{
				`{"role":"model","parts":[{"text":"<!-- earlier tool call run_shell: run_shell {\"command\":\"ls\"} -->"}]}`,
				`{"role":"user","parts":[{"text":"<!-- result of earlier tool call run_shell (run_shell) -->\na.go"}]}`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := make([][]byte, len(tc.in))
			for i, s := range tc.in {
				in[i] = []byte(s)
			}
			got, err := Flatten(tc.d, in, func(id string) string { return names[id] })
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d messages, want %d:\n%s", len(got), len(tc.want), bytes.Join(got, []byte("\n")))
			}
			for i := range got {
				if string(got[i]) != tc.want[i] {
					t.Errorf("message %d:\n got %s\nwant %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// FuzzFlatten: any list of messages renders to valid JSON messages with no
// tool call or tool result left, or to an error; the same input renders to
// the same bytes.
func FuzzFlatten(f *testing.F) {
	dialects := []Dialect{OpenAIChat, OpenAIResponses, Anthropic, Gemini, Bedrock}
	f.Add(uint8(0), `[{"role":"assistant","content":null,"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"r"}]`)
	f.Add(uint8(1), `[{"type":"reasoning"},{"type":"function_call","call_id":"a","name":"x","arguments":"{"},{"type":"function_call_output","call_id":"a","output":[{"type":"input_image","image_url":"u"}]}]`)
	f.Add(uint8(2), `[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"x","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"\u00e9","cache_control":{}}]}]`)
	f.Add(uint8(3), `[{"role":"model","parts":[{"function_call":{"name":"x","args":{}}}]},{"role":"function","parts":[{"function_response":{"name":"x","response":{"a":[1]}}}]}]`)
	f.Add(uint8(4), `[{"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"x","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[{"image":{}}]}}]}]`)
	f.Fuzz(func(t *testing.T, which uint8, list string) {
		d := dialects[int(which)%len(dialects)]
		if !jsonsafe.ValidString(list) || !strings.HasPrefix(list, "[") {
			return
		}
		var msgs [][]byte
		ok := true
		parseArray(list, func(raw string) {
			if !strings.HasPrefix(raw, "{") {
				ok = false
			}
			for _, key := range []string{"content", "parts"} {
				if v := gjson.Get(raw, key); v.IsArray() {
					v.ForEach(func(_, blk gjson.Result) bool {
						ok = ok && blk.IsObject() // non-object blocks pass through as they are
						return true
					})
				}
			}
			msgs = append(msgs, []byte(raw))
		})
		if !ok || len(msgs) == 0 {
			return
		}
		out, err := Flatten(d, msgs, func(id string) string { return "n-" + id })
		if err != nil {
			return
		}
		body := requestOf(d, out)
		if !jsonsafe.Valid(body) {
			t.Fatalf("invalid output: %s", body)
		}
		c, err := Parse(d, body)
		if err != nil {
			t.Fatalf("output does not parse: %v", err)
		}
		for _, m := range c.Msgs {
			raw := body[m.Span.Start:m.Span.End]
			for _, key := range []string{"content", "parts"} {
				if v := gjson.GetBytes(raw, key); v.IsArray() {
					v.ForEach(func(_, blk gjson.Result) bool {
						if d != OpenAIChat && d != OpenAIResponses && !blk.IsObject() {
							t.Fatalf("a block that is not an object: %s", raw)
						}
						return true
					})
				}
			}
		}
		for _, r := range c.Results {
			raw := string(body[c.Msgs[r.Message].Span.Start:c.Msgs[r.Message].Span.End])
			if d != OpenAIResponses || !strings.Contains(raw, `"mcp_call"`) {
				t.Fatalf("a tool result is left: %s", raw)
			}
		}
		again, _ := Flatten(d, msgs, func(id string) string { return "n-" + id })
		if !bytes.Equal(bytes.Join(again, nil), bytes.Join(out, nil)) {
			t.Fatal("not deterministic")
		}
	})
}

func parseArray(list string, fn func(raw string)) {
	c, _ := Parse(OpenAIChat, []byte(`{"messages":`+list+`}`))
	if c == nil {
		return
	}
	body := `{"messages":` + list + `}`
	for _, m := range c.Msgs {
		fn(body[m.Span.Start:m.Span.End])
	}
}

func requestOf(d Dialect, msgs [][]byte) []byte {
	key := "messages"
	switch d {
	case OpenAIResponses:
		key = "input"
	case Gemini:
		key = "contents"
	}
	return []byte(`{"` + key + `":[` + string(bytes.Join(msgs, []byte(","))) + `]}`)
}
