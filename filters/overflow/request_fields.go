package overflow

import (
	"slices"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// The request fields the ladder's history-free rungs change: the output
// limit (the max_tokens rung) and the model (the fallback rung). Each
// setter rewrites the one value in place with sjson, so every other byte
// is the client's.

// outputLimitPath is where dialect d's request names its output limit in
// body: Anthropic max_tokens; OpenAI Chat max_completion_tokens (or the
// older max_tokens when that is what the client sent); Responses
// max_output_tokens; Gemini generationConfig.maxOutputTokens; Bedrock
// Converse inferenceConfig.maxTokens.
func outputLimitPath(d wire.Dialect, body []byte) string {
	switch d {
	case wire.Anthropic:
		return "max_tokens"
	case wire.OpenAIChat:
		if !gjson.GetBytes(body, "max_completion_tokens").Exists() && gjson.GetBytes(body, "max_tokens").Exists() {
			return "max_tokens"
		}
		return "max_completion_tokens"
	case wire.OpenAIResponses:
		return "max_output_tokens"
	case wire.Gemini:
		return "generationConfig.maxOutputTokens"
	case wire.Bedrock:
		return "inferenceConfig.maxTokens"
	}
	return ""
}

// OutputLimit reads the requested output limit; set=false when absent.
func OutputLimit(d wire.Dialect, body []byte) (n int, set bool) {
	p := outputLimitPath(d, body)
	if p == "" {
		return 0, false
	}
	r := gjson.GetBytes(body, p)
	if r.Type != gjson.Number {
		return 0, false
	}
	return int(r.Int()), true
}

// WithOutputLimit sets the output limit to n. changed=false when the
// dialect has no such field, the body is not an object, or n is not lower
// than what it asks.
func WithOutputLimit(d wire.Dialect, body []byte, n int) (out []byte, changed bool) {
	p := outputLimitPath(d, body)
	if p == "" || !gjson.ParseBytes(body).IsObject() {
		return nil, false
	}
	if cur, set := OutputLimit(d, body); set && cur <= n {
		return nil, false
	}
	return setValue(body, p, n)
}

// ModelInBody reports whether dialect d names the model in the request
// body (OpenAI Chat, Responses, Anthropic Messages); Gemini and Bedrock
// name it in the path, which a replay through the same route keeps.
func ModelInBody(d wire.Dialect) bool {
	switch d {
	case wire.OpenAIChat, wire.OpenAIResponses, wire.Anthropic:
		return true
	}
	return false
}

// WithModel names model in place of the body's own. ok=false when the
// dialect does not name it in the body or the body names none.
func WithModel(d wire.Dialect, body []byte, model string) (out []byte, ok bool) {
	if !ModelInBody(d) || gjson.GetBytes(body, "model").Type != gjson.String {
		return nil, false
	}
	return setValue(body, "model", model)
}

func setValue(body []byte, path string, v any) ([]byte, bool) {
	out, err := sjson.SetBytes(slices.Clone(body), path, v)
	if err != nil || !gjson.ValidBytes(out) {
		return nil, false
	}
	return out, true
}
