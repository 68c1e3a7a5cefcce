package wire

import (
	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// ClientAsk is what a request says about the answer the client expects.
type ClientAsk struct {
	Stream       bool // the client reads a stream (body "stream":true, or a streaming endpoint)
	IncludeUsage bool // OpenAI stream_options.include_usage
}

// AskOf reads ClientAsk from a request body; ok is false for a body that is
// not JSON.
func AskOf(ep Endpoint, body []byte) (ClientAsk, bool) {
	if !jsonsafe.Valid(body) {
		return ClientAsk{}, false
	}
	return askOf(ep, topGetter(rootNode(body))), true
}

// Ask is AskOf for the parsed request.
func (c *Conversation) Ask(ep Endpoint) ClientAsk { return askOf(ep, c.top()) }

func askOf(ep Endpoint, get func(string) gjson.Result) ClientAsk {
	return ClientAsk{
		Stream:       get("stream").Bool() || ep.Stream,
		IncludeUsage: get("stream_options.include_usage").Bool(),
	}
}
