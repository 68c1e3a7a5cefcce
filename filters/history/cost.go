package history

import "github.com/toolproc/toolproc/filters/wire"

// Prices is a provider's prompt-cache pricing, relative to an uncached
// input token. A tier step changes the request from its first summarised
// message on, so the provider reads the prefix before it from its cache
// and writes (or, without a write premium, sends uncached) the rest: the
// step costs (Write − Read) per byte of what follows the change. Every
// later turn then reads fewer bytes from the cache: the step earns Read
// per byte it removed, per turn.
type Prices struct {
	Read, Write float64
	// Explicit: the provider caches only the prefixes a breakpoint wrote
	// (Anthropic's cache_control, Bedrock's cachePoint), and an agent sets
	// them on its system prompt and its newest messages. After a step the
	// prefix up to the cut, in its new form, was never written, so the
	// provider re-writes everything after the last breakpoint that still
	// matches: the head (tools and system), not the cut.
	Explicit bool
}

// Provider families' prices. Anthropic charges cache writes at 1.25× and
// reads at 0.1× (5-minute cache; docs.anthropic.com/en/docs/build-with-claude/prompt-caching#pricing),
// as Bedrock does for the Claude models
// (docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html).
// OpenAI caches prefixes automatically, with no write premium, and bills
// cached input at 0.5× on its first cached models and less on newer ones
// (platform.openai.com/docs/guides/prompt-caching): 0.5× is the
// conservative figure, the one that values a removed byte least. Gemini's
// implicit caching bills cached tokens at 0.25× with no write charge
// (ai.google.dev/gemini-api/docs/caching). NoCache is an upstream without
// a prompt cache: every byte costs the same on every turn, so removing
// bytes always pays.
var (
	PricesAnthropic = Prices{Read: 0.10, Write: 1.25, Explicit: true}
	PricesOpenAI    = Prices{Read: 0.50, Write: 1.00}
	PricesGemini    = Prices{Read: 0.25, Write: 1.00}
	PricesNoCache   = Prices{Read: 1.00, Write: 1.00}
)

// Cost models by name, for configuration.
const (
	CostAuto      = "auto"
	CostAnthropic = "anthropic"
	CostOpenAI    = "openai"
	CostGemini    = "gemini"
	CostNone      = "none"
)

// PricesFor returns the named cost model's prices; auto picks the
// dialect's provider family. ok is false for an unknown name.
func PricesFor(name string, d wire.Dialect) (Prices, bool) {
	switch name {
	case "", CostAuto:
		switch d {
		case wire.Anthropic, wire.Bedrock:
			return PricesAnthropic, true
		case wire.Gemini:
			return PricesGemini, true
		default:
			return PricesOpenAI, true
		}
	case CostAnthropic:
		return PricesAnthropic, true
	case CostOpenAI:
		return PricesOpenAI, true
	case CostGemini:
		return PricesGemini, true
	case CostNone:
		return PricesNoCache, true
	}
	return Prices{}, false
}

// stepPays reports whether a step that removes removed bytes and makes the
// provider re-write rewritten bytes earns its cost back within horizon
// turns (the turn of the step included). Break-even is enough: asking for
// twice it made no session cheaper on the tuning set (the final-request
// window cost 0.862× raw against 0.855×), only later to step.
func (p Prices) stepPays(removed, rewritten int, horizon float64) bool {
	if removed <= 0 {
		return false
	}
	cost := (p.Write - p.Read) * float64(max(rewritten, 0))
	return p.Read*float64(removed)*horizon >= cost
}
