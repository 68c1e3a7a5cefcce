package testenv_test

// Issue 24 end to end: behind the stand-in sits an upstream that bills like
// a provider (testenv.Ledger: a prompt cache per caller and model, usage
// reported in each dialect's own fields). A conversation grows turn by turn
// in all five dialects, JSON and streams (SSE; Bedrock's binary event
// stream), through real SDK clients where Go has one; toolproc compresses, and answers expand_context with replays the
// provider bills too. What toolproc's metrics and audit log say was billed
// must equal the ledger, token for token, and every answer carries a
// receipt.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
	"github.com/toolproc/toolproc/report"
	"github.com/toolproc/toolproc/testenv"
)

// receipts records the x-toolproc-receipt of every answer a client got.
type receipts struct {
	mu   sync.Mutex
	seen []string
}

func (r *receipts) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.seen = append(r.seen, resp.Header.Get(extproc.ReceiptHeader))
		r.mu.Unlock()
	}
	return resp, err
}

func (r *receipts) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// billedTurn sends one request of the conversation with the dialect's
// client: openai-go (Chat, Responses streams), anthropic-sdk-go, or plain
// HTTP where Go has no SDK here (Gemini, Bedrock, Responses JSON).
func billedTurn(t *testing.T, base string, rt *receipts, d wire.Dialect, stream bool, body []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Transport: rt}
	switch {
	case d == wire.OpenAIChat:
		client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-tenant-a"), option.WithMaxRetries(0), option.WithHTTPClient(hc))
		if !stream {
			if _, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{}, option.WithRequestBody("application/json", body)); err != nil {
				t.Fatal(err)
			}
			return
		}
		st := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{}, option.WithRequestBody("application/json", body))
		var acc openai.ChatCompletionAccumulator
		for st.Next() {
			acc.AddChunk(st.Current())
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
	case d == wire.Anthropic:
		client := anthropic.NewClient(anthropicoption.WithBaseURL(base), anthropicoption.WithAPIKey("sk-ant-tenant-a"),
			anthropicoption.WithMaxRetries(0), anthropicoption.WithHTTPClient(hc))
		if !stream {
			if _, err := client.Messages.New(ctx, anthropic.MessageNewParams{}, anthropicoption.WithRequestBody("application/json", body)); err != nil {
				t.Fatal(err)
			}
			return
		}
		st := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{}, anthropicoption.WithRequestBody("application/json", body))
		var msg anthropic.Message
		for st.Next() {
			if err := msg.Accumulate(st.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
	case d == wire.OpenAIResponses && stream:
		client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-tenant-a"), option.WithMaxRetries(0), option.WithHTTPClient(hc))
		st := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{}, option.WithRequestBody("application/json", body))
		for st.Next() {
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
	default:
		hdr := []string{"authorization", "Bearer sk-tenant-a"}
		if d == wire.Gemini {
			hdr = []string{"x-goog-api-key", "goog-tenant-a"}
		}
		path := wiretest.Path(d)
		switch {
		case stream && d == wire.Gemini:
			path = strings.Replace(path, ":generateContent", ":streamGenerateContent", 1) + "?alt=sse"
		case stream && d == wire.Bedrock:
			path += "-stream"
		}
		a := postRaw(t, base+path, body, hdr...)
		if a.status != http.StatusOK {
			t.Fatalf("status %d: %.500s", a.status, a.body)
		}
		rt.mu.Lock()
		rt.seen = append(rt.seen, a.header.Get(extproc.ReceiptHeader))
		rt.mu.Unlock()
	}
}

var usageLine = regexp.MustCompile(`^toolproc_usage_tokens_total\{dialect="([a-z_]+)",kind="([a-z_]+)",profile="default"\} (\d+)`)

// scrapedUsage reads toolproc_usage_tokens_total per dialect from /metrics.
func scrapedUsage(t *testing.T, adminURL string) map[wire.Dialect]testenv.Bill {
	t.Helper()
	resp, err := http.Get(adminURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[wire.Dialect]testenv.Bill{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		m := usageLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.ParseInt(m[3], 10, 64)
		b := out[wire.Dialect(m[1])]
		switch m[2] {
		case "input":
			b.Input = n
		case "cache_read":
			b.CacheRead = n
		case "cache_write":
			b.CacheWrite = n
		case "output":
			b.Output = n
		}
		out[wire.Dialect(m[1])] = b
	}
	return out
}

// auditedUsage sums the exchange lines of the audit log per dialect.
func auditedUsage(t *testing.T, path string) (map[wire.Dialect]testenv.Bill, int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[wire.Dialect]testenv.Bill{}
	lines := 0
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var rec struct {
			Kind, Dialect string
			Usage         *struct {
				Input      int64 `json:"input"`
				CacheRead  int64 `json:"cache_read"`
				CacheWrite int64 `json:"cache_write"`
				Output     int64 `json:"output"`
			}
			UsageOutcome string `json:"usage_outcome"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if rec.Kind != "exchange" {
			continue
		}
		lines++
		if rec.UsageOutcome != "read" || rec.Usage == nil {
			t.Errorf("%s exchange without usage: %s", rec.Dialect, line)
			continue
		}
		out[wire.Dialect(rec.Dialect)] = out[wire.Dialect(rec.Dialect)].Add(testenv.Bill{
			Input: rec.Usage.Input, CacheRead: rec.Usage.CacheRead, CacheWrite: rec.Usage.CacheWrite, Output: rec.Usage.Output})
	}
	return out, lines
}

func TestBillingEndToEnd(t *testing.T) {
	outs := []string{pytestLog(), "run 1\n" + wiretest.LongOutput(3000), "run 2\n" + wiretest.LongOutput(3000)}
	type turnCase struct {
		dial   wire.Dialect
		stream bool
	}
	var cases []turnCase
	for _, d := range []wire.Dialect{wire.OpenAIChat, wire.Anthropic, wire.OpenAIResponses} {
		cases = append(cases, turnCase{d, false}, turnCase{d, true})
	}
	for _, d := range []wire.Dialect{wire.Gemini, wire.Bedrock} {
		cases = append(cases, turnCase{d, false}, turnCase{d, true})
	}
	for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{
		extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, extprocfilterv3.ProcessingMode_STREAMED, extprocfilterv3.ProcessingMode_BUFFERED,
	} {
		t.Run(mode.String(), func(t *testing.T) {
			ledger := testenv.NewLedger()
			up := testenv.NewFakeUpstream()
			billed := ledger.Wrap(testenv.ExpandModel{Needle: needle}.Script())
			up.SetScript(func(req testenv.RecordedRequest) *testenv.ScriptedResponse {
				if strings.HasSuffix(req.Path, "/converse-stream") {
					// Bedrock's binary event stream: the bill rides in the
					// metadata event.
					b, _ := ledger.Charge(req)
					return testenv.BedrockStream("I saw no shortened tool result.", b)
				}
				return billed(req)
			})
			audit := filepath.Join(t.TempDir(), "audit.jsonl")
			r := harness{config: "audit: {path: " + audit + "}", respMode: mode, seed: int64(mode) + 24, upstream: up}.start(t)
			rt := &receipts{}
			requests := 0
			for _, tc := range cases {
				for n := 1; n <= len(outs); n++ {
					body := wiretest.Request(tc.dial, outs[:n]...)
					if !tc.stream {
						body = bytes.Replace(body, []byte(`"stream":true`), []byte(`"stream":false`), 1)
					}
					if tc.dial == wire.OpenAIChat && tc.stream {
						// Usage in a Chat stream only when the client asks;
						// toolproc never adds the chunk.
						body, _ = sjson.SetBytes(body, "stream_options.include_usage", true)
					}
					billedTurn(t, r.proxyURL, rt, tc.dial, tc.stream, body)
					requests++
				}
			}
			charges := ledger.Charges()
			if len(charges) <= requests {
				t.Fatalf("%d upstream requests for %d client requests: no expand_context replay was billed", len(charges), requests)
			}
			var reads int64
			metrics := scrapedUsage(t, r.adminURL)
			audited, lines := auditedUsage(t, audit)
			for _, d := range wire.Dialects {
				want := ledger.Total(d)
				reads += want.CacheRead
				if got := metrics[d]; got != want {
					t.Errorf("%s: metrics %+v, ledger %+v", d, got, want)
				}
				if got := audited[d]; got != want {
					t.Errorf("%s: audit %+v, ledger %+v", d, got, want)
				}
			}
			// toolproc report reads the same lines: its billed totals are
			// the ledger's.
			f, err := os.Open(audit)
			if err != nil {
				t.Fatal(err)
			}
			ra, err := report.Read(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			all := ledger.Total("")
			if tot := report.Build(ra, report.DefaultPrices).Total; tot.Usage != (report.Usage{Input: all.Input, CacheRead: all.CacheRead, CacheWrite: all.CacheWrite, Output: all.Output}) || tot.Unread != 0 {
				t.Errorf("report total %+v, ledger %+v", tot, all)
			}
			if reads == 0 {
				t.Error("the conversation never read the cache: the ledger did not act")
			}
			if lines != requests {
				t.Errorf("%d exchange lines for %d requests", lines, requests)
			}
			seen := rt.all()
			if len(seen) != requests {
				t.Fatalf("%d answers for %d requests", len(seen), requests)
			}
			for i, rc := range seen {
				got, err := extproc.ParseReceipt(rc)
				if err != nil {
					t.Fatalf("answer %d: receipt %q: %v", i, rc, err)
				}
				// The big log is compressed with a reference where toolproc can
				// answer expand_context, clamped elsewhere (Gemini and Bedrock
				// streams): either way the receipt says so.
				if i%len(outs) == 0 && (got.Compressed+got.Clamped == 0 || got.BytesRemoved == 0 || (got.Compressed > 0) != (got.References > 0)) {
					t.Errorf("answer %d: the big log was rewritten, receipt says %q", i, rc)
				}
			}
			t.Logf("%d client requests, %d billed upstream; ledger %+v", requests, len(charges), ledger.Total(""))
		})
	}
}

// TestBillingNoUsageAsked: a Chat stream whose client did not ask for
// usage gets none (toolproc adds no chunk); the provider still billed it,
// and toolproc says so: usage_answers_total{outcome="missing"}.
func TestBillingNoUsageAsked(t *testing.T) {
	ledger := testenv.NewLedger()
	up := testenv.NewFakeUpstream()
	up.SetScript(ledger.Wrap(nil))
	r := harness{respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, seed: 5, upstream: up}.start(t)
	a := postRaw(t, r.proxyURL+"/v1/chat/completions", []byte(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`),
		"authorization", "Bearer sk-tenant-a")
	if a.status != http.StatusOK || bytes.Contains(a.body, []byte(`"prompt_tokens"`)) {
		t.Fatalf("status %d, body %s", a.status, a.body)
	}
	if len(ledger.Charges()) != 1 {
		t.Fatal("not billed")
	}
	resp, err := http.Get(r.adminURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	if !strings.Contains(buf.String(), `toolproc_usage_answers_total{dialect="openai_chat",outcome="missing"} 1`) {
		t.Fatal("the unread usage is not counted")
	}
	if got := scrapedUsage(t, r.adminURL)[wire.OpenAIChat]; got != (testenv.Bill{}) {
		t.Fatalf("usage counted that no answer carried: %+v", got)
	}
}

// TestBypassEndToEnd: x-toolproc-bypass: 1 passes the request and the
// answer byte for byte, in every mode, while the same request without it
// is rewritten.
func TestBypassEndToEnd(t *testing.T) {
	body := wiretest.Request(wire.Anthropic, pytestLog())
	for _, mode := range responseModes {
		t.Run(mode.String(), func(t *testing.T) {
			up := testenv.NewFakeUpstream()
			r := harness{respMode: mode, seed: int64(mode) + 3, upstream: up}.start(t)
			direct := func(b []byte) []byte {
				sr := testenv.DefaultResponse(testenv.RecordedRequest{Method: http.MethodPost, Path: "/v1/messages", Body: b})
				out := sr.Body
				for _, c := range sr.Chunks {
					out = append(out, c...)
				}
				return out
			}
			a := postRaw(t, r.proxyURL+"/v1/messages", body, "x-api-key", "sk-ant-tenant-a", extproc.BypassHeader, "1")
			reqs := up.Requests()
			if a.status != http.StatusOK || len(reqs) != 1 || !bytes.Equal(reqs[0].Body, body) {
				t.Fatalf("the request changed on its way (status %d)", a.status)
			}
			if !bytes.Equal(a.body, direct(body)) {
				t.Fatalf("the answer changed on its way:\n%s", a.body)
			}
			if a.header.Get(extproc.ReceiptHeader) != "" {
				t.Fatal("a bypassed answer carries a receipt")
			}
			up.Reset()
			a = postRaw(t, r.proxyURL+"/v1/messages", body, "x-api-key", "sk-ant-tenant-a")
			if reqs := up.Requests(); len(reqs) == 0 || bytes.Equal(reqs[0].Body, body) || a.header.Get(extproc.ReceiptHeader) == "" {
				t.Fatal("without the header the request must be processed and receipted")
			}
		})
	}
}
