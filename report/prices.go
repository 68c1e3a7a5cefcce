package report

import (
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// Price is one model family's list price, in dollars per million tokens.
// CacheRead and CacheWrite are the prices of a token read from or written
// to the provider's prompt cache.
type Price struct {
	Match      string  `json:"match"` // a substring of the model name; the longest match wins
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
}

// DefaultPrices are list prices of the major model families (USD per
// million tokens, standard tier, prompts up to 200K tokens) as this table's
// author knew them; they were not re-read from the pricing pages when
// written, so check them against the pages and override what differs with
// --prices:
// https://docs.anthropic.com/en/docs/about-claude/pricing (cache reads
// 0.1×, 5-minute writes 1.25× input), https://openai.com/api/pricing
// (cached input; no write charge), https://ai.google.dev/gemini-api/docs/pricing
// (implicit cache reads), https://aws.amazon.com/bedrock/pricing (Claude on
// Bedrock at Anthropic's prices). A price file overrides or adds entries.
var DefaultPrices = []Price{
	{"claude-opus-4-5", 5, 25, 0.5, 6.25},
	{"claude-opus-4", 15, 75, 1.5, 18.75},
	{"claude-sonnet-4", 3, 15, 0.3, 3.75},
	{"claude-3-7-sonnet", 3, 15, 0.3, 3.75},
	{"claude-haiku-4-5", 1, 5, 0.1, 1.25},
	{"claude-3-5-haiku", 0.8, 4, 0.08, 1},
	{"gpt-5-mini", 0.25, 2, 0.025, 0},
	{"gpt-5-nano", 0.05, 0.4, 0.005, 0},
	{"gpt-5", 1.25, 10, 0.125, 0},
	{"gpt-4.1-mini", 0.4, 1.6, 0.1, 0},
	{"gpt-4.1", 2, 8, 0.5, 0},
	{"gpt-4o-mini", 0.15, 0.6, 0.075, 0},
	{"gpt-4o", 2.5, 10, 1.25, 0},
	{"o3", 2, 8, 0.5, 0},
	{"o4-mini", 1.1, 4.4, 0.275, 0},
	{"gemini-2.5-pro", 1.25, 10, 0.3125, 0},
	{"gemini-2.5-flash", 0.3, 2.5, 0.075, 0},
	{"gemini-3-pro", 2, 12, 0.2, 0},
}

// Prices looks a model up in a table.
type Prices []Price

// For returns the entry whose Match is the longest substring of model.
func (ps Prices) For(model string) (Price, bool) {
	m := strings.ToLower(model)
	var best Price
	found := false
	for _, p := range ps {
		if strings.Contains(m, strings.ToLower(p.Match)) && len(p.Match) > len(best.Match) {
			best, found = p, true
		}
	}
	return best, found
}

// LoadPrices reads a YAML or JSON list of Price entries and puts them over
// the defaults: an entry with the same match replaces the default one.
func LoadPrices(path string) (Prices, error) {
	ps := append(Prices(nil), DefaultPrices...)
	if path == "" {
		return ps, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	var over []Price
	if err := yaml.UnmarshalStrict(raw, &over); err != nil {
		return nil, fmt.Errorf("prices %s: %w", path, err)
	}
	for i, o := range over {
		if o.Match == "" || o.Input < 0 || o.Output < 0 || o.CacheRead < 0 || o.CacheWrite < 0 {
			return nil, fmt.Errorf("prices %s: entry %d needs a match and non-negative prices", path, i)
		}
		replaced := false
		for j := range ps {
			if strings.EqualFold(ps[j].Match, o.Match) {
				ps[j], replaced = o, true
			}
		}
		if !replaced {
			ps = append(ps, o)
		}
	}
	return ps, nil
}
