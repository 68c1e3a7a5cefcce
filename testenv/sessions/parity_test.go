package sessions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
)

// TestResultsCompressAlikeInEveryDialect: a recorded session's tool results
// reach compression through the wire model, in the dialect the agent
// speaks. Every result must compress to the same text in the five forms
// of the same request (Anthropic and OpenAI Chat as recorded; OpenAI
// Responses, Bedrock Converse and Gemini built from the Anthropic one),
// and to what compression gives that text alone with its call's arguments
// as an object (the form the quality harness measures). OpenAI's
// string-of-JSON arguments once broke this for every OpenAI caller: the
// harness never saw it.
func TestResultsCompressAlikeInEveryDialect(t *testing.T) {
	files := []string{filepath.Join("testdata", "sample.jsonl")}
	for _, name := range parityFiles() {
		files = append(files, filepath.Join("corpus", name+".jsonl.gz"))
	}
	strategy := compress.Structural(compress.StructuralOptions{})
	opts := shadow.CompressOptions{Strategy: strategy, MinBytes: 4096, Clamp: clamp.Limits{MaxBytes: 1 << 30, MaxLines: 1 << 30}}
	compared, sessions := 0, 0
	err := Each(files, nil, func(s Session) error {
		sessions++
		got := map[wire.Dialect]map[string]string{}
		final := s.Anthropic[len(s.Anthropic)-1]
		bodies := map[wire.Dialect][]byte{
			wire.Anthropic:       final,
			wire.OpenAIChat:      s.OpenAI[len(s.OpenAI)-1],
			wire.OpenAIResponses: asResponses(final),
			wire.Bedrock:         asBedrock(final),
			wire.Gemini:          asGemini(final),
		}
		for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat, wire.OpenAIResponses, wire.Bedrock, wire.Gemini} {
			body := bodies[d]
			in, err := wire.Parse(d, body)
			if err != nil {
				t.Fatalf("%s %s: %v", s.Name, d, err)
			}
			f := shadow.NewCompressFilter(opts, shadow.Env{Store: shadow.NewMemory(shadow.MemoryOptions{}), Tenant: "t"})
			out, _, err := pipeline.New(f).Run(d, body)
			if err != nil {
				t.Fatalf("%s %s: %v", s.Name, d, err)
			}
			oc, err := wire.Parse(d, out)
			if err != nil {
				t.Fatalf("%s %s: the rewrite is not a request: %v", s.Name, d, err)
			}
			texts := map[string]string{}
			for i, r := range in.Results {
				text, sent := resultText(r), resultText(oc.Results[i])
				if len(text) <= opts.MinBytes || sent == "" || isBackgroundRead(r.ToolName) {
					continue
				}
				if _, _, rest, ok := shadow.ParseReference(sent); ok {
					want, _ := strategy.Compress(text, compress.Hint{ToolName: r.ToolName, Args: wire.ArgsObject(r.Args).Raw})
					if rest != want {
						t.Errorf("%s %s, result %d (%s): sent %d bytes, compression alone gives %d", s.Name, d, i, r.ToolName, len(rest), len(want))
					}
				} else if sent != text {
					// Left whole when the reference would make it no smaller.
					t.Errorf("%s %s, result %d (%s): changed without a reference", s.Name, d, i, r.ToolName)
				}
				texts[r.CallID] = sent
			}
			got[d] = texts
		}
		for _, d := range []wire.Dialect{wire.OpenAIChat, wire.OpenAIResponses, wire.Bedrock, wire.Gemini} {
			for id, a := range got[wire.Anthropic] {
				if b, ok := got[d][id]; ok {
					compared++
					if a != b {
						t.Errorf("%s, call %s: %s compresses the result differently from anthropic", s.Name, id, d)
					}
				} else {
					t.Errorf("%s, call %s: no such result in %s", s.Name, id, d)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if compared < 50 {
		t.Fatalf("compared %d results of %d sessions: the files did not load", compared, sessions)
	}
	t.Logf("%d sessions, %d results compared", sessions, compared)
}

// isBackgroundRead: a background task's output takes the hint of the call
// that started it (filters/shadow/background.go), not its own.
func isBackgroundRead(tool string) bool {
	switch tool {
	case "TaskOutput", "BashOutput", "write_stdin":
		return true
	}
	return false
}

// parityFiles are the corpus files the test reads: one per agent (fewer
// under the race detector), or with
// PARITY_ALL=1 every file (670 sessions, about 35 s).
func parityFiles() []string {
	if os.Getenv("PARITY_ALL") != "" {
		m, _ := filepath.Glob("corpus/*.jsonl.gz")
		var out []string
		for _, f := range m {
			out = append(out, strings.TrimSuffix(filepath.Base(f), ".jsonl.gz"))
		}
		return out
	}
	if raceEnabled {
		// The race detector makes compression ten times slower; the
		// smaller files keep every dialect form of the arguments.
		return []string{"codex-cli-hk", "copilot-cli-azure-dev", "gemini-cli-gastownhall"}
	}
	return []string{"codex-cli-hk", "claude-code-ned", "copilot-cli-azure-dev", "gemini-cli-gastownhall", "pi-coding-agent"}
}

// The other dialects' forms of a session's final Anthropic request: each
// message's text, calls and results, in order, as that dialect carries
// them (tool results as text; Gemini's as functionResponse.response's
// "output" string, which its parser reads as a JSON result).

type block struct {
	kind           string // text, call, result
	text, id, name string
	input          string // a call's arguments, a JSON object
	isError        bool
}

func blocksOf(msg gjson.Result) []block {
	c := msg.Get("content")
	if c.Type == gjson.String {
		return []block{{kind: "text", text: c.String()}}
	}
	var out []block
	c.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").String() {
		case "text":
			out = append(out, block{kind: "text", text: b.Get("text").String()})
		case "tool_use":
			out = append(out, block{kind: "call", id: b.Get("id").String(), name: b.Get("name").String(), input: b.Get("input").Raw})
		case "tool_result":
			text := b.Get("content").String()
			if b.Get("content").IsArray() {
				var sb strings.Builder
				b.Get("content").ForEach(func(_, p gjson.Result) bool {
					sb.WriteString(p.Get("text").String())
					return true
				})
				text = sb.String()
			}
			out = append(out, block{kind: "result", id: b.Get("tool_use_id").String(), text: text, isError: b.Get("is_error").Bool()})
		}
		return true
	})
	return out
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// joinParts renders each block of an Anthropic message with part and
// joins them with commas.
func joinParts(m gjson.Result, part func(b block) string) string {
	var parts []string
	for _, b := range blocksOf(m) {
		parts = append(parts, part(b))
	}
	return strings.Join(parts, ",")
}

// eachMessage calls fn with each message of an Anthropic request.
func eachMessage(anthropic []byte, fn func(role string, m gjson.Result)) {
	gjson.GetBytes(anthropic, "messages").ForEach(func(_, m gjson.Result) bool {
		fn(m.Get("role").String(), m)
		return true
	})
}

func asResponses(anthropic []byte) []byte {
	var items []string
	eachMessage(anthropic, func(role string, m gjson.Result) {
		items = append(items, joinParts(m, func(b block) string {
			switch b.kind {
			case "call":
				return `{"type":"function_call","call_id":` + quoteJSON(b.id) + `,"name":` + quoteJSON(b.name) + `,"arguments":` + quoteJSON(b.input) + `}`
			case "result":
				return `{"type":"function_call_output","call_id":` + quoteJSON(b.id) + `,"output":` + quoteJSON(b.text) + `}`
			}
			return `{"role":` + quoteJSON(role) + `,"content":` + quoteJSON(b.text) + `}`
		}))
	})
	return []byte(`{"model":"gpt-5-codex","input":[` + strings.Join(items, ",") + `]}`)
}

func asBedrock(anthropic []byte) []byte {
	var msgs []string
	eachMessage(anthropic, func(role string, m gjson.Result) {
		parts := joinParts(m, func(b block) string {
			switch b.kind {
			case "call":
				return `{"toolUse":{"toolUseId":` + quoteJSON(b.id) + `,"name":` + quoteJSON(b.name) + `,"input":` + b.input + `}}`
			case "result":
				status := ""
				if b.isError {
					status = `,"status":"error"`
				}
				return `{"toolResult":{"toolUseId":` + quoteJSON(b.id) + `,"content":[{"text":` + quoteJSON(b.text) + `}]` + status + `}}`
			}
			return `{"text":` + quoteJSON(b.text) + `}`
		})
		msgs = append(msgs, `{"role":`+quoteJSON(role)+`,"content":[`+parts+`]}`)
	})
	return []byte(`{"messages":[` + strings.Join(msgs, ",") + `]}`)
}

func asGemini(anthropic []byte) []byte {
	names := map[string]string{} // call id → tool name
	var contents []string
	eachMessage(anthropic, func(role string, m gjson.Result) {
		if role == "assistant" {
			role = "model"
		}
		parts := joinParts(m, func(b block) string {
			switch b.kind {
			case "call":
				names[b.id] = b.name
				return `{"functionCall":{"id":` + quoteJSON(b.id) + `,"name":` + quoteJSON(b.name) + `,"args":` + b.input + `}}`
			case "result":
				return `{"functionResponse":{"id":` + quoteJSON(b.id) + `,"name":` + quoteJSON(names[b.id]) + `,"response":{"output":` + quoteJSON(b.text) + `}}}`
			}
			return `{"text":` + quoteJSON(b.text) + `}`
		})
		contents = append(contents, `{"role":"`+role+`","parts":[`+parts+`]}`)
	})
	return []byte(`{"contents":[` + strings.Join(contents, ",") + `]}`)
}

// resultText is a result's one text: its text block, or the "output"
// string of Gemini's functionResponse.response; "" for any other shape.
func resultText(r wire.ToolResult) string {
	switch {
	case len(r.Texts) == 1 && len(r.JSON) == 0:
		return r.Texts[0].Text()
	case len(r.Texts) == 0 && len(r.JSON) == 1:
		return gjson.Parse(r.JSON[0].Raw).Get("output").String()
	}
	return ""
}
