package compress

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// The llm strategy is the one place this package waits, keeps state and
// reads a clock: it asks a model for a summary. The rest of the package's
// promise still holds where it matters: its output carries a marker (so no
// strategy touches it again), it is strictly smaller, and any failure gives
// the deterministic fallback's bytes instead. What it cannot promise is the
// same bytes for the same input; callers keep a summary stable across turns
// by caching it under Name(), which is why Name() changes with the model and
// the prompt.

// Completer sends one summarisation request and returns the model's text.
// The extproc package implements it with its replay client (through Envoy's
// replay listener, never directly to a provider).
type Completer interface {
	Complete(ctx context.Context, req LLMRequest) (string, error)
}

// LLMRequest is one summarisation request.
type LLMRequest struct {
	Model, Prompt, Text string
	// ToolName tells the model what produced Text; it may be empty.
	ToolName string
	// MaxOutputBytes is the size asked for. Dialects turn it into an output
	// token cap.
	MaxOutputBytes int
}

// The LLMOptions defaults.
const (
	DefaultLLMTimeout       = 30 * time.Second
	DefaultLLMMaxConcurrent = 10
	DefaultLLMRate          = 20.0
)

// DefaultLLMPrompt is the instruction the llm strategy sends when
// LLMOptions.Prompt is empty.
const DefaultLLMPrompt = `You shorten the output of a tool run by a coding agent. The agent reads your version instead of the original and must still be able to act on it.

Reply with the shortened output only: no preamble, no comments about the task.

Copy these exactly as they appear: error and warning lines, failing test names with their assertion messages, stack frames, paths with line numbers (file:line), exit codes, counts and other numbers, versions, identifiers, commands and any text the agent may need to quote.

Leave out repeated lines, progress output, passing checks, boilerplate and blank runs, and say in one short line for each cut what was left out and about how much (for example: 240 passing tests omitted).

Never add content that is not in the output. When unsure whether a line matters, keep it.`

// LLMOptions tunes the llm strategy. Zero values take the defaults.
type LLMOptions struct {
	// Model names the summariser model; it is sent as the request's model.
	Model string
	// Prompt is the system instruction; empty means DefaultLLMPrompt.
	Prompt string
	// Timeout bounds one output's whole attempt: waiting for a slot, for a
	// rate token and for the answer.
	Timeout time.Duration
	// MaxConcurrent is how many requests may be in flight at once.
	MaxConcurrent int
	// Rate is requests per second, with Burst requests allowed at once
	// after a quiet spell. Negative Rate means no rate limit; Burst defaults
	// to MaxConcurrent.
	Rate  float64
	Burst int
	// TargetBytes is the most the model is asked to write. Outputs at or
	// under it are returned unchanged, as with Structural.
	TargetBytes int
	// Fallback compresses when the model cannot be used: no Completer, a
	// timeout, an error, a rate-limit wait longer than the time left, an
	// empty answer or one that is not strictly smaller. It also takes JSON
	// outputs, which must stay valid JSON. Nil means
	// Structural(StructuralOptions{TargetBytes: TargetBytes}).
	Fallback Strategy
}

func (o LLMOptions) withDefaults() LLMOptions {
	if o.Prompt == "" {
		o.Prompt = DefaultLLMPrompt
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultLLMTimeout
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultLLMMaxConcurrent
	}
	if o.Rate == 0 {
		o.Rate = DefaultLLMRate
	}
	if o.Burst <= 0 {
		o.Burst = o.MaxConcurrent
	}
	if o.TargetBytes <= 0 {
		o.TargetBytes = DefaultTargetBytes
	}
	if o.Fallback == nil {
		o.Fallback = Structural(StructuralOptions{TargetBytes: o.TargetBytes})
	}
	return o
}

// Why the model was not used. CompressContext returns one of these, or the
// Completer's or the context's error.
var (
	ErrLLMNoCompleter  = errors.New("llm: no completer")
	ErrLLMRateLimited  = errors.New("llm: rate-limit wait exceeds the time left")
	ErrLLMEmptyAnswer  = errors.New("llm: empty answer")
	ErrLLMNotSmaller   = errors.New("llm: answer not smaller than the output")
	ErrLLMTruncated    = errors.New("llm: answer cut at the output token limit")
	errLLMNoModel      = errors.New("llm: no model")
	errUnknownDialect  = errors.New("llm: unknown dialect")
	errNoAnswerContent = errors.New("llm: answer has no text")
)

// ContextCompressor is a Strategy that can use the caller's context (its
// deadline, and values the Completer reads, such as the client's request
// headers) and say why it fell back. fellBack is nil when the strategy did
// its own work or had nothing to do; otherwise out and rep are the
// fallback's, and a caller may prefer not to cache them for long, since the
// next attempt may reach the model.
type ContextCompressor interface {
	Strategy
	CompressContext(ctx context.Context, text string, hint Hint) (out string, rep Report, fellBack error)
}

// LLM returns a strategy that asks a model, through c, for a summary of each
// output larger than opts.TargetBytes. It is safe for concurrent use: at
// most opts.MaxConcurrent requests run at once and they start at no more
// than opts.Rate per second. A nil c always falls back.
func LLM(opts LLMOptions, c Completer) Strategy {
	opts = opts.withDefaults()
	l := &llm{
		opts:  opts,
		c:     c,
		sem:   make(chan struct{}, opts.MaxConcurrent),
		sleep: sleepCtx,
	}
	if opts.Rate > 0 {
		l.bucket = newBucket(opts.Rate, opts.Burst, time.Now)
	}
	sum := sha256.Sum256([]byte(opts.Prompt))
	l.name = "llm(" + cleanLabel(opts.Model, 100) + " p" + hex.EncodeToString(sum[:4]) +
		" t" + strconv.Itoa(opts.TargetBytes) + ")>" + opts.Fallback.Name()
	return l
}

type llm struct {
	opts   LLMOptions
	c      Completer
	name   string
	sem    chan struct{}
	bucket *bucket // nil: no rate limit
	// sleep waits for a rate token; tests replace it to move a fake clock.
	sleep func(ctx context.Context, d time.Duration) error
}

func (l *llm) Name() string { return l.name }

func (l *llm) Compress(text string, hint Hint) (string, Report) {
	out, rep, _ := l.CompressContext(context.Background(), text, hint)
	return out, rep
}

func (l *llm) CompressContext(ctx context.Context, text string, hint Hint) (string, Report, error) {
	hint = hint.decoded()
	kind := Detect(text, hint)
	if len(text) <= l.opts.TargetBytes || hasOwnMarker(text) {
		return text, unchanged(kind, text), nil
	}
	if kind == KindJSON {
		// A summary is prose; the fallback keeps JSON parseable.
		out, rep := l.opts.Fallback.Compress(text, hint)
		return out, rep, nil
	}
	answer, err := l.ask(ctx, text, hint)
	if err == nil {
		var out string
		if out, err = summaryOutput(l.opts.Model, text, answer); err == nil {
			// finish re-checks what every strategy guarantees; it does not
			// fail after summaryOutput, but if it did the fallback runs.
			if out, rep := finish(kind, text, out, clamp.CountLines(text)); rep.Changed {
				return out, rep, nil
			}
			err = ErrLLMNotSmaller
		}
	}
	out, rep := l.opts.Fallback.Compress(text, hint)
	return out, rep, err
}

// ask waits for a slot and a rate token, then for the model, all within
// one Timeout.
func (l *llm) ask(ctx context.Context, text string, hint Hint) (string, error) {
	if l.c == nil {
		return "", ErrLLMNoCompleter
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, l.opts.Timeout)
	defer cancel()

	select {
	case l.sem <- struct{}{}:
		defer func() { <-l.sem }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if l.bucket != nil {
		left := l.opts.Timeout
		if dl, ok := ctx.Deadline(); ok {
			left = time.Until(dl)
		}
		wait, ok := l.bucket.reserve(left)
		if !ok {
			return "", ErrLLMRateLimited
		}
		if err := l.sleep(ctx, wait); err != nil {
			l.bucket.cancel()
			return "", err
		}
	}
	answer, err := l.c.Complete(ctx, LLMRequest{
		Model:          l.opts.Model,
		Prompt:         l.opts.Prompt,
		Text:           text,
		ToolName:       hint.ToolName,
		MaxOutputBytes: l.opts.TargetBytes,
	})
	if err != nil {
		return "", err
	}
	// A late answer is still a timeout: the caller's budget is spent.
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return answer, nil
}

// summaryOutput puts the marker above the model's answer. The marker is a
// lines marker, so every strategy of this package leaves the result alone.
func summaryOutput(model, text, answer string) (string, error) {
	answer = strings.TrimSpace(strings.ToValidUTF8(answer, "\uFFFD"))
	if answer == "" {
		return "", ErrLLMEmptyAnswer
	}
	if model == "" {
		model = "a model"
	}
	m := clamp.CountLines(answer)
	unit := " lines"
	if m == 1 {
		unit = " line"
	}
	out := linesMarker(clamp.CountLines(text), "summarised by "+cleanLabel(model, 100)+" into "+strconv.Itoa(m)+unit) +
		"\n" + answer
	if strings.HasSuffix(text, "\n") {
		out += "\n"
	}
	if len(out) >= len(text) {
		return "", ErrLLMNotSmaller
	}
	return out, nil
}

// bucket is a token bucket: it holds up to burst tokens, refills at rate per
// second, and lends ahead so that waiters are served in arrival order.
type bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64 // negative: tokens already promised to waiters
	last   time.Time
	now    func() time.Time
}

func newBucket(rate float64, burst int, now func() time.Time) *bucket {
	return &bucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: now(), now: now}
}

// reserve takes a token and says how long to wait before using it. When the
// wait would be longer than max nothing is taken and ok is false: better to
// fall back now than to fail at the deadline.
func (b *bucket) reserve(max time.Duration) (wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(b.burst, b.tokens+elapsed.Seconds()*b.rate)
		b.last = now
	}
	left := b.tokens - 1
	if left >= 0 {
		b.tokens = left
		return 0, true
	}
	wait = time.Duration(-left / b.rate * float64(time.Second))
	if wait > max {
		return 0, false
	}
	b.tokens = left
	return wait, true
}

// cancel gives back a reserved token its holder will not use.
func (b *bucket) cancel() {
	b.mu.Lock()
	b.tokens = min(b.burst, b.tokens+1)
	b.mu.Unlock()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The dialects LLMRequestBody and LLMResponseText speak.
const (
	DialectOpenAIChat = "openai_chat"
	DialectAnthropic  = "anthropic"
)

// LLMRequestHeaders are the headers a request of dialect needs besides
// credentials: Anthropic's Messages API refuses a request without
// anthropic-version.
func LLMRequestHeaders(dialect string) map[string]string {
	h := map[string]string{"content-type": "application/json"}
	if dialect == DialectAnthropic {
		h["anthropic-version"] = "2023-06-01"
	}
	return h
}

// LLMRequestBody renders req as a request body for dialect "openai_chat"
// (POST /v1/chat/completions, non-streaming, temperature 0) or "anthropic"
// (POST /v1/messages, max_tokens sized from MaxOutputBytes).
func LLMRequestBody(dialect string, req LLMRequest) ([]byte, error) {
	if req.Model == "" {
		return nil, errLLMNoModel
	}
	prompt := req.Prompt
	if prompt == "" {
		prompt = DefaultLLMPrompt
	}
	user := llmUserMessage(req)
	tokens := strconv.Itoa(maxTokens(req.MaxOutputBytes))
	body := `{}`
	var err error
	set := func(path, raw string) {
		if err == nil {
			body, err = sjson.SetRaw(body, path, raw)
		}
	}
	switch dialect {
	case DialectOpenAIChat:
		set("model", jsonString(req.Model))
		set("messages.0", `{"role":"system","content":`+jsonString(prompt)+`}`)
		set("messages.1", `{"role":"user","content":`+jsonString(user)+`}`)
		set("temperature", "0")
		// max_tokens rather than max_completion_tokens: it is the one the
		// OpenAI-compatible servers (vLLM, Ollama, LiteLLM) all accept.
		set("max_tokens", tokens)
		set("stream", "false")
	case DialectAnthropic:
		set("model", jsonString(req.Model))
		set("max_tokens", tokens)
		set("temperature", "0")
		set("system", jsonString(prompt))
		set("messages.0", `{"role":"user","content":`+jsonString(user)+`}`)
	default:
		return nil, fmt.Errorf("%w %q", errUnknownDialect, dialect)
	}
	if err != nil {
		return nil, err
	}
	return []byte(body), nil
}

// llmUserMessage frames the output so the model can tell it from the ask.
func llmUserMessage(req LLMRequest) string {
	var b strings.Builder
	b.Grow(len(req.Text) + 200)
	if req.ToolName != "" {
		b.WriteString("Tool: ")
		b.WriteString(cleanLabel(req.ToolName, 100))
		b.WriteByte('\n')
	}
	if req.MaxOutputBytes > 0 {
		b.WriteString("Answer in at most ")
		b.WriteString(strconv.Itoa(req.MaxOutputBytes))
		b.WriteString(" bytes.\n")
	}
	b.WriteString("\n<tool_output>\n")
	b.WriteString(strings.ToValidUTF8(req.Text, "\uFFFD"))
	if !strings.HasSuffix(req.Text, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("</tool_output>\n")
	return b.String()
}

// maxTokens turns a byte budget into an output token cap. Code and logs run
// about three bytes a token; the cap sits a little above the ask so a
// summary that runs slightly long is not cut off mid-line.
func maxTokens(bytes int) int {
	if bytes <= 0 {
		bytes = DefaultTargetBytes
	}
	return min(max(bytes/3+bytes/12, 256), 16384)
}

// LLMResponseText extracts the answer text from a non-streaming 200 answer
// of that dialect. An answer stopped by the token limit is an error: its
// end, where the failures usually are, is missing.
func LLMResponseText(dialect string, body []byte) (string, error) {
	if !jsonsafe.Valid(body) {
		return "", errors.New("llm: answer is not JSON")
	}
	root := gjson.ParseBytes(body)
	if e := root.Get("error"); e.Exists() {
		msg := e.Get("message").String()
		if msg == "" {
			msg = e.String()
		}
		return "", fmt.Errorf("llm: model error: %s", cleanLabel(msg, 300))
	}
	switch dialect {
	case DialectOpenAIChat:
		choice := root.Get("choices.0")
		if !choice.Exists() {
			return "", errNoAnswerContent
		}
		if choice.Get("finish_reason").String() == "length" {
			return "", ErrLLMTruncated
		}
		msg := choice.Get("message")
		if r := msg.Get("refusal"); r.Type == gjson.String && r.String() != "" {
			return "", fmt.Errorf("llm: model refused: %s", cleanLabel(r.String(), 300))
		}
		content := msg.Get("content")
		switch {
		case content.Type == gjson.String:
			return content.String(), nil
		case content.IsArray():
			// Some compatible servers answer with content parts.
			return textParts(content, "text"), nil
		}
		return "", errNoAnswerContent
	case DialectAnthropic:
		if root.Get("stop_reason").String() == "max_tokens" {
			return "", ErrLLMTruncated
		}
		content := root.Get("content")
		if !content.IsArray() {
			return "", errNoAnswerContent
		}
		return textParts(content, "text"), nil
	}
	return "", fmt.Errorf("%w %q", errUnknownDialect, dialect)
}

// textParts joins the text of the blocks of type typ, skipping thinking and
// tool blocks.
func textParts(arr gjson.Result, typ string) string {
	var b strings.Builder
	arr.ForEach(func(_, v gjson.Result) bool {
		if v.Get("type").String() == typ {
			b.WriteString(v.Get("text").String())
		}
		return true
	})
	return b.String()
}
