package compress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

type completerFunc func(ctx context.Context, req LLMRequest) (string, error)

func (f completerFunc) Complete(ctx context.Context, req LLMRequest) (string, error) {
	return f(ctx, req)
}

// llmLog is a test log well over the 512-byte target the tests use.
func llmLog() string {
	var b strings.Builder
	for i := range 80 {
		fmt.Fprintf(&b, "=== RUN   TestCase%02d\n--- PASS: TestCase%02d (0.00s)\n", i, i)
	}
	b.WriteString("=== RUN   TestBroken\n    broken_test.go:42: want 3, got 4\n--- FAIL: TestBroken (0.01s)\nFAIL\n")
	return b.String()
}

const llmSummary = "80 passing tests omitted.\n--- FAIL: TestBroken (0.01s)\n    broken_test.go:42: want 3, got 4\nFAIL"

func answer(s string) Completer {
	return completerFunc(func(context.Context, LLMRequest) (string, error) { return s, nil })
}

func TestLLMSummary(t *testing.T) {
	text := llmLog()
	var got LLMRequest
	c := completerFunc(func(_ context.Context, req LLMRequest) (string, error) {
		got = req
		return "\n" + llmSummary + "\n\n", nil
	})
	s := LLM(LLMOptions{Model: "claude-haiku-4-5", TargetBytes: 512}, c)
	hint := Hint{ToolName: "Bash", Args: `{"command":"go test ./..."}`}
	out, rep := s.Compress(text, hint)

	want := "[… 164 lines omitted: summarised by claude-haiku-4-5 into 4 lines …]\n" + llmSummary + "\n"
	if out != want {
		t.Fatalf("out =\n%s\nwant\n%s", out, want)
	}
	if got.Model != "claude-haiku-4-5" || got.Prompt != DefaultLLMPrompt || got.Text != text ||
		got.ToolName != "Bash" || got.MaxOutputBytes != 512 {
		t.Errorf("request = %+v", got)
	}
	if !rep.Changed || rep.Kind != KindTestLog || rep.BytesBefore != len(text) || rep.BytesAfter != len(out) ||
		rep.LinesBefore != 164 || rep.LinesAfter != 5 || rep.Omitted != 164 {
		t.Errorf("report = %+v", rep)
	}
	if !hasOwnMarker(out) {
		t.Error("summary carries no marker the package recognises")
	}
}

func TestLLMIdempotent(t *testing.T) {
	var calls atomic.Int32
	c := completerFunc(func(context.Context, LLMRequest) (string, error) {
		calls.Add(1)
		return llmSummary, nil
	})
	s := LLM(LLMOptions{Model: "m", TargetBytes: 64}, c)
	out, rep := s.Compress(llmLog(), Hint{})
	if !rep.Changed || calls.Load() != 1 {
		t.Fatalf("first pass: changed=%v calls=%d", rep.Changed, calls.Load())
	}
	// Again, through every strategy: the summary is left alone.
	for _, st := range []Strategy{s, Structural(StructuralOptions{TargetBytes: 64}), Simple(5)} {
		if again, rep := st.Compress(out, Hint{}); again != out || rep.Changed {
			t.Errorf("%s changed a summary", st.Name())
		}
	}
	// And text another strategy compressed is not sent to the model.
	structured, _ := Structural(StructuralOptions{TargetBytes: 512}).Compress(llmLog(), Hint{})
	if again, rep := s.Compress(structured, Hint{}); again != structured || rep.Changed {
		t.Error("llm changed structural output")
	}
	if calls.Load() != 1 {
		t.Errorf("model called %d times, want 1", calls.Load())
	}
}

func TestLLMSmallOutputUntouched(t *testing.T) {
	s := LLM(LLMOptions{Model: "m"}, completerFunc(func(context.Context, LLMRequest) (string, error) {
		t.Error("model called for a small output")
		return "", nil
	}))
	text := "ok\n"
	if out, rep := s.Compress(text, Hint{}); out != text || rep.Changed {
		t.Errorf("small output changed: %q %+v", out, rep)
	}
}

func TestLLMFallback(t *testing.T) {
	text := llmLog()
	fallback := Simple(10)
	want, wantRep := fallback.Compress(text, Hint{})
	boom := errors.New("boom")
	tests := []struct {
		name    string
		c       Completer
		timeout time.Duration
		err     error
	}{
		{"no completer", nil, 0, ErrLLMNoCompleter},
		{"error", completerFunc(func(context.Context, LLMRequest) (string, error) { return "", boom }), 0, boom},
		{"empty", answer(" \n\t\n"), 0, ErrLLMEmptyAnswer},
		{"larger", answer(text + text), 0, ErrLLMNotSmaller},
		{"same size", answer(text[:len(text)-10]), 0, ErrLLMNotSmaller},
		{"timeout", completerFunc(func(ctx context.Context, _ LLMRequest) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}), 10 * time.Millisecond, context.DeadlineExceeded},
		{"answer after the deadline", completerFunc(func(ctx context.Context, _ LLMRequest) (string, error) {
			<-ctx.Done()
			return llmSummary, nil
		}), 10 * time.Millisecond, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := LLM(LLMOptions{Model: "m", TargetBytes: 512, Timeout: tt.timeout, Fallback: fallback}, tt.c)
			out, rep, err := s.(ContextCompressor).CompressContext(context.Background(), text, Hint{})
			if !errors.Is(err, tt.err) {
				t.Errorf("err = %v, want %v", err, tt.err)
			}
			if out != want || rep != wantRep {
				t.Errorf("not the fallback's result: %+v", rep)
			}
			// Compress gives the same bytes, without the reason.
			if out2, _ := s.Compress(text, Hint{}); out2 != out {
				t.Error("Compress and CompressContext differ")
			}
		})
	}
}

func TestLLMDefaultFallbackIsStructural(t *testing.T) {
	text := llmLog()
	want, _ := Structural(StructuralOptions{TargetBytes: 512}).Compress(text, Hint{})
	out, rep := LLM(LLMOptions{Model: "m", TargetBytes: 512}, nil).Compress(text, Hint{})
	if out != want || !rep.Changed || rep.Kind != KindTestLog {
		t.Errorf("default fallback: %+v", rep)
	}
}

// JSON goes to the fallback: a prose summary would not parse.
func TestLLMJSONUsesFallback(t *testing.T) {
	var items []string
	for i := range 200 {
		items = append(items, fmt.Sprintf(`{"id":%d,"name":"item %d"}`, i, i))
	}
	text := `{"items":[` + strings.Join(items, ",") + `]}`
	s := LLM(LLMOptions{Model: "m", TargetBytes: 512}, completerFunc(func(context.Context, LLMRequest) (string, error) {
		t.Error("model called for JSON")
		return "", nil
	}))
	out, rep, err := s.(ContextCompressor).CompressContext(context.Background(), text, Hint{})
	if err != nil || !rep.Changed || rep.Kind != KindJSON || !json.Valid([]byte(out)) {
		t.Errorf("JSON: err=%v rep=%+v valid=%v", err, rep, json.Valid([]byte(out)))
	}
}

func TestLLMContextReachesCompleter(t *testing.T) {
	type key struct{}
	var seen any
	s := LLM(LLMOptions{Model: "m", TargetBytes: 512}, completerFunc(func(ctx context.Context, _ LLMRequest) (string, error) {
		seen = ctx.Value(key{})
		if _, ok := ctx.Deadline(); !ok {
			t.Error("no deadline")
		}
		return llmSummary, nil
	}))
	ctx := context.WithValue(context.Background(), key{}, "headers")
	if _, _, err := s.(ContextCompressor).CompressContext(ctx, llmLog(), Hint{}); err != nil || seen != "headers" {
		t.Errorf("err=%v seen=%v", err, seen)
	}
}

func TestLLMName(t *testing.T) {
	base := LLMOptions{Model: "gpt-4.1-mini", TargetBytes: 4096}
	name := LLM(base, nil).Name()
	if !strings.HasPrefix(name, "llm(gpt-4.1-mini p") || !strings.HasSuffix(name, " t4096)>structural") {
		t.Errorf("Name() = %q", name)
	}
	if LLM(base, nil).Name() != name {
		t.Error("Name() not stable")
	}
	explicit := base
	explicit.Prompt = DefaultLLMPrompt
	if LLM(explicit, nil).Name() != name {
		t.Error("the default prompt and the same prompt given explicitly differ")
	}
	for _, o := range []LLMOptions{
		{Model: "gpt-4.1", TargetBytes: 4096},
		{Model: "gpt-4.1-mini", TargetBytes: 4096, Prompt: "Summarise."},
		{Model: "gpt-4.1-mini", TargetBytes: 2048},
		{Model: "gpt-4.1-mini", TargetBytes: 4096, Fallback: Passthrough()},
	} {
		if n := LLM(o, nil).Name(); n == name || strings.ContainsAny(n, "\n\r") {
			t.Errorf("Name() for %+v = %q", o, n)
		}
	}
}

func TestLLMMaxConcurrent(t *testing.T) {
	const limit, callers = 3, 12
	var inflight, peak atomic.Int32
	entered := make(chan struct{}, callers)
	release := make(chan struct{})
	c := completerFunc(func(context.Context, LLMRequest) (string, error) {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		entered <- struct{}{}
		<-release
		inflight.Add(-1)
		return llmSummary, nil
	})
	s := LLM(LLMOptions{Model: "m", TargetBytes: 512, MaxConcurrent: limit, Rate: -1, Timeout: time.Minute}, c)
	text := llmLog()
	var wg sync.WaitGroup
	changed := make([]bool, callers)
	for i := range callers {
		wg.Go(func() {
			_, rep := s.Compress(text, Hint{})
			changed[i] = rep.Changed
		})
	}
	for range limit {
		<-entered
	}
	close(release)
	wg.Wait()
	if p := peak.Load(); p != limit {
		t.Errorf("peak concurrency %d, want %d", p, limit)
	}
	for i, ok := range changed {
		if !ok {
			t.Errorf("caller %d fell back", i)
		}
	}
}

// A caller that cannot get a slot before its timeout falls back.
func TestLLMSlotWaitTimesOut(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	var calls atomic.Int32
	c := completerFunc(func(context.Context, LLMRequest) (string, error) {
		if calls.Add(1) == 1 {
			close(started)
			<-release
		}
		return llmSummary, nil
	})
	s := LLM(LLMOptions{Model: "m", TargetBytes: 512, MaxConcurrent: 1, Timeout: time.Minute}, c)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Compress(llmLog(), Hint{})
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, _, err := s.(ContextCompressor).CompressContext(ctx, llmLog(), Hint{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
	close(release)
	<-done
	if calls.Load() != 1 {
		t.Errorf("calls = %d", calls.Load())
	}
}

// fakeClock moves only when a rate wait sleeps on it.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.t = c.t.Add(d)
	return nil
}

func withClock(s Strategy, clk *fakeClock) {
	l := s.(*llm)
	l.bucket = newBucket(l.opts.Rate, l.opts.Burst, clk.now)
	l.sleep = clk.sleep
}

func TestLLMRate(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	s := LLM(LLMOptions{Model: "m", TargetBytes: 512, MaxConcurrent: 1, Rate: 4, Burst: 2, Timeout: time.Minute}, answer(llmSummary))
	withClock(s, clk)
	for i := range 6 {
		if _, rep := s.Compress(llmLog(), Hint{}); !rep.Changed {
			t.Fatalf("call %d fell back", i)
		}
	}
	// Two from the burst, then one every 250ms.
	want := []time.Duration{0, 0, 250 * time.Millisecond, 250 * time.Millisecond, 250 * time.Millisecond, 250 * time.Millisecond}
	if fmt.Sprint(clk.sleeps) != fmt.Sprint(want) {
		t.Errorf("sleeps = %v, want %v", clk.sleeps, want)
	}
	// After a quiet second the burst is back, and no more.
	clk.t = clk.t.Add(time.Second)
	clk.sleeps = nil
	for range 3 {
		s.Compress(llmLog(), Hint{})
	}
	if want := []time.Duration{0, 0, 250 * time.Millisecond}; fmt.Sprint(clk.sleeps) != fmt.Sprint(want) {
		t.Errorf("after a pause: sleeps = %v, want %v", clk.sleeps, want)
	}
}

// A rate wait longer than the timeout falls back at once instead of
// sleeping until the deadline.
func TestLLMRateWaitBeyondTimeout(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	var calls atomic.Int32
	c := completerFunc(func(context.Context, LLMRequest) (string, error) {
		calls.Add(1)
		return llmSummary, nil
	})
	s := LLM(LLMOptions{Model: "m", TargetBytes: 512, Rate: 0.1, Burst: 1, Timeout: time.Second}, c)
	withClock(s, clk)
	cc := s.(ContextCompressor)
	if _, _, err := cc.CompressContext(context.Background(), llmLog(), Hint{}); err != nil {
		t.Fatal(err)
	}
	_, rep, err := cc.CompressContext(context.Background(), llmLog(), Hint{})
	if !errors.Is(err, ErrLLMRateLimited) || !rep.Changed {
		t.Errorf("err = %v, rep = %+v", err, rep)
	}
	if calls.Load() != 1 || len(clk.sleeps) != 1 {
		t.Errorf("calls = %d, sleeps = %v", calls.Load(), clk.sleeps)
	}
	// The refused caller took no token: 10s later the next one goes at once.
	clk.t = clk.t.Add(10 * time.Second)
	if _, _, err := cc.CompressContext(context.Background(), llmLog(), Hint{}); err != nil {
		t.Error(err)
	}
}

func TestBucket(t *testing.T) {
	clk := &fakeClock{t: time.Unix(0, 0)}
	b := newBucket(10, 2, clk.now)
	for i, want := range []time.Duration{0, 0, 100 * time.Millisecond, 200 * time.Millisecond} {
		if w, ok := b.reserve(time.Second); !ok || w != want {
			t.Errorf("reserve %d = %v %v, want %v", i, w, ok, want)
		}
	}
	if _, ok := b.reserve(250 * time.Millisecond); ok {
		t.Error("a 300ms wait was granted within 250ms")
	}
	b.cancel()
	if w, _ := b.reserve(time.Second); w != 200*time.Millisecond {
		t.Errorf("after cancel: wait %v", w)
	}
	// Idle time refills up to the burst only.
	clk.t = clk.t.Add(time.Hour)
	for i, want := range []time.Duration{0, 0, 100 * time.Millisecond} {
		if w, _ := b.reserve(time.Second); w != want {
			t.Errorf("after idle, reserve %d = %v, want %v", i, w, want)
		}
	}
}

// nasty holds what breaks hand-built JSON: quotes, backslashes, control
// characters, HTML, a lone surrogate's bytes and invalid UTF-8.
const nasty = "say \"hi\"\\n\tC:\\path\x01 <b>&</b> \u2028 \xff\xfe end"

func TestLLMRequestBodyOpenAIChat(t *testing.T) {
	body, err := LLMRequestBody("openai_chat", LLMRequest{
		Model: "gpt-4.1-mini", Prompt: "Be brief.", Text: nasty, ToolName: "run_in_terminal", MaxOutputBytes: 3000,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(body) {
		t.Fatalf("invalid JSON: %s", body)
	}
	r := gjson.ParseBytes(body)
	if r.Get("model").String() != "gpt-4.1-mini" || r.Get("temperature").Raw != "0" ||
		r.Get("stream").Raw != "false" || r.Get("max_tokens").Int() != 1250 {
		t.Errorf("body = %s", body)
	}
	if r.Get("messages.#").Int() != 2 || r.Get("messages.0.role").String() != "system" ||
		r.Get("messages.0.content").String() != "Be brief." || r.Get("messages.1.role").String() != "user" {
		t.Errorf("messages = %s", r.Get("messages").Raw)
	}
	user := r.Get("messages.1.content").String()
	for _, want := range []string{"Tool: run_in_terminal\n", "at most 3000 bytes", "<tool_output>\n", strings.ToValidUTF8(nasty, "\uFFFD") + "\n</tool_output>\n"} {
		if !strings.Contains(user, want) {
			t.Errorf("user message lacks %q:\n%s", want, user)
		}
	}
}

func TestLLMRequestBodyAnthropic(t *testing.T) {
	body, err := LLMRequestBody("anthropic", LLMRequest{Model: "claude-haiku-4-5", Text: nasty + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(body) {
		t.Fatalf("invalid JSON: %s", body)
	}
	r := gjson.ParseBytes(body)
	if r.Get("model").String() != "claude-haiku-4-5" || r.Get("system").String() != DefaultLLMPrompt ||
		r.Get("max_tokens").Int() != int64(maxTokens(DefaultTargetBytes)) || r.Get("temperature").Raw != "0" {
		t.Errorf("body = %s", body)
	}
	if r.Get("messages.#").Int() != 1 || r.Get("messages.0.role").String() != "user" {
		t.Errorf("messages = %s", r.Get("messages").Raw)
	}
	user := r.Get("messages.0.content").String()
	if strings.Contains(user, "Tool:") || strings.Contains(user, "at most") ||
		!strings.HasSuffix(user, "\xef\xbf\xbd end\n</tool_output>\n") {
		t.Errorf("user message:\n%q", user)
	}
}

func TestLLMRequestBodyErrors(t *testing.T) {
	if _, err := LLMRequestBody("gemini", LLMRequest{Model: "m"}); err == nil {
		t.Error("unknown dialect accepted")
	}
	if _, err := LLMRequestBody("anthropic", LLMRequest{}); err == nil {
		t.Error("empty model accepted")
	}
}

func TestMaxTokens(t *testing.T) {
	for _, tt := range []struct{ bytes, want int }{{0, 3412}, {100, 256}, {8192, 3412}, {1 << 20, 16384}} {
		if got := maxTokens(tt.bytes); got != tt.want {
			t.Errorf("maxTokens(%d) = %d, want %d", tt.bytes, got, tt.want)
		}
	}
}

func TestLLMResponseText(t *testing.T) {
	openai := `{
  "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4.1-mini-2025-04-14",
  "choices": [{
    "index": 0,
    "message": {"role": "assistant", "content": "FAIL: TestBroken\nbroken_test.go:42: want 3, got 4 \"quoted\"", "refusal": null, "annotations": []},
    "logprobs": null,
    "finish_reason": "stop"
  }],
  "usage": {"prompt_tokens": 1117, "completion_tokens": 46, "total_tokens": 1163},
  "service_tier": "default"
}`
	anthropic := `{
  "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
  "type": "message",
  "role": "assistant",
  "model": "claude-haiku-4-5-20251001",
  "content": [
    {"type": "thinking", "thinking": "The log is mostly passing tests.", "signature": "EqQB"},
    {"type": "text", "text": "FAIL: TestBroken\n"},
    {"type": "text", "text": "broken_test.go:42: want 3, got 4"}
  ],
  "stop_reason": "end_turn",
  "stop_sequence": null,
  "usage": {"input_tokens": 2095, "output_tokens": 503}
}`
	tests := []struct {
		name, dialect, body, want string
		err                       error
	}{
		{"openai", "openai_chat", openai, "FAIL: TestBroken\nbroken_test.go:42: want 3, got 4 \"quoted\"", nil},
		{"openai parts", "openai_chat", `{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"stop"}]}`, "ab", nil},
		{"openai empty content", "openai_chat", `{"choices":[{"message":{"role":"assistant","content":""},"finish_reason":"stop"}]}`, "", nil},
		{"openai truncated", "openai_chat", `{"choices":[{"message":{"content":"partial"},"finish_reason":"length"}]}`, "", ErrLLMTruncated},
		{"openai refusal", "openai_chat", `{"choices":[{"message":{"content":null,"refusal":"I can't."},"finish_reason":"stop"}]}`, "", nil},
		{"openai no choices", "openai_chat", `{"choices":[]}`, "", errNoAnswerContent},
		{"openai error", "openai_chat", `{"error":{"message":"model overloaded","type":"server_error"}}`, "", nil},
		{"anthropic", "anthropic", anthropic, "FAIL: TestBroken\nbroken_test.go:42: want 3, got 4", nil},
		{"anthropic truncated", "anthropic", `{"type":"message","content":[{"type":"text","text":"partial"}],"stop_reason":"max_tokens"}`, "", ErrLLMTruncated},
		{"anthropic error", "anthropic", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "", nil},
		{"anthropic no content", "anthropic", `{"type":"message"}`, "", errNoAnswerContent},
		{"not JSON", "anthropic", `<html>502</html>`, "", nil},
		{"unknown dialect", "gemini", `{}`, "", errUnknownDialect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LLMResponseText(tt.dialect, []byte(tt.body))
			wantErr := tt.err != nil || strings.Contains(tt.name, "error") || strings.Contains(tt.name, "refusal") || tt.name == "not JSON"
			if (err != nil) != wantErr || (tt.err != nil && !errors.Is(err, tt.err)) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
}

// The request helpers and the strategy fit together: a body rendered for a
// dialect, answered by a fake model in that dialect, gives a summary.
func TestLLMRoundTrip(t *testing.T) {
	for dialect, reply := range map[string]string{
		"openai_chat": `{"choices":[{"message":{"role":"assistant","content":%s},"finish_reason":"stop"}]}`,
		"anthropic":   `{"type":"message","content":[{"type":"text","text":%s}],"stop_reason":"end_turn"}`,
	} {
		c := completerFunc(func(_ context.Context, req LLMRequest) (string, error) {
			body, err := LLMRequestBody(dialect, req)
			if err != nil || !json.Valid(body) {
				return "", fmt.Errorf("bad body: %v", err)
			}
			return LLMResponseText(dialect, fmt.Appendf(nil, reply, jsonString(llmSummary)))
		})
		out, rep := LLM(LLMOptions{Model: "m", TargetBytes: 512}, c).Compress(llmLog(), Hint{})
		if !rep.Changed || !strings.HasSuffix(out, llmSummary+"\n") {
			t.Errorf("%s: %q", dialect, out)
		}
	}
}

func BenchmarkLLMOverhead(b *testing.B) {
	s := LLM(LLMOptions{Model: "m", TargetBytes: 512, Rate: -1}, answer(llmSummary))
	text := llmLog()
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s.Compress(text, Hint{ToolName: "Bash"})
	}
}
