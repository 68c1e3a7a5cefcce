package testenv_test

import (
	"context"
	"encoding/json"
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
	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/testenv"
)

const textOnlyConfig = `profiles: {default: {dialects: [openai_chat, anthropic], shape: {mode: text_only}, stream: {normalize: true, xml_tool_calls: true}}}`

// runTool plays the client's tools.
func runTool(name, args string) string {
	a := gjson.Parse(args)
	switch name {
	case "get_weather":
		return "sunny 21C in " + a.Get("city").String()
	case "get_time":
		return "14:05 in " + a.Get("zone").String()
	}
	return "unknown tool " + name
}

// TestTextOnlyEndToEnd: an agent with tools, through the stand-in and
// toolproc (shape: text_only), against an upstream that answers 400 to any
// request with tools, tool calls, tool or system messages and writes its
// calls as <invoke> text. openai-go runs the tool loop, JSON and SSE: it
// gets real, indexed tool calls (two in one answer on the second turn),
// runs them, sends the results back as role tool, and finishes with the
// answer built from every result.
func TestTextOnlyEndToEnd(t *testing.T) {
	for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, extprocfilterv3.ProcessingMode_BUFFERED} {
		up := testenv.NewFakeUpstream()
		up.SetScript(testenv.TextOnlyModel{}.Script())
		r := harness{config: textOnlyConfig, respMode: mode, seed: int64(mode) + 3, upstream: up}.start(t)
		for _, tc := range []struct {
			anthropic, stream bool
		}{{false, false}, {false, true}, {true, false}, {true, true}} {
			stream := tc.stream
			name := "openai_chat"
			if tc.anthropic {
				name = "anthropic"
			}
			t.Run(fmt.Sprintf("%s/%s/stream=%v", mode, name, stream), func(t *testing.T) {
				up.Reset()
				loop := textOnlyLoop
				if tc.anthropic {
					loop = anthropicTextOnlyLoop
				}
				final, turns := loop(t, r.proxyURL, stream)
				for _, want := range []string{"get_weather=sunny 21C in Paris", "get_weather=sunny 21C in Rome", "get_time=14:05 in Europe/Rome"} {
					if !strings.Contains(final, want) {
						t.Errorf("final answer %q lacks %q", final, want)
					}
				}
				if strings.Contains(final, "<invoke") {
					t.Errorf("the client saw <invoke> text: %q", final)
				}
				if turns != 3 {
					t.Errorf("%d model turns, want 3", turns)
				}
				reqs := up.Requests()
				if len(reqs) != 3 {
					t.Fatalf("%d upstream requests, want 3", len(reqs))
				}
				// Every request the upstream got was text only, with the
				// system text and the tool instructions on top.
				for i, req := range reqs {
					first := gjson.GetBytes(req.Body, "messages.0.content").String()
					if tc.anthropic {
						first = gjson.GetBytes(req.Body, "messages.0.content.0.text").String()
					}
					if !strings.HasPrefix(first, "<system_context>\n=== Agent Instructions ===\nYou are a weather agent.") ||
						!strings.Contains(first, "Tool: get_time") {
						t.Errorf("request %d: first user message %.200q", i, first)
					}
				}
				// The history renders to the same bytes on every turn: each
				// request starts with the one before it, up to its end.
				for i := 1; i < len(reqs); i++ {
					prev := gjson.GetBytes(reqs[i-1].Body, "messages").Array()
					cur := gjson.GetBytes(reqs[i].Body, "messages").Array()
					for k := 0; k < len(prev)-1; k++ {
						if prev[k].Raw != cur[k].Raw {
							t.Errorf("request %d changed message %d of the one before", i, k)
						}
					}
				}
			})
		}
	}
}

// textOnlyLoop runs the agent: send, run the calls, send the results,
// until an answer without calls. It returns that answer and the number of
// model turns.
func textOnlyLoop(t *testing.T, base string, stream bool) (string, int) {
	t.Helper()
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-text-only"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	messages := []any{
		map[string]any{"role": "system", "content": "You are a weather agent."},
		map[string]any{"role": "user", "content": "Weather in Paris and Rome, and the time in Rome?"},
	}
	tools := []any{
		map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "description": "Current weather of a city.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}},
		map[string]any{"type": "function", "function": map[string]any{"name": "get_time", "description": "Local time in a time zone.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"zone": map[string]any{"type": "string"}}, "required": []string{"zone"}}}},
	}
	seen := map[string]bool{}
	for turn := 1; turn <= 5; turn++ {
		body, _ := json.Marshal(map[string]any{"model": "text-only-1", "messages": messages, "tools": tools, "stream": stream})
		var cc openai.ChatCompletion
		if stream {
			st := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{}, option.WithRequestBody("application/json", body))
			var acc openai.ChatCompletionAccumulator
			for st.Next() {
				if !acc.AddChunk(st.Current()) {
					t.Fatalf("turn %d: accumulator refused a chunk", turn)
				}
			}
			if err := st.Err(); err != nil {
				t.Fatalf("turn %d: %v", turn, err)
			}
			cc = acc.ChatCompletion
		} else {
			c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{}, option.WithRequestBody("application/json", body))
			if err != nil {
				t.Fatalf("turn %d: %v", turn, err)
			}
			cc = *c
		}
		if len(cc.Choices) != 1 {
			t.Fatalf("turn %d: %d choices", turn, len(cc.Choices))
		}
		msg := cc.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			return msg.Content, turn
		}
		if cc.Choices[0].FinishReason != "tool_calls" {
			t.Errorf("turn %d: finish_reason %q with tool calls", turn, cc.Choices[0].FinishReason)
		}
		var calls []any
		var results []any
		for _, tc := range msg.ToolCalls {
			if !strings.HasPrefix(tc.ID, "call_") || seen[tc.ID] {
				t.Fatalf("turn %d: tool call id %q", turn, tc.ID)
			}
			seen[tc.ID] = true
			calls = append(calls, map[string]any{"id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.Function.Name, "arguments": tc.Function.Arguments}})
			results = append(results, map[string]any{"role": "tool", "tool_call_id": tc.ID, "content": runTool(tc.Function.Name, tc.Function.Arguments)})
		}
		if turn == 2 && len(calls) != 2 {
			t.Errorf("turn 2: %d tool calls, want 2", len(calls))
		}
		var content any
		if msg.Content != "" {
			content = msg.Content
		}
		messages = append(messages, map[string]any{"role": "assistant", "content": content, "tool_calls": calls})
		messages = append(messages, results...)
	}
	t.Fatal("no final answer after 5 turns")
	return "", 0
}

// anthropicTextOnlyLoop is textOnlyLoop with anthropic-sdk-go: tool_use
// blocks in, tool_result blocks back.
func anthropicTextOnlyLoop(t *testing.T, base string, stream bool) (string, int) {
	t.Helper()
	client := anthropic.NewClient(anthropicoption.WithBaseURL(base), anthropicoption.WithAPIKey("sk-ant-text-only"),
		anthropicoption.WithMaxRetries(0), anthropicoption.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	messages := []any{map[string]any{"role": "user", "content": "Weather in Paris and Rome, and the time in Rome?"}}
	tools := []any{
		map[string]any{"name": "get_weather", "description": "Current weather of a city.",
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}},
		map[string]any{"name": "get_time", "description": "Local time in a time zone.",
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"zone": map[string]any{"type": "string"}}, "required": []string{"zone"}}},
	}
	seen := map[string]bool{}
	for turn := 1; turn <= 5; turn++ {
		body, _ := json.Marshal(map[string]any{"model": "text-only-1", "max_tokens": 1024, "system": "You are a weather agent.",
			"messages": messages, "tools": tools, "stream": stream})
		var msg anthropic.Message
		if stream {
			st := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{}, anthropicoption.WithRequestBody("application/json", body))
			for st.Next() {
				if err := msg.Accumulate(st.Current()); err != nil {
					t.Fatalf("turn %d: accumulate: %v", turn, err)
				}
			}
			if err := st.Err(); err != nil {
				t.Fatalf("turn %d: %v", turn, err)
			}
		} else {
			m, err := client.Messages.New(ctx, anthropic.MessageNewParams{}, anthropicoption.WithRequestBody("application/json", body))
			if err != nil {
				t.Fatalf("turn %d: %v", turn, err)
			}
			msg = *m
		}
		var text strings.Builder
		var content, results []any
		for _, b := range msg.Content {
			switch b.Type {
			case "text":
				text.WriteString(b.Text)
				content = append(content, map[string]any{"type": "text", "text": b.Text})
			case "tool_use":
				if !strings.HasPrefix(b.ID, "toolu_") || seen[b.ID] {
					t.Fatalf("turn %d: tool_use id %q", turn, b.ID)
				}
				seen[b.ID] = true
				content = append(content, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": json.RawMessage(b.Input)})
				results = append(results, map[string]any{"type": "tool_result", "tool_use_id": b.ID, "content": runTool(b.Name, string(b.Input))})
			}
		}
		if len(results) == 0 {
			return text.String(), turn
		}
		if msg.StopReason != "tool_use" {
			t.Errorf("turn %d: stop_reason %q with tool calls", turn, msg.StopReason)
		}
		if turn == 2 && len(results) != 2 {
			t.Errorf("turn 2: %d tool calls, want 2", len(results))
		}
		messages = append(messages, map[string]any{"role": "assistant", "content": content}, map[string]any{"role": "user", "content": results})
	}
	t.Fatal("no final answer after 5 turns")
	return "", 0
}

// TestTextOnlyOverflowRecovery: a text-only upstream with a small window
// refuses a request whose tool result is too long; toolproc's overflow
// ladder replays it cut down, rendered as text like the first (the
// truncate rung starts from the client's structured body), and the client
// gets the answer.
func TestTextOnlyOverflowRecovery(t *testing.T) {
	up := testenv.NewFakeUpstream()
	up.SetScript(testenv.TextOnlyModel{MaxBody: 20000}.Script())
	r := harness{config: textOnlyConfig, respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, seed: 17, upstream: up}.start(t)
	// Readings that differ line by line: the clamp's structural cut folds
	// repeated lines, and this result must still overflow the upstream.
	var readings strings.Builder
	for i := range 1200 {
		fmt.Fprintf(&readings, "station %d reading: %dC, wind %d m/s, humidity %d%%\n", 40+i, 10+i%17, i%9, 30+i%41)
	}
	big := readings.String()
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			up.Reset()
			body, _ := json.Marshal(map[string]any{"model": "text-only-1", "stream": stream,
				"messages": []any{
					map[string]any{"role": "system", "content": "You are a weather agent."},
					map[string]any{"role": "user", "content": "Weather in Paris?"},
					map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_w1", "type": "function",
						"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}},
					map[string]any{"role": "tool", "tool_call_id": "call_w1", "content": big},
				},
				"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather",
					"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}},
			})
			a := postRaw(t, r.proxyURL+"/v1/chat/completions", body, "authorization", "Bearer sk-text-only-0001")
			reqs := up.Requests()
			if a.status != http.StatusOK || len(reqs) != 2 {
				t.Fatalf("client got %d after %d upstream requests: %.300s", a.status, len(reqs), a.body)
			}
			if got := a.header.Get(extproc.RecoveryHeader); got == "" {
				t.Fatalf("no %s header", extproc.RecoveryHeader)
			}
			replay := reqs[1].Body
			if len(replay) > 20000 || gjson.GetBytes(replay, "tools").Exists() || !strings.Contains(string(replay), "result of tool call call_w1 (get_weather)") {
				t.Fatalf("replay (%d bytes) is not the text rendering cut down: %.400s", len(replay), replay)
			}
			if !strings.Contains(string(a.body), "get_time") {
				t.Fatalf("the answer's calls did not reach the client: %.400s", a.body)
			}
		})
	}
}
