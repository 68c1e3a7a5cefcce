package overflow

import (
	"math"
	"strings"
)

// DefaultWindows maps model-name prefixes (lower case) to context windows in
// tokens. Window picks the longest matching prefix, so a dated snapshot
// ("gpt-4o-2024-08-06") or a variant ("claude-sonnet-4-5-20250929") finds its
// family, and a more specific key ("gpt-4o-mini", "o1-mini") wins over a
// shorter one.
//
// Values are the context windows the providers' model pages list:
//
//   - OpenAI (platform.openai.com/docs/models): gpt-4o, gpt-4o-mini,
//     chatgpt-4o-latest and gpt-4-turbo 128,000; gpt-4.1, -mini, -nano
//     1,047,576; gpt-5, -mini, -nano and the codex variants 400,000 (input
//     and output share it; the input side alone is capped at 272,000 because
//     up to 128,000 are reserved for output); gpt-5-chat-latest 128,000;
//     o1, o3, o3-mini, o3-pro, o4-mini 200,000; o1-mini and o1-preview
//     128,000; legacy gpt-4 8,192, gpt-4-32k 32,768, gpt-3.5-turbo 16,385.
//     Later gpt-5.x releases with larger windows fall under "gpt-5": an
//     under-estimate only makes the recovery budget smaller, never too big.
//   - Anthropic (docs.anthropic.com, models overview): every Claude 3.x and
//     4.x model has 200,000. The 1M-token window of some Sonnet/Opus models
//     is an opt-in beta (a context-1m anthropic-beta header) that the request
//     body does not show, so 200,000 is the safe reading of a "claude-" name.
//   - Google (ai.google.dev/gemini-api/docs/models and the Vertex AI model
//     pages): gemini-2.5-pro/-flash/-flash-lite and gemini-2.0-flash/
//     -flash-lite take 1,048,576 input tokens; gemini-1.5-pro 2,097,152 and
//     gemini-1.5-flash 1,048,576. For Gemini the documented figure is the
//     input-token limit, which is what an overflow exceeds.
//
// Callers may pass their own table to Window (a configured override); this
// one is never modified by the package.
var DefaultWindows = map[string]int{
	// OpenAI
	"gpt-3.5-turbo":     16_385,
	"gpt-4":             8_192,
	"gpt-4-32k":         32_768,
	"gpt-4-turbo":       128_000,
	"gpt-4-1106":        128_000,
	"gpt-4-0125":        128_000,
	"gpt-4o":            128_000,
	"gpt-4o-mini":       128_000,
	"chatgpt-4o":        128_000,
	"gpt-4.1":           1_047_576,
	"gpt-4.1-mini":      1_047_576,
	"gpt-4.1-nano":      1_047_576,
	"gpt-5":             400_000,
	"gpt-5-mini":        400_000,
	"gpt-5-nano":        400_000,
	"gpt-5-codex":       400_000,
	"gpt-5-chat":        128_000,
	"o1":                200_000,
	"o1-mini":           128_000,
	"o1-preview":        128_000,
	"o3":                200_000,
	"o3-mini":           200_000,
	"o4-mini":           200_000,
	"codex-mini-latest": 200_000,
	// Anthropic
	"claude-": 200_000,
	// Google
	"gemini-2.5-pro":        1_048_576,
	"gemini-2.5-flash":      1_048_576,
	"gemini-2.5-flash-lite": 1_048_576,
	"gemini-2.0-flash":      1_048_576,
	"gemini-2.0-flash-lite": 1_048_576,
	"gemini-1.5-pro":        2_097_152,
	"gemini-1.5-flash":      1_048_576,
}

// Window returns the context window of model: the value of the longest key
// of table (nil means DefaultWindows) that is a prefix of the model name,
// compared case-insensitively, else fallback.
//
// Routing prefixes are stripped before matching, so the same table serves
// every way a model is named on the wire: "openai/gpt-4o" (OpenRouter and
// LiteLLM), "models/gemini-2.5-pro" (Gemini's resource names), Vertex paths
// ending in ".../models/gemini-…", Bedrock model ids and inference profiles
// ("anthropic.claude-…-v1:0", "us.anthropic.claude-…", ARNs ending in
// "/…"). The full name is tried first, so a table may still hold a key with
// a slash or a dot-separated vendor prefix of its own.
func Window(model string, table map[string]int, fallback int) int {
	if table == nil {
		table = DefaultWindows
	}
	name := strings.ToLower(strings.TrimSpace(model))
	if name == "" {
		return fallback
	}
	for _, cand := range windowCandidates(name) {
		if w, ok := longestPrefix(cand, table); ok {
			return w
		}
	}
	return fallback
}

// windowCandidates lists the names to try, most specific first: the name as
// given, the part after its last '/', and that part with its leading
// dot-separated routing segments removed one at a time (Bedrock's region
// and vendor: "us.anthropic.claude-…" → "anthropic.claude-…" → "claude-…").
func windowCandidates(name string) []string {
	c := []string{name}
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i+1 < len(name) {
		name = name[i+1:]
		c = append(c, name)
	}
	for {
		i := strings.IndexByte(name, '.')
		if i <= 0 || !isRoutingSegment(name[:i]) {
			return c
		}
		name = name[i+1:]
		c = append(c, name)
	}
}

// isRoutingSegment reports whether s looks like a Bedrock region or vendor
// segment ("us", "eu", "apac", "global", "us-gov", "anthropic", "amazon"):
// letters and hyphens only. A model's own dot ("gpt-4.1", "claude-3.5")
// always follows a digit, so it is never stripped.
func isRoutingSegment(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && c != '-' {
			return false
		}
	}
	return true
}

// longestPrefix finds the longest key of table that prefixes name. Keys are
// lower-cased for the comparison; when two keys differ only in case the
// lexically smaller wins, so the answer never depends on map order.
func longestPrefix(name string, table map[string]int) (int, bool) {
	best, bestKey, found := 0, "", false
	for k, w := range table {
		lk := strings.ToLower(k)
		if lk == "" || !strings.HasPrefix(name, lk) {
			continue
		}
		if !found || len(lk) > len(bestKey) || len(lk) == len(bestKey) && k < bestKey {
			best, bestKey, found = w, k, true
		}
	}
	return best, found
}

// minShareBytes is seed 001's MIN_KEEP_CHARS: no result is cut below it.
const minShareBytes = 2000

// ShareBytes is seed 001's per-result budget for overflow recovery
// (OpenClaw's MAX_TOOL_RESULT_CONTEXT_SHARE rule): a tool result may take
// floor(window*share) tokens, at 4 characters per token, so
// maxChars = floor(ctxTokens*share)*4 — and never less than 2000. Here the
// characters are bytes: a byte budget is what the clamp enforces, and for
// non-ASCII text it is the stricter of the two, so the result still fits.
//
// A share that is not a number or not positive gives the minimum; a share
// above 1 is read as 1 (one result cannot use more than the whole window).
// The value saturates instead of overflowing for absurd windows.
func ShareBytes(window int, share float64) int {
	if window <= 0 || !(share > 0) {
		return minShareBytes
	}
	share = min(share, 1)
	tokens := math.Floor(float64(window) * share)
	if tokens >= float64(math.MaxInt/4) {
		return math.MaxInt / 4 * 4
	}
	return max(int(tokens)*4, minShareBytes)
}
