package testenv

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// Overflow error answers as providers send them (as their docs and real captures show).
// Each is a status and a literal body.
var (
	OpenRouterRawError       = OverflowError{400, `{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"ERROR","provider_name":"Chutes"}},"user_id":"user_2x"}`}
	OpenAIContextLength      = OverflowError{400, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 48227 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`}
	AnthropicPromptTooLong   = OverflowError{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"},"request_id":"req_011CS"}`}
	AnthropicRequestTooLarge = OverflowError{413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}`}
	GeminiTokenCount         = OverflowError{400, `{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`}
	BedrockInputTooLong      = OverflowError{400, `{"message":"Input is too long for requested model."}`}

	// Look-alikes that are not overflow: recovery must leave them alone.
	OpenAIRateLimit = OverflowError{429, `{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 500, Used 500, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`}
	OpenAITPM       = OverflowError{429, `{"error":{"message":"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 48227. The input or output tokens must be reduced in order to run successfully.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`}
	AnthropicAuth   = OverflowError{401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}
	OpenAIBadParam  = OverflowError{400, `{"error":{"message":"Invalid value for 'temperature': must be between 0 and 2.","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}`}
)

// OverflowError is one provider error answer.
type OverflowError struct {
	Status int
	Body   string
}

// OverflowModel scripts a provider whose context is small: a request in
// which any tool result (other than an expand_context answer) is larger
// than MaxResult characters gets Error; smaller requests get the answer of
// Then (an ExpandModel, so a recovered request can still expand; without a
// Needle, the fake upstream's default answer). With
// InStream the error comes as the first event of a 200 SSE stream when
// the request streams. Always fails every request.
type OverflowModel struct {
	MaxResult int
	// MaxBody, when set, also refuses any request body longer than it
	// (bytes): a window the whole conversation has outgrown.
	MaxBody  int
	Error    OverflowError
	InStream bool
	Always   bool
	Then     ExpandModel
}

// Script returns the FakeUpstream script.
func (m OverflowModel) Script() func(RecordedRequest) *ScriptedResponse {
	then := m.Then.Script()
	return func(req RecordedRequest) *ScriptedResponse {
		ep := wire.Detect(req.Path, req.Body)
		if ep.Dialect == wire.Unknown || !gjson.ValidBytes(req.Body) {
			return nil
		}
		if !m.Always && !m.tooBig(ep.Dialect, req.Body) && (m.MaxBody == 0 || len(req.Body) <= m.MaxBody) {
			if m.Then.Needle == "" {
				return plainAnswer(ep.Dialect)
			}
			return then(req)
		}
		stream := gjson.GetBytes(req.Body, "stream").Bool() || ep.Stream
		if m.InStream && stream {
			return m.streamError(ep.Dialect)
		}
		r := jsonResponse([]byte(m.Error.Body))
		r.Status = m.Error.Status
		return r
	}
}

func (m OverflowModel) tooBig(d wire.Dialect, body []byte) bool {
	c, err := wire.Parse(d, body)
	if err != nil {
		return false
	}
	for _, r := range c.Results {
		if strings.HasPrefix(r.CallID, "call_expand_") || strings.HasPrefix(r.CallID, "toolu_expand_") ||
			strings.HasPrefix(r.CallID, "tooluse_expand_") || r.ToolName == wire.ExpandToolName {
			continue
		}
		// Characters, as the providers' limits and llxprt count them.
		n := 0
		for _, t := range r.Texts {
			n += utf8.RuneCountInString(t.Text())
		}
		for _, j := range r.JSON {
			n += utf8.RuneCountInString(j.Raw)
		}
		if n > m.MaxResult {
			return true
		}
	}
	return false
}

// streamError opens a 200 stream with an overflow error, as OpenRouter
// (chat), Anthropic and the Responses API do (as their docs and real captures show).
func (m OverflowModel) streamError(d wire.Dialect) *ScriptedResponse {
	var events [][]byte
	switch d {
	case wire.Anthropic:
		events = [][]byte{[]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 213462 tokens > 200000 maximum\"}}\n\n")}
	case wire.OpenAIResponses:
		events = [][]byte{
			[]byte("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}}\n\n"),
			[]byte("event: error\ndata: {\"type\":\"error\",\"sequence_number\":1,\"error\":{\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\",\"message\":\"Your input exceeds the context window of this model. Please adjust your input and try again.\",\"param\":\"input\"}}\n\n"),
		}
	default:
		events = [][]byte{
			[]byte("data: {\"id\":\"gen-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"openrouter/auto\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"),
			[]byte("data: {\"id\":\"gen-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"openrouter/auto\",\"error\":{\"code\":400,\"message\":\"This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input).\"},\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"error\"}]}\n\n"),
			[]byte("data: [DONE]\n\n"),
		}
	}
	r := sseResponse(events)
	r.Status = http.StatusOK
	return r
}

// plainAnswer is a short successful answer: the fake upstream's default for
// OpenAI Chat and Anthropic, canned JSON for the others.
func plainAnswer(d wire.Dialect) *ScriptedResponse {
	switch d {
	case wire.Gemini:
		return jsonResponse([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"It fits now."}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3,"totalTokenCount":13}}`))
	case wire.Bedrock:
		return jsonResponse([]byte(`{"output":{"message":{"role":"assistant","content":[{"text":"It fits now."}]}},"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":3,"totalTokens":13},"metrics":{"latencyMs":100}}`))
	case wire.OpenAIResponses:
		return jsonResponse([]byte(`{"id":"resp_ok","object":"response","status":"completed","model":"gpt-4o","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"It fits now.","annotations":[]}]}],"usage":{"input_tokens":10,"output_tokens":3,"total_tokens":13}}`))
	}
	return nil
}
