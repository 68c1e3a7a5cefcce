package wire

import "testing"

func TestArgsObject(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{`{"task_id":"b50b67f"}`, "b50b67f"},                  // Anthropic, Gemini, Bedrock: the object
		{`"{\"task_id\":\"b50b67f\"}"`, "b50b67f"},            // OpenAI: a string of JSON
		{`"{\"task_id\":"`, ""},                               // a string of broken JSON
		{`{"task_id":`, ""},                                   // broken outright
		{`"` + string(make([]byte, 3)) + `"`, ""},             // control bytes
		{`"[` + `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[` + `"`, ""}, // deep and broken
	} {
		if got := ArgsObject(c.args).Get("task_id").String(); got != c.want {
			t.Errorf("ArgsObject(%q).task_id = %q, want %q", c.args, got, c.want)
		}
	}
}
