package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	antsse "github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/testenv"
)

// antLoadScenarios reads one scenario file of testenv/testdata/streams.
func antLoadScenarios(t testing.TB, file string) []testenv.Scenario {
	t.Helper()
	b, err := os.ReadFile("../../testenv/testdata/streams/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var list []testenv.Scenario
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return list
}

// antChunking names a way to cut a body into Write calls.
type antChunking struct {
	name string
	cut  func(body []byte) [][]byte
}

func antFixed(n int) func([]byte) [][]byte {
	return func(body []byte) [][]byte {
		var out [][]byte
		for i := 0; i < len(body); i += n {
			out = append(out, body[i:min(i+n, len(body))])
		}
		return out
	}
}

func antRandom(seed uint64) func([]byte) [][]byte {
	return func(body []byte) [][]byte {
		rng := rand.New(rand.NewPCG(seed, 7))
		var out [][]byte
		for i := 0; i < len(body); {
			n := 1 + rng.IntN(64)
			out = append(out, body[i:min(i+n, len(body))])
			i += n
		}
		return out
	}
}

var antChunkings = []antChunking{
	{"whole", func(b []byte) [][]byte { return [][]byte{b} }},
	{"1", antFixed(1)},
	{"7", antFixed(7)},
	{"rand1", antRandom(1)},
	{"rand2", antRandom(2)},
	{"rand3", antRandom(3)},
}

// antRun feeds the chunks and returns the whole output and each Write's part.
func antRun(n Normalizer, chunks [][]byte) (out []byte, writes [][]byte) {
	for _, c := range chunks {
		w := n.Write(c)
		writes = append(writes, w)
		out = append(out, w...)
	}
	return append(out, n.Close()...), writes
}

// antAssembled is what anthropic-sdk-go makes of a stream.
type antAssembled struct {
	msg       anthropic.Message
	streamErr error // from the SDK's Stream (an error event, bad JSON)
	accErr    error // the first error of Message.Accumulate
}

// antAssemble decodes out the way a Go client does: the SDK's SSE decoder and
// Stream, then Message.Accumulate on every event.
func antAssemble(out []byte) antAssembled {
	res := &http.Response{
		Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body:   io.NopCloser(bytes.NewReader(out)),
	}
	st := antsse.NewStream[anthropic.MessageStreamEventUnion](antsse.NewDecoder(res), nil)
	var a antAssembled
	for st.Next() {
		if err := a.msg.Accumulate(st.Current()); err != nil && a.accErr == nil {
			a.accErr = err
		}
	}
	a.streamErr = st.Err()
	return a
}

var antToolIDPattern = regexp.MustCompile(`^toolu_[A-Za-z0-9]{24}$`)

func antCheckExpect(t *testing.T, want testenv.ScenarioExpect, got antAssembled) {
	t.Helper()
	if got.accErr != nil {
		t.Fatalf("Message.Accumulate: %v", got.accErr)
	}
	if want.StreamError != (got.streamErr != nil) {
		t.Fatalf("stream error = %v, want one: %v", got.streamErr, want.StreamError)
	}
	var text strings.Builder
	var calls []anthropic.ContentBlockUnion
	for _, b := range got.msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			calls = append(calls, b)
		}
	}
	if text.String() != want.Text {
		t.Errorf("text = %q, want %q", text.String(), want.Text)
	}
	if len(calls) != len(want.ToolCalls) {
		t.Fatalf("%d tool calls, want %d", len(calls), len(want.ToolCalls))
	}
	for i, w := range want.ToolCalls {
		g := calls[i]
		if g.Name != w.Name {
			t.Errorf("call %d name = %q, want %q", i, g.Name, w.Name)
		}
		if w.ID != "" && g.ID != w.ID {
			t.Errorf("call %d id = %q, want %q", i, g.ID, w.ID)
		}
		if w.ID == "" && !antToolIDPattern.MatchString(g.ID) {
			t.Errorf("call %d id = %q, want toolu_ and 24 alphanumerics", i, g.ID)
		}
		var ga, wa any
		if err := json.Unmarshal(g.Input, &ga); err != nil {
			t.Errorf("call %d input %q: %v", i, g.Input, err)
		}
		if err := json.Unmarshal(w.Arguments, &wa); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ga, wa) {
			t.Errorf("call %d input = %s, want %s", i, g.Input, w.Arguments)
		}
	}
	if !want.StreamError && string(got.msg.StopReason) != want.FinishReason {
		t.Errorf("stop_reason = %q, want %q", got.msg.StopReason, want.FinishReason)
	}
}

// antKind is the event type as anthropic-sdk-go sees it: the name decides for
// error and ping, the payload's type for everything else.
func antKind(ev Event) string {
	if ev.Name == "error" || ev.Name == "ping" || !ev.HasData {
		return ev.Name
	}
	if t := gjson.GetBytes(ev.Data, "type"); t.Type == gjson.String {
		return t.Str
	}
	return ev.Name
}

// antCheckStrict checks what every output of the normalizer must satisfy,
// whatever the input: it holds for the scenarios and for fuzzed input alike.
// It returns the event that ended the stream ("message_stop" or "error").
func antCheckStrict(out []byte) (string, error) {
	var d Decoder
	evs := d.Feed(out)
	if tail := d.Flush(); tail != nil {
		return "", fmt.Errorf("output ends with an unterminated event %q", tail.Raw)
	}
	started, deltaSent, toolUse := false, false, false
	var open []bool
	end := ""
	for i, ev := range evs {
		if end != "" {
			return "", fmt.Errorf("event %d %q after %s", i, ev.Raw, end)
		}
		kind := antKind(ev)
		if ev.HasData {
			if !gjson.ValidBytes(ev.Data) || !gjson.ParseBytes(ev.Data).IsObject() {
				return "", fmt.Errorf("event %d: data %q is not a JSON object", i, ev.Data)
			}
			if gjson.GetBytes(ev.Data, "type").Str != "" && ev.Name == "" {
				return "", fmt.Errorf("event %d: typed data without an event: line", i)
			}
		}
		data := gjson.ParseBytes(ev.Data)
		index := func() (int, error) {
			idx := data.Get("index")
			if idx.Type != gjson.Number || idx.Raw != fmt.Sprint(idx.Int()) {
				return 0, fmt.Errorf("event %d: bad index %q", i, idx.Raw)
			}
			return int(idx.Int()), nil
		}
		switch kind {
		case "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop":
			if !ev.HasData {
				return "", fmt.Errorf("event %d: %s without data", i, kind)
			}
			if kind == "message_start" {
				if started {
					return "", fmt.Errorf("event %d: second message_start", i)
				}
				started = true
				continue
			}
			if !started {
				return "", fmt.Errorf("event %d: %s before message_start", i, kind)
			}
		}
		switch kind {
		case "content_block_start":
			if deltaSent {
				return "", fmt.Errorf("event %d: block after message_delta", i)
			}
			idx, err := index()
			if err != nil {
				return "", err
			}
			if idx != len(open) {
				return "", fmt.Errorf("event %d: content_block_start index %d, want %d", i, idx, len(open))
			}
			open = append(open, true)
			if data.Get("content_block.type").Str == "tool_use" {
				toolUse = true
				if id := data.Get("content_block.id"); id.Type != gjson.String || id.Str == "" {
					return "", fmt.Errorf("event %d: tool_use without id", i)
				}
				if !data.Get("content_block.input").IsObject() {
					return "", fmt.Errorf("event %d: tool_use without an input object", i)
				}
			}
		case "content_block_delta", "content_block_stop":
			idx, err := index()
			if err != nil {
				return "", err
			}
			if idx < 0 || idx >= len(open) || !open[idx] {
				return "", fmt.Errorf("event %d: %s for block %d, not open", i, kind, idx)
			}
			if kind == "content_block_stop" {
				open[idx] = false
			}
		case "message_delta":
			for c, o := range open {
				if o {
					return "", fmt.Errorf("event %d: message_delta with block %d open", i, c)
				}
			}
			deltaSent = true
			r := data.Get("delta.stop_reason")
			if toolUse && (r.Type == gjson.Null || r.Str == "end_turn") {
				return "", fmt.Errorf("event %d: stop_reason %s after a tool_use block", i, r.Raw)
			}
			if !toolUse && r.Str == "tool_use" {
				return "", fmt.Errorf("event %d: stop_reason tool_use without a tool_use block", i)
			}
		case "message_stop":
			if !deltaSent {
				return "", fmt.Errorf("event %d: message_stop without message_delta", i)
			}
			end = kind
		case "error":
			end = kind
		}
	}
	if end == "" {
		return "", fmt.Errorf("stream ends without message_stop or error")
	}
	return end, nil
}

func TestAnthropicScenarios(t *testing.T) {
	scenarios := antLoadScenarios(t, "anthropic.json")
	if len(scenarios) < 8 {
		t.Fatalf("%d scenarios, want at least 8", len(scenarios))
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			if sc.Dialect != "anthropic" || !sc.ClientStream {
				t.Fatalf("dialect %q client_stream %v", sc.Dialect, sc.ClientStream)
			}
			var first []byte
			for _, ch := range antChunkings {
				out, _ := antRun(NewAnthropic(antFixedIDs), ch.cut([]byte(sc.Upstream.Body)))
				end, err := antCheckStrict(out)
				if err != nil {
					t.Fatalf("chunking %s: %v\n%s", ch.name, err, out)
				}
				if (end == "error") != sc.Expect.StreamError {
					t.Fatalf("chunking %s: stream ends with %s, stream_error %v", ch.name, end, sc.Expect.StreamError)
				}
				t.Run(ch.name, func(t *testing.T) { antCheckExpect(t, sc.Expect, antAssemble(out)) })
				if first == nil {
					first = out
				} else if !bytes.Equal(first, out) {
					t.Errorf("chunking %s gives another output", ch.name)
				}
			}
			// Random ids have the right shape too.
			out, _ := antRun(NewAnthropic(Options{}), [][]byte{[]byte(sc.Upstream.Body)})
			antCheckExpect(t, sc.Expect, antAssemble(out))
		})
	}
}

// TestAnthropicWellFormedUntouched: a correct stream goes out byte for byte,
// whatever the chunking.
func TestAnthropicWellFormedUntouched(t *testing.T) {
	for _, sc := range antLoadScenarios(t, "anthropic.json") {
		if sc.Name != "anthropic_reference_text_tool_use" && sc.Name != "anthropic_thinking_then_tool_use" {
			continue
		}
		for _, ch := range antChunkings {
			out, _ := antRun(NewAnthropic(Options{}), ch.cut([]byte(sc.Upstream.Body)))
			if string(out) != sc.Upstream.Body {
				t.Errorf("%s/%s: output differs from the input:\n%s", sc.Name, ch.name, out)
			}
		}
	}
}

// antEv builds one named Anthropic event.
func antEv(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

const (
	antStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`
	antText0 = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	antHello = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`
	antStop0 = `{"type":"content_block_stop","index":0}`
	antEnd   = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`
	antMStop = `{"type":"message_stop"}`
)

// antEvents decodes an output into "name data" lines.
func antEvents(t *testing.T, out []byte) []string {
	t.Helper()
	var d Decoder
	var got []string
	for _, ev := range d.Feed(out) {
		got = append(got, ev.Name+" "+string(ev.Data))
	}
	if d.Flush() != nil {
		t.Fatalf("unterminated output %q", out)
	}
	return got
}

// antFixedIDs makes generated ids predictable.
var antFixedIDs = Options{NewCallID: func() string { return "call_abcdefghijklmnopqrstuvwx" }}

func antNormalize(in string) []byte {
	out, _ := antRun(NewAnthropic(antFixedIDs), [][]byte{[]byte(in)})
	return out
}

func TestAnthropicRepairs(t *testing.T) {
	tool := func(i int, id, input string) string {
		cb := `{"type":"tool_use","name":"f"`
		if id != "" {
			cb += `,"id":"` + id + `"`
		}
		if input != "" {
			cb += `,"input":` + input
		}
		return fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}}`, i, cb)
	}
	cases := []struct {
		name, in string
		want     []string
	}{
		{
			name: "nameless events get their type as name",
			in:   "data: " + antStart + "\n\ndata: " + antText0 + "\n\ndata: " + antHello + "\n\ndata: " + antStop0 + "\n\ndata: " + antEnd + "\n\ndata: " + antMStop + "\n\n",
			want: []string{"message_start " + antStart, "content_block_start " + antText0, "content_block_delta " + antHello,
				"content_block_stop " + antStop0, "message_delta " + antEnd, "message_stop " + antMStop},
		},
		{
			name: "unknown and ping events pass, second message_start dropped",
			in: antEv("message_start", antStart) + antEv("ping", `{"type": "ping"}`) + antEv("future_event", `{"type":"future_event","x":1}`) +
				antEv("message_start", antStart) + antEv("message_delta", antEnd) + antEv("message_stop", antMStop),
			want: []string{"message_start " + antStart, `ping {"type": "ping"}`, `future_event {"type":"future_event","x":1}`,
				"message_delta " + antEnd, "message_stop " + antMStop},
		},
		{
			name: "missing id and input filled, stop_reason becomes tool_use",
			in:   antEv("message_start", antStart) + antEv("content_block_start", tool(0, "", "")) + antEv("message_delta", antEnd) + antEv("message_stop", antMStop),
			want: []string{"message_start " + antStart,
				`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"f","id":"toolu_abcdefghijklmnopqrstuvwx","input":{}}}`,
				`content_block_stop {"type":"content_block_stop","index":0}`,
				`message_delta {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":2}}`,
				"message_stop " + antMStop},
		},
		{
			name: "string input replaced, id kept",
			in:   antEv("message_start", antStart) + antEv("content_block_start", tool(0, "toolu_1", `""`)) + antEv("content_block_stop", antStop0) + antEv("message_delta", antEnd) + antEv("message_stop", antMStop),
			want: []string{"message_start " + antStart, "content_block_start " + tool(0, "toolu_1", "{}"), "content_block_stop " + antStop0,
				`message_delta {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":2}}`,
				"message_stop " + antMStop},
		},
		{
			name: "an error payload under another name is named error",
			in:   antEv("message_start", antStart) + antEv("message_delta", `{"type":"error","error":{"type":"api_error","message":"x"}}`) + antEv("message_stop", antMStop),
			want: []string{"message_start " + antStart, `error {"type":"error","error":{"type":"api_error","message":"x"}}`},
		},
		{
			name: "stop_reason null and missing become tool_use",
			in: antEv("message_start", antStart) + antEv("content_block_start", tool(0, "toolu_1", "{}")) + antEv("content_block_stop", antStop0) +
				antEv("message_delta", `{"type":"message_delta","usage":{"output_tokens":2}}`) + antEv("message_stop", antMStop),
			want: []string{"message_start " + antStart, "content_block_start " + tool(0, "toolu_1", "{}"), "content_block_stop " + antStop0,
				`message_delta {"type":"message_delta","usage":{"output_tokens":2},"delta":{"stop_reason":"tool_use"}}`, "message_stop " + antMStop},
		},
		{
			name: "other stop reasons kept",
			in: antEv("message_start", antStart) + antEv("content_block_start", tool(0, "toolu_1", "{}")) + antEv("content_block_stop", antStop0) +
				antEv("message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"}}`) + antEv("message_stop", antMStop),
			want: []string{"message_start " + antStart, "content_block_start " + tool(0, "toolu_1", "{}"), "content_block_stop " + antStop0,
				`message_delta {"type":"message_delta","delta":{"stop_reason":"max_tokens"}}`, "message_stop " + antMStop},
		},
		{
			name: "deltas for unknown or stopped blocks dropped, interleaving kept",
			in: antEv("message_start", antStart) + antEv("content_block_start", antText0) +
				antEv("content_block_start", `{"type":"content_block_start","index":5,"content_block":{"type":"text","text":""}}`) +
				antEv("content_block_delta", `{"type":"content_block_delta","index":5,"delta":{"type":"text_delta","text":"b"}}`) +
				antEv("content_block_delta", antHello) + antEv("content_block_delta", `{"type":"content_block_delta","index":9,"delta":{"type":"text_delta","text":"x"}}`) +
				antEv("content_block_stop", antStop0) + antEv("content_block_delta", antHello) +
				antEv("content_block_stop", `{"type":"content_block_stop","index":5}`) + antEv("message_delta", antEnd) + antEv("message_stop", antMStop),
			want: []string{"message_start " + antStart, "content_block_start " + antText0,
				`content_block_start {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
				`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"b"}}`,
				"content_block_delta " + antHello, "content_block_stop " + antStop0,
				`content_block_stop {"type":"content_block_stop","index":1}`, "message_delta " + antEnd, "message_stop " + antMStop},
		},
		{
			name: "content before message_start gets one; message_stop without message_delta gets one",
			in:   antEv("content_block_start", antText0) + antEv("content_block_delta", antHello) + antEv("message_stop", antMStop),
			want: []string{
				`message_start {"type":"message_start","message":{"id":"msg_abcdefghijklmnopqrstuvwx","type":"message","role":"assistant","model":"","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}`,
				"content_block_start " + antText0, "content_block_delta " + antHello, "content_block_stop " + antStop0,
				`message_delta {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":0}}`,
				"message_stop " + antMStop},
		},
		{
			name: "error ends the stream",
			in: antEv("message_start", antStart) + antEv("content_block_start", antText0) +
				antEv("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`) + antEv("content_block_delta", antHello),
			want: []string{"message_start " + antStart, "content_block_start " + antText0,
				`error {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		},
		{
			name: "nothing after message_stop; garbage dropped",
			in: antEv("message_start", antStart) + "data: [DONE]\n\n" + antEv("message_delta", antEnd) + antEv("message_stop", antMStop) +
				antEv("content_block_start", antText0),
			want: []string{"message_start " + antStart, "message_delta " + antEnd, "message_stop " + antMStop},
		},
		{
			name: "truncated: open blocks stopped, then an error",
			in:   antEv("message_start", antStart) + antEv("content_block_start", antText0) + antEv("content_block_delta", antHello),
			want: []string{"message_start " + antStart, "content_block_start " + antText0, "content_block_delta " + antHello,
				"content_block_stop " + antStop0, "error " + antEndedEarly},
		},
		{
			name: "empty body: an error",
			in:   "",
			want: []string{"error " + antEndedEarly},
		},
		{
			name: "only message_stop missing: completed",
			in:   antEv("message_start", antStart) + antEv("message_delta", antEnd),
			want: []string{"message_start " + antStart, "message_delta " + antEnd, "message_stop " + antMStop},
		},
		{
			name: "unterminated last event with valid JSON is processed",
			in:   antEv("message_start", antStart) + antEv("message_delta", antEnd) + "event: message_stop\ndata: " + antMStop,
			want: []string{"message_start " + antStart, "message_delta " + antEnd, "message_stop " + antMStop},
		},
		{
			name: "unterminated last event with broken JSON is not",
			in:   antEv("message_start", antStart) + antEv("content_block_start", antText0) + `data: {"type":"content_block_delta","ind`,
			want: []string{"message_start " + antStart, "content_block_start " + antText0, "content_block_stop " + antStop0, "error " + antEndedEarly},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := antNormalize(tc.in)
			got := antEvents(t, out)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if _, err := antCheckStrict(out); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestAnthropicDataOnlyNeedsNames shows the fix is real: the Go SDK assembles
// nothing from the data-only stream as sent, everything once normalized.
func TestAnthropicDataOnlyNeedsNames(t *testing.T) {
	for _, sc := range antLoadScenarios(t, "anthropic.json") {
		if sc.Name != "anthropic_data_only_stream" {
			continue
		}
		raw := antAssemble([]byte(sc.Upstream.Body))
		if len(raw.msg.Content) != 0 || raw.msg.ID != "" {
			t.Fatalf("the SDK assembled %+v from nameless events: the scenario no longer shows the problem", raw.msg)
		}
		out, _ := antRun(NewAnthropic(Options{}), [][]byte{[]byte(sc.Upstream.Body)})
		if got := antAssemble(out); len(got.msg.Content) != 2 || got.msg.ID != "msg_01DataOnly" {
			t.Fatalf("normalized stream assembled into %+v", got.msg)
		}
		return
	}
	t.Fatal("scenario anthropic_data_only_stream missing")
}

// TestAnthropicStreaming: the first text delta leaves in the Write that
// completed it; nothing waits for the rest of the stream.
func TestAnthropicStreaming(t *testing.T) {
	n := NewAnthropic(Options{})
	head := antEv("message_start", antStart) + antEv("content_block_start", antText0)
	if out := n.Write([]byte(head)); !bytes.Equal(out, []byte(head)) {
		t.Fatalf("head: got %q", out)
	}
	delta := antEv("content_block_delta", antHello)
	if out := n.Write([]byte(delta[:len(delta)-1])); len(out) != 0 {
		t.Fatalf("an incomplete event went out: %q", out)
	}
	if out := n.Write([]byte("\n")); string(out) != delta {
		t.Fatalf("the completed delta did not go out at once: %q", out)
	}
	// A repaired event goes out at once too.
	sparse := antEv("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`)
	if out := n.Write([]byte(antEv("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}`) + sparse)); !bytes.Contains(out, []byte(`"index":1,"delta"`)) {
		t.Fatalf("re-indexed delta did not go out at once: %q", out)
	}
}

// TestAnthropicScenariosNeedRepair: every scenario but the well-formed ones
// breaks a rule as sent, so each one exercises a repair.
func TestAnthropicScenariosNeedRepair(t *testing.T) {
	for _, sc := range antLoadScenarios(t, "anthropic.json") {
		_, err := antCheckStrict([]byte(sc.Upstream.Body))
		wellFormed := sc.Name == "anthropic_reference_text_tool_use" || sc.Name == "anthropic_thinking_then_tool_use"
		if wellFormed != (err == nil) {
			t.Errorf("%s: strict check of the upstream body: %v", sc.Name, err)
		}
	}
}

func BenchmarkAnthropicNormalizer(b *testing.B) {
	for _, sc := range antLoadScenarios(b, "anthropic.json") {
		if sc.Name != "anthropic_sparse_block_indexes" {
			continue
		}
		chunks := antFixed(37)([]byte(sc.Upstream.Body))
		b.SetBytes(int64(len(sc.Upstream.Body)))
		for b.Loop() {
			antRun(NewAnthropic(Options{}), chunks)
		}
	}
}

// TestAnthropicXMLToolCalls: <invoke> blocks in an Anthropic text stream,
// cut anywhere, become tool_use blocks the SDK assembles, between text
// blocks, with stop_reason tool_use; a final_answer is text. The JSON form
// is converted the same way.
func TestAnthropicXMLToolCalls(t *testing.T) {
	text := "Let me look.\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n" +
		"<invoke name=\"get_time\"><parameter name=\"zone\">Europe/Rome</parameter></invoke> done"
	opts := antFixedIDs
	opts.XMLToolCalls = true
	for _, n := range []int{1, 3, 7, 1000} {
		out, _ := antRun(NewAnthropic(opts), [][]byte{[]byte(antXMLStream(text, n))})
		if _, err := antCheckStrict(out); err != nil {
			t.Fatalf("n=%d: %v\n%s", n, err, out)
		}
		got := antAssemble(out)
		if got.accErr != nil || got.streamErr != nil {
			t.Fatalf("n=%d: %v %v", n, got.accErr, got.streamErr)
		}
		msg := got.msg
		var kinds []string
		for _, b := range msg.Content {
			switch b.Type {
			case "text":
				kinds = append(kinds, "text:"+b.Text)
			case "tool_use":
				kinds = append(kinds, "tool_use:"+b.Name+string(b.Input))
			}
		}
		want := []string{"text:Let me look.\n", `tool_use:get_weather{"city":"Paris"}`, "text:\n", `tool_use:get_time{"zone":"Europe/Rome"}`, "text: done"}
		if fmt.Sprint(kinds) != fmt.Sprint(want) || msg.StopReason != "tool_use" {
			t.Fatalf("n=%d: blocks %q, stop %q\n%s", n, kinds, msg.StopReason, out)
		}
	}
	js := `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":` + string(wire.QuoteString(text)) + `}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
	fixed, ok := FixAnthropicJSONXML([]byte(js))
	if !ok || gjson.GetBytes(fixed, "stop_reason").Str != "tool_use" || gjson.GetBytes(fixed, "content.#").Int() != 5 ||
		gjson.GetBytes(fixed, "content.1.input.city").Str != "Paris" {
		t.Fatalf("JSON: %s", fixed)
	}
}
