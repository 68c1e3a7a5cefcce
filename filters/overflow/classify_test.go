package overflow

import (
	"strings"
	"testing"
)

type row struct {
	name     string
	status   int
	headers  map[string]string
	body     string
	class    Class
	provider string // "" = don't check
}

var bedrockHdr = map[string]string{"x-amzn-requestid": "r", "x-amzn-errortype": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"}
var azureHdr = map[string]string{"apim-request-id": "a", "x-ms-region": "East US"}
var openaiHdr = map[string]string{"openai-organization": "org", "openai-processing-ms": "12"}

// rows holds one row per provider/shape, with the literal bodies from
// the providers' documented error bodies (platform.openai.com/docs/guides/error-codes, docs.anthropic.com/en/api/errors; numbers as quoted there) and the negatives.
var rows = []row{
	// ---- OpenAI / Azure ----
	{"openai_classic", 400, openaiHdr,
		`{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		ContextOverflow, ProviderOpenAI},
	{"openai_classic_no_headers", 400, nil,
		`{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		ContextOverflow, ProviderOpenAI},
	{"openai_max_tokens_message_only", 400, nil,
		`{"error":{"message":"This model's maximum context length is 4097 tokens. However, you requested 4120 tokens (3120 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":null}}`,
		ContextOverflow, ProviderOpenAI},
	{"openai_responses", 400, openaiHdr,
		`{"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}`,
		ContextOverflow, ProviderOpenAI},
	{"openai_responses_message_only", 400, nil,
		`{"error":{"type":"invalid_request_error","code":null,"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}`,
		ContextOverflow, ProviderOpenAI},
	{"azure", 400, azureHdr,
		`{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded","status":400}}`,
		ContextOverflow, ProviderAzure},

	// ---- Anthropic ----
	{"anthropic_prompt_too_long", 400, nil,
		`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}`,
		ContextOverflow, ProviderAnthropic},
	{"anthropic_input_plus_max_tokens", 400, nil,
		"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 189136 + 20000 > 204648, decrease input length or `max_tokens` and try again\"}}",
		ContextOverflow, ProviderAnthropic},
	{"anthropic_413_bytes", 413, nil,
		`{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}`,
		PayloadTooLarge, ProviderAnthropic},
	{"anthropic_413_context_variant", 413, nil,
		`{"type":"error","error":{"type":"invalid_request_error","message":"Request size exceeds model context window"},"request_id":"req_011CS"}`,
		ContextOverflow, ProviderAnthropic},

	// ---- Gemini / Vertex ----
	{"gemini", 400, nil,
		`{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`,
		ContextOverflow, ProviderGemini},
	{"gemini_stream_array", 400, nil,
		`[{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]`,
		ContextOverflow, ProviderGemini},
	{"vertex_payload_text", 400, nil,
		`400 Request payload size exceeds the limit: 31457280 bytes.`,
		PayloadTooLarge, ProviderVertex},
	{"vertex_payload_json", 400, nil,
		`{"error":{"code":400,"message":"Request payload size exceeds the limit: 31457280 bytes.","status":"INVALID_ARGUMENT"}}`,
		PayloadTooLarge, ProviderVertex},

	// ---- Bedrock ----
	{"bedrock_input_too_long", 400, bedrockHdr,
		`{"message":"Input is too long for requested model."}`,
		ContextOverflow, ProviderBedrock},
	{"bedrock_input_too_long_no_headers", 400, nil,
		`{"message":"Input is too long for requested model."}`,
		ContextOverflow, ProviderBedrock},
	{"bedrock_claude", 400, bedrockHdr,
		`{"message":"The model returned the following errors: prompt is too long: 227255 tokens > 200000 maximum"}`,
		ContextOverflow, ProviderBedrock},
	{"bedrock_too_many_input_tokens", 400, bedrockHdr,
		`{"message":"Too many input tokens. Max input tokens: 8192, request input token count: 9000"}`,
		ContextOverflow, ProviderBedrock},
	{"bedrock_too_many_tokens_validation", 400, bedrockHdr,
		`{"message":"too many tokens"}`,
		ContextOverflow, ProviderBedrock},
	{"bedrock_type_field", 400, nil,
		`{"__type":"com.amazon.coral.validate#ValidationException","message":"Input is too long for requested model."}`,
		ContextOverflow, ProviderBedrock},
	{"bedrock_expected_maxlength", 400, bedrockHdr,
		`{"message":"1 validation error detected: Value at 'prompt' failed to satisfy constraint: expected maxLength: 100000"}`,
		ContextOverflow, ProviderBedrock},

	// ---- OpenRouter ----
	{"openrouter_context", 400, nil,
		`{"error":{"code":400,"message":"This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically."}}`,
		ContextOverflow, ProviderOpenRouter},
	{"openrouter_raw_error", 400, nil,
		`{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"ERROR","provider_name":"Chutes"}}}`,
		ProviderLimit, ProviderOpenRouter},
	{"openrouter_raw_wrapped_overflow", 400, nil,
		`{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 213462 tokens > 200000 maximum\"}}","provider_name":"Anthropic"}}}`,
		ContextOverflow, ProviderOpenRouter},
	{"openrouter_poolside", 400, nil,
		`{"error":{"code":400,"message":"Input length 140000 exceeds the maximum allowed input length of 131072 tokens."}}`,
		ContextOverflow, ProviderOpenRouter},

	// ---- Local servers / others ----
	{"vllm", 400, nil,
		`{"object":"error","message":"This model's maximum context length is 131072 tokens. However, you requested 351430 tokens. Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`,
		ContextOverflow, ProviderUnknown},
	{"llamacpp", 400, nil,
		`{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`,
		ContextOverflow, ProviderUnknown},
	{"ollama", 400, nil,
		`{"error":{"message":"prompt too long; exceeded max context length by 1200 tokens","type":"api_error"}}`,
		ContextOverflow, ""},
	{"lmstudio", 400, nil,
		`{"error":"Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 8192 tokens, which is not enough. The number of tokens to keep from the initial prompt is greater than the context length."}`,
		ContextOverflow, ""},
	{"mistral", 400, nil,
		`{"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_error","code":null}`,
		ContextOverflow, ""},
	{"together_longer_than", 400, nil,
		`{"error":{"message":"The input (40000 tokens) is longer than the model's context length (32768 tokens).","type":"invalid_request_error"}}`,
		ContextOverflow, ""},
	{"xai_max_prompt_length", 400, nil,
		`{"code":"Client specified an invalid argument","error":"This model's maximum prompt length is 131072 but the request contains 140000 tokens."}`,
		ContextOverflow, ""},
	{"groq_reduce_length", 400, nil,
		`{"error":{"message":"Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages"}}`,
		ContextOverflow, ""},
	{"litellm_current_length", 400, nil,
		`{"error":{"message":"current length is 40000 while limit is 32768"}}`,
		ContextOverflow, ""},
	{"openclaw_model_token_limit", 400, nil, `model token limit reached`, ContextOverflow, ""},
	{"openclaw_context_overflow_prefix", 500, nil, `Context overflow: prompt did not fit`, ContextOverflow, ""},
	{"openclaw_total_tokens", 400, nil, `total tokens 9000 exceeds the model's maximum`, ContextOverflow, ""},
	{"openclaw_deepseek", 400, nil, `deepseek: input is far too long`, ContextOverflow, ""},
	{"openclaw_zh", 400, nil, `{"error":{"message":"上下文过长，请压缩上下文"}}`, ContextOverflow, ""},
	{"openclaw_ran_out_of_room", 400, nil, `the context window ran out of room`, ContextOverflow, ""},
	{"generic_413_html", 413, nil, `<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>`, PayloadTooLarge, ""},
	{"status_413_no_body", 413, nil, ``, PayloadTooLarge, ""},
	{"status_413_unknown_json", 413, nil, `{"error":{"message":"nope"}}`, PayloadTooLarge, ""},
	{"bedrock_stream_exception_text", 400, nil, `ModelStreamErrorException: Input is too long for requested model`, ContextOverflow, ""},

	// ---- Negatives ----
	{"neg_openai_tpm_429", 429, openaiHdr,
		`{"error":{"message":"Request too large for gpt-4 in organization org-abc on tokens per min (TPM): Limit 10000, Requested 12000. The input or output tokens must be reduced in order to run successfully.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`,
		NotOurs, ProviderOpenAI},
	{"neg_openai_tpm_400", 400, nil,
		`{"error":{"message":"Request too large for gpt-4 in organization org-abc on tokens per min (TPM): Limit 10000, Requested 12000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`,
		NotOurs, ""},
	{"neg_groq_413_tpm", 413, nil,
		`{"error":{"message":"Request too large for model llama-3.3-70b-versatile in organization org_x service tier on_demand on tokens per minute (TPM): Limit 6000, Requested 9000, please reduce your message size and try again.","type":"tokens","code":"rate_limit_exceeded"}}`,
		NotOurs, ""},
	{"neg_413_tpm_message_only", 413, nil, `Request too large: tokens per minute (TPM) limit`, NotOurs, ""},
	{"neg_429_with_overflow_words", 429, nil,
		`{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}`,
		NotOurs, ""},
	{"neg_anthropic_rate_limit", 429, nil,
		`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
		NotOurs, ProviderAnthropic},
	{"neg_anthropic_overloaded", 529, nil,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		NotOurs, ProviderAnthropic},
	{"neg_401", 401, nil,
		`{"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
		NotOurs, ProviderOpenAI},
	{"neg_anthropic_401", 401, nil,
		`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
		NotOurs, ProviderAnthropic},
	{"neg_400_other", 400, nil,
		`{"error":{"message":"Invalid 'messages[2].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.","type":"invalid_request_error","param":"messages[2].tool_calls","code":"empty_array"}}`,
		NotOurs, ProviderOpenAI},
	{"neg_anthropic_400_other", 400, nil,
		`{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0.tool_result: unexpected tool_use_id found in tool_result blocks"}}`,
		NotOurs, ProviderAnthropic},
	{"neg_500", 500, nil,
		`{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
		NotOurs, ""},
	{"neg_anthropic_500", 500, nil,
		`{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
		NotOurs, ProviderAnthropic},
	{"neg_bedrock_throttling", 429, map[string]string{"x-amzn-errortype": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"},
		`{"message":"Too many tokens, please wait before trying again."}`,
		NotOurs, ProviderBedrock},
	{"neg_bedrock_throttling_400_text", 400, nil,
		`ThrottlingException: Too many tokens, please wait before trying again.`,
		NotOurs, ""},
	{"neg_bedrock_too_many_tokens_no_validation", 400, nil,
		`{"message":"Too many tokens, please wait before trying again."}`,
		NotOurs, ""},
	{"neg_gemini_quota", 429, nil,
		`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`,
		NotOurs, ProviderGemini},
	{"neg_gemini_quota_400", 400, nil,
		`{"error":{"code":400,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED"}}`,
		NotOurs, ProviderGemini},
	{"neg_openai_insufficient_quota", 400, nil,
		`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
		NotOurs, ""},
	{"neg_gemini_invalid_argument_other", 400, nil,
		`{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"foo\": Cannot find field.","status":"INVALID_ARGUMENT"}}`,
		NotOurs, ProviderGemini},
	{"neg_openrouter_raw_lowercase", 400, nil,
		`{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"error","provider_name":"Chutes"}}}`,
		NotOurs, ProviderOpenRouter},
	{"neg_openrouter_raw_error_500", 500, nil,
		`{"error":{"code":500,"message":"Provider returned error","metadata":{"raw":"ERROR"}}}`,
		NotOurs, ProviderOpenRouter},
	{"neg_openrouter_raw_non_string", 400, nil,
		`{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":["ERROR"]}}}`,
		NotOurs, ProviderOpenRouter},
	{"neg_openrouter_error_not_object", 400, nil, `{"error":"ERROR","metadata":{"raw":"ERROR"}}`, NotOurs, ""},
	{"neg_openrouter_rate_limit", 429, nil,
		`{"error":{"code":429,"message":"Rate limit exceeded: free-models-per-min.","metadata":{"raw":"ERROR"}}}`,
		NotOurs, ProviderOpenRouter},
	{"neg_reasoning", 400, nil, `{"error":{"message":"Reasoning is mandatory for this endpoint and cannot be disabled; prompt too long"}}`, NotOurs, ""},
	{"neg_window_too_small", 400, nil, `{"error":{"message":"context window too small: minimum is 16000 tokens"}}`, NotOurs, ""},
	{"neg_200_success_mentions_words", 200, nil,
		`{"choices":[{"message":{"role":"assistant","content":"The maximum context length is 8192 tokens; prompt is too long."}}]}`,
		NotOurs, ""},
	{"neg_200_text", 200, nil, `maximum context length is 8192`, NotOurs, ""},
	{"neg_200_anthropic_stop_reason", 200, nil,
		`{"type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"model_context_window_exceeded"}`,
		NotOurs, ""},
	{"neg_empty_400", 400, nil, ``, NotOurs, ""},
	{"neg_503_text", 503, nil, `upstream connect error or disconnect/reset before headers`, NotOurs, ""},

	// A 200 body that carries an explicit error object is inspected.
	{"openrouter_200_error_object", 200, nil,
		`{"id":"gen-1","object":"chat.completion","choices":[{"finish_reason":"error"}],"error":{"code":400,"message":"This endpoint's maximum context length is 32768 tokens."}}`,
		ContextOverflow, ProviderOpenRouter},
}

func TestClassifyTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.name] {
			t.Fatalf("duplicate row %q", r.name)
		}
		seen[r.name] = true
		t.Run(r.name, func(t *testing.T) {
			v := Classify(r.status, r.headers, []byte(r.body))
			if v.Class != r.class {
				t.Fatalf("class = %q (reason %q), want %q", v.Class, v.Reason, r.class)
			}
			if r.class != NotOurs && v.Reason == "" {
				t.Fatalf("empty reason for match")
			}
			if v.Provider == "" {
				t.Fatalf("empty provider")
			}
			if r.provider != "" && v.Provider != r.provider {
				t.Fatalf("provider = %q, want %q", v.Provider, r.provider)
			}
			if v.Match() != (r.class != NotOurs) {
				t.Fatalf("Match() disagrees with class")
			}
			assertContentFree(t, v, r.body)
		})
	}
}

// assertContentFree checks the reason carries no body text: it must be a
// short snake-case identifier.
func assertContentFree(t *testing.T, v Verdict, body string) {
	t.Helper()
	if len(v.Reason) > 48 {
		t.Fatalf("reason too long: %q", v.Reason)
	}
	for _, c := range v.Reason {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == ':') {
			t.Fatalf("reason %q has char %q", v.Reason, c)
		}
	}
}

func TestReasonsByRule(t *testing.T) {
	cases := []struct {
		status int
		body   string
		reason string
	}{
		{400, `{"error":{"code":"context_length_exceeded","message":"x"}}`, "code:context_length_exceeded"},
		{413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}`, "code:request_too_large"},
		{400, `{"error":{"code":400,"message":"m","metadata":{"raw":"ERROR"}}}`, "openrouter_raw_error"},
		{429, `anything`, "status_429"},
		{413, ``, "status_413"},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}`, "msg:prompt_is_too_long"},
		{400, `Request too large for gpt-4 on tokens per min (TPM)`, "excluded:tpm"},
	}
	for _, c := range cases {
		if v := Classify(c.status, nil, []byte(c.body)); v.Reason != c.reason {
			t.Errorf("Classify(%d, %q).Reason = %q, want %q", c.status, c.body, v.Reason, c.reason)
		}
	}
}

// Structured codes win over message text.
func TestStructuredBeforeMessage(t *testing.T) {
	body := `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"tokens","code":"rate_limit_exceeded"}}`
	if v := Classify(400, nil, []byte(body)); v.Class != NotOurs || v.Reason != "code:rate_limit" {
		t.Fatalf("got %+v", v)
	}
}

// The OpenRouter rule is exact and case-sensitive, and only fires on 400.
func TestOpenRouterRawExact(t *testing.T) {
	for _, raw := range []string{"ERROR", "error", "Error", " ERROR", "ERROR ", ""} {
		body := `{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"` + raw + `"}}}`
		v := Classify(400, nil, []byte(body))
		want := NotOurs
		if raw == "ERROR" {
			want = ProviderLimit
		}
		if v.Class != want {
			t.Errorf("raw %q: class %q want %q", raw, v.Class, want)
		}
	}
	for _, st := range []int{200, 401, 413, 429, 500} {
		body := `{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"ERROR"}}}`
		if v := Classify(st, nil, []byte(body)); v.Class == ProviderLimit {
			t.Errorf("status %d: got ProviderLimit", st)
		}
	}
}

func TestHugeBodyBounded(t *testing.T) {
	big := strings.Repeat("x", 1<<20) + " prompt is too long"
	if v := Classify(400, nil, []byte(big)); v.Class != NotOurs {
		t.Fatalf("text beyond the searched prefix matched: %+v", v)
	}
	small := "prompt is too long " + strings.Repeat("x", 1<<20)
	if v := Classify(400, nil, []byte(small)); v.Class != ContextOverflow {
		t.Fatalf("got %+v", v)
	}
}

func TestStreamEvents(t *testing.T) {
	cases := []struct {
		name     string
		event    string
		data     string
		class    Class
		provider string
	}{
		{"responses_error_nested", "error",
			`{"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}`,
			ContextOverflow, ProviderOpenAI},
		{"responses_error_flat", "error",
			`{"type":"error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input","sequence_number":2}`,
			ContextOverflow, ProviderOpenAI},
		{"responses_error_no_event_name", "",
			`{"type":"error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":"input","sequence_number":2}`,
			ContextOverflow, ProviderOpenAI},
		{"responses_failed", "response.failed",
			`{"type":"response.failed","sequence_number":3,"response":{"id":"resp_1","object":"response","status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again."}}}`,
			ContextOverflow, ProviderOpenAI},
		{"responses_failed_message_only", "response.failed",
			`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"Your input exceeds the context window of this model."}}}`,
			ContextOverflow, ProviderOpenAI},
		{"responses_failed_rate_limit", "response.failed",
			`{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached"}}}`,
			NotOurs, ProviderOpenAI},
		{"responses_failed_no_error", "response.failed",
			`{"type":"response.failed","response":{"status":"failed","error":null}}`,
			NotOurs, ProviderOpenAI},
		{"anthropic_overloaded", "error",
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			NotOurs, ProviderAnthropic},
		{"anthropic_prompt_too_long", "error",
			`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}`,
			ContextOverflow, ProviderAnthropic},
		{"chat_chunk_error", "",
			`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}],"error":{"code":400,"message":"This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens."}}`,
			ContextOverflow, ProviderOpenRouter},
		{"chat_chunk_error_openai", "",
			`{"id":"c1","object":"chat.completion.chunk","choices":[],"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 8192 tokens."}}`,
			ContextOverflow, ProviderOpenAI},
		{"chat_chunk_error_other", "",
			`{"id":"c1","object":"chat.completion.chunk","choices":[],"error":{"code":"server_error","message":"upstream timeout"}}`,
			NotOurs, ProviderOpenAI},
		{"chat_chunk_error_null", "",
			`{"id":"c1","object":"chat.completion.chunk","choices":[{"delta":{"content":"prompt is too long"}}],"error":null}`,
			NotOurs, ProviderUnknown},
		{"chat_chunk_no_error", "",
			`{"id":"c1","object":"chat.completion.chunk","choices":[{"delta":{"content":"maximum context length"}}]}`,
			NotOurs, ProviderUnknown},
		{"chat_chunk_openrouter_raw_error", "",
			`{"id":"c1","object":"chat.completion.chunk","choices":[],"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"ERROR"}}}`,
			NotOurs, ProviderOpenRouter},
		{"bedrock_validation_exception_event", "validationException",
			`{"message":"Input is too long for requested model."}`,
			ContextOverflow, ProviderBedrock},
		{"bedrock_throttling_event", "throttlingException",
			`{"message":"Too many tokens, please wait before trying again."}`,
			NotOurs, ProviderBedrock},
		{"not_json", "error", `not json`, NotOurs, ProviderUnknown},
		{"content_delta", "content_block_delta",
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"prompt is too long"}}`,
			NotOurs, ProviderUnknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := ClassifyStreamEvent(c.event, []byte(c.data))
			if v.Class != c.class {
				t.Fatalf("class = %q (reason %q), want %q", v.Class, v.Reason, c.class)
			}
			if v.Provider != c.provider {
				t.Fatalf("provider = %q, want %q", v.Provider, c.provider)
			}
			if c.class != NotOurs && v.Reason == "" {
				t.Fatalf("empty reason")
			}
			assertContentFree(t, v, c.data)
		})
	}
}
