package testenv

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/testenv/promptcache"
)

// Bill is what a provider charged for one request, in tokens. The kinds
// are disjoint (as toolproc's usage metrics count them): Input is billed
// at the base rate, CacheRead and CacheWrite at the cache rates, and their
// sum is the whole prompt.
type Bill struct {
	Input, CacheRead, CacheWrite, Output int64
}

// Add returns the sum of two bills.
func (b Bill) Add(o Bill) Bill {
	return Bill{b.Input + o.Input, b.CacheRead + o.CacheRead, b.CacheWrite + o.CacheWrite, b.Output + o.Output}
}

// Prompt is every prompt token.
func (b Bill) Prompt() int64 { return b.Input + b.CacheRead + b.CacheWrite }

// CacheRates are the multiples of the base input price a provider charges
// for cache reads and writes.
type CacheRates struct{ Read, Write float64 }

// Rates per dialect: Anthropic (and Claude on Bedrock) charge 0.1× for a
// read and 1.25× for a 5-minute write
// (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#pricing);
// OpenAI's automatic caching reads at 0.5× for the GPT-4o family and
// writes for free (https://platform.openai.com/docs/guides/prompt-caching);
// Gemini's implicit caching reads at 0.25× on 2.5 models
// (https://ai.google.dev/gemini-api/docs/caching).
var Rates = map[wire.Dialect]CacheRates{
	wire.Anthropic:       {0.1, 1.25},
	wire.Bedrock:         {0.1, 1.25},
	wire.OpenAIChat:      {0.5, 0},
	wire.OpenAIResponses: {0.5, 0},
	wire.Gemini:          {0.25, 0},
}

// InputEquivalent is the bill's prompt cost in base-rate input tokens.
func (b Bill) InputEquivalent(d wire.Dialect) float64 {
	r := Rates[d]
	return float64(b.Input) + r.Read*float64(b.CacheRead) + r.Write*float64(b.CacheWrite)
}

// Charge is one request the Ledger billed.
type Charge struct {
	Dialect wire.Dialect
	Model   string
	Bill    Bill
}

// Ledger is a fake provider's prompt cache and bill book: one
// promptcache.Cache per caller and model (its rules: Anthropic and Bedrock
// explicit breakpoints with a bounded lookback, automatic prefixes for
// OpenAI and Gemini), and every request's bill.
type Ledger struct {
	// MinCacheTokens is the shortest prefix cached; 0 means 1024 (the
	// documented minimum for Claude Sonnet and OpenAI).
	MinCacheTokens int64
	// OutputTokens is billed as each answer's output; 0 means 12 (the
	// pieces of the canned answer).
	OutputTokens int64

	mu      sync.Mutex
	caches  map[string]*promptcache.Cache
	charges []Charge
}

// NewLedger returns an empty ledger with the providers' minimums.
func NewLedger() *Ledger { return &Ledger{} }

// Charges returns the requests billed so far, oldest first.
func (l *Ledger) Charges() []Charge {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Charge(nil), l.charges...)
}

// Total sums the bills of one dialect ("" for all).
func (l *Ledger) Total(d wire.Dialect) Bill {
	var b Bill
	for _, c := range l.Charges() {
		if d == "" || c.Dialect == d {
			b = b.Add(c.Bill)
		}
	}
	return b
}

// Reset forgets the bills and the cache.
func (l *Ledger) Reset() {
	l.mu.Lock()
	l.caches, l.charges = nil, nil
	l.mu.Unlock()
}

// Charge bills one request: it reads the cache, updates it and records
// the bill. ok=false for a path that is no LLM call.
func (l *Ledger) Charge(req RecordedRequest) (Bill, bool) {
	ep := wire.Classify(req.Path)
	if ep.Ambiguous {
		ep = wire.Detect(req.Path, req.Body)
	}
	d := ep.Dialect
	if d == wire.Unknown || !gjson.ValidBytes(req.Body) {
		return Bill{}, false
	}
	model := ep.Model
	if model == "" {
		model = gjson.GetBytes(req.Body, "model").String()
	}
	// The cache is per organisation (the credential) and model.
	caller := req.Header.Get("x-api-key") + req.Header.Get("authorization") + req.Header.Get("x-goog-api-key")
	scope := caller + "\x00" + model
	us := promptcache.Units(d, req.Body)
	out := l.OutputTokens
	if out <= 0 {
		out = int64(len(answerPieces))
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.caches == nil {
		l.caches = map[string]*promptcache.Cache{}
	}
	c := l.caches[scope]
	if c == nil {
		c = &promptcache.Cache{MinTokens: l.MinCacheTokens}
		l.caches[scope] = c
	}
	pb := c.Charge(d, us)
	b := Bill{Input: pb.Input, CacheRead: pb.Read, CacheWrite: pb.Write, Output: out}
	l.charges = append(l.charges, Charge{Dialect: d, Model: model, Bill: b})
	return b, true
}

// Wrap makes a scripted upstream bill like a provider: every successful
// answer of script (nil: DefaultResponse) to an LLM request is charged to
// the ledger, and its usage fields are set to the bill, in the dialect's
// own shape, wherever the answer already reports usage (an OpenAI stream
// carries usage only when the client asked for it, and the bill is still
// recorded when it does not).
func (l *Ledger) Wrap(script func(RecordedRequest) *ScriptedResponse) func(RecordedRequest) *ScriptedResponse {
	return func(req RecordedRequest) *ScriptedResponse {
		var sr *ScriptedResponse
		if script != nil {
			sr = script(req)
		}
		if sr == nil {
			sr = DefaultResponse(req)
		}
		if sr.Status != 0 && sr.Status != http.StatusOK {
			return sr // providers bill no failed request
		}
		b, ok := l.Charge(req)
		if !ok {
			return sr
		}
		d := wire.Classify(req.Path).Dialect
		if sr.Chunks == nil {
			sr.Body = billJSON(d, sr.Body, b)
			if sr.Header.Get("Content-Length") != "" {
				sr.Header.Set("Content-Length", strconv.Itoa(len(sr.Body)))
			}
			return sr
		}
		chunks := make([][]byte, len(sr.Chunks))
		for i, c := range sr.Chunks {
			chunks[i] = billEvents(d, c, b)
		}
		sr.Chunks = chunks
		return sr
	}
}

// billEvents sets the bill in the data lines of SSE events.
func billEvents(d wire.Dialect, chunk []byte, b Bill) []byte {
	lines := bytes.SplitAfter(chunk, []byte("\n"))
	for i, line := range lines {
		rest, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		payload := bytes.TrimRight(rest, "\r\n")
		if !gjson.ValidBytes(payload) {
			continue
		}
		patched := billJSON(d, payload, b)
		lines[i] = append(append([]byte("data: "), patched...), rest[len(payload):]...)
	}
	return bytes.Join(lines, nil)
}

// billJSON sets the bill in one answer document (or stream event) where
// it reports usage, in the provider's fields.
func billJSON(d wire.Dialect, doc []byte, b Bill) []byte {
	set := func(path string, v any) {
		if out, err := sjson.SetBytes(doc, path, v); err == nil {
			doc = out
		}
	}
	isObj := func(path string) bool { return gjson.GetBytes(doc, path).IsObject() }
	switch d {
	case wire.Anthropic:
		switch {
		case isObj("message.usage"): // message_start: the prompt, output so far 1
			set("message.usage.input_tokens", b.Input)
			set("message.usage.cache_read_input_tokens", b.CacheRead)
			set("message.usage.cache_creation_input_tokens", b.CacheWrite)
			set("message.usage.output_tokens", 1)
		case gjson.GetBytes(doc, "type").String() == "message_delta" && isObj("usage"):
			set("usage.output_tokens", b.Output) // cumulative
		case isObj("usage"):
			set("usage.input_tokens", b.Input)
			set("usage.cache_read_input_tokens", b.CacheRead)
			set("usage.cache_creation_input_tokens", b.CacheWrite)
			set("usage.output_tokens", b.Output)
		}
	case wire.OpenAIChat:
		if isObj("usage") {
			set("usage.prompt_tokens", b.Prompt())
			set("usage.prompt_tokens_details.cached_tokens", b.CacheRead)
			set("usage.completion_tokens", b.Output)
			set("usage.total_tokens", b.Prompt()+b.Output)
		}
	case wire.OpenAIResponses:
		for _, p := range []string{"usage", "response.usage"} {
			if isObj(p) {
				set(p+".input_tokens", b.Prompt())
				set(p+".input_tokens_details.cached_tokens", b.CacheRead)
				set(p+".output_tokens", b.Output)
				set(p+".total_tokens", b.Prompt()+b.Output)
			}
		}
	case wire.Gemini:
		if isObj("usageMetadata") {
			set("usageMetadata.promptTokenCount", b.Prompt())
			set("usageMetadata.cachedContentTokenCount", b.CacheRead)
			set("usageMetadata.candidatesTokenCount", b.Output)
			set("usageMetadata.totalTokenCount", b.Prompt()+b.Output)
		}
	case wire.Bedrock:
		for _, p := range []string{"usage", "metadata.usage"} {
			if isObj(p) {
				set(p+".inputTokens", b.Input)
				set(p+".cacheReadInputTokens", b.CacheRead)
				set(p+".cacheWriteInputTokens", b.CacheWrite)
				set(p+".outputTokens", b.Output)
				set(p+".totalTokens", b.Prompt()+b.Output)
			}
		}
	}
	return doc
}
