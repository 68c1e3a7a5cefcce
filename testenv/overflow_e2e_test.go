package testenv_test

// Issue 6 end to end: the provider says the request is too large; toolproc
// classifies the error, rewrites the request harder (one rung at a time),
// replays it through the stand-in's replay listener, and the client gets
// the successful answer as if nothing happened.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
	"github.com/toolproc/toolproc/testenv"
)

// noCompress is the setup the ladder is for: the request went out clamped
// only, and the provider still refused it.
// noCompress leaves the clamp as the only step before the upstream, and
// cuts by position (clamp.structural off): these tests need the first
// request to overflow the stand-in's limit, and the structural clamp
// already brings the 240 KB log under it (TestKeylessClampCutsByStructure
// in extproc covers that cut).
const noCompress = "profiles: {default: {compress: {enabled: false}, clamp: {structural: false}}}"

type rawAnswer struct {
	status int
	header http.Header
	body   []byte
}

func postRaw(t *testing.T, url string, body []byte, hdr ...string) rawAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawAnswer{resp.StatusCode, resp.Header, b}
}

// overflowRequest is a request of dialect d with one big tool result.
func overflowRequest(d wire.Dialect, model string, stream bool) (path string, body []byte) {
	log := pytestLog()
	switch d {
	case wire.OpenAIChat:
		body = openAIToolRequest(stream, log)
		body = bytes.Replace(body, []byte(`"model":"gpt-4o"`), []byte(`"model":"`+model+`"`), 1)
		return "/v1/chat/completions", body
	case wire.Anthropic:
		return "/v1/messages", anthropicToolRequest(stream, log)
	}
	return wiretest.Path(d), wiretest.Request(d, log)
}

func TestOverflowRecovery(t *testing.T) {
	then := testenv.ExpandModel{Needle: needle}
	cases := []struct {
		name     string
		dial     wire.Dialect
		model    string // OpenAI Chat only: picks the context window
		stream   bool
		up       testenv.OverflowModel
		requests int
		rung     string
	}{
		{"openrouter raw ERROR", wire.OpenAIChat, "gpt-4o", false, testenv.OverflowModel{MaxResult: 512, Error: testenv.OpenRouterRawError}, 2, "truncate"},
		{"openrouter raw ERROR/stream", wire.OpenAIChat, "gpt-4o", true, testenv.OverflowModel{MaxResult: 512, Error: testenv.OpenRouterRawError}, 2, "truncate"},
		{"openai context_length_exceeded", wire.OpenAIChat, "gpt-4", false, testenv.OverflowModel{MaxResult: 20_000, Error: testenv.OpenAIContextLength}, 2, "clamp"},
		{"openai context_length_exceeded/stream", wire.OpenAIChat, "gpt-4", true, testenv.OverflowModel{MaxResult: 20_000, Error: testenv.OpenAIContextLength}, 2, "clamp"},
		{"anthropic prompt is too long", wire.Anthropic, "", false, testenv.OverflowModel{MaxResult: 20_000, Error: testenv.AnthropicPromptTooLong}, 2, "compress"},
		{"anthropic prompt is too long/stream", wire.Anthropic, "", true, testenv.OverflowModel{MaxResult: 20_000, Error: testenv.AnthropicPromptTooLong}, 2, "compress"},
		{"anthropic 413 request_too_large", wire.Anthropic, "", false, testenv.OverflowModel{MaxResult: 20_000, Error: testenv.AnthropicRequestTooLarge}, 2, "compress"},
		{"gemini token count", wire.Gemini, "", false, testenv.OverflowModel{MaxResult: 20_000, Error: testenv.GeminiTokenCount}, 2, "compress"},
		{"bedrock input too long", wire.Bedrock, "", false, testenv.OverflowModel{MaxResult: 20_000, Error: testenv.BedrockInputTooLong}, 2, "compress"},
		{"first event of a 200 stream/openrouter chat", wire.OpenAIChat, "gpt-4", true, testenv.OverflowModel{MaxResult: 20_000, InStream: true, Error: testenv.OpenAIContextLength}, 2, ""},
		{"first event of a 200 stream/anthropic", wire.Anthropic, "", true, testenv.OverflowModel{MaxResult: 20_000, InStream: true, Error: testenv.AnthropicPromptTooLong}, 2, ""},
		{"truncated original is expandable", wire.OpenAIChat, "gpt-4o", false, testenv.OverflowModel{MaxResult: 512, Error: testenv.OpenRouterRawError, Then: then}, 3, "truncate"},
	}
	for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{
		extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, extprocfilterv3.ProcessingMode_BUFFERED,
	} {
		t.Run(mode.String(), func(t *testing.T) {
			up := testenv.NewFakeUpstream()
			r := harness{config: noCompress, respMode: mode, seed: 5, upstream: up}.start(t)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					up.Reset()
					up.SetScript(tc.up.Script())
					path, body := overflowRequest(tc.dial, tc.model, tc.stream)
					a := postRaw(t, r.proxyURL+path, body, "authorization", "Bearer sk-or-tenant", "x-goog-api-key", "k")
					reqs := up.Requests()
					if len(reqs) != tc.requests {
						t.Fatalf("upstream got %d requests, want %d (status %d, body %.300s)", len(reqs), tc.requests, a.status, a.body)
					}
					if a.status != http.StatusOK {
						t.Fatalf("client got %d: %.300s", a.status, a.body)
					}
					if got := a.header.Get(extproc.RecoveryHeader); tc.rung != "" && got != tc.rung {
						t.Errorf("%s = %q, want %q", extproc.RecoveryHeader, got, tc.rung)
					}
					// The receipt names the rung whose replay answered. A 200
					// stream that opens with an overflow had its headers (and
					// receipt) sent before: its rung is in the audit line and
					// the dynamic metadata only.
					if rc, err := extproc.ParseReceipt(a.header.Get(extproc.ReceiptHeader)); err != nil || (tc.rung != "" && rc.Rung != tc.rung) {
						t.Errorf("receipt %q (%v), want rung %q", a.header.Get(extproc.ReceiptHeader), err, tc.rung)
					}
					if strings.Contains(string(a.body), "expand_context") || strings.Contains(string(a.body), "too long") ||
						strings.Contains(string(a.body), "maximum context") || strings.Contains(string(a.body), `"error"`) {
						t.Fatalf("the client saw the error or a phantom call: %.400s", a.body)
					}
					if h := reqs[1].Header.Get(extproc.ReplayHeader); !strings.HasPrefix(h, "overflow_") || (tc.rung != "" && h != "overflow_"+tc.rung) {
						t.Errorf("replay header %q", h)
					}
					if !gjson.ValidBytes(reqs[1].Body) || wiretest.CheckPairing(tc.dial, reqs[1].Body) != nil {
						t.Error("the replayed request is not valid or breaks pairing")
					}
					if tc.requests == 3 && !strings.Contains(string(a.body), needle) {
						t.Errorf("the original cut by the truncate rung was not expanded: %.300s", a.body)
					}
				})
			}
		})
	}
}

// TestOverflowRecoveryExhausted: an upstream that always overflows gets at
// most max_replays replays, and the client gets the last error with
// x-toolproc-recovery: exhausted.
func TestOverflowRecoveryExhausted(t *testing.T) {
	for _, tc := range []struct {
		config   string
		requests int
		anon     bool
	}{
		{noCompress, 4, false}, // clamp, compress, truncate: 3 replays
		{"profiles: {default: {compress: {enabled: false}, recovery: {max_replays: 1}}}", 2, false},
		// A caller without a credential gets references under a tenant of
		// its conversation: the same three replays.
		{noCompress, 4, true},
		// With keyless references off it gets none: the compress rung
		// cannot run, the truncate rung cuts without an id.
		{"store: {keyless_references: false}\n" + noCompress, 3, true},
	} {
		for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{
			extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, extprocfilterv3.ProcessingMode_BUFFERED,
		} {
			up := testenv.NewFakeUpstream()
			up.SetScript(testenv.OverflowModel{Always: true, Error: testenv.OpenAIContextLength}.Script())
			r := harness{config: tc.config, respMode: mode, seed: 9, upstream: up}.start(t)
			path, body := overflowRequest(wire.OpenAIChat, "gpt-4", false)
			var cred []string
			if !tc.anon {
				cred = []string{"authorization", "Bearer sk-overflow-tenant"}
			}
			a := postRaw(t, r.proxyURL+path, body, cred...)
			if got := len(up.Requests()); got != tc.requests {
				t.Errorf("%s: upstream got %d requests, want %d", mode, got, tc.requests)
			}
			if a.status != 400 || string(a.body) != testenv.OpenAIContextLength.Body || a.header.Get(extproc.RecoveryHeader) != "exhausted" {
				t.Errorf("%s: client got %d %q (%s), want the last error, exhausted", mode, a.status, a.header.Get(extproc.RecoveryHeader), a.body)
			}
			e := &env{admin: r.adminURL}
			if !e.metric(t, `toolproc_recoveries_total{class="context_overflow",outcome="exhausted",provider="openai",rung="all"} 1`) {
				t.Errorf("%s: exhausted recovery not counted", mode)
			}
		}
	}
}

// TestOverflowLookAlikesPassThrough: errors that are not overflow reach the
// client untouched after exactly one upstream request.
func TestOverflowLookAlikesPassThrough(t *testing.T) {
	for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{
		extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, extprocfilterv3.ProcessingMode_BUFFERED,
	} {
		up := testenv.NewFakeUpstream()
		r := harness{config: noCompress, respMode: mode, seed: 11, upstream: up}.start(t)
		for _, e := range []struct {
			name string
			err  testenv.OverflowError
		}{
			{"429 rate limit", testenv.OpenAIRateLimit},
			{"per-minute Request too large", testenv.OpenAITPM},
			{"401", testenv.AnthropicAuth},
			{"400 about something else", testenv.OpenAIBadParam},
		} {
			up.Reset()
			up.SetScript(testenv.OverflowModel{Always: true, Error: e.err}.Script())
			path, body := overflowRequest(wire.OpenAIChat, "gpt-4", false)
			a := postRaw(t, r.proxyURL+path, body)
			if got := len(up.Requests()); got != 1 {
				t.Errorf("%s/%s: upstream got %d requests, want 1", mode, e.name, got)
			}
			if a.status != e.err.Status || string(a.body) != e.err.Body || a.header.Get(extproc.RecoveryHeader) != "" {
				t.Errorf("%s/%s: client got %d %q %s", mode, e.name, a.status, a.header.Get(extproc.RecoveryHeader), a.body)
			}
		}
	}
}

// TestOverflowStreamedMode pins the STREAMED limit: the status is answered
// before the body exists, so an error status reaches the client as it came
// (one upstream request); an overflow that opens a 200 stream is still
// recovered.
func TestOverflowStreamedMode(t *testing.T) {
	up := testenv.NewFakeUpstream()
	r := harness{config: noCompress, respMode: extprocfilterv3.ProcessingMode_STREAMED, seed: 13, upstream: up}.start(t)

	up.SetScript(testenv.OverflowModel{MaxResult: 20_000, Error: testenv.OpenAIContextLength}.Script())
	path, body := overflowRequest(wire.OpenAIChat, "gpt-4", false)
	a := postRaw(t, r.proxyURL+path, body)
	if a.status != 400 || len(up.Requests()) != 1 {
		t.Fatalf("STREAMED status error: client %d, upstream %d requests; want the error as it came, 1 request", a.status, len(up.Requests()))
	}

	up.Reset()
	up.SetScript(testenv.OverflowModel{MaxResult: 20_000, InStream: true, Error: testenv.OpenAIContextLength}.Script())
	path, body = overflowRequest(wire.OpenAIChat, "gpt-4", true)
	a = postRaw(t, r.proxyURL+path, body)
	if a.status != 200 || len(up.Requests()) != 2 || strings.Contains(string(a.body), `"error"`) || !strings.Contains(string(a.body), "[DONE]") {
		t.Fatalf("STREAMED first-event overflow: client %d, upstream %d requests: %.300s", a.status, len(up.Requests()), a.body)
	}
}

// Found while measuring main: when the first pass already compressed every
// result, the compress rung rebuilt exactly the body the provider had just
// refused and replayed it (3 upstream requests for one answer). A rung
// whose body was already sent in this exchange is skipped, free.
func TestOverflowLadderNeverResendsABody(t *testing.T) {
	for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{
		extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, extprocfilterv3.ProcessingMode_BUFFERED,
	} {
		up := testenv.NewFakeUpstream()
		up.SetScript(testenv.OverflowModel{MaxResult: 600, Error: testenv.OpenAIContextLength}.Script())
		r := harness{respMode: mode, seed: 5, upstream: up}.start(t)
		path, body := overflowRequest(wire.OpenAIChat, "gpt-4o", false)
		a := postRaw(t, r.proxyURL+path, body, "authorization", "Bearer sk-ladder-tenant")
		reqs := up.Requests()
		seen := map[string]bool{}
		for _, q := range reqs {
			if seen[string(q.Body)] {
				t.Errorf("%s: the same %d-byte body was sent twice", mode, len(q.Body))
			}
			seen[string(q.Body)] = true
		}
		if len(reqs) != 2 || a.status != 200 || a.header.Get(extproc.RecoveryHeader) != "truncate" {
			t.Errorf("%s: %d upstream requests, client %d %q; want 2 and a truncate recovery", mode, len(reqs), a.status, a.header.Get(extproc.RecoveryHeader))
		}
	}
}

// TestOverflowTiersRung: a conversation the tiers have not touched (below
// their trigger) outgrows the provider's window; the ladder's first rung
// summarises every result but the latest two and replays, and the client
// gets the answer. The replay keeps pairing, the two latest results whole,
// and expand_context on offer for the summarised ones.
func TestOverflowTiersRung(t *testing.T) {
	outs := make([]string, 10)
	for i := range outs {
		outs[i] = fmt.Sprintf("run %d\n", i) + wiretest.LongOutput(3000)
	}
	config := "profiles: {default: {compress: {enabled: false}, tiers: {trigger_tokens: 100000, target_tokens: 2500}}}"
	up := testenv.NewFakeUpstream()
	r := harness{config: config, respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, seed: 11, upstream: up}.start(t)
	for _, d := range []wire.Dialect{wire.OpenAIChat, wire.Anthropic} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", d, stream), func(t *testing.T) {
				up.Reset()
				body := wiretest.Request(d, outs...)
				if !stream {
					body = bytes.Replace(body, []byte(`"stream":true`), []byte(`"stream":false`), 1)
				}
				// The provider's message states its window, and the ladder
				// sizes its cuts to it: state the window this stand-in
				// enforces (MaxBody bytes at four bytes a token).
				errBody := testenv.OverflowError{Status: 400, Body: fmt.Sprintf(`{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, len(body)/8, len(body)/4)}
				if d == wire.Anthropic {
					errBody = testenv.AnthropicPromptTooLong
				}
				up.SetScript(testenv.OverflowModel{MaxResult: 1 << 30, MaxBody: len(body) / 2, Error: errBody}.Script())
				a := postRaw(t, r.proxyURL+wiretest.Path(d), body, "authorization", "Bearer sk-tenant-a-0001", "x-api-key", "sk-ant-tenant-a")
				reqs := up.Requests()
				if a.status != http.StatusOK || len(reqs) != 2 {
					t.Fatalf("client got %d after %d upstream requests: %.300s", a.status, len(reqs), a.body)
				}
				if got := a.header.Get(extproc.RecoveryHeader); got != "tiers" {
					t.Fatalf("%s = %q, want tiers", extproc.RecoveryHeader, got)
				}
				replay := reqs[1].Body
				if err := wiretest.CheckPairing(d, replay); err != nil {
					t.Fatal(err)
				}
				c, err := wire.Parse(d, replay)
				if err != nil {
					t.Fatal(err)
				}
				summarised := 0
				for i, res := range c.Results {
					isSummary := strings.HasPrefix(res.Texts[0].Text(), history.Prefix)
					if i >= len(c.Results)-2 && (isSummary || res.Texts[0].Text() != outs[i]) {
						t.Errorf("result %d of the latest two was changed", i)
					}
					if isSummary {
						summarised++
					}
				}
				if summarised != len(outs)-2 || !bytes.Contains(toolsOf(d, replay), []byte(`"expand_context"`)) {
					t.Fatalf("%d results summarised; expand_context offered: %v", summarised, bytes.Contains(replay, []byte(`"expand_context"`)))
				}
			})
		}
	}
}
