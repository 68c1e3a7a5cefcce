package extproc

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/overflow"
	"github.com/toolproc/toolproc/filters/wire"
)

// TestOutputLimitBody: the max_tokens rung lowers each dialect's own
// output field and changes no other byte.
func TestOutputLimitBody(t *testing.T) {
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
		out, changed := outputLimitBody(tc.d, []byte(tc.body), 19_950)
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

// TestPlainErrorBody: a gzip-encoded error is classified decoded; a body
// that does not decode, or decodes past max_error_bytes, is read as it came.
func TestPlainErrorBody(t *testing.T) {
	x := newTestExchange(testServer(t, ""))
	x.profile = x.srv.currentProfiles()["default"]
	body := []byte(`{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"ERROR"}}}`)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(body)
	zw.Close()
	gz := map[string]string{"content-encoding": "gzip"}
	if got := x.plainErrorBody(gz, zb.Bytes()); !bytes.Equal(got, body) {
		t.Errorf("not decoded: %q", got)
	}
	if v := overflow.Classify(400, gz, x.plainErrorBody(gz, zb.Bytes())); v.Class != overflow.ProviderLimit {
		t.Errorf("decoded body classified %+v", v)
	}
	if got := x.plainErrorBody(gz, body); !bytes.Equal(got, body) {
		t.Error("a body that is not gzip changed")
	}
	if got := x.plainErrorBody(map[string]string{"content-encoding": "br"}, zb.Bytes()); !bytes.Equal(got, zb.Bytes()) {
		t.Error("another encoding was decoded")
	}
	var big bytes.Buffer
	zw = gzip.NewWriter(&big)
	zw.Write(bytes.Repeat([]byte("a"), x.profile.Recovery.MaxErrorBytes+1))
	zw.Close()
	if got := x.plainErrorBody(gz, big.Bytes()); !bytes.Equal(got, big.Bytes()) {
		t.Error("a body past max_error_bytes was decoded")
	}
}
