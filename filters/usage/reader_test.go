package usage

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
)

const (
	ctJSON  = "application/json"
	ctSSE   = "text/event-stream; charset=utf-8"
	ctEvent = "application/vnd.amazon.eventstream"
)

// body reads a testdata file; *.chunks.jsonl files get their SSE framing
// back (testdata/SOURCES.md).
func body(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".chunks.jsonl") {
		var out []byte
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			out = append(append(append(out, "data: "...), line...), "\n\n"...)
		}
		return out
	}
	return b
}

// geminiArray is the streamGenerateContent answer without alt=sse: one
// JSON array of GenerateContentResponse objects
// (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent).
func geminiArray(t testing.TB) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "gemini-function-call-stream.response.chunks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return append(append([]byte("[\n"), bytes.Join(lines, []byte(",\r\n"))...), "\n]"...)
}

// anthropicJSON is a non-streaming Messages answer after a cache hit,
// shaped as the API reference's example (no captured one exists;
// https://docs.anthropic.com/en/api/messages). A tool_use input that
// happens to hold a "usage" key must not be read as the bill.
const anthropicJSON = `{"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant","model":"claude-sonnet-4-5",` +
	`"content":[{"type":"text","text":"the \"usage\":{\"input_tokens\":999} text"},` +
	`{"type":"tool_use","id":"toolu_01","name":"probe","input":{"usage":{"input_tokens":777}}}],` +
	`"stop_reason":"tool_use","stop_sequence":null,` +
	`"usage":{"input_tokens":21,"cache_creation_input_tokens":188,"cache_read_input_tokens":2042,` +
	`"cache_creation":{"ephemeral_5m_input_tokens":188,"ephemeral_1h_input_tokens":0},"output_tokens":393,"service_tier":"standard"}}`

// bedrockJSON is a Converse answer with prompt caching, shaped as the AWS
// API reference's ConverseResponse (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).
const bedrockJSON = `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"probe","input":{"usage":{"inputTokens":5}}}}]}},` +
	`"stopReason":"tool_use","usage":{"inputTokens":30,"outputTokens":628,"totalTokens":2248,"cacheReadInputTokens":1500,"cacheWriteInputTokens":90},"metrics":{"latencyMs":1275}}`

// eventFrame encodes one AWS event-stream message with string headers
// (https://docs.aws.amazon.com/AmazonS3/latest/API/RESTSelectObjectAppendix.html).
func eventFrame(eventType string, payload []byte) []byte {
	var h []byte
	for _, kv := range [][2]string{{":event-type", eventType}, {":content-type", "application/json"}, {":message-type", "event"}} {
		h = append(h, byte(len(kv[0])))
		h = append(h, kv[0]...)
		h = append(h, 7) // string
		h = binary.BigEndian.AppendUint16(h, uint16(len(kv[1])))
		h = append(h, kv[1]...)
	}
	total := 16 + len(h) + len(payload)
	out := binary.BigEndian.AppendUint32(nil, uint32(total))
	out = binary.BigEndian.AppendUint32(out, uint32(len(h)))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
	out = append(append(out, h...), payload...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

// bedrockStream is a ConverseStream answer: messageStart, a text delta
// whose text looks like usage, messageStop and the metadata event that
// carries the bill (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html).
func bedrockStream() []byte {
	var b []byte
	b = append(b, eventFrame("messageStart", []byte(`{"role":"assistant"}`))...)
	b = append(b, eventFrame("contentBlockDelta", []byte(`{"contentBlockIndex":0,"delta":{"text":"{\"usage\":{\"inputTokens\":9}} \"{["}}`))...)
	b = append(b, eventFrame("contentBlockStop", []byte(`{"contentBlockIndex":0}`))...)
	b = append(b, eventFrame("messageStop", []byte(`{"stopReason":"end_turn"}`))...)
	b = append(b, eventFrame("metadata", []byte(`{"usage":{"inputTokens":12,"outputTokens":340,"totalTokens":1952,"cacheReadInputTokens":1600,"cacheWriteInputTokens":0},"metrics":{"latencyMs":912}}`))...)
	return b
}

// bedrockInvokeStream is the captured Anthropic stream as Claude on
// Bedrock sends it through InvokeModelWithResponseStream: each event's JSON
// base64-encoded in a chunk frame's {"bytes":…}
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html).
func bedrockInvokeStream(t testing.TB) []byte {
	var out []byte
	for _, line := range bytes.Split(body(t, "anthropic-tool-use.response.sse"), []byte("\n")) {
		ev, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
		if !ok {
			continue
		}
		payload := `{"bytes":"` + base64.StdEncoding.EncodeToString(bytes.TrimSpace(ev)) + `","p":"abcdefgh"}`
		out = append(out, eventFrame("chunk", []byte(payload))...)
	}
	return out
}

type readerCase struct {
	name    string
	dialect wire.Dialect
	ct      string
	body    func(testing.TB) []byte
	want    Usage
}

func file(name string) func(testing.TB) []byte {
	return func(t testing.TB) []byte { return body(t, name) }
}

func lit(s string) func(testing.TB) []byte { return func(testing.TB) []byte { return []byte(s) } }

// readerCases: every dialect, JSON and stream, from captured answers where
// the fixture set has one.
func readerCases() []readerCase {
	return []readerCase{
		{"anthropic/json", wire.Anthropic, ctJSON, lit(anthropicJSON), Usage{Input: 21, CacheRead: 2042, CacheWrite: 188, Output: 393}},
		// message_start carries input_tokens, message_delta the cumulative output_tokens.
		{"anthropic/sse", wire.Anthropic, ctSSE, file("anthropic-tool-use.response.sse"), Usage{Input: 599, Output: 135}},
		{"anthropic/bedrock-invoke-stream", wire.Anthropic, ctEvent, bedrockInvokeStream, Usage{Input: 599, Output: 135}},
		// message_delta repeats the input fields (context management).
		{"anthropic/sse-context-editing", wire.Anthropic, ctSSE, file("anthropic-context-editing.response.chunks.jsonl"), Usage{Input: 859, Output: 122}},
		// The final usage nests per-iteration usage objects; the top level is the bill.
		{"anthropic/sse-compaction", wire.Anthropic, ctSSE, file("anthropic-compaction.response.chunks.jsonl"), Usage{Input: 612, Output: 2819}},
		{"openai_chat/json", wire.OpenAIChat, ctJSON, file("openai-chat-tool-call.response.json"), Usage{Input: 157, Output: 57}},
		{"openai_chat/json-details", wire.OpenAIChat, ctJSON, file("openai-chat-tool-results.response.json"), Usage{Input: 143, Output: 36}},
		// Every chunk carries "usage":null but the last (include_usage).
		{"openai_chat/sse", wire.OpenAIChat, ctSSE, file("openai-chat-tool-call-stream.response.sse"), Usage{Input: 85, Output: 24}},
		{"openai_chat/sse-reasoning", wire.OpenAIChat, ctSSE, file("openai-chat-stream-usage.response.sse"), Usage{Input: 12, Output: 100}},
		{"openai_chat/sse-cached", wire.OpenAIChat, ctSSE, lit("data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":2006,\"completion_tokens\":300,\"total_tokens\":2306,\"prompt_tokens_details\":{\"cached_tokens\":1920}}}\r\n\r\ndata: [DONE]\r\n\r\n"), Usage{Input: 86, CacheRead: 1920, Output: 300}},
		{"openai_responses/json", wire.OpenAIResponses, ctJSON, file("openai-responses-function-call-output.response.json"), Usage{Input: 312, Output: 14}},
		// response.created and response.in_progress carry "usage":null; response.completed the bill.
		{"openai_responses/sse", wire.OpenAIResponses, ctSSE, file("openai-responses-function-call.response.sse"), Usage{Input: 75, Output: 23}},
		// Four answers recorded back to back (reasoning items, encrypted
		// content): each response.completed states its whole bill, the
		// last one read stands.
		{"openai_responses/sse-reasoning", wire.OpenAIResponses, ctSSE, file("openai-responses-reasoning-function-call.response.chunks.jsonl"), Usage{Input: 299, Output: 12}},
		{"gemini/json", wire.Gemini, ctJSON, file("gemini-function-call.response.json"), Usage{Input: 170, Output: 16 + 132}},
		{"gemini/sse", wire.Gemini, ctSSE, file("gemini-function-call-stream.response.chunks.jsonl"), Usage{Input: 29, Output: 15 + 804}},
		{"gemini/json-array-stream", wire.Gemini, ctJSON, geminiArray, Usage{Input: 29, Output: 15 + 804}},
		{"gemini/json-cached", wire.Gemini, ctJSON, lit(`{"candidates":[],"usageMetadata":{"promptTokenCount":5000,"cachedContentTokenCount":4096,"candidatesTokenCount":10,"totalTokenCount":5010}}`), Usage{Input: 904, CacheRead: 4096, Output: 10}},
		{"bedrock/json", wire.Bedrock, ctJSON, lit(bedrockJSON), Usage{Input: 30, CacheRead: 1500, CacheWrite: 90, Output: 628}},
		{"bedrock/eventstream", wire.Bedrock, ctEvent, func(testing.TB) []byte { return bedrockStream() }, Usage{Input: 12, CacheRead: 1600, Output: 340}},
	}
}

func TestReaderDialects(t *testing.T) {
	for _, tc := range readerCases() {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.body(t)
			// Whole, then every chunk size Envoy might cut at: the result
			// must not depend on where the chunks end.
			for _, size := range []int{len(b), 1, 2, 3, 7, 64, 1000} {
				r := NewReader(tc.dialect, tc.ct, 0)
				for rest := b; len(rest) > 0; {
					n := min(size, len(rest))
					r.Write(rest[:n])
					rest = rest[n:]
				}
				got, ok := r.Usage()
				if !ok || got != tc.want {
					t.Fatalf("chunks of %d: got %+v (found %v), want %+v", size, got, ok, tc.want)
				}
			}
		})
	}
}

func TestReaderDoesNotTouchBytes(t *testing.T) {
	b := body(t, "anthropic-tool-use.response.sse")
	orig := bytes.Clone(b)
	r := NewReader(wire.Anthropic, ctSSE, 0)
	r.Write(b)
	if !bytes.Equal(b, orig) {
		t.Fatal("Write changed its input")
	}
}

func TestReaderHostile(t *testing.T) {
	cases := []struct {
		name, ct, body string
		found          bool
		dropped        int
	}{
		{"usage in a string", ctJSON, `{"content":"{\"usage\":{\"prompt_tokens\":5}}"}`, false, 0},
		{"usage below an array", ctJSON, `{"choices":[{"usage":{"prompt_tokens":5}}]}`, false, 0},
		{"usage too deep", ctJSON, `{"a":{"b":{"usage":{"prompt_tokens":5}}}}`, false, 0},
		{"usage null", ctSSE, "data: {\"usage\":null}\n\n", false, 0},
		{"deep nesting", ctJSON, strings.Repeat("[", 100000) + strings.Repeat("]", 100000), false, 0},
		{"too large", ctJSON, `{"usage":{"prompt_tokens":5,"x":"` + strings.Repeat("a", DefaultMaxObject) + `"}}`, false, 1},
		// A broken event cannot swallow the next one.
		{"broken event", ctSSE, "data: {\"x\":\"unterminated\n\ndata: {\"usage\":{\"prompt_tokens\":5}}\n\n", true, 0},
		{"non-data lines", ctSSE, ": comment {\"usage\":{\"prompt_tokens\":5}}\nevent: x\n\n", false, 0},
		{"not json", ctJSON, "\x00\xff}}]]\"\\", false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(wire.OpenAIChat, tc.ct, 0)
			r.Write([]byte(tc.body))
			if _, ok := r.Usage(); ok != tc.found || r.Dropped() != tc.dropped {
				t.Fatalf("found %v dropped %d, want %v %d", ok, r.Dropped(), tc.found, tc.dropped)
			}
		})
	}
}

func TestReaderBadFrame(t *testing.T) {
	r := NewReader(wire.Bedrock, ctEvent, 0)
	r.Write([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0})
	r.Write(bedrockStream())
	if _, ok := r.Usage(); ok || r.GaveUp() == "" {
		t.Fatalf("a corrupt prelude must stop the reader, got found=%v gaveUp=%q", ok, r.GaveUp())
	}
}

func TestFromJSON(t *testing.T) {
	u, ok := FromJSON(wire.Bedrock, []byte(bedrockJSON))
	if !ok || u.Prompt() != 30+1500+90 || u.ByKind() != [4]int64{30, 1500, 90, 628} {
		t.Fatalf("got %+v %v", u, ok)
	}
	if s := u.Add(u); s.Output != 2*628 {
		t.Fatalf("Add: %+v", s)
	}
}

// FuzzReader: no input panics, and the usage read never depends on where
// the chunks were cut.
func FuzzReader(f *testing.F) {
	for _, tc := range readerCases() {
		f.Add(tc.body(f), uint8(3), uint8(tc.dialectIndex()), uint8(tc.framingIndex()))
	}
	f.Add([]byte(`{"usage":{"a":[{"b":"\u0022"}]}}`), uint8(1), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, size, d, fr uint8) {
		dialect := wire.Dialects[int(d)%len(wire.Dialects)]
		ct := []string{ctJSON, ctSSE, ctEvent}[int(fr)%3]
		whole := NewReader(dialect, ct, 256)
		whole.Write(data)
		cut := NewReader(dialect, ct, 256)
		step := int(size)%17 + 1
		for rest := data; len(rest) > 0; {
			n := min(step, len(rest))
			cut.Write(rest[:n])
			rest = rest[n:]
		}
		u1, ok1 := whole.Usage()
		u2, ok2 := cut.Usage()
		if u1 != u2 || ok1 != ok2 || whole.Dropped() != cut.Dropped() {
			t.Fatalf("whole %+v %v, in chunks of %d %+v %v", u1, ok1, step, u2, ok2)
		}
		for _, v := range u1.ByKind() {
			if v < 0 {
				t.Fatalf("negative count %+v", u1)
			}
		}
	})
}

func (tc readerCase) dialectIndex() int {
	for i, d := range wire.Dialects {
		if d == tc.dialect {
			return i
		}
	}
	return 0
}

func (tc readerCase) framingIndex() int {
	switch tc.ct {
	case ctSSE:
		return 1
	case ctEvent:
		return 2
	}
	return 0
}

func BenchmarkReaderSSE(b *testing.B) {
	data := body(b, "anthropic-compaction.response.chunks.jsonl")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r := NewReader(wire.Anthropic, ctSSE, 0)
		for rest := data; len(rest) > 0; {
			n := min(4096, len(rest))
			r.Write(rest[:n])
			rest = rest[n:]
		}
	}
}
