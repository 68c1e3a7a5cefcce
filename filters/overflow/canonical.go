package overflow

// The overflow error in each dialect's own words. Agents and SDKs act on
// a context overflow (Claude Code and OpenCode compact, Codex trims its
// history) only when it arrives in the provider's canonical form; behind a
// front proxy or a router the same overflow may come as an HTML 413, an
// opaque OpenRouter 400 or another provider's error, which the client
// takes for a fatal one. When recovery could not make the request fit,
// the caller answers in the form the client's dialect knows instead.
//
// The forms are the providers' documented error bodies:
//
//   - Anthropic Messages (docs.anthropic.com, API errors): HTTP 400,
//     {"type":"error","error":{"type":"invalid_request_error","message":
//     "prompt is too long: N tokens > M maximum"}}; in a stream the same
//     object as an `event: error`.
//   - OpenAI Chat Completions: HTTP 400, error.code
//     "context_length_exceeded", type "invalid_request_error", param
//     "messages", message "This model's maximum context length is M tokens.
//     However, your messages resulted in N tokens. …"; in a stream a chunk
//     carrying that "error" object.
//   - OpenAI Responses: HTTP 400 with the same code and param "input"; in a
//     stream a `response.failed` event whose response.error.code is
//     "context_length_exceeded".
//   - Gemini (ai.google.dev, troubleshooting): HTTP 400, status
//     INVALID_ARGUMENT, "The input token count (N) exceeds the maximum
//     number of tokens allowed (M)."
//   - Bedrock Converse (docs.aws.amazon.com, Converse errors): HTTP 400,
//     x-amzn-errortype ValidationException, {"message":"Input is too long
//     for requested model."}. Its stream is a binary event stream, which
//     has no form here.

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// Canonical is an overflow error answer in one dialect's form.
type Canonical struct {
	Status      int
	ContentType string
	Body        []byte
	// HeaderName/HeaderValue: a response header the form needs (Bedrock's
	// x-amzn-errortype); empty when none.
	HeaderName, HeaderValue string
}

// responsesOverflowMessage is the Responses API's overflow message.
const responsesOverflowMessage = "Your input exceeds the context window of this model. Please adjust your input and try again."

// CanonicalError is the overflow answer of dialect d for a prompt of input
// tokens against a window of limit tokens. input is raised to limit+1
// when it is not above it: an overflow that says it fits would be a lie,
// and clients that read the gap (Claude Code) must see a positive one.
// ok=false for a dialect without a form.
func CanonicalError(d wire.Dialect, input, limit int) (Canonical, bool) {
	input, limit = counts(input, limit)
	n, m := strconv.Itoa(input), strconv.Itoa(limit)
	c := Canonical{Status: 400, ContentType: "application/json"}
	switch d {
	case wire.Anthropic:
		c.Body = anthropicBody(n, m)
	case wire.OpenAIChat:
		c.Body = []byte(`{"error":{"message":"This model's maximum context length is ` + m + ` tokens. However, your messages resulted in ` + n +
			` tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)
	case wire.OpenAIResponses:
		c.Body = []byte(`{"error":{"message":"` + responsesOverflowMessage + `","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`)
	case wire.Gemini:
		c.Body = geminiBody(n, m)
	case wire.Bedrock:
		c.Body = []byte(`{"message":"Input is too long for requested model."}`)
		c.HeaderName, c.HeaderValue = "x-amzn-errortype", "ValidationException"
	default:
		return Canonical{}, false
	}
	return c, true
}

// CanonicalStreamError is the overflow error of dialect d as the events
// of a 200 SSE stream that has sent nothing yet. ok=false for Bedrock
// (binary event stream) and unknown dialects.
func CanonicalStreamError(d wire.Dialect, input, limit int) ([]byte, bool) {
	input, limit = counts(input, limit)
	n, m := strconv.Itoa(input), strconv.Itoa(limit)
	switch d {
	case wire.Anthropic:
		return []byte("event: error\ndata: " + string(anthropicBody(n, m)) + "\n\n"), true
	case wire.OpenAIChat:
		c, _ := CanonicalError(d, input, limit)
		return []byte("data: " + string(c.Body) + "\n\ndata: [DONE]\n\n"), true
	case wire.OpenAIResponses:
		return []byte(`event: response.failed` + "\n" + `data: {"type":"response.failed","sequence_number":0,"response":{"id":"resp_overflow","object":"response","created_at":0,"status":"failed",` +
			`"error":{"code":"context_length_exceeded","message":"` + responsesOverflowMessage + `"},"incomplete_details":null,"output":[]}}` + "\n\n"), true
	case wire.Gemini:
		return []byte("data: " + string(geminiBody(n, m)) + "\n\n"), true
	}
	return nil, false
}

func anthropicBody(n, m string) []byte {
	return []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: ` + n + ` tokens > ` + m + ` maximum"}}`)
}

func geminiBody(n, m string) []byte {
	return []byte(`{"error":{"code":400,"message":"The input token count (` + n + `) exceeds the maximum number of tokens allowed (` + m + `).","status":"INVALID_ARGUMENT"}}`)
}

func counts(input, limit int) (int, int) {
	limit = max(limit, 1)
	if input <= limit {
		input = limit + 1
	}
	return input, limit
}

// IsCanonical reports whether an error answer already is dialect d's
// canonical overflow form (then it is best passed on as it came, with the
// provider's own counts). headers have lower-case keys.
func IsCanonical(d wire.Dialect, status int, headers map[string]string, body []byte) bool {
	if status != 400 {
		return false
	}
	root := gjson.ParseBytes(trimSpaceBytes(body))
	if !root.IsObject() {
		return false
	}
	switch d {
	case wire.Anthropic:
		return root.Get("error.type").String() == "invalid_request_error" &&
			strings.HasPrefix(strings.ToLower(root.Get("error.message").String()), "prompt is too long")
	case wire.OpenAIChat, wire.OpenAIResponses:
		return root.Get("error.code").String() == "context_length_exceeded"
	case wire.Gemini:
		return root.Get("error.status").String() == "INVALID_ARGUMENT" &&
			strings.Contains(strings.ToLower(root.Get("error.message").String()), "exceeds the maximum number of tokens allowed")
	case wire.Bedrock:
		return headerErrorType(headers) == "validationexception" &&
			strings.Contains(strings.ToLower(root.Get("message").String()), "too long")
	}
	return false
}

// IsCanonicalStream reports whether the verdict of a stream's leading
// error event is already dialect d's canonical stream form.
func IsCanonicalStream(d wire.Dialect, v Verdict) bool {
	switch d {
	case wire.Anthropic:
		return v.Provider == ProviderAnthropic && v.Reason == "msg:prompt_is_too_long"
	case wire.OpenAIChat, wire.OpenAIResponses:
		return v.Reason == "code:context_length_exceeded"
	}
	return false
}

// Overflowing is the prompt size a canonical answer reports: the stated
// input (plus the requested output when that was blamed too, since
// together they overflow), 0 when the message gave none.
func (t Tokens) Overflowing() int {
	if t.OutputNamed {
		return t.Input + t.Output
	}
	return t.Input
}
