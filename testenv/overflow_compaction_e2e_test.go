package testenv_test

// Issue 25 item 4: an agent's compaction request carries the whole history
// and is the one most likely to overflow. Claude Code's /compact (Anthropic),
// Codex's compaction_trigger (Responses) and OpenCode's summary request
// (Chat), each 1.5x over the provider's window, must succeed: recovery
// shrinks the old tool output, leaves the instructions, the latest turn
// and every compaction block or item byte-identical, and offers no
// expand_context to a summariser.

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/testenv"
)

const (
	anthropicCompactionBlock = `{"type":"compaction","content":"Earlier: the user asked to fix the failing build; go.mod was updated to Go 1.26."}`
	responsesCompactionItem  = `{"type":"compaction","id":"cmp_01","encrypted_content":"gAAAAABpZ2NvbXBhY3RlZC1oaXN0b3J5LTAwMDE="}`
	claudeCodeCompact        = "Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions."
	openCodeSummary          = "Provide a detailed prompt for continuing our conversation above. Focus on what we did, which files we changed and what comes next."
)

// vetLog is a tool result of about 8 KB: go vet's warnings for one package.
func vetLog(pkg int) string {
	var b strings.Builder
	for i := 0; b.Len() < 8000; i++ {
		fmt.Fprintf(&b, "pkg%02d/file%03d.go:%d:%d: result of fmt.Sprintf call not used (unusedresult)\n", pkg, i%37, 10+i*7, 2+i%9)
	}
	return b.String()
}

// compactionRequest is an agent's compaction request with n tool results.
func compactionRequest(d wire.Dialect, n int, stream bool) (path string, body []byte, instruction string, opaque string) {
	q := func(s string) string { return string(wire.QuoteString(s)) }
	var b strings.Builder
	switch d {
	case wire.Anthropic:
		fmt.Fprintf(&b, `{"model":"claude-sonnet-4-5","max_tokens":20000,"stream":%t,"system":[{"type":"text","text":"You are a helpful AI assistant tasked with summarizing conversations."}],"messages":[`, stream)
		b.WriteString(`{"role":"user","content":"Fix the failing build."},{"role":"assistant","content":[` + anthropicCompactionBlock + `,{"type":"text","text":"Continuing from the summary."}]},{"role":"user","content":"Go on."}`)
		for i := range n {
			fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%02d","name":"Bash","input":{"command":"go vet ./pkg%02d/..."}}]}`, i, i)
			fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%02d","content":%s}]}`, i, q(vetLog(i)))
		}
		instruction = `{"role":"user","content":[{"type":"text","text":` + q(claudeCodeCompact) + `}]}`
		b.WriteString(`,{"role":"assistant","content":[{"type":"text","text":"All packages vetted."}]},` + instruction + `]}`)
		return "/v1/messages", []byte(b.String()), instruction, anthropicCompactionBlock
	case wire.OpenAIResponses:
		fmt.Fprintf(&b, `{"model":"gpt-5-codex","stream":%t,"store":false,"instructions":"You are Codex, a coding agent.","input":[`, stream)
		b.WriteString(`{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix the failing build."}]},` + responsesCompactionItem)
		for i := range n {
			fmt.Fprintf(&b, `,{"type":"function_call","call_id":"call_%02d","name":"shell","arguments":%s}`, i, q(fmt.Sprintf(`{"command":["go","vet","./pkg%02d/..."]}`, i)))
			fmt.Fprintf(&b, `,{"type":"function_call_output","call_id":"call_%02d","output":%s}`, i, q(vetLog(i)))
		}
		instruction = `{"type":"compaction_trigger"}`
		b.WriteString(`,{"type":"message","role":"assistant","content":[{"type":"output_text","text":"All packages vetted."}]},` + instruction + `]}`)
		return "/v1/responses", []byte(b.String()), instruction, responsesCompactionItem
	default:
		fmt.Fprintf(&b, `{"model":"gpt-4o","stream":%t,"messages":[{"role":"system","content":"You are opencode, a coding agent."},{"role":"user","content":"Fix the failing build."}`, stream)
		for i := range n {
			fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%02d","type":"function","function":{"name":"bash","arguments":%s}}]}`, i, q(fmt.Sprintf(`{"command":"go vet ./pkg%02d/..."}`, i)))
			fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%02d","content":%s}`, i, q(vetLog(i)))
		}
		instruction = `{"role":"user","content":` + q(openCodeSummary) + `}`
		b.WriteString(`,{"role":"assistant","content":"All packages vetted."},` + instruction + `]}`)
		return "/v1/chat/completions", []byte(b.String()), instruction, ""
	}
}

func TestOverflowCompactionRequests(t *testing.T) {
	for _, mode := range recoveryModes {
		up := testenv.NewFakeUpstream()
		r := harness{config: noCompress, respMode: mode, seed: 31, upstream: up}.start(t)
		for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIResponses, wire.OpenAIChat} {
			for _, stream := range []bool{false, true} {
				name := mode.String() + "/" + string(d)
				if stream {
					name += "/stream"
				}
				t.Run(name, func(t *testing.T) {
					_, body, instruction, opaque := compactionRequest(d, 12, stream)
					window := len(body) / 4 * 2 / 3 // the request is 1.5x the window
					up.Reset()
					up.SetScript(testenv.TokenWindowModel{Window: window}.Script())
					var c sdkCall
					if d == wire.Anthropic {
						c = anthropicCall(t, r.proxyURL, body)
					} else {
						c = openAICall(t, r.proxyURL, d, body)
					}
					if c.err != nil || c.text == "" {
						t.Fatalf("the compaction request failed: %v (text %q)", c.err, c.text)
					}
					reqs := up.Requests()
					if len(reqs) < 2 {
						t.Fatalf("upstream got %d requests; the first should have overflowed", len(reqs))
					}
					first, last := reqs[0].Body, reqs[len(reqs)-1].Body
					if len(first)/4 <= window || len(last)/4 > window {
						t.Fatalf("first %d tokens, last %d, window %d", len(first)/4, len(last)/4, window)
					}
					if h := c.header.Get(extproc.RecoveryHeader); !stream && (h == "" || h == "exhausted") {
						t.Errorf("%s = %q", extproc.RecoveryHeader, h)
					}
					t.Logf("%d tokens over a %d-token window (%.2fx) -> %d tokens after %d replays, rung %q",
						len(first)/4, window, float64(len(first)/4)/float64(window), len(last)/4, len(reqs)-1, c.header.Get(extproc.RecoveryHeader))
					if !bytes.Contains(last, []byte(instruction)) {
						t.Error("the compaction instruction changed")
					}
					if opaque != "" && !bytes.Contains(last, []byte(opaque)) {
						t.Errorf("the compaction block or item changed")
					}
					for _, p := range []string{"system", "instructions", "messages.0"} {
						if a, b := gjson.GetBytes(body, p).Raw, gjson.GetBytes(last, p).Raw; a != b {
							t.Errorf("%s changed", p)
						}
					}
					if bytes.Contains(last, []byte("expand_context")) {
						t.Error("a compaction request was offered expand_context")
					}
					if c.header.Get(extproc.RecoveryHeader) == "tiers" && !bytes.Contains(last, wire.QuoteString(vetLog(11))) {
						t.Error("the latest tool result did not stay whole")
					}
					if !gjson.ValidBytes(last) {
						t.Error("the replay is not valid JSON")
					}
				})
			}
		}
	}
}

// TestOverflowOrdinaryRequestKeepsExpand is the contrast: the same history
// ending in an ordinary turn is recovered with references the model can
// expand, which a compaction request must not get.
func TestOverflowOrdinaryRequestKeepsExpand(t *testing.T) {
	up := testenv.NewFakeUpstream()
	r := harness{config: noCompress, respMode: recoveryModes[0], seed: 32, upstream: up}.start(t)
	_, body, instruction, _ := compactionRequest(wire.Anthropic, 12, false)
	body = bytes.Replace(body, []byte(instruction), []byte(`{"role":"user","content":[{"type":"text","text":"Now run the tests."}]}`), 1)
	up.SetScript(testenv.TokenWindowModel{Window: len(body) / 4 * 2 / 3}.Script())
	if c := anthropicCall(t, r.proxyURL, body); c.err != nil {
		t.Fatal(c.err)
	}
	reqs := up.Requests()
	if len(reqs) < 2 || !bytes.Contains(reqs[len(reqs)-1].Body, []byte("expand_context")) {
		t.Errorf("an ordinary request's recovery offered no expand_context (%d requests)", len(reqs))
	}
}
