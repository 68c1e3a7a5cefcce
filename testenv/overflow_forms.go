package testenv

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// Overflow answers as they reach a client behind a front proxy or a
// router (issue 25): not in the client's provider's canonical form.
var (
	// HTML413 is nginx's answer to a body over client_max_body_size
	// (nginx's built-in error page for 413).
	HTML413 = ErrorForm{Status: 413, Header: http.Header{"Content-Type": {"text/html"}},
		Body: "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"}
	// HTML413Gzip is the same page gzip-encoded, as nginx sends it to a
	// client that accepts gzip (gzip on; text/html is always among
	// gzip_types).
	HTML413Gzip = ErrorForm{Status: 413, Header: http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"gzip"}},
		Body: gzipString(HTML413.Body)}
	// OpenRouterOpaque is OpenRouter's 400 whose metadata.raw is "ERROR".
	OpenRouterOpaque = ErrorForm{Status: 400, Body: OpenRouterRawError.Body}
	// BedrockValidation is Bedrock Converse's overflow: a ValidationException.
	BedrockValidation = ErrorForm{Status: 400, Header: http.Header{"X-Amzn-Errortype": {"ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"}},
		Body: BedrockInputTooLong.Body}
	// GeminiInvalidArgument is Gemini's token-count overflow.
	GeminiInvalidArgument = ErrorForm{Status: 400, Body: GeminiTokenCount.Body}
)

// ErrorForm is one error answer: status, extra headers, literal body.
type ErrorForm struct {
	Status int
	Header http.Header
	Body   string
}

// Response is the form as a scripted answer (application/json unless its
// headers say otherwise).
func (f ErrorForm) Response() *ScriptedResponse {
	r := jsonResponse([]byte(f.Body))
	r.Status = f.Status
	for k, v := range f.Header {
		r.Header[http.CanonicalHeaderKey(k)] = v
	}
	return r
}

// AlwaysError answers every LLM request with f: an overflow no rung fixes.
func AlwaysError(f ErrorForm) func(RecordedRequest) *ScriptedResponse {
	return func(req RecordedRequest) *ScriptedResponse {
		if wire.Detect(req.Path, req.Body).Dialect == wire.Unknown {
			return nil
		}
		return f.Response()
	}
}

// OutputWindowModel scripts a provider whose context window is Window
// tokens, shared by the prompt and the requested output. The prompt
// counts one token per four bytes of its messages (and system), so a
// request that differs only in max_tokens has the same input; a request
// whose input plus requested output exceeds the window gets the
// provider's own "output does not fit" 400: Anthropic's "input length and
// `max_tokens` exceed context limit: I + O > W", OpenAI's "you requested T
// tokens (I in the messages, O in the completion)". Others get the fake
// upstream's default answer.
type OutputWindowModel struct{ Window int }

// Script returns the FakeUpstream script.
func (m OutputWindowModel) Script() func(RecordedRequest) *ScriptedResponse {
	return func(req RecordedRequest) *ScriptedResponse {
		ep := wire.Detect(req.Path, req.Body)
		in := (len(gjson.GetBytes(req.Body, "messages").Raw) + len(gjson.GetBytes(req.Body, "system").Raw)) / 4
		var out int64
		switch ep.Dialect {
		case wire.Anthropic:
			out = gjson.GetBytes(req.Body, "max_tokens").Int()
		case wire.OpenAIChat:
			out = gjson.GetBytes(req.Body, "max_completion_tokens").Int()
			if out == 0 {
				out = gjson.GetBytes(req.Body, "max_tokens").Int()
			}
		default:
			return nil
		}
		if in+int(out) <= m.Window {
			return nil
		}
		i, o, w := strconv.Itoa(in), strconv.FormatInt(out, 10), strconv.Itoa(m.Window)
		var body string
		if ep.Dialect == wire.Anthropic {
			body = `{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: ` +
				i + ` + ` + o + ` > ` + w + `, decrease input length or ` + "`max_tokens`" + ` and try again"},"request_id":"req_011CT"}`
		} else {
			body = `{"error":{"message":"This model's maximum context length is ` + w + ` tokens. However, you requested ` + strconv.Itoa(in+int(out)) +
				` tokens (` + i + ` in the messages, ` + o + ` in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
		}
		return ErrorForm{Status: 400, Body: body}.Response()
	}
}

// ModelWindowModel refuses with Error every request whose body names a
// model other than Big, and answers the rest: a small-window model the
// conversation outgrew, and its larger-window sibling on the same route.
type ModelWindowModel struct {
	Big   string
	Error ErrorForm
}

// Script returns the FakeUpstream script.
func (m ModelWindowModel) Script() func(RecordedRequest) *ScriptedResponse {
	return func(req RecordedRequest) *ScriptedResponse {
		if wire.Detect(req.Path, req.Body).Dialect == wire.Unknown {
			return nil
		}
		if !strings.EqualFold(gjson.GetBytes(req.Body, "model").String(), m.Big) {
			return m.Error.Response()
		}
		return nil
	}
}

// TokenWindowModel scripts a provider whose context window is Window
// tokens, a request counting one token per four body bytes. A request
// over it gets the provider's canonical overflow (with the counts where
// the provider states them); the rest get a short answer (JSON, or SSE
// when the request streams).
type TokenWindowModel struct{ Window int }

// Script returns the FakeUpstream script.
func (m TokenWindowModel) Script() func(RecordedRequest) *ScriptedResponse {
	return func(req RecordedRequest) *ScriptedResponse {
		ep := wire.Detect(req.Path, req.Body)
		n := len(req.Body) / 4
		if n <= m.Window {
			if ep.Dialect == wire.OpenAIResponses {
				if gjson.GetBytes(req.Body, "stream").Bool() {
					return responsesStreamAnswer("It fits now.")
				}
				return plainAnswer(ep.Dialect)
			}
			return nil // the fake upstream's default answer
		}
		in, w := strconv.Itoa(n), strconv.Itoa(m.Window)
		switch ep.Dialect {
		case wire.Anthropic:
			return ErrorForm{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: ` + in + ` tokens > ` + w + ` maximum"},"request_id":"req_011CU"}`}.Response()
		case wire.OpenAIChat:
			return ErrorForm{Status: 400, Body: `{"error":{"message":"This model's maximum context length is ` + w + ` tokens. However, your messages resulted in ` + in +
				` tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`}.Response()
		case wire.OpenAIResponses:
			return ErrorForm{Status: 400, Body: `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`}.Response()
		}
		return nil
	}
}

// responsesStreamAnswer is a short Responses stream (the events of
// platform.openai.com/docs/api-reference/responses-streaming).
func responsesStreamAnswer(text string) *ScriptedResponse {
	q := string(wire.QuoteString(text))
	return sseResponse([][]byte{
		[]byte("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"created_at\":1700000000,\"status\":\"in_progress\",\"model\":\"gpt-5-codex\",\"output\":[]}}\n\n"),
		[]byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":" + q + "}\n\n"),
		[]byte("event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"created_at\":1700000000,\"status\":\"completed\",\"model\":\"gpt-5-codex\",\"output\":[{\"type\":\"message\",\"id\":\"msg_1\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":" + q + ",\"annotations\":[]}]}],\"usage\":{\"input_tokens\":10,\"output_tokens\":3,\"total_tokens\":13}}}\n\n"),
	})
}

func gzipString(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return b.String()
}
