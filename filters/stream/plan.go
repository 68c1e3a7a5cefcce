package stream

import (
	"strings"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// Repair says how one successful answer is repaired. Exactly one of Stream
// and Whole is set.
type Repair struct {
	// Stream repairs the body chunk by chunk, so streams stay streams.
	Stream Normalizer
	// Whole repairs the complete body; changed=false keeps the original.
	Whole func(body []byte) (out []byte, changed bool)
	// ContentType, when set, replaces the answer's content-type.
	ContentType string
	// Action names the repair for metrics.
	Action string
}

// PlanRepair decides how to repair a 200 answer with content type ct to a
// request of dialect d. ok is false when the answer is left alone.
func PlanRepair(d wire.Dialect, ct string, ask wire.ClientAsk, opts Options) (Repair, bool) {
	ct = strings.ToLower(ct)
	opts.IncludeUsage = ask.IncludeUsage
	switch isSSE, isJSON := IsSSE(ct), IsJSON(ct); {
	case isSSE:
		var n Normalizer
		switch d {
		case wire.OpenAIChat:
			n = NewOpenAIChat(opts)
		case wire.Anthropic:
			n = NewAnthropic(opts)
		case wire.OpenAIResponses:
			n = NewOpenAIResponses(opts)
		default:
			return Repair{}, false
		}
		return Repair{Stream: n, Action: "stream_normalized"}, true
	case isJSON && d == wire.OpenAIChat && ask.Stream:
		// The client asked for a stream and got JSON (some compatible
		// servers ignore stream:true): convert, so its SDK sees a stream.
		return Repair{
			Whole: func(body []byte) ([]byte, bool) {
				if sse, ok := OpenAIChatJSONToSSE(body, opts); ok {
					return sse, true
				}
				return OpenAIChatErrorSSE(body), true
			},
			ContentType: "text/event-stream",
			Action:      "json_to_sse",
		}, true
	case isJSON && d == wire.OpenAIChat:
		return Repair{Whole: func(body []byte) ([]byte, bool) { return FixOpenAIChatJSON(body, opts) }, Action: "json_checked"}, true
	case isJSON && d == wire.Anthropic && opts.XMLToolCalls:
		return Repair{Whole: FixAnthropicJSONXML, Action: "json_checked"}, true
	}
	return Repair{}, false
}

// OpenAIChatErrorSSE is the stream for a 200 answer that is not a
// chat.completion when the client asked for a stream and the content-type
// already says so: an error chunk carrying the original (as JSON when it is
// JSON, else as a string), then [DONE], which every OpenAI SDK ends cleanly.
func OpenAIChatErrorSSE(body []byte) []byte {
	raw := body
	if !jsonsafe.Valid(body) {
		raw = wire.QuoteString(string(body))
	}
	chunk := `{"error":{"message":"upstream answered a streaming request with a non-stream body","type":"upstream_error","body":` + string(raw) + `}}`
	return []byte("data: " + chunk + "\n\ndata: [DONE]\n\n")
}

// IsSSE reports whether a content type is a server-sent event stream.
func IsSSE(ct string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "text/event-stream")
}

// IsJSON reports whether a content type is JSON (application/json and
// +json types).
func IsJSON(ct string) bool { return strings.Contains(strings.ToLower(ct), "json") }
