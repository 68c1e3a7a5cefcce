package stream

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
)

// oaiCompletion wraps a message in a chat.completion with an unknown field
// at each level, which must survive every edit.
func oaiCompletion(message, finish string) string {
	return `{"id":"chatcmpl-j","object":"chat.completion","created":5,"model":"m","x_top":{"k":[1,2]},"choices":[{"index":0,"message":` +
		message + `,"logprobs":null,"finish_reason":` + finish + `,"x_choice":true}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`
}

func TestFixOpenAIChatJSON(t *testing.T) {
	invoke := `<invoke name=\"read_file\"><parameter name=\"path\">a.go</parameter><parameter name=\"n\">3</parameter></invoke>`
	cases := []struct {
		name    string
		in      string
		xml     bool
		changed bool
		want    map[string]string // gjson path -> raw JSON value
	}{
		{"fine as is", oaiCompletion(`{"role":"assistant","content":"hi"}`, `"stop"`), true, false, nil},
		{"fine calls", oaiCompletion(`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`, `"tool_calls"`), false, false, nil},
		{"xml off leaves invoke", oaiCompletion(`{"role":"assistant","content":"`+invoke+`"}`, `"stop"`), false, false, nil},
		{"xml call, nothing left", oaiCompletion(`{"role":"assistant","content":"  `+invoke+`\n"}`, `"stop"`), true, true, map[string]string{
			"choices.0.message.content":                         `null`,
			"choices.0.message.tool_calls.#":                    `1`,
			"choices.0.message.tool_calls.0.id":                 `"call_000000000000000000000001"`,
			"choices.0.message.tool_calls.0.type":               `"function"`,
			"choices.0.message.tool_calls.0.function.name":      `"read_file"`,
			"choices.0.message.tool_calls.0.function.arguments": `"{\"path\":\"a.go\",\"n\":3}"`,
			"choices.0.finish_reason":                           `"tool_calls"`,
			"choices.0.x_choice":                                `true`,
			"x_top":                                             `{"k":[1,2]}`,
			"usage.total_tokens":                                `7`,
		}},
		{"xml call with text", oaiCompletion(`{"role":"assistant","content":"Reading.\n`+invoke+`\nThen more.","refusal":null}`, `"stop"`), true, true, map[string]string{
			"choices.0.message.content":      `"Reading.\n\nThen more."`,
			"choices.0.message.refusal":      `null`,
			"choices.0.message.tool_calls.#": `1`,
		}},
		{"xml after native call", oaiCompletion(`{"role":"assistant","content":"`+invoke+`","tool_calls":[{"id":"n1","type":"function","function":{"name":"g","arguments":"{}"}}]}`, `"tool_calls"`), true, true, map[string]string{
			"choices.0.message.tool_calls.#":               `2`,
			"choices.0.message.tool_calls.0.id":            `"n1"`,
			"choices.0.message.tool_calls.1.function.name": `"read_file"`,
			"choices.0.message.content":                    `null`,
		}},
		{"final answer", oaiCompletion(`{"role":"assistant","content":"<invoke name=\"final_answer\"><parameter name=\"answer\">42</parameter></invoke>"}`, `"stop"`), true, true, map[string]string{
			"choices.0.message.content":    `"42"`,
			"choices.0.message.tool_calls": ``,
			"choices.0.finish_reason":      `"stop"`,
		}},
		{"unclosed invoke stays text", oaiCompletion(`{"role":"assistant","content":"a <invoke name=\"f\">"}`, `"stop"`), true, false, nil},
		{"missing id, type, arguments", oaiCompletion(`{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f"}},{"id":"","function":{"name":"g","arguments":{"a":1}}}]}`, `"stop"`), false, true, map[string]string{
			"choices.0.message.tool_calls.0.id":                 `"call_000000000000000000000001"`,
			"choices.0.message.tool_calls.0.type":               `"function"`,
			"choices.0.message.tool_calls.0.function.arguments": `"{}"`,
			"choices.0.message.tool_calls.1.id":                 `"call_000000000000000000000002"`,
			"choices.0.message.tool_calls.1.function.arguments": `"{\"a\":1}"`,
			"choices.0.finish_reason":                           `"tool_calls"`,
		}},
		{"not a completion", `{"error":{"message":"x"}}`, true, false, nil},
		{"not json", `<html>`, true, false, nil},
		{"a chunk is not a completion", `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"<invoke name=\"f\"></invoke>"}}]}`, true, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			if !json.Valid(in) && tc.in != "<html>" {
				t.Fatalf("test input is not JSON: %s", in)
			}
			out, changed := FixOpenAIChatJSON(in, oaiOpts(tc.xml, false))
			if changed != tc.changed {
				t.Fatalf("changed=%v, want %v: %s", changed, tc.changed, out)
			}
			if !changed {
				if !bytes.Equal(out, in) {
					t.Fatalf("unchanged but different bytes: %s", out)
				}
				return
			}
			if !json.Valid(out) {
				t.Fatalf("invalid JSON: %s", out)
			}
			for path, want := range tc.want {
				if got := gjson.GetBytes(out, path).Raw; got != want {
					t.Errorf("%s = %s, want %s", path, got, want)
				}
			}
			// Fixing twice changes nothing more.
			if again, c := FixOpenAIChatJSON(out, oaiOpts(tc.xml, false)); c || !bytes.Equal(again, out) {
				t.Fatalf("second fix changed it again: %s", again)
			}
		})
	}
}

func TestOpenAIChatJSONToSSE(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		xml    bool
		usage  bool
		want   oaiAssembled
		deltas []string // extra delta fields expected in order
	}{
		{"text", oaiCompletion(`{"role":"assistant","content":"hello"}`, `"stop"`), false, false,
			oaiAssembled{Text: "hello", Finish: "stop"}, nil},
		{"usage asked", oaiCompletion(`{"role":"assistant","content":"hello"}`, `"length"`), false, true,
			oaiAssembled{Text: "hello", Finish: "length", Total: 7}, nil},
		{"empty content, no finish", `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":""}}]}`, false, false,
			oaiAssembled{Finish: "stop"}, nil},
		{"reasoning then calls", oaiCompletion(`{"role":"assistant","content":null,"reasoning_content":"think","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"function":{"name":"g","arguments":""}}]}`, `"stop"`), false, false,
			oaiAssembled{Finish: "tool_calls", Calls: []oaiAssembledCall{{ID: "a", Type: "function", Name: "f", Args: `{"x":1}`}, {ID: "call_000000000000000000000001", Type: "function", Name: "g", Args: "{}"}}},
			[]string{`{"role":"assistant","content":null}`, `{"reasoning_content":"think"}`}},
		{"xml", oaiCompletion(`{"role":"assistant","content":"Now: <invoke name=\"f\"><parameter name=\"a\">b</parameter></invoke>"}`, `"stop"`), true, false,
			oaiAssembled{Text: "Now:", Finish: "tool_calls", Calls: []oaiAssembledCall{{ID: "call_000000000000000000000001", Type: "function", Name: "f", Args: `{"a":"b"}`}}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := OpenAIChatJSONToSSE([]byte(tc.in), oaiOpts(tc.xml, tc.usage))
			if !ok {
				t.Fatal("not ok")
			}
			got := oaiAssemble(t, out)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v\n%s", got, tc.want, out)
			}
			for i, d := range tc.deltas {
				ev := bytes.Split(out, []byte("\n\n"))[i]
				if got := gjson.GetBytes(ev[len("data: "):], "choices.0.delta").Raw; got != d {
					t.Fatalf("delta %d = %s, want %s", i, got, d)
				}
			}
			if gjson.GetBytes(bytes.SplitN(out, []byte("\n\n"), 2)[0][6:], "id").Str != gjson.Get(tc.in, "id").Str {
				t.Fatal("id not reused")
			}
		})
	}
	for _, in := range []string{`{"error":{"message":"x"}}`, `[]`, `data: {}`, ``} {
		if _, ok := OpenAIChatJSONToSSE([]byte(in), Options{}); ok {
			t.Fatalf("%q accepted", in)
		}
	}
}
