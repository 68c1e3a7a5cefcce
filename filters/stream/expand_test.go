package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// expFake is a Continuer answering with canned bodies, then refusing.
type expFake struct {
	t      testing.TB
	bodies []string
	turns  []wire.Turn
	closed int
}

type expBody struct {
	io.Reader
	f *expFake
}

func (b *expBody) Close() error { b.f.closed++; return nil }

func (f *expFake) Continue(t wire.Turn) (io.ReadCloser, error) {
	f.turns = append(f.turns, t)
	if len(f.turns) > len(f.bodies) {
		return nil, errTestRefused
	}
	// One byte per Read: the splice must survive any chunking.
	return &expBody{Reader: &expOneByte{b: []byte(f.bodies[len(f.turns)-1])}, f: f}, nil
}

type expOneByte struct{ b []byte }

func (r *expOneByte) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

// expNever fails the test when asked.
type expNever struct{ t testing.TB }

func (n expNever) Continue(wire.Turn) (io.ReadCloser, error) {
	n.t.Error("Continue called on a stream without expand_context")
	return nil, errTestRefused
}

// errTestRefused is the fakes' refusal.
var errTestRefused = errors.New("test: refused")

func expNewInner(d wire.Dialect) func() Normalizer {
	opts := Options{IncludeUsage: true, NewCallID: oaiTestIDs()}
	return func() Normalizer {
		switch d {
		case wire.OpenAIChat:
			return NewOpenAIChat(opts)
		case wire.Anthropic:
			return NewAnthropic(opts)
		}
		return NewOpenAIResponses(opts)
	}
}

// expRun feeds body in the chunks and returns the client's bytes; with
// emit, the bytes in the order the client gets them (emitted during a call,
// then what the call returned) and separately what the calls returned.
func expRun(d wire.Dialect, c Continuer, chunks [][]byte, useEmit bool) (client, returned []byte) {
	var emitted func([]byte) error
	if useEmit {
		emitted = func(b []byte) error { client = append(client, b...); return nil }
	}
	x := NewExpanding(d, expNewInner(d)(), expNewInner(d), c, emitted)
	for _, ch := range chunks {
		w := x.Write(ch)
		client = append(client, w...)
		returned = append(returned, w...)
	}
	w := x.Close()
	client = append(client, w...)
	returned = append(returned, w...)
	if x.Close() != nil {
		panic("second Close returned bytes")
	}
	return client, returned
}

// ---- OpenAI Chat -------------------------------------------------------

func expOAIChunk(id, delta, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return `data: {"id":"` + id + `","object":"chat.completion.chunk","created":7,"model":"gpt-4o","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fr + "}]}\n\n"
}

func expOAICall(id string, index int, callID, name, args string) string {
	a, _ := json.Marshal(args)
	return expOAIChunk(id, `{"tool_calls":[{"index":`+itoa(index)+`,"id":"`+callID+`","type":"function","function":{"name":"`+name+`","arguments":""}}]}`, "") +
		expOAIChunk(id, `{"tool_calls":[{"index":`+itoa(index)+`,"function":{"arguments":`+string(a)+`}}]}`, "")
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func expOAIText(id, s string) string {
	b, _ := json.Marshal(s)
	return expOAIChunk(id, `{"content":`+string(b)+`}`, "")
}

func expOAIStream(id string, parts ...string) string {
	s := expOAIChunk(id, `{"role":"assistant","content":null}`, "")
	for _, p := range parts {
		s += p
	}
	return s
}

const expOAIUsage = `data: {"id":"X","object":"chat.completion.chunk","created":7,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}` + "\n\n"

func expOAIEnd(id, finish string) string {
	return expOAIChunk(id, `{}`, finish) + strings.ReplaceAll(expOAIUsage, `"X"`, `"`+id+`"`) + "data: [DONE]\n\n"
}

// expOpenAIGo assembles with openai-go's own decoder and accumulator.
func expOpenAIGo(t *testing.T, out []byte) openai.ChatCompletion {
	t.Helper()
	resp := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(out))}
	st := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(resp), nil)
	var acc openai.ChatCompletionAccumulator
	for st.Next() {
		if !acc.AddChunk(st.Current()) {
			t.Errorf("accumulator refused chunk %s", st.Current().RawJSON())
		}
	}
	if err := st.Err(); err != nil {
		t.Errorf("openai-go stream error: %v", err)
	}
	return acc.ChatCompletion
}

type expCase struct {
	name      string
	first     string
	bodies    []string
	wantTurns int
	check     func(t *testing.T, out []byte, turns []wire.Turn)
}

func TestExpandOpenAIChat(t *testing.T) {
	phantom := expOAICall("c1", 0, "call_phantom", "expand_context", `{"id":"sh_1"}`)
	real := expOAICall("c1", 0, "call_real", "get_weather", `{"city":"Paris"}`)
	mixed := real + expOAICall("c1", 1, "call_phantom", "expand_context", `{"id":"sh_1"}`)
	answer := expOAIStream("c2", expOAIText("c2", "The answer is 42."), expOAIEnd("c2", "stop"))
	reask := expOAIStream("c2", expOAICall("c2", 0, "call_real2", "get_weather", `{"city":"Paris"}`), expOAIEnd("c2", "tool_calls"))
	again := expOAIStream("c2", expOAIText("c2", "Need more. "), expOAICall("c2", 0, "call_p2", "expand_context", `{"id":"sh_2"}`), expOAIEnd("c2", "tool_calls"))
	answer3 := expOAIStream("c3", expOAIText("c3", "Done."), expOAIEnd("c3", "stop"))

	common := func(t *testing.T, out []byte) oaiAssembled {
		t.Helper()
		if bytes.Contains(out, []byte("expand_context")) {
			t.Fatalf("client saw expand_context:\n%s", out)
		}
		if err := oaiCheckProfile(out); err != nil {
			t.Fatalf("profile: %v\n%s", err, out)
		}
		if n := bytes.Count(out, []byte(`"role":"assistant"`)); n != 1 {
			t.Fatalf("%d role chunks:\n%s", n, out)
		}
		if bytes.Contains(out, []byte(`"c2"`)) || bytes.Contains(out, []byte(`"c3"`)) {
			t.Fatalf("continuation id leaked:\n%s", out)
		}
		got, err := oaiAccumulate(out)
		if err != nil {
			t.Fatalf("accumulate: %v", err)
		}
		cc := expOpenAIGo(t, out)
		if len(cc.Choices) != 1 || cc.Choices[0].Message.Content != got.Text {
			t.Fatalf("openai-go assembled %+v, want text %q", cc.Choices, got.Text)
		}
		return got
	}
	checkTurn := func(t *testing.T, tr wire.Turn, text any, callID, id string, index int) {
		t.Helper()
		if !gjson.ValidBytes(tr.Assistant) {
			t.Fatalf("assistant not JSON: %s", tr.Assistant)
		}
		var m struct {
			Role      string `json:"role"`
			Content   any    `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		}
		if err := json.Unmarshal(tr.Assistant, &m); err != nil {
			t.Fatal(err)
		}
		if m.Role != "assistant" || m.Content != text || len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != callID ||
			m.ToolCalls[0].Function.Name != wire.ExpandToolName || m.ToolCalls[0].Type != "function" {
			t.Fatalf("assistant = %s", tr.Assistant)
		}
		if len(tr.Calls) != 1 || tr.Calls[0] != (wire.ExpandCall{CallID: callID, ID: id, Index: index}) {
			t.Fatalf("calls = %+v", tr.Calls)
		}
	}
	cases := []expCase{
		{name: "only_phantom", first: expOAIStream("c1", expOAIText("c1", "Let me look. "), phantom, expOAIEnd("c1", "tool_calls")),
			bodies: []string{answer}, wantTurns: 1,
			check: func(t *testing.T, out []byte, turns []wire.Turn) {
				got := common(t, out)
				if got.Text != "Let me look. The answer is 42." || len(got.Calls) != 0 || got.Finish != "stop" || got.Total != 7 {
					t.Fatalf("assembled %+v", got)
				}
				checkTurn(t, turns[0], "Let me look. ", "call_phantom", "sh_1", 0)
			}},
		{name: "mixed", first: expOAIStream("c1", mixed, expOAIEnd("c1", "tool_calls")),
			bodies: []string{reask}, wantTurns: 1,
			check: func(t *testing.T, out []byte, turns []wire.Turn) {
				got := common(t, out)
				if len(got.Calls) != 1 || got.Calls[0].Name != "get_weather" || got.Calls[0].ID != "call_real2" || got.Finish != "tool_calls" {
					t.Fatalf("assembled %+v", got)
				}
				checkTurn(t, turns[0], nil, "call_phantom", "sh_1", 1)
			}},
		{name: "loop", first: expOAIStream("c1", phantom, expOAIEnd("c1", "tool_calls")),
			bodies: []string{again, answer3}, wantTurns: 2,
			check: func(t *testing.T, out []byte, turns []wire.Turn) {
				got := common(t, out)
				if got.Text != "Need more. Done." || got.Finish != "stop" {
					t.Fatalf("assembled %+v", got)
				}
				checkTurn(t, turns[1], "Need more. ", "call_p2", "sh_2", 0)
			}},
		{name: "refused_mixed", first: expOAIStream("c1", expOAIText("c1", "Hi"), mixed, expOAIEnd("c1", "tool_calls")),
			wantTurns: 1,
			check: func(t *testing.T, out []byte, _ []wire.Turn) {
				got := common(t, out)
				if got.Text != "Hi" || len(got.Calls) != 1 || got.Calls[0].Name != "get_weather" || got.Calls[0].ID != "call_real" || got.Finish != "tool_calls" {
					t.Fatalf("assembled %+v", got)
				}
			}},
		{name: "refused_only_phantom", first: expOAIStream("c1", expOAIText("c1", "Hi"), phantom, expOAIEnd("c1", "tool_calls")),
			wantTurns: 1,
			check: func(t *testing.T, out []byte, _ []wire.Turn) {
				got := common(t, out)
				if got.Text != "Hi" || len(got.Calls) != 0 || got.Finish != "stop" {
					t.Fatalf("assembled %+v", got)
				}
			}},
		{name: "refused_after_loop", first: expOAIStream("c1", phantom, expOAIEnd("c1", "tool_calls")),
			bodies: []string{again}, wantTurns: 2,
			check: func(t *testing.T, out []byte, _ []wire.Turn) {
				got := common(t, out)
				if got.Text != "Need more. " || len(got.Calls) != 0 || got.Finish != "stop" {
					t.Fatalf("assembled %+v", got)
				}
			}},
	}
	expRunCases(t, wire.OpenAIChat, cases)
}

func expRunCases(t *testing.T, d wire.Dialect, cases []expCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want []byte
			for _, ch := range antChunkings {
				for _, useEmit := range []bool{false, true} {
					f := &expFake{t: t, bodies: tc.bodies}
					out, returned := expRun(d, f, ch.cut([]byte(tc.first)), useEmit)
					if len(f.turns) != tc.wantTurns {
						t.Fatalf("%s: %d turns, want %d", ch.name, len(f.turns), tc.wantTurns)
					}
					if f.closed != min(len(f.bodies), len(f.turns)) {
						t.Fatalf("%s: %d bodies closed", ch.name, f.closed)
					}
					if want == nil {
						want = out
						tc.check(t, out, f.turns)
					} else if !bytes.Equal(out, want) {
						t.Fatalf("%s emit=%v: output differs:\n%s\nwant\n%s", ch.name, useEmit, out, want)
					}
					if useEmit && len(tc.bodies) > 0 {
						// Continuation bytes went to emit, not to the return values.
						last := tc.bodies[len(tc.bodies)-1]
						marker := expMarker(d, last)
						if marker != "" && bytes.Contains(returned, []byte(marker)) {
							t.Fatalf("%s: continuation bytes returned instead of emitted", ch.name)
						}
					}
				}
			}
		})
	}
}

// expMarker is a text the last continuation body delivers to the client.
func expMarker(d wire.Dialect, body string) string {
	for _, m := range []string{"The answer is 42.", "Done.", "get_weather", "The answer."} {
		if strings.Contains(body, m) {
			return m
		}
	}
	return ""
}

// (1) A stream without expand_context comes out exactly as the normalizer
// alone makes it.
func TestExpandNoExpandIsIdentity(t *testing.T) {
	for _, f := range []struct {
		file string
		d    wire.Dialect
	}{{"openai_chat.json", wire.OpenAIChat}, {"anthropic.json", wire.Anthropic}, {"openai_responses.json", wire.OpenAIResponses}} {
		for _, sc := range antLoadScenarios(t, f.file) {
			if !sc.ClientStream {
				continue
			}
			t.Run(f.file+"/"+sc.Name, func(t *testing.T) {
				for _, ch := range antChunkings {
					chunks := ch.cut([]byte(sc.Upstream.Body))
					alone, _ := antRun(expNewInner(f.d)(), chunks)
					got, _ := expRun(f.d, expNever{t}, chunks, false)
					if !bytes.Equal(got, alone) {
						t.Fatalf("%s: output differs:\n%s\nwant\n%s", ch.name, got, alone)
					}
				}
			})
		}
	}
	// And a hand-made one with a real call and text on both sides.
	body := expOAIStream("c1", expOAIText("c1", "a"), expOAICall("c1", 0, "call_r", "get_weather", `{}`), expOAIEnd("c1", "tool_calls"))
	for _, ch := range antChunkings {
		alone, _ := antRun(expNewInner(wire.OpenAIChat)(), ch.cut([]byte(body)))
		got, _ := expRun(wire.OpenAIChat, expNever{t}, ch.cut([]byte(body)), false)
		if !bytes.Equal(got, alone) {
			t.Fatalf("%s: differs", ch.name)
		}
	}
}

// Text before the calls streams as it comes.
func TestExpandStreamsTextBeforeCalls(t *testing.T) {
	x := NewExpanding(wire.OpenAIChat, expNewInner(wire.OpenAIChat)(), expNewInner(wire.OpenAIChat), expNever{t}, nil)
	out := x.Write([]byte(expOAIStream("c1", expOAIText("c1", "hello"))))
	if !bytes.Contains(out, []byte("hello")) {
		t.Fatalf("text held: %q", out)
	}
	out = x.Write([]byte(expOAICall("c1", 0, "call_r", "get_weather", `{}`)))
	if len(out) != 0 {
		t.Fatalf("call not held: %q", out)
	}
}

// ---- Anthropic ---------------------------------------------------------

func expAntStart(id string) string {
	return antEv("message_start", `{"type":"message_start","message":{"id":"`+id+`","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
}

func expAntText(i int, s string) string {
	b, _ := json.Marshal(s)
	return antEv("content_block_start", `{"type":"content_block_start","index":`+itoa(i)+`,"content_block":{"type":"text","text":""}}`) +
		antEv("content_block_delta", `{"type":"content_block_delta","index":`+itoa(i)+`,"delta":{"type":"text_delta","text":`+string(b)+`}}`) +
		antEv("content_block_stop", `{"type":"content_block_stop","index":`+itoa(i)+`}`)
}

func expAntThinking(i int) string {
	return antEv("content_block_start", `{"type":"content_block_start","index":`+itoa(i)+`,"content_block":{"type":"thinking","thinking":"","signature":""}}`) +
		antEv("content_block_delta", `{"type":"content_block_delta","index":`+itoa(i)+`,"delta":{"type":"thinking_delta","thinking":"hmm"}}`) +
		antEv("content_block_delta", `{"type":"content_block_delta","index":`+itoa(i)+`,"delta":{"type":"signature_delta","signature":"SIG"}}`) +
		antEv("content_block_stop", `{"type":"content_block_stop","index":`+itoa(i)+`}`)
}

func expAntTool(i int, id, name, input string) string {
	b, _ := json.Marshal(input)
	return antEv("content_block_start", `{"type":"content_block_start","index":`+itoa(i)+`,"content_block":{"type":"tool_use","id":"`+id+`","name":"`+name+`","input":{}}}`) +
		antEv("content_block_delta", `{"type":"content_block_delta","index":`+itoa(i)+`,"delta":{"type":"input_json_delta","partial_json":""}}`) +
		antEv("content_block_delta", `{"type":"content_block_delta","index":`+itoa(i)+`,"delta":{"type":"input_json_delta","partial_json":`+string(b)+`}}`) +
		antEv("content_block_stop", `{"type":"content_block_stop","index":`+itoa(i)+`}`)
}

func expAntEnd(reason string) string {
	return antEv("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+reason+`","stop_sequence":null},"usage":{"output_tokens":20}}`) +
		antEv("message_stop", `{"type":"message_stop"}`)
}

const expAntPing = "event: ping\ndata: {\"type\": \"ping\"}\n\n"

func TestExpandAnthropic(t *testing.T) {
	common := func(t *testing.T, out []byte) antAssembled {
		t.Helper()
		if bytes.Contains(out, []byte("expand_context")) {
			t.Fatalf("client saw expand_context:\n%s", out)
		}
		if end, err := antCheckStrict(out); err != nil || end != "message_stop" {
			t.Fatalf("strict: %v %s\n%s", err, end, out)
		}
		got := antAssemble(out)
		if got.streamErr != nil || got.accErr != nil {
			t.Fatalf("sdk: %v %v", got.streamErr, got.accErr)
		}
		return got
	}
	blocks := func(m antAssembled) string {
		var s []string
		for _, b := range m.msg.Content {
			switch b.Type {
			case "text":
				s = append(s, "text:"+b.Text)
			case "thinking":
				s = append(s, "thinking:"+b.Thinking)
			case "tool_use":
				s = append(s, "tool_use:"+b.Name+":"+b.ID)
			}
		}
		return strings.Join(s, "|")
	}
	answer := expAntStart("msg_2") + expAntPing + expAntText(0, "The answer.") + expAntEnd("end_turn")
	reask := expAntStart("msg_2") + expAntTool(0, "toolu_real2", "get_weather", `{"city":"Paris"}`) + expAntEnd("tool_use")
	again := expAntStart("msg_2") + expAntText(0, "More. ") + expAntTool(1, "toolu_p2", "expand_context", `{"id":"sh_2"}`) + expAntEnd("tool_use")
	cases := []expCase{
		{name: "only_phantom", first: expAntStart("msg_1") + expAntPing + expAntThinking(0) + expAntText(1, "Let me look.") +
			expAntTool(2, "toolu_p", "expand_context", `{"id":"sh_1"}`) + expAntEnd("tool_use"),
			bodies: []string{answer}, wantTurns: 1,
			check: func(t *testing.T, out []byte, turns []wire.Turn) {
				got := common(t, out)
				if s := blocks(got); s != "thinking:hmm|text:Let me look.|text:The answer." || got.msg.StopReason != "end_turn" || got.msg.ID != "msg_1" {
					t.Fatalf("assembled %s %s %s", s, got.msg.StopReason, got.msg.ID)
				}
				want := `{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"SIG"},{"type":"text","text":"Let me look."},` +
					`{"type":"tool_use","id":"toolu_p","name":"expand_context","input":{"id":"sh_1"}}]}`
				if string(turns[0].Assistant) != want {
					t.Fatalf("assistant = %s\nwant %s", turns[0].Assistant, want)
				}
				if turns[0].Calls[0] != (wire.ExpandCall{CallID: "toolu_p", ID: "sh_1", Index: 0}) {
					t.Fatalf("calls %+v", turns[0].Calls)
				}
			}},
		{name: "mixed", first: expAntStart("msg_1") + expAntTool(0, "toolu_real", "get_weather", `{"city":"Paris"}`) +
			expAntTool(1, "toolu_p", "expand_context", `{"id":"sh_1"}`) + expAntEnd("tool_use"),
			bodies: []string{reask}, wantTurns: 1,
			check: func(t *testing.T, out []byte, turns []wire.Turn) {
				got := common(t, out)
				if s := blocks(got); s != "tool_use:get_weather:toolu_real2" || got.msg.StopReason != "tool_use" {
					t.Fatalf("assembled %s %s", s, got.msg.StopReason)
				}
				if strings.Contains(string(turns[0].Assistant), "get_weather") || turns[0].Calls[0].Index != 1 {
					t.Fatalf("turn %s %+v", turns[0].Assistant, turns[0].Calls)
				}
			}},
		{name: "loop", first: expAntStart("msg_1") + expAntText(0, "A. ") + expAntTool(1, "toolu_p", "expand_context", `{"id":"sh_1"}`) + expAntEnd("tool_use"),
			bodies: []string{again, answer}, wantTurns: 2,
			check: func(t *testing.T, out []byte, turns []wire.Turn) {
				got := common(t, out)
				if s := blocks(got); s != "text:A. |text:More. |text:The answer." {
					t.Fatalf("assembled %s", s)
				}
				if turns[1].Calls[0].ID != "sh_2" || !strings.Contains(string(turns[1].Assistant), `"More. "`) {
					t.Fatalf("turn 2 %s", turns[1].Assistant)
				}
			}},
		{name: "refused_mixed", first: expAntStart("msg_1") + expAntText(0, "Hi") + expAntTool(1, "toolu_p", "expand_context", `{"id":"sh_1"}`) +
			expAntTool(2, "toolu_real", "get_weather", `{"city":"Paris"}`) + expAntEnd("tool_use"),
			wantTurns: 1,
			check: func(t *testing.T, out []byte, _ []wire.Turn) {
				got := common(t, out)
				if s := blocks(got); s != "text:Hi|tool_use:get_weather:toolu_real" || got.msg.StopReason != "tool_use" {
					t.Fatalf("assembled %s %s", s, got.msg.StopReason)
				}
			}},
		{name: "refused_only_phantom", first: expAntStart("msg_1") + expAntText(0, "Hi") + expAntTool(1, "toolu_p", "expand_context", `{"id":"sh_1"}`) + expAntEnd("tool_use"),
			wantTurns: 1,
			check: func(t *testing.T, out []byte, _ []wire.Turn) {
				got := common(t, out)
				if s := blocks(got); s != "text:Hi" || got.msg.StopReason != "end_turn" {
					t.Fatalf("assembled %s %s", s, got.msg.StopReason)
				}
			}},
	}
	expRunCases(t, wire.Anthropic, cases)
}

// ---- OpenAI Responses --------------------------------------------------

// expRespBody numbers the events' sequence_number from 0 and frames them.
func expRespBody(events ...string) string {
	var s strings.Builder
	for i, e := range events {
		e = strings.Replace(e, `"sequence_number":0`, `"sequence_number":`+itoa(i), 1)
		s.WriteString("event: " + gjson.Get(e, "type").Str + "\ndata: " + e + "\n\n")
	}
	return s.String()
}

func expRespMsg(idx int, id, text string) (events []string, item string) {
	b, _ := json.Marshal(text)
	item = `{"id":"` + id + `","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + string(b) + `,"annotations":[]}]}`
	oi := itoa(idx)
	return []string{
		`{"type":"response.output_item.added","sequence_number":0,"output_index":` + oi + `,"item":{"id":"` + id + `","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":0,"item_id":"` + id + `","output_index":` + oi + `,"content_index":0,"delta":` + string(b) + `}`,
		`{"type":"response.output_item.done","sequence_number":0,"output_index":` + oi + `,"item":` + item + `}`,
	}, item
}

func expRespCall(idx int, id, callID, name, args string) (events []string, item string) {
	a, _ := json.Marshal(args)
	oi := itoa(idx)
	item = `{"id":"` + id + `","type":"function_call","status":"completed","arguments":` + string(a) + `,"call_id":"` + callID + `","name":"` + name + `"}`
	return []string{
		`{"type":"response.output_item.added","sequence_number":0,"output_index":` + oi + `,"item":{"id":"` + id + `","type":"function_call","status":"in_progress","arguments":"","call_id":"` + callID + `","name":"` + name + `"}}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":0,"item_id":"` + id + `","output_index":` + oi + `,"delta":` + string(a) + `}`,
		`{"type":"response.function_call_arguments.done","sequence_number":0,"item_id":"` + id + `","output_index":` + oi + `,"arguments":` + string(a) + `}`,
		`{"type":"response.output_item.done","sequence_number":0,"output_index":` + oi + `,"item":` + item + `}`,
	}, item
}

// expResp builds a whole Responses stream from (events, item) pairs.
func expResp(id string, parts ...any) string {
	ev := []string{
		`{"type":"response.created","sequence_number":0,"response":{"id":"` + id + `","object":"response","status":"in_progress","output":[]}}`,
		`{"type":"response.in_progress","sequence_number":0,"response":{"id":"` + id + `","object":"response","status":"in_progress","output":[]}}`,
	}
	var items []string
	for i := 0; i < len(parts); i += 2 {
		ev = append(ev, parts[i].([]string)...)
		items = append(items, parts[i+1].(string))
	}
	ev = append(ev, `{"type":"response.completed","sequence_number":0,"response":{"id":"`+id+`","object":"response","status":"completed","output":[`+strings.Join(items, ",")+`],"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}}`)
	return expRespBody(ev...)
}

func TestExpandResponses(t *testing.T) {
	pair := func(e []string, item string) []any { return []any{e, item} }
	cat := func(ps ...[]any) []any {
		var out []any
		for _, p := range ps {
			out = append(out, p...)
		}
		return out
	}
	msg1 := pair(expRespMsg(0, "msg_1", "Let me look."))
	phantom1 := pair(expRespCall(1, "fc_p", "call_p", "expand_context", `{"id":"sh_1"}`))
	common := func(t *testing.T, out []byte) (respAssembled, gjson.Result) {
		t.Helper()
		if bytes.Contains(out, []byte("expand_context")) {
			t.Fatalf("client saw expand_context:\n%s", out)
		}
		if end, err := respCheckStrict(out); err != nil || end != "response.completed" {
			t.Fatalf("strict: %v %s\n%s", err, end, out)
		}
		if n := bytes.Count(out, []byte("event: response.created")); n != 1 {
			t.Fatalf("%d response.created", n)
		}
		got := respAssemble(out)
		if got.err != nil || got.status != "completed" {
			t.Fatalf("assembled %+v", got)
		}
		i := bytes.LastIndex(out, []byte("data: "))
		return got, gjson.GetBytes(out[i+6:], "response.output")
	}
	cases := []expCase{
		{name: "only_phantom", first: expResp("resp_1", cat(msg1, phantom1)...),
			bodies: []string{expResp("resp_2", pair(expRespMsg(0, "msg_2", "The answer."))...)}, wantTurns: 1,
			check: func(t *testing.T, out []byte, turns []wire.Turn) {
				got, output := common(t, out)
				if got.text != "Let me look.The answer." || len(got.calls) != 0 {
					t.Fatalf("assembled %+v", got)
				}
				if n := len(output.Array()); n != 2 || output.Get("0.id").Str != "msg_1" || output.Get("1.id").Str != "msg_2" {
					t.Fatalf("final output %s", output.Raw)
				}
				a := gjson.ParseBytes(turns[0].Assistant)
				if !a.IsArray() || len(a.Array()) != 2 || a.Get("1.type").Str != "function_call" || a.Get("1.call_id").Str != "call_p" {
					t.Fatalf("assistant %s", turns[0].Assistant)
				}
				if turns[0].Calls[0] != (wire.ExpandCall{CallID: "call_p", ID: "sh_1", Index: 0}) {
					t.Fatalf("calls %+v", turns[0].Calls)
				}
			}},
		{name: "mixed", first: expResp("resp_1", cat(pair(expRespCall(0, "fc_r", "call_r", "get_weather", `{}`)), phantom1)...),
			bodies: []string{expResp("resp_2", pair(expRespCall(0, "fc_r2", "call_r2", "get_weather", `{}`))...)}, wantTurns: 1,
			check: func(t *testing.T, out []byte, turns []wire.Turn) {
				got, output := common(t, out)
				if len(got.calls) != 1 || got.calls[0].CallID != "call_r2" || len(output.Array()) != 1 {
					t.Fatalf("assembled %+v %s", got, output.Raw)
				}
				if strings.Contains(string(turns[0].Assistant), "get_weather") || turns[0].Calls[0].Index != 1 {
					t.Fatalf("turn %s %+v", turns[0].Assistant, turns[0].Calls)
				}
			}},
		{name: "loop", first: expResp("resp_1", cat(msg1, phantom1)...),
			bodies: []string{
				expResp("resp_2", cat(pair(expRespMsg(0, "msg_2", "More. ")), pair(expRespCall(1, "fc_p2", "call_p2", "expand_context", `{"id":"sh_2"}`)))...),
				expResp("resp_3", pair(expRespMsg(0, "msg_3", "Done."))...),
			}, wantTurns: 2,
			check: func(t *testing.T, out []byte, turns []wire.Turn) {
				got, output := common(t, out)
				if got.text != "Let me look.More. Done." || len(output.Array()) != 3 || output.Get("2.id").Str != "msg_3" {
					t.Fatalf("assembled %+v %s", got, output.Raw)
				}
				if turns[1].Calls[0].ID != "sh_2" {
					t.Fatalf("turn 2 %+v", turns[1].Calls)
				}
			}},
		{name: "refused_mixed", first: expResp("resp_1", cat(msg1, phantom1, pair(expRespCall(2, "fc_r", "call_r", "get_weather", `{}`)))...),
			wantTurns: 1,
			check: func(t *testing.T, out []byte, _ []wire.Turn) {
				got, output := common(t, out)
				if got.text != "Let me look." || len(got.calls) != 1 || got.calls[0].CallID != "call_r" || len(output.Array()) != 2 {
					t.Fatalf("assembled %+v %s", got, output.Raw)
				}
			}},
	}
	expRunCases(t, wire.OpenAIResponses, cases)
}
