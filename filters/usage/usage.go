// Package usage reads what a provider billed from its answer: the token
// counts in the `usage` object of each dialect, from JSON bodies and from
// streams, as the bytes pass. It only observes: it never holds, changes or
// delays a byte of the answer (the caller forwards every chunk as it came).
//
// The four kinds are disjoint, so they add up to what was billed:
//
//	input       prompt tokens billed at the base input rate
//	cache_read  prompt tokens read from the provider's prompt cache
//	cache_write prompt tokens written to it (Anthropic, Bedrock)
//	output      generated tokens (reasoning/thinking tokens included)
//
// Providers that count cached tokens inside their prompt total (OpenAI,
// Gemini) have the cached part taken out of input.
package usage

import (
	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// Usage is one answer's bill in tokens.
type Usage struct {
	Input      int64 `json:"input"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Output     int64 `json:"output"`
}

// Kinds are the metric label values, in the order of Usage's fields.
var Kinds = []string{"input", "cache_read", "cache_write", "output"}

// ByKind returns the counts in the order of Kinds.
func (u Usage) ByKind() [4]int64 {
	return [4]int64{u.Input, u.CacheRead, u.CacheWrite, u.Output}
}

// Add returns the sum of two bills (an answer and its replays).
func (u Usage) Add(v Usage) Usage {
	return Usage{u.Input + v.Input, u.CacheRead + v.CacheRead, u.CacheWrite + v.CacheWrite, u.Output + v.Output}
}

// Prompt is every prompt token, however it was billed.
func (u Usage) Prompt() int64 { return u.Input + u.CacheRead + u.CacheWrite }

// merge folds one usage object (the bytes of `{…}`) into u. Streams repeat
// cumulative counts (Anthropic's message_delta, Gemini's every chunk), so a
// field present in a later object replaces the earlier value; a field absent
// keeps it (Anthropic's message_delta may carry only output_tokens).
func merge(u *Usage, d wire.Dialect, obj []byte) bool {
	get := func(path string) (int64, bool) {
		r := gjson.GetBytes(obj, path)
		if r.Type != gjson.Number {
			return 0, false
		}
		return max(r.Int(), 0), true
	}
	set := func(dst *int64, path string) bool {
		v, ok := get(path)
		if ok {
			*dst = v
		}
		return ok
	}
	switch d {
	case wire.Anthropic:
		// https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#tracking-cache-performance:
		// input_tokens counts only the tokens after the last cache breakpoint,
		// so the three input fields are disjoint.
		a := set(&u.Input, "input_tokens")
		b := set(&u.CacheRead, "cache_read_input_tokens")
		c := set(&u.CacheWrite, "cache_creation_input_tokens")
		e := set(&u.Output, "output_tokens")
		return a || b || c || e
	case wire.Bedrock:
		// https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html:
		// cacheReadInputTokens and cacheWriteInputTokens are reported beside
		// inputTokens, which does not include them.
		a := set(&u.Input, "inputTokens")
		b := set(&u.CacheRead, "cacheReadInputTokens")
		c := set(&u.CacheWrite, "cacheWriteInputTokens")
		e := set(&u.Output, "outputTokens")
		return a || b || c || e
	case wire.OpenAIChat:
		// https://platform.openai.com/docs/guides/prompt-caching: cached_tokens
		// is the part of prompt_tokens served from the cache.
		return splitPrompt(u, get, "prompt_tokens", "prompt_tokens_details.cached_tokens", "completion_tokens")
	case wire.OpenAIResponses:
		return splitPrompt(u, get, "input_tokens", "input_tokens_details.cached_tokens", "output_tokens")
	case wire.Gemini:
		// https://ai.google.dev/api/generate-content#UsageMetadata:
		// promptTokenCount includes cachedContentTokenCount; thinking tokens
		// (thoughtsTokenCount) are billed as output, tool-use prompt tokens as
		// input.
		p, okP := get("promptTokenCount")
		c, _ := get("cachedContentTokenCount")
		t, _ := get("toolUsePromptTokenCount")
		o, okO := get("candidatesTokenCount")
		th, okT := get("thoughtsTokenCount")
		if okP {
			u.Input, u.CacheRead = max(p+t-c, 0), min(c, p+t)
		}
		if okO || okT {
			u.Output = o + th
		}
		return okP || okO || okT
	}
	return false
}

// splitPrompt reads the OpenAI shape: a prompt total that includes the cached
// part, and an output total.
func splitPrompt(u *Usage, get func(string) (int64, bool), prompt, cached, output string) bool {
	p, okP := get(prompt)
	c, _ := get(cached)
	o, okO := get(output)
	if okP {
		u.Input, u.CacheRead, u.CacheWrite = max(p-c, 0), min(c, p), 0
	}
	if okO {
		u.Output = o
	}
	return okP || okO
}

// FromJSON reads the usage of a complete JSON answer body.
func FromJSON(d wire.Dialect, body []byte) (Usage, bool) {
	r := NewReader(d, "application/json", 0)
	r.Write(body)
	return r.Usage()
}
