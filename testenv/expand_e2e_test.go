package testenv_test

// Issue 5 end to end: a large tool result is compressed with a shadow
// reference, the scripted model calls expand_context for the id it sees,
// toolproc answers the call from its store, replays the continuation
// through the stand-in's replay listener, and the client (a real SDK) gets
// the model's final answer, quoting text only the original had, without
// ever seeing expand_context.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
	"github.com/toolproc/toolproc/testenv"
)

// needle is on a passing-test line in the middle of a long log: structural
// compression drops it, so only the original has it.
const needle = "build-id=NEEDLE-7f3a9c"

// pytestLog is a 3,000-test pytest run with one failure; ~190 KB.
func pytestLog() string {
	var b strings.Builder
	b.WriteString("============================= test session starts ==============================\n")
	b.WriteString("platform linux -- Python 3.12.3, pytest-8.2.0, pluggy-1.5.0\ncollected 3000 items\n\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "tests/test_module_%02d.py::test_case_%04d PASSED", i%40, i)
		if i == 1500 {
			b.WriteString("  # " + needle)
		}
		fmt.Fprintf(&b, "                    [%3d%%]\n", i*100/3000)
	}
	b.WriteString("tests/test_api.py::test_login FAILED\n\n=================================== FAILURES ===================================\n")
	b.WriteString("________________________________ test_login _________________________________\n\n")
	b.WriteString("    def test_login():\n>       assert client.login('u', 'p') == 200\nE       assert 401 == 200\n\ntests/test_api.py:42: AssertionError\n")
	b.WriteString("=========================== short test summary info ============================\n")
	b.WriteString("FAILED tests/test_api.py::test_login - assert 401 == 200\n")
	b.WriteString("======================= 1 failed, 3000 passed in 12.34s ========================\n")
	return b.String()
}

func openAIToolRequest(stream bool, result string) []byte {
	return []byte(fmt.Sprintf(`{"model":"gpt-4o","stream":%t,"messages":[`+
		`{"role":"user","content":"Run the tests and tell me the build id."},`+
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_run1","type":"function","function":{"name":"run_tests","arguments":"{\"cmd\":\"pytest -v\"}"}}]},`+
		`{"role":"tool","tool_call_id":"call_run1","content":%s}],`+
		`"tools":[{"type":"function","function":{"name":"run_tests","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}}]}`,
		stream, wire.QuoteString(result)))
}

func anthropicToolRequest(stream bool, result string) []byte {
	return []byte(fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":%t,"messages":[`+
		`{"role":"user","content":"Run the tests and tell me the build id."},`+
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_run1","name":"run_tests","input":{"cmd":"pytest -v"}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_run1","content":%s}]}],`+
		`"tools":[{"name":"run_tests","input_schema":{"type":"object","properties":{"cmd":{"type":"string"}}}}]}`,
		stream, wire.QuoteString(result)))
}

// recorder keeps every response body byte the client received.
type recorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &teeBody{rc: resp.Body, r: r}
	return resp, nil
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

type teeBody struct {
	rc io.ReadCloser
	r  *recorder
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.r.mu.Lock()
	t.r.buf.Write(p[:n])
	t.r.mu.Unlock()
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

// expandEnv starts the environment with the scripted model.
func expandEnv(t *testing.T, respMode extprocfilterv3.ProcessingMode_BodySendMode, model testenv.ExpandModel, config string) (*testenv.FakeUpstream, running) {
	t.Helper()
	up := testenv.NewFakeUpstream()
	up.SetScript(model.Script())
	r := harness{config: config, respMode: respMode, seed: int64(respMode) + 7, upstream: up}.start(t)
	return up, r
}

// answer is what a client assembled.
type answer struct {
	text, finish string
	calls        []string
	raw          string
}

func openAIClientCall(t *testing.T, base string, stream bool, body []byte) answer {
	t.Helper()
	rec := &recorder{}
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-tenant-a"),
		option.WithMaxRetries(0), option.WithHTTPClient(&http.Client{Transport: rec}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var cc openai.ChatCompletion
	if stream {
		st := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{},
			option.WithRequestBody("application/json", body))
		var acc openai.ChatCompletionAccumulator
		for st.Next() {
			if !acc.AddChunk(st.Current()) {
				t.Fatal("accumulator refused a chunk")
			}
		}
		if err := st.Err(); err != nil {
			t.Fatalf("stream: %v", err)
		}
		cc = acc.ChatCompletion
	} else {
		c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{},
			option.WithRequestBody("application/json", body))
		if err != nil {
			t.Fatal(err)
		}
		cc = *c
	}
	a := answer{raw: rec.String()}
	if len(cc.Choices) > 0 {
		a.text, a.finish = cc.Choices[0].Message.Content, string(cc.Choices[0].FinishReason)
		for _, tc := range cc.Choices[0].Message.ToolCalls {
			a.calls = append(a.calls, tc.Function.Name)
		}
	}
	return a
}

func anthropicClientCall(t *testing.T, base, apiKey string, stream bool, body []byte) answer {
	t.Helper()
	rec := &recorder{}
	client := anthropic.NewClient(anthropicoption.WithBaseURL(base), anthropicoption.WithAPIKey(apiKey),
		anthropicoption.WithMaxRetries(0), anthropicoption.WithHTTPClient(&http.Client{Transport: rec}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var msg anthropic.Message
	if stream {
		st := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{},
			anthropicoption.WithRequestBody("application/json", body))
		for st.Next() {
			if err := msg.Accumulate(st.Current()); err != nil {
				t.Fatalf("accumulate: %v", err)
			}
		}
		if err := st.Err(); err != nil {
			t.Fatalf("stream: %v", err)
		}
	} else {
		m, err := client.Messages.New(ctx, anthropic.MessageNewParams{},
			anthropicoption.WithRequestBody("application/json", body))
		if err != nil {
			t.Fatal(err)
		}
		msg = *m
	}
	a := answer{raw: rec.String(), finish: string(msg.StopReason)}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			a.text += b.Text
		case "tool_use":
			a.calls = append(a.calls, b.Name)
		}
	}
	return a
}

// expandModes are the response modes expansions are answered in; STREAMED
// works too and is covered by TestExpandStreamedMode.
var expandModes = []extprocfilterv3.ProcessingMode_BodySendMode{
	extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED,
	extprocfilterv3.ProcessingMode_BUFFERED,
	extprocfilterv3.ProcessingMode_STREAMED,
}

func TestExpandContextEndToEnd(t *testing.T) {
	log := pytestLog()
	model := testenv.ExpandModel{Needle: needle, Preamble: "Let me read the full log. "}
	for _, mode := range expandModes {
		t.Run(mode.String(), func(t *testing.T) {
			up, r := expandEnv(t, mode, model, "")
			for _, tc := range []struct {
				name   string
				stream bool
				dial   wire.Dialect
			}{
				{"openai_chat/json", false, wire.OpenAIChat},
				{"openai_chat/sse", true, wire.OpenAIChat},
				{"anthropic/json", false, wire.Anthropic},
				{"anthropic/sse", true, wire.Anthropic},
			} {
				t.Run(tc.name, func(t *testing.T) {
					up.Reset()
					var a answer
					if tc.dial == wire.OpenAIChat {
						a = openAIClientCall(t, r.proxyURL, tc.stream, openAIToolRequest(tc.stream, log))
					} else {
						a = anthropicClientCall(t, r.proxyURL, "sk-ant-tenant-a", tc.stream, anthropicToolRequest(tc.stream, log))
					}
					if strings.Contains(a.raw, "expand_context") || len(a.calls) > 0 {
						t.Fatalf("client saw a tool call or expand_context: calls %v\n%s", a.calls, a.raw)
					}
					if !strings.Contains(a.text, testenv.ExpandIntro) || !strings.Contains(a.text, needle) {
						t.Fatalf("final text %q does not quote the original", a.text)
					}
					if tc.stream && !strings.HasPrefix(a.text, model.Preamble) {
						t.Errorf("streamed text %q lost the first turn's preamble", a.text)
					}
					if a.finish != "stop" && a.finish != "end_turn" {
						t.Errorf("finish %q", a.finish)
					}
					reqs := up.Requests()
					if len(reqs) != 2 {
						t.Fatalf("upstream got %d requests, want 2 (the request and one continuation)", len(reqs))
					}
					first, cont := reqs[0], reqs[1]
					if strings.Contains(string(first.Body), needle) {
						t.Error("the first upstream request still carries the needle: not compressed")
					}
					if !strings.Contains(string(first.Body), `"expand_context"`) {
						t.Error("expand_context tool not injected")
					}
					if first.Header.Get(extproc.ReplayHeader) != "" || cont.Header.Get(extproc.ReplayHeader) != "expand_context" {
						t.Errorf("replay header: first %q, continuation %q", first.Header.Get(extproc.ReplayHeader), cont.Header.Get(extproc.ReplayHeader))
					}
					if !strings.Contains(string(cont.Body), needle) {
						t.Error("the continuation does not carry the original")
					}
					msgs := gjson.GetBytes(first.Body, "messages").Raw
					if !gjson.ValidBytes(cont.Body) || !bytes.Contains(cont.Body, []byte(msgs[:len(msgs)-1])) {
						t.Error("continuation is not the rewritten request extended")
					}
					if err := wiretest.CheckPairing(tc.dial, cont.Body); err != nil {
						t.Errorf("continuation pairing: %v", err)
					}
				})
			}
		})
	}
}

func TestExpandContextLoopLimit(t *testing.T) {
	model := testenv.ExpandModel{Needle: needle, Always: true}
	for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{
		extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, extprocfilterv3.ProcessingMode_BUFFERED,
	} {
		t.Run(mode.String(), func(t *testing.T) {
			up, r := expandEnv(t, mode, model, `profiles: {default: {expand: {max_loops: 3}}}`)
			for _, stream := range []bool{false, true} {
				up.Reset()
				a := openAIClientCall(t, r.proxyURL, stream, openAIToolRequest(stream, pytestLog()))
				if strings.Contains(a.raw, "expand_context") || len(a.calls) > 0 {
					t.Fatalf("stream=%v: client saw expand_context: %s", stream, a.raw)
				}
				if got := len(up.Requests()); got != 1+3 {
					t.Errorf("stream=%v: upstream got %d requests, want 4 (max_loops 3)", stream, got)
				}
				if a.finish != "stop" {
					t.Errorf("stream=%v: finish %q, want stop", stream, a.finish)
				}
			}
		})
	}
}

// rawPost posts body to base+path with one credential header and returns
// the status and every byte of the answer.
func rawPost(t *testing.T, base, path string, header http.Header, body []byte) (int, []byte) {
	t.Helper()
	var kv []string
	for k, vs := range header {
		for _, v := range vs {
			kv = append(kv, k, v)
		}
	}
	a := postRaw(t, base+path, body, kv...)
	return a.status, a.body
}

// responsesGoStream reads a Responses stream with openai-go the way
// runResponsesGo does and returns the text and the calls it assembled.
func responsesGoStream(t *testing.T, base string, body []byte) (text string, calls []string, status string) {
	t.Helper()
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-tenant-a"), option.WithMaxRetries(0))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{}, option.WithRequestBody("application/json", body))
	var b strings.Builder
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "response.output_text.delta":
			b.WriteString(ev.Delta)
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				calls = append(calls, ev.Item.Name)
			}
		case "response.completed", "response.incomplete", "response.failed":
			status = string(ev.Response.Status)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatalf("responses stream: %v", err)
	}
	return b.String(), calls, status
}

func TestExpandContextOtherDialects(t *testing.T) {
	log := pytestLog()
	model := testenv.ExpandModel{Needle: needle, Preamble: "Let me read the full log. "}
	bearer := http.Header{"Authorization": {"Bearer sk-tenant-a"}}
	goog := http.Header{"X-Goog-Api-Key": {"goog-tenant-a"}}
	responsesJSON := bytes.Replace(wiretest.Request(wire.OpenAIResponses, log), []byte(`"stream":true`), []byte(`"stream":false`), 1)
	geminiCached := bytes.Replace(wiretest.Request(wire.Gemini, log), []byte(`{"systemInstruction"`),
		[]byte(`{"cachedContent":"cachedContents/abc123","systemInstruction"`), 1)
	for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{
		extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, extprocfilterv3.ProcessingMode_BUFFERED,
	} {
		t.Run(mode.String(), func(t *testing.T) {
			up, r := expandEnv(t, mode, model, "")
			for _, tc := range []struct {
				name   string
				dial   wire.Dialect
				path   string
				header http.Header
				body   []byte
				sdk    bool // also read it with openai-go's Responses stream
			}{
				{"responses/json", wire.OpenAIResponses, wiretest.Path(wire.OpenAIResponses), bearer, responsesJSON, false},
				{"responses/sse", wire.OpenAIResponses, wiretest.Path(wire.OpenAIResponses), bearer, wiretest.Request(wire.OpenAIResponses, log), true},
				{"gemini/json", wire.Gemini, wiretest.Path(wire.Gemini), goog, wiretest.Request(wire.Gemini, log), false},
				{"bedrock/json", wire.Bedrock, wiretest.Path(wire.Bedrock), bearer, wiretest.Request(wire.Bedrock, log), false},
			} {
				t.Run(tc.name, func(t *testing.T) {
					up.Reset()
					status, raw := rawPost(t, r.proxyURL, tc.path, tc.header, tc.body)
					if status != http.StatusOK {
						t.Fatalf("status %d: %.2000s", status, raw)
					}
					if bytes.Contains(raw, []byte("expand_context")) {
						t.Fatalf("client saw expand_context:\n%s", raw)
					}
					if !bytes.Contains(raw, []byte(needle)) {
						t.Fatalf("the answer does not quote the original:\n%s", raw)
					}
					if !bytes.Contains(raw, []byte(testenv.ExpandIntro)) {
						t.Errorf("the answer lacks the continuation's intro:\n%s", raw)
					}
					reqs := up.Requests()
					if len(reqs) != 2 {
						t.Fatalf("upstream got %d requests, want 2 (the request and one continuation)", len(reqs))
					}
					first, cont := reqs[0], reqs[1]
					if bytes.Contains(first.Body, []byte(needle)) {
						t.Error("the first upstream request still carries the needle: not compressed")
					}
					if !bytes.Contains(first.Body, []byte("toolproc shadow_id=")) {
						t.Error("the first upstream request has no shadow reference")
					}
					if !bytes.Contains(first.Body, []byte(`"expand_context"`)) {
						t.Error("expand_context tool not injected")
					}
					if first.Header.Get(extproc.ReplayHeader) != "" || cont.Header.Get(extproc.ReplayHeader) != "expand_context" {
						t.Errorf("replay header: first %q, continuation %q", first.Header.Get(extproc.ReplayHeader), cont.Header.Get(extproc.ReplayHeader))
					}
					if !bytes.Contains(cont.Body, []byte(needle)) {
						t.Error("the continuation does not carry the original")
					}
					if err := wiretest.CheckPairing(tc.dial, cont.Body); err != nil {
						t.Errorf("continuation pairing: %v", err)
					}
					if cont.Path != first.Path {
						// Bedrock model ids carry an encoded ':' (%3A): the
						// replay must not encode the path a second time.
						t.Errorf("continuation path %q, request path %q", cont.Path, first.Path)
					}
					if !tc.sdk {
						return
					}
					up.Reset()
					text, calls, st := responsesGoStream(t, r.proxyURL, tc.body)
					if len(calls) > 0 {
						t.Errorf("openai-go saw calls %v", calls)
					}
					if !strings.HasPrefix(text, model.Preamble) || !strings.Contains(text, testenv.ExpandIntro) || !strings.Contains(text, needle) {
						t.Errorf("openai-go text %q", text)
					}
					if st != "completed" {
						t.Errorf("openai-go status %q", st)
					}
					if n := len(up.Requests()); n != 2 {
						t.Errorf("openai-go run: upstream got %d requests, want 2", n)
					}
				})
			}
			// The documented limits: no reference where the call could not
			// be answered.
			for _, tc := range []struct {
				name, path string
				body       []byte
			}{
				{"gemini/cachedContent", wiretest.Path(wire.Gemini), geminiCached},
				{"gemini/stream", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", wiretest.Request(wire.Gemini, log)},
			} {
				t.Run(tc.name, func(t *testing.T) {
					up.Reset()
					status, raw := rawPost(t, r.proxyURL, tc.path, goog, tc.body)
					if status != http.StatusOK {
						t.Fatalf("status %d: %.2000s", status, raw)
					}
					if bytes.Contains(raw, []byte("expand_context")) {
						t.Errorf("client saw expand_context:\n%s", raw)
					}
					reqs := up.Requests()
					if len(reqs) != 1 {
						t.Fatalf("upstream got %d requests, want 1", len(reqs))
					}
					if bytes.Contains(reqs[0].Body, []byte("toolproc shadow_id")) {
						t.Error("the request got a shadow reference the model could not expand")
					}
					if reqs[0].Header.Get(extproc.ReplayHeader) != "" {
						t.Error("the request is marked a replay")
					}
				})
			}
		})
	}
}

// TestExpandExtendsMessageTimeout: outside FULL_DUPLEX_STREAMED a message
// timer runs while toolproc replays the continuation; toolproc extends it
// with override_message_timeout (up to max_message_timeout), so a
// continuation slower than message_timeout still reaches the client.
func TestExpandExtendsMessageTimeout(t *testing.T) {
	model := testenv.ExpandModel{Needle: needle}
	script := model.Script()
	up := testenv.NewFakeUpstream()
	up.SetScript(func(r testenv.RecordedRequest) *testenv.ScriptedResponse {
		if r.Header.Get(extproc.ReplayHeader) != "" {
			time.Sleep(3500 * time.Millisecond) // well past message_timeout
		}
		return script(r)
	})
	// The timer (3 s) leaves room for the request rewrite under the race
	// detector on a busy machine; the continuation takes longer than it.
	for _, tc := range []struct {
		mode   extprocfilterv3.ProcessingMode_BodySendMode
		stream bool
	}{
		{extprocfilterv3.ProcessingMode_BUFFERED, false},
		{extprocfilterv3.ProcessingMode_STREAMED, true},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			r := harness{respMode: tc.mode, seed: 3, upstream: up, messageTimeout: 3 * time.Second}.start(t)
			a := anthropicClientCall(t, r.proxyURL, "sk-ant-tenant-a", tc.stream, anthropicToolRequest(tc.stream, pytestLog()))
			if !strings.Contains(a.text, needle) {
				t.Fatalf("continuation lost to the message timeout: %q", a.text)
			}
		})
	}
}

// TestLLMStrategyThroughReplayListener: with strategy llm the summary is
// asked of a model through the replay listener (x-toolproc-replay:
// compress, the caller's credentials forwarded), and the request the
// provider gets carries the summary under a shadow reference.
func TestLLMStrategyThroughReplayListener(t *testing.T) {
	const summary = "SUMMARY: 3000 tests passed, tests/test_api.py::test_login FAILED (assert 401 == 200)."
	up := testenv.NewFakeUpstream()
	var mu sync.Mutex
	var summariser []testenv.RecordedRequest
	up.SetScript(func(r testenv.RecordedRequest) *testenv.ScriptedResponse {
		if r.Header.Get(extproc.ReplayHeader) != "compress" {
			return nil
		}
		mu.Lock()
		summariser = append(summariser, r)
		mu.Unlock()
		return &testenv.ScriptedResponse{Status: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"id":"c1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":` +
				string(wire.QuoteString(summary)) + `},"finish_reason":"stop"}]}`)}
	})
	r := harness{config: `profiles: {default: {compress: {strategy: llm, llm: {model: gpt-4o-mini, forward_credentials: true}}}}`,
		respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, upstream: up}.start(t)
	a := openAIClientCall(t, r.proxyURL, false, openAIToolRequest(false, pytestLog()))
	if a.text == "" {
		t.Fatal("no answer")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(summariser) != 1 || summariser[0].Path != "/v1/chat/completions" ||
		summariser[0].Header.Get("Authorization") != "Bearer sk-tenant-a" ||
		gjson.GetBytes(summariser[0].Body, "model").String() != "gpt-4o-mini" {
		t.Fatalf("summariser requests: %d", len(summariser))
	}
	var main testenv.RecordedRequest
	for _, req := range up.Requests() {
		if req.Header.Get(extproc.ReplayHeader) == "" {
			main = req
		}
	}
	result := gjson.GetBytes(main.Body, "messages.2.content").String()
	if !strings.HasPrefix(result, "[toolproc shadow_id=sh_") || !strings.Contains(result, summary) {
		t.Fatalf("the provider did not get the summary under a reference: %.300q", result)
	}

	// Review finding 5: an Anthropic caller's key must never go to the
	// OpenAI summariser's route, forward_credentials or not.
	summariser = nil
	mu.Unlock()
	b := anthropicClientCall(t, r.proxyURL, "sk-ant-api03-VICTIM", false, anthropicToolRequest(false, pytestLog()))
	mu.Lock()
	if b.text == "" || len(summariser) != 1 {
		t.Fatalf("anthropic caller: answer %q, %d summariser requests", b.text, len(summariser))
	}
	for k, v := range summariser[0].Header {
		if strings.Contains(strings.Join(v, ","), "VICTIM") {
			t.Fatalf("the Anthropic key reached the OpenAI route in %s", k)
		}
	}
}
