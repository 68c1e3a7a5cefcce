// Package wire knows where tool calls and tool results live in each LLM API's
// request body. It is the only package that holds gjson paths for those APIs;
// every other filter works on the Conversation model it builds.
package wire

import (
	"net/url"
	"strings"
)

// Dialect names one provider API wire format.
type Dialect string

const (
	Unknown         Dialect = ""
	OpenAIChat      Dialect = "openai_chat"
	OpenAIResponses Dialect = "openai_responses"
	Anthropic       Dialect = "anthropic"
	Gemini          Dialect = "gemini"
	Bedrock         Dialect = "bedrock"
)

// Dialects lists the dialects this build understands, in a stable order.
var Dialects = []Dialect{OpenAIChat, OpenAIResponses, Anthropic, Gemini, Bedrock}

// Valid reports whether d is a dialect this build understands.
func (d Dialect) Valid() bool {
	for _, k := range Dialects {
		if d == k {
			return true
		}
	}
	return false
}

// Endpoint is what the request path says about a call.
type Endpoint struct {
	Dialect Dialect
	// Model is set for APIs that put the model in the path (Gemini, Bedrock).
	Model string
	// Stream is true for streaming endpoints (Gemini streamGenerateContent,
	// Bedrock converse-stream); other APIs say it in the body.
	Stream bool
}

// DetectDialect picks the dialect from the request path.
func DetectDialect(path string) Dialect { return Classify(path).Dialect }

// Classify reads the request path the way providers route it. Matching is
// on the path's end so that prefixed deployments work too: OpenRouter
// (/api/v1/chat/completions), Azure OpenAI (/openai/deployments/{d}/...),
// Vertex AI (/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:...),
// and gateways that mount a provider under their own prefix.
func Classify(path string) Endpoint {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	path = strings.TrimRight(path, "/")
	last := path[strings.LastIndexByte(path, '/')+1:]
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		return Endpoint{Dialect: OpenAIChat}
	case strings.HasSuffix(path, "/responses"):
		return Endpoint{Dialect: OpenAIResponses}
	// count_tokens carries the same messages as the real request; rewriting
	// it too keeps the count honest about what will actually be sent.
	case strings.HasSuffix(path, "/v1/messages"), strings.HasSuffix(path, "/v1/messages/count_tokens"):
		return Endpoint{Dialect: Anthropic}
	case strings.HasSuffix(last, ":generateContent"), strings.HasSuffix(last, ":streamGenerateContent"):
		model, method, _ := strings.Cut(last, ":")
		if !strings.Contains(path, "/models/") {
			return Endpoint{}
		}
		return Endpoint{Dialect: Gemini, Model: unescape(model), Stream: method == "streamGenerateContent"}
	case last == "converse" || last == "converse-stream":
		rest, ok := strings.CutSuffix(path, "/"+last)
		i := strings.LastIndex(rest, "/model/")
		if !ok || i < 0 {
			return Endpoint{}
		}
		return Endpoint{Dialect: Bedrock, Model: unescape(rest[i+len("/model/"):]), Stream: last == "converse-stream"}
	}
	return Endpoint{}
}

// unescape decodes a path segment; Bedrock model ARNs arrive URL-encoded.
func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
