package overflow

import "testing"

// TestClassifyTokens: the counts come from the providers' literal bodies.
func TestClassifyTokens(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   Tokens
		fit    int
	}{
		{"anthropic max_tokens", 400,
			"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 180000 + 64000 > 200000, decrease input length or `max_tokens` and try again\"}}",
			Tokens{Input: 180000, Output: 64000, Limit: 200000, OutputNamed: true}, 20000},
		{"anthropic max_tokens plain", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"input length and max_tokens exceed context limit: 180000 + 64000 > 200000"}}`,
			Tokens{Input: 180000, Output: 64000, Limit: 200000, OutputNamed: true}, 20000},
		{"openai completion", 400,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, you requested 140000 tokens (100000 in the messages, 40000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			Tokens{Input: 100000, Output: 40000, Limit: 128000, OutputNamed: true}, 28000},
		{"openai legacy prompt;completion", 400,
			`{"error":{"message":"This model's maximum context length is 4097 tokens, however you requested 4200 tokens (3200 in your prompt; 1000 for the completion). Please reduce your prompt; or completion length.","type":"invalid_request_error","param":null,"code":null}}`,
			Tokens{Input: 3200, Output: 1000, Limit: 4097, OutputNamed: true}, 897},
		{"openrouter text and output", 400,
			`{"error":{"message":"This endpoint's maximum context length is 163840 tokens. However, you requested about 170000 tokens (130000 of text input, 40000 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}`,
			Tokens{Input: 130000, Output: 40000, Limit: 163840, OutputNamed: true}, 33840},
		{"openrouter text, tool and output", 400,
			`{"error":{"message":"This endpoint's maximum context length is 163840 tokens. However, you requested about 170000 tokens (120000 of text input, 10000 of tool input, 40000 in the output). Please reduce the length of either one.","code":400,"metadata":{"provider_name":null}}}`,
			Tokens{Input: 130000, Output: 40000, Limit: 163840, OutputNamed: true}, 33840},
		{"anthropic prompt", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}`,
			Tokens{Input: 213462, Limit: 200000}, 0},
		{"openai messages", 400,
			`{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 48227 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			Tokens{Input: 48227, Limit: 8192}, 0},
		{"gemini", 400,
			`{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`,
			Tokens{Input: 1200293, Limit: 1048576}, 0},
		{"html 413", 413, `<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>`,
			Tokens{}, 0},
		{"absurd count", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 99999999999999999999999 tokens > 200000 maximum"}}`,
			Tokens{}, 0},
	}
	for _, tc := range cases {
		v := Classify(tc.status, nil, []byte(tc.body))
		if !v.Match() {
			t.Errorf("%s: not an overflow (%+v)", tc.name, v)
			continue
		}
		if v.Tokens != tc.want {
			t.Errorf("%s: tokens %+v, want %+v", tc.name, v.Tokens, tc.want)
		}
		fit, ok := v.Tokens.OutputFit()
		if ok != (tc.fit > 0) || fit != tc.fit {
			t.Errorf("%s: OutputFit %d %v, want %d", tc.name, fit, ok, tc.fit)
		}
	}
}
