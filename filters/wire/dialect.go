// Package wire knows where tool calls and tool results live in each LLM API's
// request body. It is the only package that holds gjson paths for those APIs;
// every other filter works on the Conversation model it builds.
package wire

import (
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
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
	// Ambiguous means the path alone does not say: Bedrock InvokeModel takes
	// each model family's native body. Detect decides from the body.
	Ambiguous bool
}

// Detect classifies a request from its path and, where the path is
// ambiguous, its body: Bedrock InvokeModel with an Anthropic Messages body
// (anthropic_version plus messages, as Claude Code sends on Bedrock) is the
// anthropic dialect; other model families' bodies are not ours.
func Detect(path string, body []byte) Endpoint {
	ep := Classify(path)
	if !ep.Ambiguous {
		return ep
	}
	ep.Ambiguous = false
	if gjson.GetBytes(body, "anthropic_version").Exists() && gjson.GetBytes(body, "messages").IsArray() {
		ep.Dialect = Anthropic
	}
	return ep
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
	case strings.HasSuffix(last, ":rawPredict"), strings.HasSuffix(last, ":streamRawPredict"):
		// Vertex AI partner models: the publisher names the body format.
		model, method, _ := strings.Cut(last, ":")
		if !strings.Contains(path, "/publishers/anthropic/models/") {
			return Endpoint{}
		}
		return Endpoint{Dialect: Anthropic, Model: unescape(model), Stream: method == "streamRawPredict"}
	case last == "converse" || last == "converse-stream" || last == "invoke" || last == "invoke-with-response-stream":
		rest, ok := strings.CutSuffix(path, "/"+last)
		i := strings.LastIndex(rest, "/model/")
		if !ok || i < 0 {
			return Endpoint{}
		}
		ep := Endpoint{Dialect: Bedrock, Model: unescape(rest[i+len("/model/"):]), Stream: strings.Contains(last, "stream")}
		if strings.HasPrefix(last, "invoke") {
			ep.Dialect, ep.Ambiguous = Unknown, true
		}
		return ep
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
