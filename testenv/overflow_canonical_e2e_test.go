package testenv_test

// Issue 25 end to end, with the real Go SDKs and literal provider bodies:
// an overflow caused only by the requested output is fixed by lowering
// max_tokens (two upstream requests, the history byte-identical); an
// overflow no rung fixes reaches the client in its dialect's canonical
// form, which the SDK surfaces as the provider's overflow error; the
// opt-in fallback model is the last resort.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/testenv"
)

var recoveryModes = []extprocfilterv3.ProcessingMode_BodySendMode{
	extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, extprocfilterv3.ProcessingMode_BUFFERED,
}

func withStream(body []byte, stream bool) []byte {
	out, err := sjson.SetBytes(body, "stream", stream)
	if err != nil {
		panic(err)
	}
	return out
}

// sdkCall is one request through a real SDK client: the error it
// returned (nil on success), the answer's text, and the response headers.
type sdkCall struct {
	err    error
	text   string
	header http.Header
}

func anthropicCall(t *testing.T, base string, body []byte) sdkCall {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := anthropic.NewClient(anthropicoption.WithBaseURL(base), anthropicoption.WithAPIKey("sk-ant-tenant-25"), anthropicoption.WithMaxRetries(0))
	var resp *http.Response
	opts := []anthropicoption.RequestOption{anthropicoption.WithRequestBody("application/json", body), anthropicoption.WithResponseInto(&resp)}
	var c sdkCall
	if gjson.GetBytes(body, "stream").Bool() {
		st := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{}, opts...)
		var msg anthropic.Message
		for st.Next() {
			if err := msg.Accumulate(st.Current()); err != nil {
				c.err = err
			}
		}
		if st.Err() != nil {
			c.err = st.Err()
		}
		for _, b := range msg.Content {
			c.text += b.Text
		}
	} else {
		msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{}, opts...)
		c.err = err
		if msg != nil {
			for _, b := range msg.Content {
				c.text += b.Text
			}
		}
	}
	if resp != nil {
		c.header = resp.Header
	}
	var ae *anthropic.Error
	if errors.As(c.err, &ae) && ae.Response != nil {
		c.header = ae.Response.Header
	}
	return c
}

func openAICall(t *testing.T, base string, d wire.Dialect, body []byte) sdkCall {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-tenant-25"), option.WithMaxRetries(0))
	var resp *http.Response
	opts := []option.RequestOption{option.WithRequestBody("application/json", body), option.WithResponseInto(&resp)}
	var c sdkCall
	stream := gjson.GetBytes(body, "stream").Bool()
	switch {
	case d == wire.OpenAIResponses && stream:
		st := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{}, opts...)
		for st.Next() {
			ev := st.Current()
			if ev.Type == "response.failed" {
				c.err = errors.New("response.failed: " + string(ev.Response.Error.Code) + ": " + ev.Response.Error.Message)
			}
			c.text += ev.Delta
		}
		if st.Err() != nil {
			c.err = st.Err()
		}
	case d == wire.OpenAIResponses:
		r, err := client.Responses.New(ctx, responses.ResponseNewParams{}, opts...)
		c.err = err
		if r != nil {
			c.text = r.OutputText()
		}
	case stream:
		st := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{}, opts...)
		for st.Next() {
			for _, ch := range st.Current().Choices {
				c.text += ch.Delta.Content
			}
		}
		c.err = st.Err()
	default:
		r, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{}, opts...)
		c.err = err
		if r != nil && len(r.Choices) > 0 {
			c.text = r.Choices[0].Message.Content
		}
	}
	if resp != nil {
		c.header = resp.Header
	}
	var oe *openai.Error
	if errors.As(c.err, &oe) && oe.Response != nil {
		c.header = oe.Response.Header
	}
	return c
}

// TestOverflowMaxTokensRung: only the requested output does not fit. The
// provider says so in its own words; toolproc lowers max_tokens to what
// fits and replays: exactly 2 upstream requests, and the replay differs
// from the client's request in that one number.
func TestOverflowMaxTokensRung(t *testing.T) {
	const window = 20_000
	bodies := map[wire.Dialect][]byte{
		wire.Anthropic:  []byte(`{"model":"claude-sonnet-4-5","max_tokens":64000,"messages":[{"role":"user","content":"Summarise the release notes of the last three versions, one paragraph each."}]}`),
		wire.OpenAIChat: []byte(`{"model":"gpt-4o","max_completion_tokens":40000,"messages":[{"role":"user","content":"Summarise the release notes of the last three versions, one paragraph each."}]}`),
	}
	field := map[wire.Dialect]string{wire.Anthropic: "max_tokens", wire.OpenAIChat: "max_completion_tokens"}
	for _, mode := range recoveryModes {
		up := testenv.NewFakeUpstream()
		up.SetScript(testenv.OutputWindowModel{Window: window}.Script())
		r := harness{respMode: mode, seed: 25, upstream: up}.start(t)
		for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat} {
			for _, stream := range []bool{false, true} {
				name := mode.String() + "/" + string(d)
				if stream {
					name += "/stream"
				}
				t.Run(name, func(t *testing.T) {
					up.Reset()
					body := withStream(bodies[d], stream)
					var c sdkCall
					if d == wire.Anthropic {
						c = anthropicCall(t, r.proxyURL, body)
					} else {
						c = openAICall(t, r.proxyURL, d, body)
					}
					if c.err != nil || c.text == "" {
						t.Fatalf("the client got %v (text %q)", c.err, c.text)
					}
					reqs := up.Requests()
					if len(reqs) != 2 {
						t.Fatalf("upstream got %d requests, want 2", len(reqs))
					}
					if got := c.header.Get(extproc.RecoveryHeader); !stream && got != "max_tokens" {
						t.Errorf("%s = %q, want max_tokens", extproc.RecoveryHeader, got)
					}
					in := len(gjson.GetBytes(body, "messages").Raw) / 4
					if got := gjson.GetBytes(reqs[1].Body, field[d]).Int(); got != int64(window-in) {
						t.Errorf("replayed %s = %d, want %d", field[d], got, window-in)
					}
					// Not a byte of history changed: the replay is the
					// client's request with one number lowered.
					want, _ := sjson.SetBytes(body, field[d], window-in)
					if string(reqs[1].Body) != string(want) {
						t.Errorf("replay is not the client's body with %s lowered:\n%s\n%s", field[d], reqs[1].Body, want)
					}
				})
			}
		}
	}
}

// TestOverflowMaxTokensFloor: the rung never goes below
// recovery.min_output_tokens; the client then gets the canonical overflow
// after the one upstream request.
func TestOverflowMaxTokensFloor(t *testing.T) {
	up := testenv.NewFakeUpstream()
	up.SetScript(testenv.OutputWindowModel{Window: 20_000}.Script())
	r := harness{config: "profiles: {default: {recovery: {min_output_tokens: 25000}}}", respMode: recoveryModes[0], seed: 26, upstream: up}.start(t)
	c := anthropicCall(t, r.proxyURL, []byte(`{"model":"claude-sonnet-4-5","max_tokens":64000,"messages":[{"role":"user","content":"Summarise the release notes."}]}`))
	var ae *anthropic.Error
	if !errors.As(c.err, &ae) || ae.StatusCode != 400 || !strings.Contains(ae.Error(), "prompt is too long: ") {
		t.Fatalf("client got %v", c.err)
	}
	if n := len(up.Requests()); n != 1 {
		t.Errorf("upstream got %d requests, want 1", n)
	}
}

// nonCanonical are overflow answers as they reach a client behind a front
// proxy or a router.
var nonCanonical = []struct {
	name string
	form testenv.ErrorForm
}{
	{"html 413", testenv.HTML413},
	{"gzip html 413", testenv.HTML413Gzip},
	{"openrouter opaque 400", testenv.OpenRouterOpaque},
	{"bedrock ValidationException", testenv.BedrockValidation},
	{"gemini INVALID_ARGUMENT", testenv.GeminiInvalidArgument},
}

// checkCanonical asserts the SDK surfaced the canonical overflow of its
// dialect: anthropic-sdk-go an *anthropic.Error 400 invalid_request_error
// "prompt is too long: N tokens > M maximum" (what Claude Code compacts
// on); openai-go an *openai.Error 400 with code context_length_exceeded
// (what Codex and OpenCode act on). Neither Go SDK has an overflow error
// type of its own: the typed API error with the canonical code is it.
func checkCanonical(t *testing.T, d wire.Dialect, c sdkCall) {
	t.Helper()
	switch d {
	case wire.Anthropic:
		var ae *anthropic.Error
		if !errors.As(c.err, &ae) || ae.StatusCode != 400 || gjson.Get(ae.RawJSON(), "error.type").String() != "invalid_request_error" ||
			!strings.HasPrefix(gjson.Get(ae.RawJSON(), "error.message").String(), "prompt is too long: ") {
			t.Fatalf("anthropic client got %v", c.err)
		}
	default:
		var oe *openai.Error
		if !errors.As(c.err, &oe) || oe.StatusCode != 400 || oe.Code != "context_length_exceeded" || oe.Type != "invalid_request_error" {
			t.Fatalf("openai client got %v", c.err)
		}
	}
	if got := c.header.Get(extproc.RecoveryHeader); got != "exhausted" {
		t.Errorf("%s = %q, want exhausted", extproc.RecoveryHeader, got)
	}
}

// TestOverflowExhaustedCanonical: every non-canonical overflow no rung
// fixes reaches the Anthropic, OpenAI Chat and Responses clients in their
// canonical form, JSON and streaming requests, in both body modes.
func TestOverflowExhaustedCanonical(t *testing.T) {
	for _, mode := range recoveryModes {
		up := testenv.NewFakeUpstream()
		r := harness{config: noCompress, respMode: mode, seed: 27, upstream: up}.start(t)
		for _, f := range nonCanonical {
			for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat, wire.OpenAIResponses} {
				for _, stream := range []bool{false, true} {
					name := mode.String() + "/" + f.name + "/" + string(d)
					if stream {
						name += "/stream"
					}
					t.Run(name, func(t *testing.T) {
						up.Reset()
						up.SetScript(testenv.AlwaysError(f.form))
						_, body := overflowRequest(d, "gpt-4o", stream)
						body = withStream(body, stream)
						var c sdkCall
						if d == wire.Anthropic {
							c = anthropicCall(t, r.proxyURL, body)
						} else {
							c = openAICall(t, r.proxyURL, d, body)
						}
						checkCanonical(t, d, c)
						if n := len(up.Requests()); n < 2 || n > 4 {
							t.Errorf("upstream got %d requests, want the ladder's 2 to 4", n)
						}
					})
				}
			}
		}
	}
}

// TestOverflowCanonicalWithoutRecovery: with recovery off the overflow is
// still answered canonically, after one upstream request; with
// canonical_errors off the upstream's page passes as it came.
func TestOverflowCanonicalWithoutRecovery(t *testing.T) {
	for _, mode := range recoveryModes {
		up := testenv.NewFakeUpstream()
		up.SetScript(testenv.AlwaysError(testenv.HTML413))
		r := harness{config: "profiles: {default: {recovery: {enabled: false}}, raw: {recovery: {canonical_errors: false}}}", respMode: mode, seed: 28, upstream: up,
			routes: []testenv.RouteOverride{{Prefix: "/raw", InitialMetadata: map[string]string{extproc.ProfileMetadataKey: "raw"}}}}.start(t)
		_, body := overflowRequest(wire.Anthropic, "", false)
		checkCanonical(t, wire.Anthropic, anthropicCall(t, r.proxyURL, body))
		if n := len(up.Requests()); n != 1 {
			t.Errorf("%s: recovery off: upstream got %d requests, want 1", mode, n)
		}
		a := postRaw(t, r.proxyURL+"/raw/v1/messages", body, "x-api-key", "sk-ant-tenant-25")
		if a.status != 413 || string(a.body) != testenv.HTML413.Body {
			t.Errorf("%s: canonical_errors off: client got %d %.80q", mode, a.status, a.body)
		}
	}
}

// TestOverflowInStreamCanonical: a 200 stream that opens with an overflow
// in OpenRouter's words (not OpenAI's) ends, when no rung fixes it, with
// the Chat dialect's canonical error chunk, which openai-go surfaces, with
// the counts the upstream's own message gave.
func TestOverflowInStreamCanonical(t *testing.T) {
	for _, mode := range recoveryModes {
		up := testenv.NewFakeUpstream()
		up.SetScript(testenv.OverflowModel{Always: true, InStream: true, Error: testenv.OpenAIContextLength}.Script())
		r := harness{config: noCompress, respMode: mode, seed: 29, upstream: up}.start(t)
		_, body := overflowRequest(wire.OpenAIChat, "gpt-4", true)
		c := openAICall(t, r.proxyURL, wire.OpenAIChat, body)
		if c.err == nil || !strings.Contains(c.err.Error(), "context_length_exceeded") || !strings.Contains(c.err.Error(), "maximum context length is 32768 tokens. However, your messages resulted in 42832 tokens") {
			t.Errorf("%s: client got %v", mode, c.err)
		}
	}
}

// TestOverflowFallbackModel: when every rung failed, the configured
// larger-window model answers, on the same route.
func TestOverflowFallbackModel(t *testing.T) {
	for _, mode := range recoveryModes {
		up := testenv.NewFakeUpstream()
		up.SetScript(testenv.ModelWindowModel{Big: "claude-sonnet-4-5-1m", Error: testenv.HTML413}.Script())
		r := harness{config: "profiles: {default: {compress: {enabled: false}, clamp: {structural: false}, recovery: {fallback_models: {claude-sonnet-4: claude-sonnet-4-5-1m}}}}",
			respMode: mode, seed: 30, upstream: up}.start(t)
		for _, stream := range []bool{false, true} {
			up.Reset()
			_, body := overflowRequest(wire.Anthropic, "", stream)
			c := anthropicCall(t, r.proxyURL, body)
			if c.err != nil || c.text == "" {
				t.Fatalf("%s: client got %v", mode, c.err)
			}
			reqs := up.Requests()
			last := reqs[len(reqs)-1]
			if gjson.GetBytes(last.Body, "model").String() != "claude-sonnet-4-5-1m" || last.Path != reqs[0].Path {
				t.Errorf("%s: last request %s model %q", mode, last.Path, gjson.GetBytes(last.Body, "model").String())
			}
			if h := last.Header.Get(extproc.ReplayHeader); h != "overflow_fallback" {
				t.Errorf("%s: replay header %q", mode, h)
			}
			if got := c.header.Get(extproc.RecoveryHeader); !stream && got != "fallback" {
				t.Errorf("%s: %s = %q, want fallback", mode, extproc.RecoveryHeader, got)
			}
			// The first request, the rungs that could shrink it (at most
			// max_replays), then the fallback's own replay.
			if len(reqs) < 2 || len(reqs) > 5 {
				t.Errorf("%s: upstream got %d requests, want 2 to 5", mode, len(reqs))
			}
		}
	}
}

// TestOverflowInStreamCanonicalAnthropic: an Anthropic stream that opens
// with Bedrock's words for an overflow (as a router relays it) ends, when
// no rung fixes it, with Anthropic's own error event, which
// anthropic-sdk-go surfaces with "prompt is too long".
func TestOverflowInStreamCanonicalAnthropic(t *testing.T) {
	relayed := &testenv.ScriptedResponse{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Chunks: [][]byte{[]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Input is too long for requested model.\"}}\n\n")}}
	for _, mode := range recoveryModes {
		up := testenv.NewFakeUpstream()
		up.SetScript(func(testenv.RecordedRequest) *testenv.ScriptedResponse { return relayed })
		r := harness{config: noCompress, respMode: mode, seed: 33, upstream: up}.start(t)
		_, body := overflowRequest(wire.Anthropic, "", true)
		c := anthropicCall(t, r.proxyURL, body)
		if c.err == nil || !strings.Contains(c.err.Error(), "prompt is too long: ") {
			t.Errorf("%s: client got %v", mode, c.err)
		}
		if n := len(up.Requests()); n < 2 {
			t.Errorf("%s: upstream got %d requests; the ladder should have tried", mode, n)
		}
	}
}

// TestOverflowExhaustedCanonicalGeminiBedrock: Gemini and Bedrock Converse
// clients (raw HTTP: no Go SDK of theirs in this repository) get their
// provider's overflow form too.
func TestOverflowExhaustedCanonicalGeminiBedrock(t *testing.T) {
	for _, mode := range recoveryModes {
		up := testenv.NewFakeUpstream()
		r := harness{config: noCompress, respMode: mode, seed: 34, upstream: up}.start(t)
		for _, f := range nonCanonical[:3] { // the HTML 413s and OpenRouter's opaque 400
			up.Reset()
			up.SetScript(testenv.AlwaysError(f.form))
			path, body := overflowRequest(wire.Gemini, "", false)
			a := postRaw(t, r.proxyURL+path, body, "x-goog-api-key", "k-25")
			if a.status != 400 || gjson.GetBytes(a.body, "error.status").String() != "INVALID_ARGUMENT" ||
				!strings.Contains(gjson.GetBytes(a.body, "error.message").String(), "exceeds the maximum number of tokens allowed") ||
				a.header.Get(extproc.RecoveryHeader) != "exhausted" {
				t.Errorf("%s/%s/gemini: %d %s", mode, f.name, a.status, a.body)
			}
			up.Reset()
			path, body = overflowRequest(wire.Bedrock, "", false)
			a = postRaw(t, r.proxyURL+path, body, "authorization", "Bearer bedrock-api-key-25")
			if a.status != 400 || !strings.HasPrefix(a.header.Get("x-amzn-errortype"), "ValidationException") ||
				gjson.GetBytes(a.body, "message").String() != "Input is too long for requested model." ||
				a.header.Get(extproc.RecoveryHeader) != "exhausted" {
				t.Errorf("%s/%s/bedrock: %d %q %s", mode, f.name, a.status, a.header.Get("x-amzn-errortype"), a.body)
			}
		}
	}
}

// TestOverflowMaxTokensInStream: OpenRouter opens a 200 stream with the
// overflow as its first chunk, blaming the output; the gate's ladder
// lowers max_tokens alone and the client reads the replay's stream.
func TestOverflowMaxTokensInStream(t *testing.T) {
	const window = 20_000
	body := []byte(`{"model":"deepseek/deepseek-chat","stream":true,"max_tokens":40000,"messages":[{"role":"user","content":"Summarise the release notes of the last three versions, one paragraph each."}]}`)
	in := len(gjson.GetBytes(body, "messages").Raw) / 4
	script := func(req testenv.RecordedRequest) *testenv.ScriptedResponse {
		out := int(gjson.GetBytes(req.Body, "max_tokens").Int())
		if in+out <= window {
			return nil
		}
		msg := fmt.Sprintf("This endpoint's maximum context length is %d tokens. However, you requested about %d tokens (%d of text input, %d in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.", window, in+out, in, out)
		chunk := `data: {"id":"gen-1","object":"chat.completion.chunk","created":1700000000,"model":"deepseek/deepseek-chat","error":{"code":400,"message":` + string(wire.QuoteString(msg)) + `},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}` + "\n\n"
		return &testenv.ScriptedResponse{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Chunks: [][]byte{[]byte(": OPENROUTER PROCESSING\n\n"), []byte(chunk), []byte("data: [DONE]\n\n")}}
	}
	for _, mode := range recoveryModes {
		up := testenv.NewFakeUpstream()
		up.SetScript(script)
		r := harness{respMode: mode, seed: 35, upstream: up}.start(t)
		c := openAICall(t, r.proxyURL, wire.OpenAIChat, body)
		if c.err != nil || c.text == "" {
			t.Fatalf("%s: client got %v (text %q)", mode, c.err, c.text)
		}
		reqs := up.Requests()
		want, _ := sjson.SetBytes(body, "max_tokens", window-in)
		if len(reqs) != 2 || string(reqs[1].Body) != string(want) {
			t.Errorf("%s: %d upstream requests; replay %s", mode, len(reqs), reqs[len(reqs)-1].Body)
		}
	}
}
