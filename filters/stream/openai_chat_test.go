package stream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"
)

// oaiScenario mirrors testenv.Scenario (testenv sits above this package, so
// it cannot be imported here).
type oaiScenario struct {
	Name         string `json:"name"`
	XML          bool   `json:"xml"`
	ClientStream bool   `json:"client_stream"`
	IncludeUsage bool   `json:"include_usage"`
	Upstream     struct {
		ContentType string `json:"content_type"`
		Body        string `json:"body"`
	} `json:"upstream"`
	Expect struct {
		Text      string `json:"text"`
		ToolCalls []struct {
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"tool_calls"`
		FinishReason string `json:"finish_reason"`
		StreamError  bool   `json:"stream_error"`
		TotalTokens  int    `json:"total_tokens"`
	} `json:"expect"`
}

const oaiScenarioFile = "../../testenv/testdata/streams/openai_chat.json"

func oaiLoadScenarios(t testing.TB) []oaiScenario {
	t.Helper()
	b, err := os.ReadFile(oaiScenarioFile)
	if err != nil {
		t.Fatal(err)
	}
	var list []oaiScenario
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatalf("%s: %v", oaiScenarioFile, err)
	}
	return list
}

// oaiTestIDs makes call ids deterministic: call_ + 24 digits.
func oaiTestIDs() func() string {
	n := 0
	return func() string {
		n++
		return fmt.Sprintf("call_%024d", n)
	}
}

func oaiOpts(xml, usage bool) Options {
	return Options{XMLToolCalls: xml, IncludeUsage: usage, NewCallID: oaiTestIDs()}
}

// oaiRun feeds the chunks to a fresh normalizer and returns everything it
// wrote, Close included.
func oaiRun(opts Options, chunks ...[]byte) []byte {
	n := NewOpenAIChat(opts)
	var out []byte
	for _, c := range chunks {
		out = append(out, n.Write(c)...)
	}
	return append(out, n.Close()...)
}

// oaiChunkings splits b whole, by 1 byte, by 7 bytes and at random points.
func oaiChunkings(b []byte, seed uint64) map[string][][]byte {
	every := func(n int) [][]byte {
		var out [][]byte
		for i := 0; i < len(b); i += n {
			out = append(out, b[i:min(i+n, len(b))])
		}
		return out
	}
	r := rand.New(rand.NewPCG(seed, 7))
	var random [][]byte
	for i := 0; i < len(b); {
		n := 1 + r.IntN(64)
		random = append(random, b[i:min(i+n, len(b))])
		i += n
	}
	return map[string][][]byte{"whole": {b}, "1-byte": every(1), "7-byte": every(7), "random": random}
}

// oaiAssembled is what a client ends up with.
type oaiAssembled struct {
	Text      string
	Calls     []oaiAssembledCall
	Finish    string
	StreamErr string
	Total     int
}

type oaiAssembledCall struct{ ID, Type, Name, Args string }

// oaiAccumulate is a port of openai-go: the SSE decoder of
// packages/ssestream (bufio lines; an event without its blank line at EOF is
// dropped; [DONE] ends the stream; any top-level "error" key is a stream
// error; undecodable JSON is an error) and ChatCompletionAccumulator.AddChunk
// (what streaming clients do: same id on every chunk, tool index -1 read as 0,
// id/type overwritten when non-empty, name and arguments concatenated,
// finish_reason overwritten on every chunk, usage summed).
func oaiAccumulate(out []byte) (oaiAssembled, error) {
	var acc oaiAssembled
	firstID, haveID := "", false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<25)
	var data []byte
	dispatch := func() (stop bool, err error) {
		ev := data
		data = nil
		if bytes.HasPrefix(ev, []byte("[DONE]")) {
			return true, nil
		}
		if e := gjson.GetBytes(ev, "error"); e.Exists() {
			acc.StreamErr = e.String()
			return true, nil
		}
		var chunk struct {
			ID      string `json:"id"`
			Choices []struct {
				Index int `json:"index"`
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Type     string `json:"type"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				TotalTokens int `json:"total_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(ev, &chunk); err != nil {
			return true, fmt.Errorf("openai-go would fail to decode %q: %v", ev, err)
		}
		if haveID && firstID != "" && chunk.ID != firstID {
			return true, fmt.Errorf("openai-go rejects chunk id %q after %q", chunk.ID, firstID)
		}
		if !haveID || firstID == "" {
			firstID, haveID = chunk.ID, true
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				return true, fmt.Errorf("choice index %d", c.Index)
			}
			acc.Text += c.Delta.Content
			for _, tc := range c.Delta.ToolCalls {
				i := tc.Index
				if i == -1 {
					i = 0
				}
				if i < 0 || i >= len(acc.Calls)+128 {
					return true, fmt.Errorf("tool index %d", tc.Index)
				}
				for len(acc.Calls) <= i {
					acc.Calls = append(acc.Calls, oaiAssembledCall{})
				}
				call := &acc.Calls[i]
				if tc.ID != "" {
					call.ID = tc.ID
				}
				if tc.Type != "" {
					call.Type = tc.Type
				}
				call.Name += tc.Function.Name
				call.Args += tc.Function.Arguments
			}
			acc.Finish = c.FinishReason
		}
		acc.Total += chunk.Usage.TotalTokens
		return false, nil
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if len(data) == 0 {
				continue
			}
			stop, err := dispatch()
			if err != nil || stop {
				return acc, err
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		if string(name) == "data" {
			data = append(append(data, value...), '\n')
		}
	}
	return acc, nil
}

// oaiCheckProfile checks the emission profile (openai_chat.go) on a
// whole client stream and returns the first violation.
func oaiCheckProfile(out []byte) error {
	if !bytes.HasSuffix(out, []byte(oaiDoneEvent)) {
		return fmt.Errorf("stream does not end with data: [DONE]")
	}
	events := strings.Split(string(out), "\n\n")
	events = events[:len(events)-1] // after the final blank line
	var (
		id                          string
		role, finished, errored     bool
		finishes, usages, dones     int
		calls                       []string // accumulated arguments per index
		validAt                     []string // first argument prefix that was valid JSON
		ids                         = map[string]bool{}
		choiceChunks                int
		afterErrorOnlyFinishAndDone bool
	)
	for i, ev := range events {
		lines := strings.Split(ev, "\n")
		if lines[0] != "" && lines[0][0] == ':' {
			for _, l := range lines {
				if l == "" || l[0] != ':' {
					return fmt.Errorf("event %d: comment mixed with %q", i, l)
				}
			}
			continue
		}
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "data: ") {
			return fmt.Errorf("event %d is not one data: line: %q", i, ev)
		}
		payload := lines[0][len("data: "):]
		if payload == "[DONE]" {
			dones++
			if i != len(events)-1 {
				return fmt.Errorf("[DONE] is not last")
			}
			continue
		}
		if strings.ContainsAny(payload, "\r") || !json.Valid([]byte(payload)) {
			return fmt.Errorf("event %d: not one-line JSON: %q", i, payload)
		}
		root := gjson.Parse(payload)
		if root.Get("error").Exists() {
			if errored {
				return fmt.Errorf("two error chunks")
			}
			if !root.Get("error.message").Exists() || root.Get("choices").Exists() {
				return fmt.Errorf("error chunk shape: %s", payload)
			}
			errored, afterErrorOnlyFinishAndDone = true, true
			continue
		}
		if root.Get("object").Str != oaiChunkObject {
			return fmt.Errorf("event %d: object %q", i, root.Get("object").Str)
		}
		if id == "" {
			id = root.Get("id").Str
			if id == "" {
				return fmt.Errorf("event %d: no id", i)
			}
		} else if root.Get("id").Str != id {
			return fmt.Errorf("event %d: id %q, want %q", i, root.Get("id").Str, id)
		}
		if !root.Get("created").Exists() || !root.Get("model").Exists() {
			return fmt.Errorf("event %d: envelope incomplete: %s", i, payload)
		}
		choices := root.Get("choices")
		if !choices.IsArray() {
			return fmt.Errorf("event %d: choices is not an array", i)
		}
		if u := root.Get("usage"); u.Exists() && u.Type != gjson.Null {
			usages++
		}
		arr := choices.Array()
		if len(arr) == 0 {
			if usages == 0 || !root.Get("usage").IsObject() {
				return fmt.Errorf("event %d: chunk without choices nor usage", i)
			}
			if !finished {
				return fmt.Errorf("event %d: usage chunk before the finish chunk", i)
			}
			continue
		}
		if len(arr) != 1 || arr[0].Get("index").Int() != 0 || arr[0].Get("index").Type != gjson.Number {
			return fmt.Errorf("event %d: choices must be one choice with index 0", i)
		}
		if finished {
			return fmt.Errorf("event %d: chunk for choice 0 after the finish chunk", i)
		}
		c := arr[0]
		delta := c.Get("delta")
		if !delta.IsObject() {
			return fmt.Errorf("event %d: delta is not an object", i)
		}
		choiceChunks++
		if r := delta.Get("role"); r.Exists() {
			if role || r.Str != "assistant" {
				return fmt.Errorf("event %d: role %s again or wrong", i, r.Raw)
			}
		}
		if choiceChunks == 1 && delta.Get("role").Str != "assistant" {
			return fmt.Errorf("event %d: first chunk has no role", i)
		}
		role = true
		if afterErrorOnlyFinishAndDone && !c.Get("finish_reason").Exists() {
			return fmt.Errorf("event %d: content after the error chunk", i)
		}
		if tcs := delta.Get("tool_calls"); tcs.Exists() {
			list := tcs.Array()
			if len(list) != 1 {
				return fmt.Errorf("event %d: %d tool_call entries in one chunk", i, len(list))
			}
			e := list[0]
			idx := int(e.Get("index").Int())
			fn := e.Get("function")
			switch {
			case e.Get("index").Type != gjson.Number:
				return fmt.Errorf("event %d: tool call without index", i)
			case idx == len(calls):
				if oaiKeyCount(e) != 4 || oaiKeyCount(fn) != 2 || e.Get("type").Str != "function" ||
					e.Get("id").Str == "" || fn.Get("name").Str == "" ||
					fn.Get("arguments").Type != gjson.String || fn.Get("arguments").Str != "" {
					return fmt.Errorf("event %d: bad first delta %s", i, e.Raw)
				}
				if ids[e.Get("id").Str] {
					return fmt.Errorf("event %d: id %s reused", i, e.Get("id").Str)
				}
				ids[e.Get("id").Str] = true
				calls = append(calls, "")
				validAt = append(validAt, "")
			case idx == len(calls)-1:
				if oaiKeyCount(e) != 2 || oaiKeyCount(fn) != 1 || fn.Get("arguments").Type != gjson.String {
					return fmt.Errorf("event %d: continuation delta has more than index+arguments: %s", i, e.Raw)
				}
				calls[idx] += fn.Get("arguments").Str
				if validAt[idx] == "" && json.Valid([]byte(calls[idx])) {
					validAt[idx] = calls[idx]
				}
			default:
				return fmt.Errorf("event %d: tool index %d after %d calls (sparse or interleaved)", i, idx, len(calls))
			}
		}
		if fr := c.Get("finish_reason"); fr.Exists() && fr.Type != gjson.Null {
			finishes++
			finished = true
			if delta.Raw != "{}" {
				return fmt.Errorf("event %d: finish chunk delta %s, want {}", i, delta.Raw)
			}
			if (fr.Str == "tool_calls") != (len(calls) > 0) {
				return fmt.Errorf("event %d: finish_reason %q with %d calls", i, fr.Str, len(calls))
			}
		}
	}
	if dones != 1 || finishes != 1 || usages > 1 {
		return fmt.Errorf("[DONE] %d times, finish %d times, usage %d times", dones, finishes, usages)
	}
	for i, a := range calls {
		if validAt[i] != "" && strings.TrimSpace(validAt[i]) != strings.TrimSpace(a) {
			return fmt.Errorf("call %d: prefix %q is valid JSON but the arguments are %q", i, validAt[i], a)
		}
	}
	return nil
}

// oaiCompare checks an assembled answer against the scenario's expectation.
func oaiCompare(t *testing.T, s oaiScenario, got oaiAssembled) {
	t.Helper()
	want := s.Expect
	if got.Text != want.Text {
		t.Errorf("text %q, want %q", got.Text, want.Text)
	}
	if (got.StreamErr != "") != want.StreamError {
		t.Errorf("stream error %q, want error=%v", got.StreamErr, want.StreamError)
	}
	if want.StreamError {
		return // clients drop the partial message; finish and calls are not reached
	}
	if got.Finish != want.FinishReason {
		t.Errorf("finish_reason %q, want %q", got.Finish, want.FinishReason)
	}
	if want.TotalTokens != 0 && got.Total != want.TotalTokens {
		t.Errorf("total tokens %d, want %d", got.Total, want.TotalTokens)
	}
	if len(got.Calls) != len(want.ToolCalls) {
		t.Fatalf("%d tool calls %+v, want %d", len(got.Calls), got.Calls, len(want.ToolCalls))
	}
	for i, w := range want.ToolCalls {
		g := got.Calls[i]
		if g.Name != w.Name || g.ID == "" || (w.ID != "" && g.ID != w.ID) || (g.Type != "" && g.Type != "function") {
			t.Errorf("call %d: %+v, want id %q name %q", i, g, w.ID, w.Name)
		}
		var ga, wa any
		if err := json.Unmarshal([]byte(g.Args), &ga); err != nil {
			t.Errorf("call %d: arguments %q: %v", i, g.Args, err)
			continue
		}
		_ = json.Unmarshal(w.Arguments, &wa)
		if !reflect.DeepEqual(ga, wa) {
			t.Errorf("call %d: arguments %s, want %s", i, g.Args, w.Arguments)
		}
	}
}

// oaiScenarioStream is what the client receives for a streaming scenario.
func oaiScenarioStream(t *testing.T, s oaiScenario, chunks [][]byte) []byte {
	t.Helper()
	opts := oaiOpts(s.XML, s.IncludeUsage)
	if strings.HasPrefix(s.Upstream.ContentType, "application/json") {
		out, ok := OpenAIChatJSONToSSE([]byte(s.Upstream.Body), opts)
		if !ok {
			t.Fatal("OpenAIChatJSONToSSE: not a chat.completion")
		}
		return out
	}
	return oaiRun(opts, chunks...)
}

func TestOpenAIChatScenarios(t *testing.T) {
	scenarios := oaiLoadScenarios(t)
	if len(scenarios) < 14 {
		t.Fatalf("%d scenarios, want at least 14", len(scenarios))
	}
	seen := map[string]bool{}
	for si, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			if seen[s.Name] || s.Name != strings.ToLower(s.Name) || strings.ContainsAny(s.Name, " _") {
				t.Fatalf("scenario name %q repeated or not kebab-case", s.Name)
			}
			seen[s.Name] = true
			if !s.ClientStream {
				oaiCheckJSONScenario(t, s)
				return
			}
			var first []byte
			for name, chunks := range oaiChunkings([]byte(s.Upstream.Body), uint64(si)) {
				out := oaiScenarioStream(t, s, chunks)
				if err := oaiCheckProfile(out); err != nil {
					t.Fatalf("%s: profile: %v\n%s", name, err, out)
				}
				got, err := oaiAccumulate(out)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				oaiCompare(t, s, got)
				// Events are atomic: the chunking changes when bytes leave,
				// never which bytes.
				if first == nil {
					t.Logf("client stream:\n%s", out)
					first = out
				} else if !bytes.Equal(out, first) {
					t.Fatalf("%s: output differs from another chunking:\n%s\n---\n%s", name, out, first)
				}
			}
		})
	}
}

// The real client agrees with the port: every streaming scenario through
// openai-go's own SSE decoder and ChatCompletionAccumulator.
func TestOpenAIChatScenariosOpenAIGo(t *testing.T) {
	for si, s := range oaiLoadScenarios(t) {
		if !s.ClientStream {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			out := oaiScenarioStream(t, s, oaiChunkings([]byte(s.Upstream.Body), uint64(si))["random"])
			resp := &http.Response{
				Header: http.Header{"Content-Type": {"text/event-stream"}},
				Body:   io.NopCloser(bytes.NewReader(out)),
			}
			stream := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(resp), nil)
			var acc openai.ChatCompletionAccumulator
			for stream.Next() {
				if !acc.AddChunk(stream.Current()) {
					t.Fatalf("accumulator rejected %s", stream.Current().RawJSON())
				}
			}
			got := oaiAssembled{Total: int(acc.Usage.TotalTokens)}
			if err := stream.Err(); err != nil {
				got.StreamErr = err.Error()
			}
			if len(acc.Choices) > 0 {
				m := acc.Choices[0].Message
				got.Text, got.Finish = m.Content, acc.Choices[0].FinishReason
				for _, tc := range m.ToolCalls {
					got.Calls = append(got.Calls, oaiAssembledCall{ID: tc.ID, Type: tc.Type, Name: tc.Function.Name, Args: tc.Function.Arguments})
				}
			}
			oaiCompare(t, s, got)
		})
	}
}

// oaiCheckJSONScenario: stream:false, the body goes through FixOpenAIChatJSON.
func oaiCheckJSONScenario(t *testing.T, s oaiScenario) {
	out, _ := FixOpenAIChatJSON([]byte(s.Upstream.Body), oaiOpts(s.XML, s.IncludeUsage))
	if !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	root := gjson.ParseBytes(out)
	msg := root.Get("choices.0.message")
	got := oaiAssembled{
		Text:   msg.Get("content").Str,
		Finish: root.Get("choices.0.finish_reason").Str,
		Total:  int(root.Get("usage.total_tokens").Int()),
	}
	msg.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		got.Calls = append(got.Calls, oaiAssembledCall{
			ID: tc.Get("id").Str, Type: tc.Get("type").Str,
			Name: tc.Get("function.name").Str, Args: tc.Get("function.arguments").Str,
		})
		return true
	})
	oaiCompare(t, s, got)
}

// A conforming OpenAI stream leaves byte for byte.
func TestOpenAIChatConformingStreamUnchanged(t *testing.T) {
	for _, s := range oaiLoadScenarios(t) {
		if s.Name != "openai-reference-two-parallel-calls" {
			continue
		}
		in := []byte(s.Upstream.Body)
		for name, chunks := range oaiChunkings(in, 1) {
			if out := oaiRun(oaiOpts(false, true), chunks...); !bytes.Equal(out, in) {
				t.Fatalf("%s: changed:\n%s\nwant\n%s", name, out, in)
			}
		}
		return
	}
	t.Fatal("reference scenario missing")
}

// oaiEnv builds upstream chunks for the tests below.
func oaiChunk(delta, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return `data: {"id":"chatcmpl-t","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fr + "}]}\n\n"
}

func oaiText(s string) string {
	b, _ := json.Marshal(s)
	return oaiChunk(`{"content":`+string(b)+`}`, "")
}

const oaiRole = `data: {"id":"chatcmpl-t","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}` + "\n\n"

// Streaming is preserved: a text delta leaves in the Write that completes it.
func TestOpenAIChatStreamsTextImmediately(t *testing.T) {
	for _, xml := range []bool{false, true} {
		n := NewOpenAIChat(oaiOpts(xml, false))
		first := oaiRole + oaiText("Hel")
		if got := n.Write([]byte(first)); !bytes.Equal(got, []byte(first)) {
			t.Fatalf("xml=%v: first write gave %q, want it unchanged", xml, got)
		}
		ev := oaiText("lo <b>bold</b> a<in")
		got := n.Write([]byte(ev[:10]))
		got = append(got, n.Write([]byte(ev[10:]))...)
		if xml {
			// "<in" could still become "<invoke": it is held; the rest leaves.
			acc, _ := oaiAccumulate(append(got, "\n\ndata: [DONE]\n\n"...))
			if acc.Text != "lo <b>bold</b> a" {
				t.Fatalf("xml: got %q from %q", acc.Text, got)
			}
		} else if !bytes.Equal(got, []byte(ev)) {
			t.Fatalf("second event %q, want unchanged", got)
		}
	}
}

// oaiText0 returns what a client assembles from the whole output.
func oaiAssemble(t *testing.T, out []byte) oaiAssembled {
	t.Helper()
	if err := oaiCheckProfile(out); err != nil {
		t.Fatalf("profile: %v\n%s", err, out)
	}
	got, err := oaiAccumulate(out)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestOpenAIChatFraming(t *testing.T) {
	cases := []struct {
		name, in string
		text     string
	}{
		{"done added", oaiRole + oaiText("a"), "a"},
		{"after done dropped", oaiRole + oaiText("a") + "data: [DONE]\n\n" + oaiText("b") + "data: [DONE]\n\n", "a"},
		{"comment kept", ": OPENROUTER PROCESSING\n\n" + oaiRole + ": ping\r\n\r\n" + oaiText("a") + "data: [DONE]\n\n", "a"},
		{"event lines removed", "event: message\ndata: " + oaiText("a")[6:] + "data: [DONE]\n\n", "a"},
		{"empty data and id lines dropped", "data:\n\nid: 7\n\n" + oaiText("a") + "data: [DONE]\n\n", "a"},
		{"garbage data dropped", oaiRole + "data: {not json\n\n" + oaiText("a") + "data: [DONE]\n\n", "a"},
		{"many events one write", oaiRole + oaiText("a") + oaiText("b") + oaiText("c") + oaiChunk(`{}`, "stop") + "data: [DONE]\n\n", "abc"},
		{"split utf8", oaiRole + oaiText("héllo 中文 🙂") + "data: [DONE]\n\n", "héllo 中文 🙂"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for cn, chunks := range oaiChunkings([]byte(tc.in), 3) {
				out := oaiRun(oaiOpts(false, false), chunks...)
				got := oaiAssemble(t, out)
				if got.Text != tc.text || got.Finish != "stop" {
					t.Fatalf("%s: text %q finish %q\n%s", cn, got.Text, got.Finish, out)
				}
				if tc.name == "comment kept" && !bytes.Contains(out, []byte(": ping\n\n")) {
					t.Fatalf("comment lost or not reframed:\n%q", out)
				}
			}
		})
	}
}

func TestOpenAIChatRoleOnce(t *testing.T) {
	in := oaiText("a") + oaiChunk(`{"role":"assistant","content":"b"}`, "") + oaiChunk(`{"role":"assistant"}`, "stop") + "data: [DONE]\n\n"
	out := oaiRun(oaiOpts(false, false), []byte(in))
	if got := oaiAssemble(t, out); got.Text != "ab" {
		t.Fatalf("text %q", got.Text)
	}
	if n := bytes.Count(out, []byte(`"role"`)); n != 1 {
		t.Fatalf("role %d times:\n%s", n, out)
	}
}

func TestOpenAIChatFinish(t *testing.T) {
	call := oaiChunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`, "")
	cases := []struct{ name, in, finish, text string }{
		{"missing", oaiRole + oaiText("a") + "data: [DONE]\n\n", "stop", "a"},
		{"kept", oaiRole + oaiText("a") + oaiChunk(`{}`, "length") + "data: [DONE]\n\n", "length", "a"},
		{"stop with calls", oaiRole + call + oaiChunk(`{}`, "stop") + "data: [DONE]\n\n", "tool_calls", ""},
		{"none with calls", oaiRole + call, "tool_calls", ""},
		{"tool_calls without calls", oaiRole + oaiText("a") + oaiChunk(`{}`, "tool_calls"), "stop", "a"},
		{"content on finish chunk", oaiRole + oaiChunk(`{"content":"a"}`, "stop"), "stop", "a"},
		{"chunks after finish dropped", oaiRole + oaiText("a") + oaiChunk(`{}`, "stop") + oaiText("b") + oaiChunk(`{}`, "stop") + "data: [DONE]\n\n", "stop", "a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := oaiAssemble(t, oaiRun(oaiOpts(false, false), []byte(tc.in)))
			if got.Finish != tc.finish || got.Text != tc.text {
				t.Fatalf("finish %q text %q, want %q %q", got.Finish, got.Text, tc.finish, tc.text)
			}
		})
	}
}

func TestOpenAIChatUsage(t *testing.T) {
	usage := `data: {"id":"chatcmpl-t","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}` + "\n\n"
	onFinish := strings.Replace(oaiChunk(`{}`, "stop"), "]}\n\n", `],"usage":{"total_tokens":5}}`+"\n\n", 1)
	cases := []struct {
		name, in string
		include  bool
		total    int
		chunks   int // usage occurrences in the output
	}{
		{"usage chunk passes", oaiRole + oaiText("a") + oaiChunk(`{}`, "stop") + usage + "data: [DONE]\n\n", true, 3, 1},
		{"usage chunk not asked for", oaiRole + oaiText("a") + oaiChunk(`{}`, "stop") + usage + "data: [DONE]\n\n", false, 0, 0},
		{"usage before finish moves after it", oaiRole + oaiText("a") + usage + oaiChunk(`{}`, "stop") + "data: [DONE]\n\n", true, 3, 1},
		{"usage twice sent once", oaiRole + oaiText("a") + oaiChunk(`{}`, "stop") + usage + usage + "data: [DONE]\n\n", true, 3, 1},
		{"usage on finish chunk stays", oaiRole + oaiText("a") + onFinish + usage + "data: [DONE]\n\n", true, 5, 1},
		{"usage without done", oaiRole + oaiText("a") + usage, true, 3, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := oaiRun(oaiOpts(false, tc.include), []byte(tc.in))
			got := oaiAssemble(t, out)
			if got.Total != tc.total || bytes.Count(out, []byte(`"usage"`)) != tc.chunks {
				t.Fatalf("total %d, want %d:\n%s", got.Total, tc.total, out)
			}
		})
	}
}

func TestOpenAIChatErrors(t *testing.T) {
	cases := []struct {
		name, in string
		text     string
	}{
		{"error key", oaiRole + oaiText("a") + `data: {"error":{"message":"boom","type":"server_error"}}` + "\n\n" + oaiText("b") + "data: [DONE]\n\n", "a"},
		{"error string", oaiRole + oaiText("a") + `data: {"error":"boom"}` + "\n\n", "a"},
		{"event error", oaiRole + oaiText("a") + "event: error\ndata: overloaded\n\n" + oaiText("b"), "a"},
		{"event error json", oaiRole + oaiText("a") + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", "a"},
		{"finish_reason error", oaiRole + oaiText("a") + oaiChunk(`{}`, "error"), "a"},
		{"first event", `data: {"error":{"message":"quota"}}` + "\n\n", ""},
		{"torn last event", oaiRole + oaiText("a") + `data: {"id":"chatcmpl-t","obj`, "a"},
		{"torn call", oaiRole + oaiChunk(`{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}`, ""), ""},
		{"finish length mid call", oaiRole + oaiChunk(`{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}`, "") + oaiChunk(`{}`, "length") + "data: [DONE]\n\n", ""},
		{"empty body", "", ""},
		{"comments only", ": x\n\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := oaiRun(oaiOpts(false, false), []byte(tc.in))
			got := oaiAssemble(t, out)
			if got.StreamErr == "" || got.Text != tc.text {
				t.Fatalf("error %q text %q:\n%s", got.StreamErr, got.Text, out)
			}
			// The order is: error chunk, finish chunk, [DONE].
			tail := out[bytes.Index(out, []byte(`data: {"error"`)):]
			evs := strings.Split(strings.TrimSuffix(string(tail), "\n\n"), "\n\n")
			if len(evs) != 3 || !strings.Contains(evs[1], `"finish_reason":"`) || evs[2] != "data: [DONE]" {
				t.Fatalf("tail after the error:\n%s", tail)
			}
		})
	}
	// "error": null on normal chunks is removed (openai-go treats any error key as an error).
	in := strings.Replace(oaiText("a"), `"model":"m",`, `"model":"m","error":null,`, 1)
	out := oaiRun(oaiOpts(false, false), []byte(oaiRole+in))
	if got := oaiAssemble(t, out); got.StreamErr != "" || got.Text != "a" {
		t.Fatalf("error:null: %+v\n%s", got, out)
	}
}

// Not a chat stream: bytes pass unchanged, nothing added.
func TestOpenAIChatNonChatPassthrough(t *testing.T) {
	for _, in := range []string{
		"data: hello\n\ndata: world\n\n",
		"event: ping\ndata: plain text\n\ndata: {\"x\":1}\n\npartial",
	} {
		for name, chunks := range oaiChunkings([]byte(in), 5) {
			if out := oaiRun(oaiOpts(false, false), chunks...); string(out) != strings.Replace(in, "event: ping\n", "event: ping\n", 1) {
				t.Fatalf("%s: %q -> %q", name, in, out)
			}
		}
	}
}

func TestOpenAIChatToolCallShapes(t *testing.T) {
	tc := func(entries ...string) string {
		return oaiChunk(`{"tool_calls":[`+strings.Join(entries, ",")+`]}`, "")
	}
	type call struct{ name, args string }
	cases := []struct {
		name string
		in   string
		want []call
	}{
		{"sparse indexes", tc(`{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}`) +
			tc(`{"index":2,"id":"b","type":"function","function":{"name":"g","arguments":""}}`) + tc(`{"index":2,"function":{"arguments":"{\"x\":1}"}}`) +
			tc(`{"index":5,"id":"c","type":"function","function":{"name":"h","arguments":"{}"}}`),
			[]call{{"f", "{}"}, {"g", `{"x":1}`}, {"h", "{}"}}},
		{"many entries in one chunk", tc(`{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"a\""}}`,
			`{"index":0,"function":{"arguments":":1}"}}`, `{"index":1,"id":"b","function":{"name":"g","arguments":"[1]"}}`),
			[]call{{"f", `{"a":1}`}, {"g", "[1]"}}},
		{"same index new id", tc(`{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}`) +
			tc(`{"index":0,"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}`),
			[]call{{"f", "{}"}, {"g", "{}"}}},
		{"same id new index", tc(`{"index":0,"id":"x","type":"function","function":{"name":"f","arguments":"{}"}}`) +
			tc(`{"index":1,"id":"x","type":"function","function":{"name":"g","arguments":"{}"}}`),
			[]call{{"f", "{}"}, {"g", "{}"}}},
		{"arguments as object", tc(`{"index":0,"id":"a","function":{"name":"f","arguments":{"k": [1, 2]}}}`),
			[]call{{"f", `{"k":[1,2]}`}}},
		{"nameless call dropped", tc(`{"index":0,"id":"a","function":{"arguments":"{}"}}`) + tc(`{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}`),
			[]call{{"g", "{}"}}},
		{"fragment after complete dropped", tc(`{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}`) +
			tc(`{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}`) + tc(`{"index":0,"function":{"arguments":"{}"}}`),
			[]call{{"f", "{}"}, {"g", "{}"}}},
		{"more after complete arguments dropped", tc(`{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}`) +
			tc(`{"index":0,"function":{"arguments":" {\"x\":1}"}}`),
			[]call{{"f", "{}"}}},
		{"scalar arguments sent whole", tc(`{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":""}}`) +
			tc(`{"index":0,"function":{"arguments":"1"}}`) + tc(`{"index":0,"function":{"arguments":"2"}}`),
			[]call{{"f", "12"}}},
		{"text between calls", tc(`{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}`) + oaiText("note") +
			tc(`{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}`),
			[]call{{"f", "{}"}, {"g", "{}"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := oaiRun(oaiOpts(false, false), []byte(oaiRole+c.in+oaiChunk(`{}`, "tool_calls")+"data: [DONE]\n\n"))
			got := oaiAssemble(t, out)
			if len(got.Calls) != len(c.want) {
				t.Fatalf("calls %+v\n%s", got.Calls, out)
			}
			for i, w := range c.want {
				if got.Calls[i].Name != w.name || got.Calls[i].Args != w.args {
					t.Fatalf("call %d = %+v, want %+v\n%s", i, got.Calls[i], w, out)
				}
			}
		})
	}
}

// A call whose name arrives late is held, then emitted whole.
func TestOpenAIChatHoldsNamelessCall(t *testing.T) {
	n := NewOpenAIChat(oaiOpts(false, false))
	out := n.Write([]byte(oaiRole + oaiChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}`, "")))
	if bytes.Contains(out, []byte("tool_calls")) {
		t.Fatalf("nameless fragment emitted: %s", out)
	}
	out = n.Write([]byte(oaiChunk(`{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"1}"}}]}`, "")))
	if !bytes.Contains(out, []byte(`"name":"f","arguments":""`)) || !bytes.Contains(out, []byte(`"arguments":"{\"a\":1}"`)) {
		t.Fatalf("named call: %s", out)
	}
}

func TestOpenAIChatXML(t *testing.T) {
	cases := []struct {
		name, text string
		want       string
		calls      []string // name + " " + args
		finish     string
	}{
		{"plain", "no tags here", "no tags here", nil, "stop"},
		{"lt not invoke", "a < b and <b>x</b>", "a < b and <b>x</b>", nil, "stop"},
		{"unclosed at end", `pre <invoke name="f"><parameter name="a">1`, `pre <invoke name="f"><parameter name="a">1`, nil, "stop"},
		{"prefix at end", "pre <invo", "pre <invo", nil, "stop"},
		{"one call", `x<invoke name="f"><parameter name="a">1</parameter></invoke>y`, "xy", []string{`f {"a":1}`}, "tool_calls"},
		{"final answer inner text", `<invoke name="final_answer">All done.</invoke>`, "All done.", nil, "stop"},
		{"string literal param", `<invoke name="f"><parameter name="s">"q"</parameter><parameter name="t"> hi </parameter></invoke>`, "", []string{`f {"s":"\"q\"","t":"hi"}`}, "tool_calls"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var in strings.Builder
			in.WriteString(oaiRole)
			for _, r := range tc.text { // one delta per rune: the worst split
				in.WriteString(oaiText(string(r)))
			}
			in.WriteString(oaiChunk(`{}`, "stop"))
			out := oaiRun(oaiOpts(true, false), []byte(in.String()))
			got := oaiAssemble(t, out)
			var calls []string
			for _, c := range got.Calls {
				calls = append(calls, c.Name+" "+c.Args)
			}
			if got.Text != tc.want || fmt.Sprint(calls) != fmt.Sprint(tc.calls) || got.Finish != tc.finish {
				t.Fatalf("text %q calls %q finish %q\n%s", got.Text, calls, got.Finish, out)
			}
		})
	}
}
