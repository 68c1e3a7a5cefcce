package overflow

import (
	"regexp"
	"strconv"
)

// Tokens are the token counts an overflow message states. Zero means the
// message did not say.
type Tokens struct {
	// Input is the prompt's size, Output the completion the request asked
	// for, Limit the context window both must fit in.
	Input, Output, Limit int
	// OutputNamed: the message blames the requested output (max_tokens)
	// as well as the input, so lowering it may be enough.
	OutputNamed bool
}

// OutputFit is the largest output that fits next to the stated input:
// Limit-Input when the message blamed the output and gave both. ok=false:
// the message does not say.
func (t Tokens) OutputFit() (n int, ok bool) {
	if t.OutputNamed && t.Limit > 0 && t.Input > 0 && t.Limit > t.Input {
		return t.Limit - t.Input, true
	}
	return 0, false
}

// tokenPatterns read the counts from the provider's own wording (matched
// on the lower-cased message). The first that matches wins.
//
//   - Anthropic, when max_tokens does not fit next to the prompt:
//     "input length and `max_tokens` exceed context limit: 180000 + 64000 > 200000".
//   - OpenAI Chat (and vLLM, OpenRouter) when the completion does not fit:
//     "maximum context length is 128000 tokens. However, you requested
//     140000 tokens (100000 in the messages, 40000 in the completion)", and
//     the older "(3200 in your prompt; 1000 for the completion)"; OpenRouter's
//     "requested about N tokens (X of text input, Y of tool input, Z in the
//     output)".
//   - Input-only overflows: Anthropic "prompt is too long: 213462 tokens >
//     200000 maximum", OpenAI "maximum context length is 8192 tokens.
//     However, your messages resulted in 48227 tokens", Gemini "The input
//     token count (1200293) exceeds the maximum number of tokens allowed
//     (1048576)".
var tokenPatterns = []struct {
	re   *regexp.Regexp
	read func(m []int) Tokens
}{
	{regexp.MustCompile("max_tokens`? exceed context limit: (\\d+) \\+ (\\d+) > (\\d+)"),
		func(m []int) Tokens { return Tokens{Input: m[0], Output: m[1], Limit: m[2], OutputNamed: true} }},
	{regexp.MustCompile(`maximum context length is (\d+) tokens[^\n]*?requested (?:about )?\d+ tokens \((\d+) (?:in the messages|in your prompt|of text input)[,;] (\d+) (?:in the completion|for the completion|in the output)\)`),
		func(m []int) Tokens { return Tokens{Limit: m[0], Input: m[1], Output: m[2], OutputNamed: true} }},
	{regexp.MustCompile(`maximum context length is (\d+) tokens[^\n]*?requested about \d+ tokens \((\d+) of text input, (\d+) of tool input, (\d+) in the output\)`),
		func(m []int) Tokens { return Tokens{Limit: m[0], Input: m[1] + m[2], Output: m[3], OutputNamed: true} }},
	{regexp.MustCompile(`prompt is too long: (\d+) tokens > (\d+) maximum`),
		func(m []int) Tokens { return Tokens{Input: m[0], Limit: m[1]} }},
	{regexp.MustCompile(`maximum context length is (\d+) tokens[^\n]*?(?:messages resulted in|requested about|requested) (\d+) tokens`),
		func(m []int) Tokens { return Tokens{Limit: m[0], Input: m[1]} }},
	{regexp.MustCompile(`input token count \(?(\d+)\)? exceeds the maximum number of tokens allowed \(?(\d+)\)?`),
		func(m []int) Tokens { return Tokens{Input: m[0], Limit: m[1]} }},
}

// parseTokens reads the counts from an already lower-cased, size-capped
// message text.
func parseTokens(hay string) Tokens {
	for _, p := range tokenPatterns {
		sm := p.re.FindStringSubmatch(hay)
		if sm == nil {
			continue
		}
		nums := make([]int, 0, len(sm)-1)
		for _, s := range sm[1:] {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return Tokens{} // absurd counts say nothing
			}
			nums = append(nums, n)
		}
		return p.read(nums)
	}
	return Tokens{}
}
