package overflow

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// TestWithOutputLimit: the max_tokens rung lowers each dialect's own
// output field and changes no other byte.
func TestWithOutputLimit(t *testing.T) {
	cases := []struct {
		d          wire.Dialect
		body, path string
		changed    bool
	}{
		{wire.Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":64000,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens", true},
		{wire.OpenAIChat, `{"model":"gpt-4o","max_completion_tokens":40000,"messages":[{"role":"user","content":"hi"}]}`, "max_completion_tokens", true},
		{wire.OpenAIChat, `{"model":"gpt-4o","max_tokens":40000,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens", true},
		{wire.OpenAIResponses, `{"model":"gpt-5","max_output_tokens":100000,"input":"hi"}`, "max_output_tokens", true},
		{wire.Gemini, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"temperature":0.2,"maxOutputTokens":65536}}`, "generationConfig.maxOutputTokens", true},
		{wire.Bedrock, `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"maxTokens":64000}}`, "inferenceConfig.maxTokens", true},
		// Already at or under the fit: nothing to lower.
		{wire.Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":1000,"messages":[]}`, "max_tokens", false},
		{wire.Anthropic, `["not an object"]`, "max_tokens", false},
	}
	for _, tc := range cases {
		out, changed := WithOutputLimit(tc.d, []byte(tc.body), 19_950)
		if changed != tc.changed {
			t.Errorf("%s %s: changed %v", tc.d, tc.body, changed)
			continue
		}
		if !changed {
			continue
		}
		if got := gjson.GetBytes(out, tc.path).Int(); got != 19_950 {
			t.Errorf("%s: %s = %d", tc.d, tc.path, got)
		}
		// Every byte but the number is the client's.
		old := gjson.Get(tc.body, tc.path).Raw
		if !bytes.Equal(bytes.Replace(out, []byte("19950"), []byte(old), 1), []byte(tc.body)) {
			t.Errorf("%s: other bytes changed:\n%s\n%s", tc.d, tc.body, out)
		}
	}
}

// TestWithModel: the fallback rung renames the model only where the body
// names it, changing no other byte.
func TestWithModel(t *testing.T) {
	body := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[]}`
	out, ok := WithModel(wire.Anthropic, []byte(body), "claude-sonnet-4-5-1m")
	if !ok || string(out) != `{"model":"claude-sonnet-4-5-1m","max_tokens":100,"messages":[]}` {
		t.Fatalf("anthropic: %s %v", out, ok)
	}
	if _, ok := WithModel(wire.Gemini, []byte(`{"contents":[]}`), "gemini-2.5-pro"); ok {
		t.Fatal("gemini names its model in the path")
	}
	if _, ok := WithModel(wire.OpenAIChat, []byte(`{"messages":[]}`), "gpt-4.1"); ok {
		t.Fatal("a body without a model got one")
	}
}
