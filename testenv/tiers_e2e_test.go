package testenv_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
	"github.com/toolproc/toolproc/testenv"
)

// tiersConfig makes the tiers act within a short test conversation: an
// absolute trigger (about 24 KB) instead of a share of a 128K window, and
// no prompt-cache pricing (a 10-turn conversation is too short for a step
// to pay for an Anthropic cache write; TestCostModelDefersSteps).
const tiersConfig = "profiles: {default: {compress: {enabled: false}, tiers: {trigger_tokens: 6000, target_tokens: 2500, cost_model: none}}}"

// TestTiersEndToEnd is issue 11's acceptance test: an agent's conversation
// grows turn by turn through the stand-in (real SDK clients, Anthropic and
// OpenAI Chat, JSON and SSE). Once it passes the trigger, old tool results
// reach the upstream as one-line summaries, expand_context is offered from
// the first request on with the same bytes, and when the model asks for a
// summarised result toolproc reads the original back from the store and
// continues the answer: the client never sees the call.
func TestTiersEndToEnd(t *testing.T) {
	outs := make([]string, 10)
	for i := range outs {
		outs[i] = fmt.Sprintf("run %d\n", i) + wiretest.LongOutput(3000)
	}
	outs[0] = "first run: " + needle + "\n" + outs[0]
	model := testenv.ExpandModel{Needle: needle}
	up, r := expandEnv(t, extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, model, tiersConfig)
	for _, tc := range []struct {
		dial   wire.Dialect
		stream bool
	}{{wire.OpenAIChat, false}, {wire.OpenAIChat, true}, {wire.Anthropic, false}, {wire.Anthropic, true}} {
		t.Run(fmt.Sprintf("%s/stream=%v", tc.dial, tc.stream), func(t *testing.T) {
			var tools []byte
			expanded := 0
			for n := 1; n <= len(outs); n++ {
				up.Reset()
				a := sdkTurn(t, r.proxyURL, tc.dial, tc.stream, outs[:n])
				if strings.Contains(a.raw, "expand_context") || len(a.calls) > 0 {
					t.Fatalf("turn %d: the client saw a tool call: %v\n%s", n, a.calls, a.raw)
				}
				reqs := up.Requests()
				first := reqs[0].Body
				if err := wiretest.CheckPairing(tc.dial, first); err != nil {
					t.Fatalf("turn %d: %v", n, err)
				}
				// The tools list starts every cached prefix: the same
				// bytes from the first request on.
				tl := toolsOf(tc.dial, first)
				if !bytes.Contains(tl, []byte(`"expand_context"`)) {
					t.Fatalf("turn %d: expand_context not offered", n)
				}
				if tools != nil && !bytes.Equal(tools, tl) {
					t.Fatalf("turn %d: the tools list changed", n)
				}
				tools = tl
				summarised := bytes.Contains(first, []byte(history.Prefix))
				if summarised && bytes.Contains(first, []byte(needle)) {
					t.Fatalf("turn %d: the oldest result was not summarised", n)
				}
				if !summarised {
					if len(reqs) != 1 || !strings.Contains(a.text, "I saw no shortened tool result") {
						t.Fatalf("turn %d: %d upstream requests before any summary, text %q", n, len(reqs), a.text)
					}
					continue
				}
				if len(reqs) != 2 || !strings.Contains(a.text, testenv.ExpandIntro) || !strings.Contains(a.text, needle) {
					t.Fatalf("turn %d: %d upstream requests, final text %q: the original was not read back", n, len(reqs), a.text)
				}
				if !bytes.Contains(reqs[1].Body, []byte(needle)) {
					t.Fatalf("turn %d: the continuation does not carry the original", n)
				}
				expanded++
			}
			if expanded == 0 || expanded == len(outs) {
				t.Fatalf("%d of %d turns were tiered; want the later ones only", expanded, len(outs))
			}
		})
	}

	// The answer says which step the request was sent at.
	up.Reset()
	status, header := postHeaders(t, r.proxyURL+wiretest.Path(wire.OpenAIChat),
		bytes.Replace(wiretest.Request(wire.OpenAIChat, outs...), []byte(`"stream":true`), []byte(`"stream":false`), 1))
	if status != http.StatusOK || header.Get(extproc.TiersHeader) == "" {
		t.Fatalf("status %d, %s %q", status, extproc.TiersHeader, header.Get(extproc.TiersHeader))
	}
}

// sdkTurn sends one turn of a growing conversation (one exchange per
// output) through the real SDK client of dialect d.
func sdkTurn(t *testing.T, base string, d wire.Dialect, stream bool, outs []string) answer {
	t.Helper()
	body := wiretest.Request(d, outs...)
	if !stream {
		body = bytes.Replace(body, []byte(`"stream":true`), []byte(`"stream":false`), 1)
	}
	if d == wire.OpenAIChat {
		return openAIClientCall(t, base, stream, body)
	}
	return anthropicClientCall(t, base, "sk-ant-tenant-a", stream, body)
}

func toolsOf(d wire.Dialect, body []byte) []byte {
	i := bytes.LastIndex(body, []byte(`"tools":[`))
	if i < 0 {
		return nil
	}
	return body[i:]
}

func postHeaders(t *testing.T, url string, body []byte) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("authorization", "Bearer sk-tenant-a-0001")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// TestFlattenAllEndToEnd: behind the stand-in sits a gateway that rejects
// any request carrying structured tool history (400, as the Vercel AI
// Gateway answers function_call items). With tiers.flatten: all, real SDK
// clients run the same growing tool conversation through it: every
// exchange reaches the upstream as text, the tiers still summarise the old
// ones, and an expand_context continuation (toolproc's own request) is
// flattened too, so the model reads the original back.
func TestFlattenAllEndToEnd(t *testing.T) {
	outs := make([]string, 10)
	for i := range outs {
		outs[i] = fmt.Sprintf("run %d\n", i) + wiretest.LongOutput(3000)
	}
	outs[0] = "first run: " + needle + "\n" + outs[0]
	model := testenv.ExpandModel{Needle: needle, TextHistoryOnly: true}
	config := "profiles: {default: {compress: {enabled: false}, tiers: {trigger_tokens: 6000, target_tokens: 2500, flatten: all, cost_model: none}}}"
	up, r := expandEnv(t, extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, model, config)
	for _, tc := range []struct {
		dial   wire.Dialect
		stream bool
	}{{wire.OpenAIChat, false}, {wire.OpenAIChat, true}, {wire.Anthropic, false}, {wire.Anthropic, true}} {
		t.Run(fmt.Sprintf("%s/stream=%v", tc.dial, tc.stream), func(t *testing.T) {
			expanded := 0
			for n := 1; n <= len(outs); n++ {
				up.Reset()
				a := sdkTurn(t, r.proxyURL, tc.dial, tc.stream, outs[:n])
				if len(a.calls) > 0 || strings.Contains(a.raw, "expand_context") {
					t.Fatalf("turn %d: the client saw a tool call: %v\n%s", n, a.calls, a.raw)
				}
				// A rejected request fails the client call (or, for the
				// continuation, the read-back checked below).
				reqs := up.Requests()
				if !strings.Contains(string(reqs[0].Body), "result of earlier tool call") {
					t.Fatalf("turn %d: the history was not flattened", n)
				}
				if !bytes.Contains(reqs[0].Body, []byte(history.Prefix)) {
					if !strings.Contains(a.text, "I saw no shortened tool result") {
						t.Fatalf("turn %d: before any summary the answer is %q", n, a.text)
					}
					continue
				}
				if len(reqs) != 2 || !strings.Contains(a.text, testenv.ExpandIntro) || !strings.Contains(a.text, needle) {
					t.Fatalf("turn %d: %d upstream requests, final text %q: the original was not read back", n, len(reqs), a.text)
				}
				expanded++
			}
			if expanded == 0 || expanded == len(outs) {
				t.Fatalf("%d of %d turns were tiered; want the later ones only", expanded, len(outs))
			}
		})
	}
}
