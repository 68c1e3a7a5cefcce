package overflow

import (
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
)

func TestCompactionKind(t *testing.T) {
	cases := []struct {
		name string
		d    wire.Dialect
		body string
		want string
	}{
		{"codex trigger", wire.OpenAIResponses,
			`{"model":"gpt-5-codex","stream":true,"store":false,"instructions":"sys","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]},{"type":"compaction_trigger"}]}`, CompactionCodex},
		{"claude code compact", wire.Anthropic,
			`{"model":"claude-sonnet-4-5","max_tokens":20000,"messages":[{"role":"user","content":"fix it"},{"role":"assistant","content":"done"},{"role":"user","content":[{"type":"text","text":"Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests."}]}]}`, CompactionSummary},
		{"opencode summary", wire.OpenAIChat,
			`{"model":"gpt-4o","messages":[{"role":"system","content":"sys"},{"role":"user","content":"fix it"},{"role":"assistant","content":"done"},{"role":"user","content":"Provide a detailed prompt for continuing our conversation above. Focus on what we did."}]}`, CompactionSummary},
		{"an ordinary turn", wire.Anthropic,
			`{"model":"claude-sonnet-4-5","max_tokens":20000,"messages":[{"role":"user","content":"Summarise this file for me."}]}`, ""},
		{"the marker in an old turn only", wire.OpenAIChat,
			`{"model":"gpt-4o","messages":[{"role":"user","content":"Provide a detailed prompt for continuing our conversation above."},{"role":"assistant","content":"ok"},{"role":"user","content":"now run the tests"}]}`, ""},
		{"a trigger-looking string in text", wire.OpenAIResponses,
			`{"model":"gpt-5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"what is compaction_trigger?"}]}]}`, ""},
		{"not JSON", wire.Anthropic, `{"messages":[`, ""},
	}
	for _, tc := range cases {
		if got := CompactionKind(tc.d, []byte(tc.body)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
