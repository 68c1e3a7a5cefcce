// Package promptcache simulates a provider's prompt cache closely enough to
// bill a request the way the provider would: which tokens are read from the
// cache, which are written to it, which are plain input. The Ledger (the
// fake upstream's bill book) and the session replay (make bench-sessions)
// both price requests with it, so a prediction made offline from the
// rewritten bodies and the bill an upstream reports follow the same rules.
package promptcache

import (
	"bytes"
	"crypto/sha256"
	"regexp"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// Unit is one cacheable piece of a request: the tools, the system prompt,
// or one message (input item, content).
type Unit struct {
	Tokens     int64
	Breakpoint bool
	digest     [sha256.Size]byte // of the prefix ending here, without cache markers
}

// marker matches an Anthropic cache_control field and a Bedrock
// cachePoint block (both flat objects). Inside a JSON string the quotes
// would be escaped, so text that mentions them never matches.
var marker = regexp.MustCompile(`,?\s*"cache_control"\s*:\s*\{[^{}]*\}|,?\s*\{\s*"cachePoint"\s*:\s*\{[^{}]*\}\s*\}`)

// Units cuts a request body into its cache units, in the order a provider
// caches them (tools, system, then the messages), four bytes a token.
// The granularity is the message, not the token: a change anywhere in a
// message breaks the prefix from that message on, which is what matters
// for a rewriting proxy.
func Units(d wire.Dialect, body []byte) []Unit {
	var raws [][]byte
	add := func(r gjson.Result) {
		if r.Exists() {
			raws = append(raws, []byte(r.Raw))
		}
	}
	each := func(r gjson.Result) {
		r.ForEach(func(_, v gjson.Result) bool {
			add(v)
			return true
		})
	}
	switch d {
	case wire.Anthropic:
		add(gjson.GetBytes(body, "tools"))
		add(gjson.GetBytes(body, "system"))
		each(gjson.GetBytes(body, "messages"))
	case wire.OpenAIChat:
		add(gjson.GetBytes(body, "tools"))
		each(gjson.GetBytes(body, "messages"))
	case wire.OpenAIResponses:
		add(gjson.GetBytes(body, "tools"))
		add(gjson.GetBytes(body, "instructions"))
		in := gjson.GetBytes(body, "input")
		if in.IsArray() {
			each(in)
		} else {
			add(in)
		}
	case wire.Gemini:
		add(gjson.GetBytes(body, "tools"))
		add(gjson.GetBytes(body, "systemInstruction"))
		each(gjson.GetBytes(body, "contents"))
	case wire.Bedrock:
		add(gjson.GetBytes(body, "toolConfig"))
		add(gjson.GetBytes(body, "system"))
		each(gjson.GetBytes(body, "messages"))
	}
	out := make([]Unit, len(raws))
	h := sha256.New()
	for i, r := range raws {
		// The markers are not content: a breakpoint that moves on (Claude
		// Code marks the newest message each turn) keeps the prefix.
		bp := bytes.Contains(r, []byte(`"cache_control"`)) || bytes.Contains(r, []byte(`"cachePoint"`))
		if bp {
			h.Write(marker.ReplaceAll(r, nil))
		} else {
			h.Write(r)
		}
		out[i] = Unit{Tokens: int64(len(r)+3) / 4, Breakpoint: bp}
		h.Sum(out[i].digest[:0])
	}
	return out
}

// MarkLikeClaudeCode sets the breakpoints Claude Code sets when the body
// carries none (a transcript records no cache_control): one at the end of
// the head (tools and system) and one on the newest message. head is how
// many units come before the messages.
func MarkLikeClaudeCode(us []Unit, head int) []Unit {
	for _, u := range us {
		if u.Breakpoint {
			return us
		}
	}
	if head > 0 && head <= len(us) {
		us[head-1].Breakpoint = true
	}
	if len(us) > 0 {
		us[len(us)-1].Breakpoint = true
	}
	return us
}

// HeadUnits is how many units of a request in dialect d come before its
// messages.
func HeadUnits(d wire.Dialect, body []byte) int {
	n := 0
	for _, k := range headKeys[d] {
		if gjson.GetBytes(body, k).Exists() {
			n++
		}
	}
	return n
}

var headKeys = map[wire.Dialect][]string{
	wire.Anthropic:       {"tools", "system"},
	wire.OpenAIChat:      {"tools"},
	wire.OpenAIResponses: {"tools", "instructions"},
	wire.Gemini:          {"tools", "systemInstruction"},
	wire.Bedrock:         {"toolConfig", "system"},
}

// Bill is one request's prompt, split by how it is charged, in tokens.
type Bill struct {
	Input, Read, Write int64
}

// Lookback is how far before a breakpoint Anthropic looks for an earlier
// cached prefix: "the system automatically checks for cache hits at all
// previous content block boundaries (up to approximately 20 blocks before
// your explicit breakpoint)"
// (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching).
// Counted here in units (messages), which hold one block or more, so the
// simulation is, if anything, kinder than the provider.
const Lookback = 20

// Cache is one caller's prompt cache, for one model. Not safe for
// concurrent use.
type Cache struct {
	// MinTokens is the shortest prefix cached; 0 means 1024 (the
	// documented minimum for Claude Sonnet and OpenAI).
	MinTokens int64
	// Unbounded turns the lookback limit off: every earlier breakpoint's
	// prefix can be read.
	Unbounded bool
	seen      map[[sha256.Size]byte]bool
}

// Charge bills a request cut into us and updates the cache:
//
//   - Anthropic and Bedrock cache explicitly: a prefix is written up to the
//     last unit carrying a breakpoint, and read back by a later request
//     whose prefix matches one of them, found from one of its own
//     breakpoints or at most Lookback units before one.
//   - OpenAI (Chat and Responses) and Gemini cache automatically: every
//     prefix of a request is kept, a later request reads the longest that
//     matches; OpenAI counts cached tokens in steps of 128 past the first
//     1024.
func (c *Cache) Charge(d wire.Dialect, us []Unit) Bill {
	if c.seen == nil {
		c.seen = map[[sha256.Size]byte]bool{}
	}
	min := c.MinTokens
	if min <= 0 {
		min = 1024
	}
	ends := make([]int64, len(us)) // tokens up to and including unit i
	var total int64
	for i, u := range us {
		total += u.Tokens
		ends[i] = total
	}
	var b Bill
	switch d {
	case wire.Anthropic, wire.Bedrock:
		var hit, lastBP int64
		for i, u := range us {
			if !u.Breakpoint {
				continue
			}
			if ends[i] >= min {
				lastBP = ends[i]
			}
			lo := 0
			if !c.Unbounded {
				lo = max(0, i-Lookback)
			}
			for j := i; j >= lo; j-- {
				if ends[j] >= min && c.seen[us[j].digest] {
					hit = max(hit, ends[j])
					break
				}
			}
		}
		b.Read = hit
		if lastBP > hit {
			b.Write = lastBP - hit
		}
		for i, u := range us {
			if u.Breakpoint && ends[i] >= min && ends[i] <= lastBP {
				c.seen[u.digest] = true
			}
		}
	default:
		var hit int64
		for i, u := range us {
			if ends[i] >= min && c.seen[u.digest] {
				hit = ends[i]
			}
		}
		if (d == wire.OpenAIChat || d == wire.OpenAIResponses) && hit >= 1024 {
			// "Cache hits … in increments of 128 tokens" past the first 1024.
			hit = 1024 + (hit-1024)/128*128
		}
		b.Read = hit
		for i, u := range us {
			if ends[i] >= min {
				c.seen[u.digest] = true
			}
		}
	}
	b.Input = total - b.Read - b.Write
	return b
}
