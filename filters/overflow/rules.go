package overflow

import (
	"regexp"
	"strings"
)

// notOursCodes are structured codes/types/statuses (lower-cased) that settle
// the verdict as NotOurs before any message is read. The value is the Reason.
var notOursCodes = map[string]string{
	"rate_limit_exceeded":                  "code:rate_limit",
	"rate_limit_error":                     "code:rate_limit",
	"tokens":                               "code:rate_limit", // OpenAI TPM error type
	"requests":                             "code:rate_limit", // OpenAI RPM error type
	"insufficient_quota":                   "code:quota",
	"resource_exhausted":                   "code:quota",
	"billing_error":                        "code:billing",
	"throttlingexception":                  "code:throttling",
	"toomanyrequestsexception":             "code:throttling",
	"servicequotaexceededexception":        "code:quota",
	"overloaded_error":                     "code:overloaded",
	"authentication_error":                 "code:auth",
	"permission_error":                     "code:auth",
	"invalid_api_key":                      "code:auth",
	"unauthenticated":                      "code:auth",
	"permission_denied":                    "code:auth",
	"accessdeniedexception":                "code:auth",
	"unrecognizedclientexception":          "code:auth",
	"modelnotreadyexception":               "code:unavailable",
	"serviceunavailableexception":          "code:unavailable",
	"internalserverexception":              "code:server",
	"modeltimeoutexception":                "code:server",
	"model_not_found":                      "code:not_found",
	"not_found_error":                      "code:not_found",
	"resourcenotfoundexception":            "code:not_found",
	"unsupported_country_region_territory": "code:auth",
}

// matchCodes are structured codes/types (lower-cased) that settle a match.
var matchCodes = map[string]Class{
	"context_length_exceeded":       ContextOverflow, // OpenAI, Azure, OpenAI Responses
	"exceed_context_size_error":     ContextOverflow, // llama.cpp server
	"context_window_exceeded":       ContextOverflow,
	"model_context_window_exceeded": ContextOverflow,
	"request_too_large":             PayloadTooLarge, // Anthropic 413 (byte size)
	"payload_too_large":             PayloadTooLarge,
	"request_entity_too_large":      PayloadTooLarge,
}

// rule is one message pattern. All substrings in all must occur in the
// lower-cased message text, and re (if set) must match. gate, when set,
// restricts the rule to texts containing gate or to gateProvider.
type rule struct {
	reason       string
	class        Class
	provider     string // provider implied by the wording, if any
	all          []string
	re           *regexp.Regexp
	gate         string
	gateProvider string
}

func (r rule) match(hay string) bool {
	for _, s := range r.all {
		if !strings.Contains(hay, s) {
			return false
		}
	}
	return r.re == nil || r.re.MatchString(hay)
}

func sub(reason string, class Class, all ...string) rule {
	return rule{reason: reason, class: class, all: all}
}

// rx builds a regex rule; need is a literal the text must contain before
// the (slower) regex runs.
func rx(reason string, class Class, need, expr string) rule {
	return rule{reason: reason, class: class, all: []string{need}, re: regexp.MustCompile(expr)}
}

// exclusions are checked before the overflow rules; a hit is NotOurs.
var exclusions = []rule{
	sub("excluded:tpm", NotOurs, "tokens per min"),
	rx("excluded:tpm", NotOurs, "tpm", `\btpm\b`),
	sub("excluded:rpm", NotOurs, "requests per min"),
	sub("excluded:rate_limit", NotOurs, "rate limit"),
	sub("excluded:rate_limit", NotOurs, "rate_limit"),
	sub("excluded:rate_limit", NotOurs, "ratelimit"),
	sub("excluded:rate_limit", NotOurs, "too many requests"),
	sub("excluded:throttling", NotOurs, "throttl"),
	sub("excluded:quota", NotOurs, "quota"),
	sub("excluded:quota", NotOurs, "resource_exhausted"),
	sub("excluded:billing", NotOurs, "billing"),
	sub("excluded:billing", NotOurs, "credit balance"),
	sub("excluded:overloaded", NotOurs, "overloaded"),
	sub("excluded:reasoning", NotOurs, "reasoning is mandatory"),
	sub("excluded:reasoning", NotOurs, "reasoning is required"),
	sub("excluded:reasoning", NotOurs, "requires reasoning"),
	sub("excluded:reasoning", NotOurs, "reasoning", "cannot be disabled"),
	// "context window too small / minimum is" is a configuration error.
	rx("excluded:window_too_small", NotOurs, "context window", `context window[^\n]*(too small|minimum is)`),
}

// rules are the message patterns, first match wins. Context-window rules
// come before byte-size rules so "request size exceeds model context window"
// is an overflow, not a payload error.
var rules = []rule{
	// Generic and OpenAI/Azure/OpenRouter/vLLM wording.
	sub("msg:context_length_exceeded", ContextOverflow, "context_length_exceeded"),
	sub("msg:context_length_exceeded", ContextOverflow, "context length exceeded"),
	sub("msg:maximum_context_length", ContextOverflow, "maximum context length"),
	sub("msg:max_context_length", ContextOverflow, "max context length"),
	sub("msg:exceeds_context_window", ContextOverflow, "exceeds the context window"),
	sub("msg:exceeds_model_context_window", ContextOverflow, "exceeds model context window"),
	sub("msg:exceeds_model_max_context", ContextOverflow, "exceeds the model's maximum context"),
	sub("msg:context_window_exceeded", ContextOverflow, "context_window_exceeded"),
	sub("msg:context_overflow", ContextOverflow, "context overflow:"),
	// Anthropic (direct and via Bedrock).
	{reason: "msg:prompt_is_too_long", class: ContextOverflow, all: []string{"prompt is too long"}},
	sub("msg:prompt_too_long", ContextOverflow, "prompt too long"),
	{reason: "msg:exceed_context_limit", class: ContextOverflow, provider: ProviderAnthropic, all: []string{"exceed context limit"}},
	sub("msg:request_size_exceeds_context", ContextOverflow, "request size exceeds", "context window"),
	sub("msg:request_size_exceeds_context", ContextOverflow, "request size exceeds", "context length"),
	sub("msg:max_tokens_exceed_context", ContextOverflow, "max_tokens", "exceed", "context"),
	sub("msg:input_length_exceed_context", ContextOverflow, "input length", "exceed", "context"),
	// Gemini / Vertex token count.
	{reason: "msg:exceeds_max_tokens_allowed", class: ContextOverflow, provider: ProviderGemini, all: []string{"exceeds the maximum number of tokens allowed"}},
	sub("msg:invalid_argument_max_tokens", ContextOverflow, "invalid_argument", "maximum number of tokens"),
	sub("msg:input_exceeds_max_tokens", ContextOverflow, "input exceeds", "maximum number of tokens"),
	rx("msg:input_token_count_exceeds", ContextOverflow, "input token count", `input token count[^\n]*exceed`),
	// Bedrock.
	{reason: "msg:input_is_too_long", class: ContextOverflow, provider: ProviderBedrock, all: []string{"input is too long"}},
	{reason: "msg:too_many_input_tokens", class: ContextOverflow, provider: ProviderBedrock, all: []string{"too many input tokens"}},
	rx("msg:validation_input_tokens", ContextOverflow, "validationexception", `validationexception[^\n]*(max input token|input token[^\n]*exceed|exceeds? the (maximum|max) (number of )?(input )?tokens)`),
	{reason: "msg:bedrock_too_many_tokens", class: ContextOverflow, all: []string{"too many tokens"}, gate: "validationexception", gateProvider: ProviderBedrock},
	{reason: "msg:bedrock_max_length", class: ContextOverflow, all: []string{"expected maxlength:"}, gate: "validationexception", gateProvider: ProviderBedrock},
	// Local servers and smaller providers.
	sub("msg:exceeds_available_context", ContextOverflow, "exceeds the available context size"),
	sub("msg:exceed_context_size", ContextOverflow, "exceed_context_size_error"),
	sub("msg:greater_than_context_length", ContextOverflow, "greater than the context length"),
	sub("msg:longer_than_context_length", ContextOverflow, "longer than the model's context length"),
	sub("msg:max_input_length", ContextOverflow, "exceeds the maximum allowed input length"),
	sub("msg:max_prompt_length", ContextOverflow, "maximum prompt length is"),
	sub("msg:model_token_limit", ContextOverflow, "model token limit"),
	sub("msg:reduce_length_of_messages", ContextOverflow, "reduce the length of the messages"),
	rx("msg:current_length_limit", ContextOverflow, "current length is", `current length is \d+ while limit is \d+`),
	rx("msg:ran_out_of_room", ContextOverflow, "ran out of", `(context window|context length)[^\n]*ran out of (room|space)`),
	rx("msg:content_filter_too_long", ContextOverflow, "content_filter", `content_filter[^\n]*(prompt|input)[^\n]*(too long|exceed)`),
	rx("msg:ollama_context", ContextOverflow, "ollama", `\bollama\b[^\n]*(context length|too many tokens|context window)`),
	rx("msg:truncating_input", ContextOverflow, "truncating input", `\btruncating input\b[^\n]*\btoo long\b`),
	rx("msg:mistral_too_long", ContextOverflow, "mistral", `\bmistral\b[^\n]*(input[^\n]*too long|token limit[^\n]*exceeded)`),
	rx("msg:total_tokens_exceed", ContextOverflow, "total token", `\btotal tokens?[^\n]*exceeds? (the )?(model('s)? )?(max|maximum|limit)`),
	rx("msg:deepseek_too_long", ContextOverflow, "deepseek", `\bdeepseek\b[^\n]*(input[^\n]*too long|context[^\n]*exceed)`),
	rx("msg:input_too_long_for_model", ContextOverflow, "too long for", `\binput (is )?too long for (the )?model\b`),
	// Chinese-language gateways (matched on the original runes; ToLower
	// leaves them unchanged).
	sub("msg:zh_context_too_long", ContextOverflow, "上下文过长"),
	sub("msg:zh_context_exceeded", ContextOverflow, "上下文超出"),
	sub("msg:zh_context_length", ContextOverflow, "上下文长度超"),
	sub("msg:zh_max_context", ContextOverflow, "超出最大上下文"),
	sub("msg:zh_compress_context", ContextOverflow, "请压缩上下文"),

	// Byte-size limits.
	{reason: "msg:payload_size_exceeds", class: PayloadTooLarge, provider: ProviderVertex, all: []string{"request payload size exceeds"}},
	sub("msg:request_too_large", PayloadTooLarge, "request_too_large"),
	sub("msg:request_exceeds_max_size", PayloadTooLarge, "request exceeds the maximum size"),
	sub("msg:request_entity_too_large", PayloadTooLarge, "request entity too large"),
	sub("msg:payload_too_large", PayloadTooLarge, "payload too large"),
	sub("msg:tool_output_too_large", PayloadTooLarge, "tool output too large"),
	sub("msg:tool_result_too_large", PayloadTooLarge, "tool_result too large"),
	sub("msg:413_too_large", PayloadTooLarge, "413", "too large"),
}
