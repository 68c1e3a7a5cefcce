package extproc

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/metadata"
)

// observeOnly rewrites requests (clamp) but repairs no answer: whatever
// toolproc sends back for an answer's chunks is then the usage reader's
// doing alone.
const observeOnly = "store: {keyless_references: false}\nprofiles: {default: {compress: {enabled: false}, stream: {normalize: false}, recovery: {enabled: false}}}"

// anthropicAnswer is a Messages stream after a cache hit (the shapes of
// https://docs.anthropic.com/en/docs/build-with-claude/streaming).
const anthropicAnswer = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":120,"cache_read_input_tokens":4000,"cache_creation_input_tokens":300,"output_tokens":1}}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}` + "\n\n" +
	"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":42}}` + "\n\n" +
	"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"

func anthropicRequest(result string) []byte {
	return []byte(`{"model":"claude-sonnet-4-5","max_tokens":100,"stream":true,"messages":[` +
		`{"role":"user","content":"run it"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"bash","input":{"cmd":"make"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":` + string(quote(result)) + `}]}]}`)
}

// TestUsageReadAsItPasses: in every response body mode the usage is read
// and counted, and not one byte of the answer is held or changed for it:
// every chunk's answer is "unchanged" (or, in FULL_DUPLEX_STREAMED, the
// chunk itself), sent for that chunk.
func TestUsageReadAsItPasses(t *testing.T) {
	answer := []byte(anthropicAnswer)
	for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{modeStreamed, modeDuplex, modeBuffered, extprocfilterv3.ProcessingMode_NONE} {
		t.Run(mode.String(), func(t *testing.T) {
			s := testServer(t, observeOnly)
			x := newTestExchange(s)
			x.handle(reqHeaders("/v1/messages", modeBuffered, mode))
			x.handle(reqBody(anthropicRequest(bigToolOutput()), true))
			r := x.handle(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
				ResponseHeaders: hdrs(":status", "200", "content-type", "text/event-stream"),
			}})
			if rc, err := ParseReceipt(setValue(r[0].GetResponseHeaders().GetResponse().GetHeaderMutation().GetSetHeaders(), ReceiptHeader)); err != nil || rc.Clamped != 1 || rc.BytesRemoved == 0 {
				t.Fatalf("receipt %+v, %v", rc, err)
			}
			if mode == extprocfilterv3.ProcessingMode_NONE {
				// Asked for, to read the usage; content-length is left alone.
				if o := r[0].GetModeOverride(); o.GetResponseBodyMode() != modeStreamed {
					t.Fatalf("no STREAMED override for a NONE answer: %v", o)
				}
			}
			chunks := [][]byte{answer}
			if mode != modeBuffered {
				chunks = nil
				for rest := answer; len(rest) > 0; {
					n := min(37, len(rest))
					chunks = append(chunks, rest[:n])
					rest = rest[n:]
				}
			}
			var out []byte
			for i, c := range chunks {
				resps := x.handle(respBody(c, i == len(chunks)-1))
				if len(resps) != 1 {
					t.Fatalf("chunk %d: %d answers, want 1 (no chunk held)", i, len(resps))
				}
				bm := resps[0].GetResponseBody().GetResponse().GetBodyMutation()
				if mode == modeDuplex {
					out = append(out, bm.GetStreamedResponse().GetBody()...)
					continue
				}
				if bm != nil {
					t.Fatalf("chunk %d mutated: %v", i, bm)
				}
				out = append(out, c...)
			}
			if !bytes.Equal(out, answer) {
				t.Fatal("the answer changed on its way")
			}
			md := x.finish()
			want := map[string]float64{"input": 120, "cache_read": 4000, "cache_write": 300, "output": 42}
			for k, v := range want {
				if got := testutil.ToFloat64(s.metrics.UsageTokens.WithLabelValues("default", "anthropic", k)); got != v {
					t.Errorf("%s = %v, want %v", k, got, v)
				}
			}
			if testutil.ToFloat64(s.metrics.UsageAnswers.WithLabelValues("anthropic", "read")) != 1 {
				t.Error("answer not counted as read")
			}
			f := md.GetFields()["toolproc"].GetStructValue().GetFields()
			if f["usage_cache_read"].GetNumberValue() != 4000 || !strings.HasPrefix(f["receipt"].GetStringValue(), "v1; c=0; cl=1;") {
				t.Fatalf("dynamic metadata %v", f)
			}
			// Removed bytes on the bill's scale: 4420 prompt tokens for the bytes sent.
			rm := testutil.ToFloat64(s.metrics.RemovedTokens.WithLabelValues("default", "anthropic"))
			rc := x.receipt()
			if want := float64(int64(float64(rc.BytesRemoved) * 4420 / float64(x.rewrite.report.BytesOut))); rm != want || rm == 0 {
				t.Fatalf("removed tokens %v, want %v", rm, want)
			}
			if x.finish() != nil {
				t.Fatal("finish recorded twice")
			}
		})
	}
}

func TestUsageSeriesStartAtZero(t *testing.T) {
	s := testServer(t, "profiles: {default: {}, cheap: {}}")
	// Every configured profile × five dialects × four kinds, before any request.
	if _, ok := s.currentProfiles()["cheap"]; !ok {
		t.Fatal("profile cheap missing")
	}
	p := len(s.currentProfiles())
	if n := testutil.CollectAndCount(s.metrics.UsageTokens); n != p*5*4 {
		t.Fatalf("%d usage series, want %d", n, p*5*4)
	}
	if n := testutil.CollectAndCount(s.metrics.RemovedTokens); n != p*5 {
		t.Fatalf("%d removed-token series, want %d", n, p*5)
	}
}

func TestBypass(t *testing.T) {
	body := openAIBody(bigToolOutput())
	t.Run("honoured", func(t *testing.T) {
		s := testServer(t, clampOnly)
		x := newTestExchange(s)
		r := x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeStreamed, BypassHeader, "1"))[0]
		if r.GetRequestHeaders().GetResponse().GetHeaderMutation() != nil {
			t.Fatal("a bypassed request's headers were changed")
		}
		if o := r.GetModeOverride(); o.GetRequestBodyMode() != extprocfilterv3.ProcessingMode_NONE || o.GetResponseBodyMode() != extprocfilterv3.ProcessingMode_NONE {
			t.Fatalf("bodies not skipped: %v", o)
		}
		// Envoy may still send the bodies (no allow_mode_override): untouched.
		if bm := x.handle(reqBody(body, true))[0].GetRequestBody().GetResponse(); bm.GetBodyMutation() != nil || bm.GetHeaderMutation() != nil {
			t.Fatalf("request body answered with %v", bm)
		}
		rh := x.handle(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
			ResponseHeaders: hdrs(":status", "200", "content-type", "text/event-stream")}})[0]
		if rh.GetResponseHeaders().GetResponse().GetHeaderMutation() != nil {
			t.Fatal("a bypassed answer's headers were changed")
		}
		if bm := x.handle(respBody([]byte("data: {\"usage\":{}}\n\n"), true))[0].GetResponseBody().GetResponse(); bm.GetBodyMutation() != nil || bm.GetHeaderMutation() != nil {
			t.Fatalf("answer body answered with %v", bm)
		}
		if testutil.ToFloat64(s.metrics.Bypass.WithLabelValues("openai_chat")) != 1 ||
			testutil.ToFloat64(s.metrics.Requests.WithLabelValues("openai_chat", "default", outcomeBypassed)) != 1 {
			t.Fatal("bypass not counted")
		}
	})
	t.Run("operator switched it off", func(t *testing.T) {
		s := testServer(t, clampOnly+"\nserver: {client_bypass: false}")
		x := newTestExchange(s)
		x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeStreamed, BypassHeader, "1"))
		if out := x.handle(reqBody(body, true))[0].GetRequestBody().GetResponse().GetBodyMutation().GetBody(); len(out) == 0 || len(out) >= len(body) {
			t.Fatal("with client_bypass off the request must be processed")
		}
	})
	t.Run("other values", func(t *testing.T) {
		s := testServer(t, clampOnly)
		x := newTestExchange(s)
		x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeStreamed, BypassHeader, "yes"))
		if !x.process {
			t.Fatal(`only "1" opts out`)
		}
	})
}

func TestReceiptFormat(t *testing.T) {
	r := Receipt{Compressed: 3, Clamped: 1, Tiered: 2, BytesRemoved: 12345, References: 4, Step: 2, Irrecoverable: 1}
	const want = "v1; c=3; cl=1; t=2; rm=12345; refs=4; step=2; irr=1; rung=-"
	if r.String() != want {
		t.Fatalf("got %q", r.String())
	}
	back, err := ParseReceipt(want + "; future=7")
	if err != nil || back != r {
		t.Fatalf("round trip %+v %v", back, err)
	}
	r.Rung = "clamp"
	if back, _ := ParseReceipt(r.String()); back.Rung != "clamp" {
		t.Fatalf("rung lost: %+v", back)
	}
	for _, bad := range []string{"", "v2; c=1", "v1; c=x", "v1; c", "v1; c=-1"} {
		if _, err := ParseReceipt(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestExchangeAuditAndMetadata drives one exchange over gRPC: its audit
// line and its last answer's dynamic metadata carry the bill next to what
// toolproc did, and no content or credential.
func TestExchangeAuditAndMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := testServer(t, observeOnly+"\naudit: {path: "+path+"}")
	client := startGRPC(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := client.Process(metadata.AppendToOutgoingContext(ctx, ProfileMetadataKey, "default"))
	if err != nil {
		t.Fatal(err)
	}
	const secret = "sk-ant-secret-value"
	answer := []byte(anthropicAnswer)
	steps := []*extprocv3.ProcessingRequest{
		reqHeaders("/v1/messages", modeBuffered, modeStreamed, "x-api-key", secret, "x-request-id", "req-42"),
		reqBody(anthropicRequest(bigToolOutput()), true),
		{Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: hdrs(":status", "200", "content-type", "text/event-stream")}},
		respBody(answer[:100], false),
		respBody(answer[100:], true),
	}
	var last *extprocv3.ProcessingResponse
	for _, m := range steps {
		if err := stream.Send(m); err != nil {
			t.Fatal(err)
		}
		if last, err = stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	f := last.GetDynamicMetadata().GetFields()["toolproc"].GetStructValue().GetFields()
	if f["usage_input"].GetNumberValue() != 120 || f["usage_output"].GetNumberValue() != 42 || f["usage_outcome"].GetStringValue() != "read" {
		t.Fatalf("last answer's metadata %v", f)
	}
	_ = stream.CloseSend()
	_ = s.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte("make")) {
		t.Fatal("the audit log holds a credential or content")
	}
	var rec exchangeAudit
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var probe struct{ Kind string }
		_ = json.Unmarshal(line, &probe)
		if probe.Kind == "exchange" {
			if err := json.Unmarshal(line, &rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rec.RequestID != "req-42" || rec.Model != "claude-sonnet-4-5" || rec.Clamped != 1 || rec.BytesRemoved == 0 || rec.TokensRemoved == 0 ||
		rec.Usage == nil || rec.Usage.CacheRead != 4000 || rec.Usage.CacheWrite != 300 || rec.UsageOutcome != "read" || !strings.HasPrefix(rec.Receipt, "v1;") {
		t.Fatalf("exchange line %+v", rec)
	}
}

// TestCountTokensIsNotBilled: a count_tokens answer carries no usage and
// costs nothing; it is not counted as an answer whose usage was missing.
func TestCountTokensIsNotBilled(t *testing.T) {
	s := testServer(t, observeOnly)
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/messages/count_tokens", modeBuffered, modeStreamed))
	x.handle(reqBody(anthropicRequest(bigToolOutput()), true))
	x.handle(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
		ResponseHeaders: hdrs(":status", "200", "content-type", "application/json")}})
	x.handle(respBody([]byte(`{"input_tokens":2095}`), true))
	x.finish()
	for _, o := range usageOutcomes {
		if n := testutil.ToFloat64(s.metrics.UsageAnswers.WithLabelValues("anthropic", o)); n != 0 {
			t.Fatalf("usage_answers_total{outcome=%q} = %v", o, n)
		}
	}
}

// FuzzParseReceipt: any header value parses or is refused without a
// panic, and whatever parses writes back to a value that parses the same.
func FuzzParseReceipt(f *testing.F) {
	f.Add("v1; c=3; cl=1; t=2; rm=12345; refs=4; step=2; rung=-")
	f.Add("v1; rung=clamp; x=y")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseReceipt(s)
		if err != nil {
			return
		}
		if strings.ContainsAny(r.Rung, ";") {
			return // a rung toolproc never writes
		}
		back, err := ParseReceipt(r.String())
		if err != nil || back != r {
			t.Fatalf("%q → %+v → %q → %+v (%v)", s, r, r.String(), back, err)
		}
	})
}
