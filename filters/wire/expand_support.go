package wire

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// ExpandResolvable reports whether toolproc can answer expand_context calls
// in the answer to this request, so whether compressing with references is
// safe: a reference the model cannot expand would be a broken promise.
func ExpandResolvable(ep Endpoint, ask ClientAsk, body []byte) bool {
	return ExpandBlocked(ep, ask, body) == ""
}

// ExpandBlocked says why expand_context cannot be offered for this request
// ("" when it can), for metrics and logs:
//   - Non-streaming answers of every dialect are read whole (FindExpandCalls).
//     Streams are held and spliced only where a normalizer exists: OpenAI
//     Chat, Anthropic and OpenAI Responses SSE. Gemini SSE and Bedrock's
//     binary event stream pass untouched ("stream").
//   - A Gemini request that uses cachedContent cannot take a new tool: the
//     tools are part of the cached content and the API rejects them
//     ("cached_content").
//   - Several answers at once (OpenAI n>1, Gemini candidateCount>1): each
//     could call the tool, and one continuation cannot answer them all
//     ("several_choices"; review finding 15).
//   - A tool choice that forbids the tool (none, a named tool, an allowed
//     list without it) would make a reference unreadable; one that forces
//     a tool call (required, any) would let the model spend the loop budget
//     on expansions ("tool_choice"; finding 13).
//   - A Responses request continuing server-side state
//     (previous_response_id): its earlier calls are not in the body, so the
//     tool a result came from is unknown (skip_tools could not apply) and
//     the compressed text would be kept by the provider for later turns
//     that carry no reference to expand ("previous_response"; finding 12).
func ExpandBlocked(ep Endpoint, ask ClientAsk, body []byte) string {
	if !jsonsafe.Valid(body) {
		return "not_json"
	}
	return expandBlocked(ep, ask, topGetter(rootNode(body)))
}

// ExpandBlocked is the package function for the parsed request.
func (c *Conversation) ExpandBlocked(ep Endpoint, ask ClientAsk) string {
	return expandBlocked(ep, ask, c.top())
}

// ExpandResolvable is the package function for the parsed request.
func (c *Conversation) ExpandResolvable(ep Endpoint, ask ClientAsk) bool {
	return c.ExpandBlocked(ep, ask) == ""
}

func expandBlocked(ep Endpoint, ask ClientAsk, get func(string) gjson.Result) string {
	switch ep.Dialect {
	case OpenAIChat:
		if get("n").Int() > 1 {
			return "several_choices"
		}
		return openAIToolChoice(get("tool_choice"))
	case OpenAIResponses:
		if get("previous_response_id").String() != "" {
			return "previous_response"
		}
		return openAIToolChoice(get("tool_choice"))
	case Anthropic:
		switch get("tool_choice.type").String() {
		case "", "auto":
			return ""
		}
		return "tool_choice"
	case Gemini:
		if ask.Stream {
			return "stream"
		}
		if get("cachedContent").Exists() || get("cached_content").Exists() {
			return "cached_content"
		}
		for _, p := range []string{"generationConfig.candidateCount", "generation_config.candidate_count"} {
			if get(p).Int() > 1 {
				return "several_choices"
			}
		}
		for _, p := range []string{"toolConfig.functionCallingConfig", "tool_config.function_calling_config"} {
			fc := get(p)
			if !fc.Exists() {
				continue
			}
			mode := strings.ToUpper(fc.Get("mode").String())
			if mode != "" && mode != "AUTO" && mode != "MODE_UNSPECIFIED" {
				return "tool_choice"
			}
			if names := fc.Get("allowedFunctionNames"); names.Exists() || fc.Get("allowed_function_names").Exists() {
				return "tool_choice"
			}
		}
		return ""
	case Bedrock:
		if ask.Stream {
			return "stream"
		}
		if tc := get("toolConfig.toolChoice"); tc.Exists() && !tc.Get("auto").Exists() {
			return "tool_choice"
		}
		return ""
	}
	return "dialect"
}

// openAIToolChoice reads OpenAI's tool_choice: "auto" or absent allows the
// tool; "none", "required", a named function or custom tool, and an
// allowed_tools list (Responses and Chat) do not.
func openAIToolChoice(tc gjson.Result) string {
	switch {
	case !tc.Exists(), tc.Type == gjson.Null:
		return ""
	case tc.Type == gjson.String:
		if tc.Str == "auto" {
			return ""
		}
		return "tool_choice"
	}
	return "tool_choice"
}

// DeclaresTools reports whether the request offers the model tools: a
// non-empty tools list in the dialect's place for it.
func (c *Conversation) DeclaresTools() bool { return declaresTools(c.Dialect, c.top()) }

func declaresTools(d Dialect, get func(string) gjson.Result) bool {
	path := "tools"
	switch d {
	case Bedrock:
		path = "toolConfig.tools"
	case OpenAIChat:
		if !get(path).Exists() {
			path = "functions"
		}
	}
	v := get(path)
	return v.IsArray() && v.Get("0").Exists()
}
