package testenv_test

// Stream conformance with the real Go SDKs (issue 4): every scenario in
// testdata/streams plays a bad upstream; what toolproc delivers through the
// stand-in must assemble, in openai-go's ChatCompletionAccumulator and
// anthropic-sdk-go's Message.Accumulate, into the expected text and tool
// calls, in every response body mode.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolproc/toolproc/testenv"
)

// scenarioConfig is toolproc's config for the conformance runs: the default
// profile repairs streams; "xml" also parses <invoke> text.
const scenarioConfig = `profiles: {xml: {stream: {xml_tool_calls: true}}}`

var responseModes = []extprocfilterv3.ProcessingMode_BodySendMode{
	extprocfilterv3.ProcessingMode_STREAMED,
	extprocfilterv3.ProcessingMode_BUFFERED,
	extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED,
}

// newScenarioEnv starts toolproc, the stand-in (routing /xml to the xml
// profile) and an upstream playing the scenarios; it returns the base URL.
func newScenarioEnv(t *testing.T, respMode extprocfilterv3.ProcessingMode_BodySendMode, scenarios []testenv.Scenario) string {
	t.Helper()
	up := testenv.NewFakeUpstream()
	up.SetScript(testenv.ScenarioScript(scenarios))
	return newHandlerEnv(t, respMode, up)
}

// newHandlerEnv is newScenarioEnv with any upstream handler.
func newHandlerEnv(t *testing.T, respMode extprocfilterv3.ProcessingMode_BodySendMode, upstream http.Handler) string {
	t.Helper()
	h := harness{config: scenarioConfig, respMode: respMode, routes: []testenv.RouteOverride{xmlRoute}, seed: int64(respMode), upstream: upstream}
	return h.start(t).proxyURL
}

func TestSDKClients(t *testing.T) {
	scenarios, err := testenv.LoadScenarios("testdata/streams")
	if err != nil {
		t.Fatal(err)
	}
	if len(scenarios) == 0 {
		t.Fatal("no scenarios in testdata/streams")
	}
	for _, mode := range responseModes {
		t.Run(mode.String(), func(t *testing.T) {
			base := newScenarioEnv(t, mode, scenarios)
			for _, sc := range scenarios {
				t.Run(sc.Name, func(t *testing.T) {
					url := base
					if sc.XML {
						url += testenv.XMLPrefix
					}
					ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
					defer cancel()
					var got assembled
					switch sc.Dialect {
					case "openai_chat":
						got = runOpenAIGo(ctx, url, sc)
					case "anthropic":
						got = runAnthropicGo(ctx, url, sc)
					case "openai_responses":
						got = runResponsesGo(ctx, url, sc)
					default:
						t.Skipf("dialect %s has no Go SDK run here", sc.Dialect)
					}
					if ctx.Err() != nil {
						t.Fatal("client hung: the stream never ended")
					}
					checkAssembled(t, sc.Expect, got)
				})
			}
		})
	}
}

// assembled is what a client ended up with.
type assembled struct {
	text   string
	calls  []call
	finish string
	err    error
}

type call struct {
	id, name, args string
}

func runOpenAIGo(ctx context.Context, base string, sc testenv.Scenario) assembled {
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-test-0001"),
		option.WithHeader(testenv.ScenarioHeader, sc.Name), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("go")},
	}
	if sc.IncludeUsage {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	var cc openai.ChatCompletion
	var res assembled
	if sc.ClientStream {
		st := client.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		for st.Next() {
			if !acc.AddChunk(st.Current()) {
				res.err = fmt.Errorf("accumulator refused a chunk (id changed?)")
			}
		}
		if err := st.Err(); err != nil {
			res.err = err
		}
		cc = acc.ChatCompletion
	} else {
		c, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return assembled{err: err}
		}
		cc = *c
	}
	if len(cc.Choices) > 0 {
		ch := cc.Choices[0]
		res.text = ch.Message.Content
		res.finish = string(ch.FinishReason)
		for _, tc := range ch.Message.ToolCalls {
			res.calls = append(res.calls, call{id: tc.ID, name: tc.Function.Name, args: tc.Function.Arguments})
		}
	}
	return res
}

// runResponsesGo assembles a Responses stream the way VS Code does
// (platform.openai.com/docs/api-reference/responses-streaming): calls are taken from output_item.done, text from
// output_text deltas, the status from the terminal event.
func runResponsesGo(ctx context.Context, base string, sc testenv.Scenario) assembled {
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-test-0001"),
		option.WithHeader(testenv.ScenarioHeader, sc.Name), option.WithMaxRetries(0))
	st := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model: "gpt-5",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("go")},
	})
	var res assembled
	var text strings.Builder
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				res.calls = append(res.calls, call{id: ev.Item.CallID, name: ev.Item.Name, args: ev.Item.Arguments.OfString})
			}
		case "response.completed", "response.incomplete":
			res.finish = string(ev.Response.Status)
		case "response.failed", "error":
			res.finish = string(ev.Response.Status)
			res.err = fmt.Errorf("stream reported %s", ev.Type)
		}
	}
	if err := st.Err(); err != nil && res.err == nil {
		res.err = err
	}
	res.text = text.String()
	return res
}

func runAnthropicGo(ctx context.Context, base string, sc testenv.Scenario) assembled {
	client := anthropic.NewClient(anthropicoption.WithBaseURL(base), anthropicoption.WithAPIKey("sk-test-0001"),
		anthropicoption.WithHeader(testenv.ScenarioHeader, sc.Name), anthropicoption.WithMaxRetries(0))
	st := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("go"))},
	})
	var msg anthropic.Message
	var res assembled
	for st.Next() {
		if err := msg.Accumulate(st.Current()); err != nil {
			res.err = fmt.Errorf("accumulate: %w", err)
		}
	}
	if err := st.Err(); err != nil && res.err == nil {
		res.err = err
	}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			res.calls = append(res.calls, call{id: b.ID, name: b.Name, args: string(b.Input)})
		}
	}
	res.text = text.String()
	res.finish = string(msg.StopReason)
	return res
}

func checkAssembled(t *testing.T, want testenv.ScenarioExpect, got assembled) {
	t.Helper()
	if want.StreamError {
		if got.err == nil {
			t.Errorf("want the client to see an error, got none (text %q)", got.text)
		}
	} else if got.err != nil {
		t.Fatalf("client error: %v", got.err)
	}
	if got.text != want.Text {
		t.Errorf("text = %q, want %q", got.text, want.Text)
	}
	if want.StreamError {
		// After a stream error SDK users get Err() and drop the partial
		// message; calls accumulated before it are never run.
		return
	}
	if len(got.calls) != len(want.ToolCalls) {
		t.Fatalf("tool calls = %+v, want %d", got.calls, len(want.ToolCalls))
	}
	for i, w := range want.ToolCalls {
		g := got.calls[i]
		if g.name != w.Name || g.id == "" || (w.ID != "" && g.id != w.ID) {
			t.Errorf("call %d = %+v, want name %q id %q", i, g, w.Name, w.ID)
		}
		var ga, wa any
		if err := json.Unmarshal([]byte(g.args), &ga); err != nil {
			t.Errorf("call %d arguments %q are not JSON: %v", i, g.args, err)
			continue
		}
		if err := json.Unmarshal(w.Arguments, &wa); err != nil {
			t.Fatalf("scenario arguments: %v", err)
		}
		if !reflect.DeepEqual(ga, wa) {
			t.Errorf("call %d arguments = %s, want %s", i, g.args, w.Arguments)
		}
	}
	if want.FinishReason != "" && !want.StreamError && got.finish != want.FinishReason {
		t.Errorf("finish = %q, want %q", got.finish, want.FinishReason)
	}
}
