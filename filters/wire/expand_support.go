package wire

import "github.com/tidwall/gjson"

// ExpandResolvable reports whether toolproc can answer expand_context calls
// in the answer to this request, so whether compressing with references is
// safe: a reference the model cannot expand would be a broken promise.
//   - Non-streaming answers of every dialect are read whole (FindExpandCalls).
//   - Streams are held and spliced only where a normalizer exists: OpenAI
//     Chat, Anthropic and OpenAI Responses SSE. Gemini SSE and Bedrock's
//     binary event stream pass untouched, so their requests get no
//     references.
//   - A Gemini request that uses cachedContent cannot take a new tool: the
//     tools are part of the cached content and the API rejects them.
func ExpandResolvable(ep Endpoint, ask ClientAsk, body []byte) bool {
	switch ep.Dialect {
	case OpenAIChat, Anthropic, OpenAIResponses:
		return true
	case Gemini:
		if ask.Stream {
			return false
		}
		return !gjson.GetBytes(body, "cachedContent").Exists() && !gjson.GetBytes(body, "cached_content").Exists()
	case Bedrock:
		return !ask.Stream
	}
	return false
}
