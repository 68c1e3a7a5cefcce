package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/wire"

	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/testenv"
)

// respAssembled is what an openai-go client makes of a Responses stream.
type respAssembled struct {
	text   string
	calls  []responses.ResponseFunctionToolCall // from output_item.done, by output_index
	status string                               // of the terminal event's response
	err    error                                // Stream.Err, or an error event the SDK passed on
}

// respAssemble decodes out with openai-go's SSE decoder and Stream, and
// assembles the way VS Code does: text from output_text deltas, calls from
// output_item.done keyed by output_index (platform.openai.com/docs/api-reference/responses-streaming).
func respAssemble(out []byte) respAssembled {
	res := &http.Response{
		Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body:   io.NopCloser(bytes.NewReader(out)),
	}
	st := ssestream.NewStream[responses.ResponseStreamEventUnion](ssestream.NewDecoder(res), nil)
	var a respAssembled
	var text strings.Builder
	calls := map[int64]responses.ResponseFunctionToolCall{}
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				calls[ev.OutputIndex] = ev.Item.AsFunctionCall()
			}
		case "response.completed", "response.incomplete", "response.failed":
			a.status = string(ev.Response.Status)
		case "error":
			if a.err == nil {
				a.err = fmt.Errorf("error event: %s %s", ev.Code, ev.Message)
			}
		}
	}
	if err := st.Err(); err != nil {
		a.err = err
	}
	a.text = text.String()
	var idx []int64
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i] < idx[j] })
	for _, i := range idx {
		a.calls = append(a.calls, calls[i])
	}
	return a
}

var respCallIDPattern = regexp.MustCompile(`^call_[A-Za-z0-9]{24}$`)

func respCheckExpect(t *testing.T, want testenv.ScenarioExpect, got respAssembled) {
	t.Helper()
	if want.StreamError != (got.err != nil) {
		t.Fatalf("stream error = %v, want one: %v", got.err, want.StreamError)
	}
	if got.text != want.Text {
		t.Errorf("text = %q, want %q", got.text, want.Text)
	}
	if len(got.calls) != len(want.ToolCalls) {
		t.Fatalf("%d tool calls %+v, want %d", len(got.calls), got.calls, len(want.ToolCalls))
	}
	for i, w := range want.ToolCalls {
		g := got.calls[i]
		if g.Name != w.Name {
			t.Errorf("call %d name = %q, want %q", i, g.Name, w.Name)
		}
		if w.ID != "" && g.CallID != w.ID {
			t.Errorf("call %d call_id = %q, want %q", i, g.CallID, w.ID)
		}
		if w.ID == "" && !respCallIDPattern.MatchString(g.CallID) {
			t.Errorf("call %d call_id = %q, want call_ and 24 alphanumerics", i, g.CallID)
		}
		var ga, wa any
		if err := json.Unmarshal([]byte(g.Arguments), &ga); err != nil {
			t.Errorf("call %d arguments %q: %v", i, g.Arguments, err)
		}
		if err := json.Unmarshal(w.Arguments, &wa); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ga, wa) {
			t.Errorf("call %d arguments = %s, want %s", i, g.Arguments, w.Arguments)
		}
	}
	if !want.StreamError && got.status != want.FinishReason {
		t.Errorf("status = %q, want %q", got.status, want.FinishReason)
	}
}

// respCheckStrict checks what every output of the Responses normalizer must
// satisfy, whatever the input. It returns the event that ended the stream.
func respCheckStrict(out []byte) (string, error) {
	var d Decoder
	evs := d.Feed(out)
	if tail := d.Flush(); tail != nil {
		return "", fmt.Errorf("output ends with an unterminated event %q", tail.Raw)
	}
	seqSeen, seq := false, int64(0)
	items := 0
	calls := map[int64]bool{} // output_index → output_item.done seen
	end := ""
	for i, ev := range evs {
		if end != "" {
			return "", fmt.Errorf("event %d %q after %s", i, ev.Raw, end)
		}
		if !ev.HasData {
			if ev.Name == "error" {
				end = "error"
			}
			continue
		}
		data := gjson.ParseBytes(ev.Data)
		if !gjson.ValidBytes(ev.Data) || !data.IsObject() {
			return "", fmt.Errorf("event %d: data %q is not a JSON object", i, ev.Data)
		}
		kind := data.Get("type").Str
		if kind == "" || ev.Name == "error" {
			kind = ev.Name
		}
		if e := data.Get("error"); e.Exists() && kind != "error" {
			if e.Type == gjson.Null {
				return "", fmt.Errorf("event %d: \"error\":null on a %s event fails openai-go", i, kind)
			}
			kind = "error"
		}
		if sn := data.Get("sequence_number"); sn.Exists() {
			if sn.Type != gjson.Number || (seqSeen && sn.Raw != fmt.Sprint(seq+1)) {
				return "", fmt.Errorf("event %d: sequence_number %s after %d", i, sn.Raw, seq)
			}
			seqSeen, seq = true, sn.Int()
		}
		oi := data.Get("output_index")
		if oi.Exists() {
			if oi.Type != gjson.Number || oi.Raw != fmt.Sprint(oi.Int()) || oi.Int() < 0 || oi.Int() > int64(items) {
				return "", fmt.Errorf("event %d: output_index %s with %d items", i, oi.Raw, items)
			}
			if kind == "response.output_item.added" && oi.Int() != int64(items) {
				return "", fmt.Errorf("event %d: output_item.added at %s, want %d", i, oi.Raw, items)
			}
			if oi.Int() == int64(items) {
				items++
			}
		} else if kind == "response.output_item.added" {
			return "", fmt.Errorf("event %d: output_item.added without output_index", i)
		}
		isCall := data.Get("item.type").Str == "function_call"
		switch kind {
		case "response.output_item.added", "response.output_item.done":
			if isCall && data.Get("item.call_id").Str == "" {
				return "", fmt.Errorf("event %d: function_call without call_id", i)
			}
			if isCall {
				calls[oi.Int()] = kind == "response.output_item.done"
			}
		case "response.completed":
			for idx, done := range calls {
				if !done {
					return "", fmt.Errorf("response.completed with function_call %d not done", idx)
				}
			}
			end = kind
		case "response.incomplete", "response.failed", "error":
			end = kind
		}
	}
	if end == "" {
		return "", fmt.Errorf("stream ends without a terminal or error event")
	}
	return end, nil
}

// respFixedIDs makes generated call ids predictable.
var respFixedIDs = Options{NewCallID: func() string { return "call_abcdefghijklmnopqrstuvwx" }}

func TestResponsesScenarios(t *testing.T) {
	scenarios := antLoadScenarios(t, "openai_responses.json")
	if len(scenarios) < 5 {
		t.Fatalf("%d scenarios, want at least 5", len(scenarios))
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			if sc.Dialect != "openai_responses" || !sc.ClientStream {
				t.Fatalf("dialect %q client_stream %v", sc.Dialect, sc.ClientStream)
			}
			var first []byte
			for _, ch := range antChunkings {
				out, _ := antRun(NewOpenAIResponses(respFixedIDs), ch.cut([]byte(sc.Upstream.Body)))
				end, err := respCheckStrict(out)
				if err != nil {
					t.Fatalf("chunking %s: %v\n%s", ch.name, err, out)
				}
				if (end == "error") != sc.Expect.StreamError {
					t.Fatalf("chunking %s: stream ends with %s, stream_error %v", ch.name, end, sc.Expect.StreamError)
				}
				t.Run(ch.name, func(t *testing.T) { respCheckExpect(t, sc.Expect, respAssemble(out)) })
				if first == nil {
					first = out
				} else if !bytes.Equal(first, out) {
					t.Errorf("chunking %s gives another output", ch.name)
				}
			}
			out, _ := antRun(NewOpenAIResponses(Options{}), [][]byte{[]byte(sc.Upstream.Body)})
			respCheckExpect(t, sc.Expect, respAssemble(out))
		})
	}
}

// TestResponsesScenariosNeedRepair: every scenario but the reference breaks a
// rule as sent, and the reference goes out byte for byte at any chunking.
func TestResponsesScenariosNeedRepair(t *testing.T) {
	for _, sc := range antLoadScenarios(t, "openai_responses.json") {
		_, err := respCheckStrict([]byte(sc.Upstream.Body))
		wellFormed := sc.Name == "responses_reference_function_call"
		if wellFormed != (err == nil) {
			t.Errorf("%s: strict check of the upstream body: %v", sc.Name, err)
		}
		if !wellFormed {
			continue
		}
		for _, ch := range antChunkings {
			out, _ := antRun(NewOpenAIResponses(Options{}), ch.cut([]byte(sc.Upstream.Body)))
			if string(out) != sc.Upstream.Body {
				t.Errorf("%s/%s: output differs from the input:\n%s", sc.Name, ch.name, out)
			}
		}
	}
}

// respEv builds one named Responses event.
func respEv(data string) string {
	return "event: " + gjson.Get(data, "type").Str + "\ndata: " + data + "\n\n"
}

func TestResponsesRepairs(t *testing.T) {
	const (
		created   = `{"type":"response.created","sequence_number":4,"response":{"id":"r","status":"in_progress","error":null}}`
		completed = `{"type":"response.completed","sequence_number":%d,"response":{"id":"r","status":"completed","error":null}}`
	)
	added := func(seq, oi int, callID string) string {
		cid := ""
		if callID != "" {
			cid = `,"call_id":"` + callID + `"`
		}
		return fmt.Sprintf(`{"type":"response.output_item.added","sequence_number":%d,"output_index":%d,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":""%s,"name":"f"}}`, seq, oi, cid)
	}
	delta := func(seq, oi int, d string) string {
		q, _ := json.Marshal(d)
		return fmt.Sprintf(`{"type":"response.function_call_arguments.delta","sequence_number":%d,"item_id":"fc_1","output_index":%d,"delta":%s}`, seq, oi, q)
	}
	cases := []struct {
		name, in string
		want     []string
	}{
		{
			name: "sparse output_index re-mapped, content_index kept",
			in: respEv(created) +
				respEv(`{"type":"response.output_text.delta","sequence_number":5,"item_id":"m","output_index":2,"content_index":3,"delta":"hi"}`) +
				respEv(fmt.Sprintf(completed, 6)),
			want: []string{created,
				`{"type":"response.output_text.delta","sequence_number":5,"item_id":"m","output_index":0,"content_index":3,"delta":"hi"}`,
				fmt.Sprintf(completed, 6)},
		},
		{
			name: "missing closing events synthesized, call_id filled, later events renumbered",
			in:   respEv(created) + respEv(added(5, 0, "")) + respEv(delta(6, 0, `{"a":`)) + respEv(delta(7, 0, `1}`)) + respEv(fmt.Sprintf(completed, 8)),
			want: []string{created,
				`{"type":"response.output_item.added","sequence_number":5,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","name":"f","call_id":"call_abcdefghijklmnopqrstuvwx"}}`,
				delta(6, 0, `{"a":`), delta(7, 0, `1}`),
				`{"type":"response.function_call_arguments.done","sequence_number":8,"item_id":"fc_1","output_index":0,"arguments":"{\"a\":1}"}`,
				`{"type":"response.output_item.done","sequence_number":9,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"a\":1}","name":"f","call_id":"call_abcdefghijklmnopqrstuvwx"}}`,
				fmt.Sprintf(completed, 10)},
		},
		{
			name: "output_item.done without call_id gets the added one",
			in: respEv(created) + respEv(added(5, 0, "call_up")) +
				respEv(`{"type":"response.output_item.done","sequence_number":6,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","name":"f"}}`) +
				respEv(fmt.Sprintf(completed, 7)),
			want: []string{created, added(5, 0, "call_up"),
				`{"type":"response.output_item.done","sequence_number":6,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","name":"f","call_id":"call_up","arguments":""}}`,
				fmt.Sprintf(completed, 7)},
		},
		{
			name: "dropped events renumbered; nothing after the terminal event",
			in: respEv(created) + "data: [DONE]\n\n" + "event: x\ndata: {broken\n\n" +
				respEv(`{"type":"response.in_progress","sequence_number":7,"response":{"id":"r"}}`) +
				respEv(`{"type":"response.incomplete","sequence_number":8,"response":{"id":"r","status":"incomplete"}}`) +
				respEv(fmt.Sprintf(completed, 9)),
			want: []string{created,
				`{"type":"response.in_progress","sequence_number":5,"response":{"id":"r"}}`,
				`{"type":"response.incomplete","sequence_number":6,"response":{"id":"r","status":"incomplete"}}`},
		},
		{
			name: "no synthesized done before a failed response",
			in:   respEv(created) + respEv(added(5, 0, "call_up")) + respEv(`{"type":"response.failed","sequence_number":6,"response":{"id":"r","status":"failed"}}`),
			want: []string{created, added(5, 0, "call_up"), `{"type":"response.failed","sequence_number":6,"response":{"id":"r","status":"failed"}}`},
		},
		{
			name: "error event ends the stream",
			in: respEv(created) + respEv(`{"type":"error","sequence_number":5,"error":{"type":"server_error","code":"server_error","message":"boom","param":null}}`) +
				respEv(`{"type":"response.failed","sequence_number":6,"response":{"id":"r","status":"failed"}}`),
			want: []string{created, `{"type":"error","sequence_number":5,"error":{"type":"server_error","code":"server_error","message":"boom","param":null}}`},
		},
		{
			name: "documented error shape gets the nested error the SDKs raise on",
			in:   respEv(created) + respEv(`{"type":"error","sequence_number":5,"code":"context_length_exceeded","message":"too long","param":"input"}`),
			want: []string{created, `{"type":"error","sequence_number":5,"code":"context_length_exceeded","message":"too long","param":"input","error":{"code":"context_length_exceeded","message":"too long","param":"input"}}`},
		},
		{
			name: "error:null removed (openai-go would fail the stream on it)",
			in:   respEv(`{"type":"response.created","sequence_number":0,"error":null,"response":{"id":"r"}}`) + respEv(`{"type":"response.completed","sequence_number":1,"response":{"id":"r","status":"completed"}}`),
			want: []string{`{"type":"response.created","sequence_number":0,"response":{"id":"r"}}`, `{"type":"response.completed","sequence_number":1,"response":{"id":"r","status":"completed"}}`},
		},
		{
			name: "truncated: an error event, open calls left open",
			in:   respEv(created) + respEv(added(5, 0, "call_up")) + respEv(delta(6, 0, `{"a":`)),
			want: []string{created, added(5, 0, "call_up"), delta(6, 0, `{"a":`),
				`{"type":"error","sequence_number":7,"code":"server_error","message":"upstream stream ended early","param":null,"error":{"type":"server_error","code":"server_error","message":"upstream stream ended early","param":null}}`},
		},
		{
			name: "unterminated last event with valid JSON is processed",
			in:   respEv(created) + strings.TrimSuffix(respEv(fmt.Sprintf(completed, 5)), "\n\n"),
			want: []string{created, fmt.Sprintf(completed, 5)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := antRun(NewOpenAIResponses(respFixedIDs), [][]byte{[]byte(tc.in)})
			var d Decoder
			var got []string
			for _, ev := range d.Feed(out) {
				if want := gjson.GetBytes(ev.Data, "type").Str; ev.Name != want {
					t.Errorf("event name %q for type %q", ev.Name, want)
				}
				got = append(got, string(ev.Data))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if _, err := respCheckStrict(out); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestResponsesDataOnly: an upstream without event: lines gets synthesized
// events without them too.
func TestResponsesDataOnly(t *testing.T) {
	in := "data: " + `{"type":"response.created","sequence_number":0,"response":{"id":"r"}}` + "\n\n"
	out, _ := antRun(NewOpenAIResponses(Options{}), [][]byte{[]byte(in)})
	if bytes.Contains(out, []byte("event:")) || !bytes.HasPrefix(out, []byte(in)) {
		t.Fatalf("got %q", out)
	}
	if got := respAssemble(out); got.err == nil {
		t.Fatal("openai-go saw no error in a truncated stream")
	}
}

// TestResponsesErrorsRaiseInOpenAIGo: every error the client gets, passed on
// or synthesized, ends openai-go's Stream with a StreamError, not just an
// event of type "error" that a caller could overlook.
func TestResponsesErrorsRaiseInOpenAIGo(t *testing.T) {
	created := respEv(`{"type":"response.created","sequence_number":0,"response":{"id":"r"}}`)
	for name, in := range map[string]string{
		"truncated":        created,
		"documented shape": created + respEv(`{"type":"error","sequence_number":1,"code":"server_error","message":"boom","param":null}`),
		"nested shape":     created + respEv(`{"type":"error","sequence_number":1,"error":{"type":"server_error","code":"server_error","message":"boom","param":null}}`),
	} {
		out, _ := antRun(NewOpenAIResponses(Options{}), [][]byte{[]byte(in)})
		res := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(out))}
		st := ssestream.NewStream[responses.ResponseStreamEventUnion](ssestream.NewDecoder(res), nil)
		for st.Next() {
		}
		var se *ssestream.StreamError
		if !errors.As(st.Err(), &se) {
			t.Errorf("%s: Stream.Err() = %v, want a StreamError", name, st.Err())
		}
	}
}

// TestResponsesStreaming: an event leaves in the Write that completed it.
func TestResponsesStreaming(t *testing.T) {
	n := NewOpenAIResponses(Options{})
	ev := respEv(`{"type":"response.output_text.delta","sequence_number":3,"item_id":"m","output_index":0,"content_index":0,"delta":"Hello"}`)
	if out := n.Write([]byte(ev[:len(ev)-1])); len(out) != 0 {
		t.Fatalf("an incomplete event went out: %q", out)
	}
	if out := n.Write([]byte("\n")); string(out) != ev {
		t.Fatalf("the completed event did not go out at once: %q", out)
	}
}

// FuzzResponsesNormalizer: whatever the bytes and however they are cut, no
// panic, a terminated SSE stream of JSON objects that keeps every rule
// respCheckStrict knows, independent of the chunking.
func FuzzResponsesNormalizer(f *testing.F) {
	for _, sc := range antLoadScenarios(f, "openai_responses.json") {
		f.Add([]byte(sc.Upstream.Body), uint64(len(sc.Name)))
	}
	f.Add([]byte("data: {\"type\":\"response.output_item.added\",\"output_index\":\"x\",\"sequence_number\":\"y\",\"item\":{\"type\":\"function_call\"}}\r\r"), uint64(1))
	f.Add([]byte("event: error\n\ndata: {\"error\":null}\n\n"), uint64(2))
	for i, b := range hostileSeeds(wire.OpenAIResponses) {
		f.Add(b, uint64(i))
	}
	f.Fuzz(func(t *testing.T, body []byte, seed uint64) {
		whole, _ := antRun(NewOpenAIResponses(respFixedIDs), [][]byte{body})
		if _, err := respCheckStrict(whole); err != nil {
			t.Fatalf("%v\ninput %q\noutput %q", err, body, whole)
		}
		cut, _ := antRun(NewOpenAIResponses(respFixedIDs), antRandom(seed)(body))
		if !bytes.Equal(cut, whole) {
			t.Fatalf("chunked output differs:\n%q\n%q", cut, whole)
		}
	})
}

func BenchmarkResponsesNormalizer(b *testing.B) {
	for _, sc := range antLoadScenarios(b, "openai_responses.json") {
		if sc.Name != "responses_sparse_output_index" {
			continue
		}
		chunks := antFixed(37)([]byte(sc.Upstream.Body))
		b.SetBytes(int64(len(sc.Upstream.Body)))
		for b.Loop() {
			antRun(NewOpenAIResponses(Options{}), chunks)
		}
	}
}
