package extproc

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/toolproc/toolproc/filters/wire"
)

func TestReplayRouteAllows(t *testing.T) {
	r := replayRoute{prefixes: []string{"", "/api"}}
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"/v1/chat/completions", true},
		{"/v1/responses", true},
		{"/v1/messages?beta=true", true},
		{"/api/v1/chat/completions", true},
		{"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=AIza", true},
		{"/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict", true},
		{"/model/anthropic.claude-sonnet-4-5-v1%3A0/converse", true},
		{"/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21", true},
		{"/admin/export/chat/completions?all=1", false},
		{"/admin/export/chat/completions", false},
		{"/v1/chat/completions?all=1", false},
		{"/v1/../admin/v1/chat/completions", false},
		{"/v1/chat/completions/extra", false},
		{"/internal/v1/messages", false},
		{"/", false},
	} {
		if got := r.allows(tc.path, "api.openai.com"); got != tc.ok {
			t.Errorf("allows(%q) = %v, want %v", tc.path, got, tc.ok)
		}
	}
	pinned := replayRoute{prefixes: []string{""}, authorities: []string{"api.openai.com"}}
	if !pinned.allows("/v1/chat/completions", "API.openai.com") || pinned.allows("/v1/chat/completions", "billing.internal.svc") {
		t.Error("authority allowlist")
	}
}

// Review finding 7 / issue item 8: a plain gRPC client plays Envoy and
// the upstream, asks for an admin path on an internal host and answers
// with an expand_context call. toolproc must not send anything there.
func TestPlainGRPCClientCannotDriveReplays(t *testing.T) {
	var mu sync.Mutex
	var got []string
	replay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		got = append(got, r.Method+" http://"+r.Host+r.URL.RequestURI())
		mu.Unlock()
		w.WriteHeader(500)
	}))
	defer replay.Close()
	s := testServer(t, "server: {replay_url: "+replay.URL+"}")
	client := startGRPC(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h := hdrs(":authority", "billing.internal.svc", ":path", "/admin/export/chat/completions?all=1", ":method", "POST",
		"content-type", "application/json", "authorization", "Bearer attacker-chosen-0123456789", "x-internal-admin", "true")
	args := wire.QuoteString(`{"id":"sh_00000000000000000000000000000000"}`)
	answer := `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"expand_context","arguments":` + string(args) + `}}]},"finish_reason":"tool_calls"}]}`
	overflow := `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`
	for _, tc := range []struct {
		status, body string
	}{{"200", answer}, {"400", overflow}} {
		stream, err := client.Process(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []*extprocv3.ProcessingRequest{
			{Request: &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: h},
				ProtocolConfig: &extprocv3.ProtocolConfiguration{RequestBodyMode: modeBuffered, ResponseBodyMode: modeBuffered}},
			reqBody(openAIBody(bigToolOutput()), true),
			{Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: hdrs(":status", tc.status, "content-type", "application/json")}},
			respBody([]byte(tc.body), true),
		} {
			sendAnswered(t, stream, m)
		}
		_ = stream.CloseSend()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Fatalf("toolproc sent %v", got)
	}
	if n := testutil.ToFloat64(s.metrics.Replays.WithLabelValues("overflow_clamp", "refused")) +
		testutil.ToFloat64(s.metrics.Replays.WithLabelValues("expand_context", "refused")); n == 0 {
		t.Fatal("refusals not counted")
	}
}

// Review finding 10: *url.Error text holds the whole URL, and Gemini's
// API key rides in ?key=. No error text and no log line may carry it, on
// any failure path: refused connection, timeout, reset mid-body.
func TestReplayErrorsNeverCarryTheKey(t *testing.T) {
	const key = "AIzaSyTOPSECRET0123456789"
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String()
	l.Close()
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	}))
	defer hang.Close()
	reset := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-length", "1000")
		w.WriteHeader(200)
		_, _ = w.Write([]byte(`{"partial":`))
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer reset.Close()
	for _, target := range []string{closed, hang.URL, reset.URL} {
		var logs bytes.Buffer
		cfg, _ := ParseConfig([]byte("server: {replay_url: " + target + ", replay_timeout: 300ms}"))
		s := NewServer(cfg, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), prometheus.NewRegistry())
		path := "/v1beta/models/gemini-2.5-pro:generateContent?key=" + key
		h := hdrs(":path", path, ":method", "POST", ":authority", "generativelanguage.googleapis.com")
		resp, err := s.replay.Do(context.Background(), Replay{Purpose: "expand_context", Headers: h.GetHeaders(), Body: []byte(`{}`)})
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err == nil {
			t.Fatalf("%s: want an error", target)
		}
		if strings.Contains(err.Error(), key) {
			t.Errorf("%s: API key in the error text: %v", target, err)
		}
		// The exchange's log lines for the same failure.
		x := newTestExchange(s)
		x.log = s.log
		x.handle(reqHeaders(path, modeBuffered, modeBuffered, "x-goog-api-key", "AIzaSyHEADERKEY0123456789"))
		x.handle(reqBody([]byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`), true))
		x.rewrite.reqHeaders = h.GetHeaders()
		x.expansion.expandable, x.rewrite.refs = true, true
		x.rewrite.clientAsk = &wire.ClientAsk{}
		x.rewrite.upstreamBody = []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
		x.Continue(wire.Turn{Calls: []wire.ExpandCall{{CallID: "c", ID: "sh_00000000000000000000000000000000"}}})
		if strings.Contains(logs.String(), key) || strings.Contains(logs.String(), "AIzaSyHEADERKEY") {
			t.Errorf("%s: API key in the logs: %s", target, logs.String())
		}
	}
}

// sendAnswered sends one message on an ext_proc stream and reads until its
// answer, skipping the message-timeout extensions toolproc sends while a
// replay runs.
func sendAnswered(t *testing.T, stream extprocv3.ExternalProcessor_ProcessClient, m *extprocv3.ProcessingRequest) {
	t.Helper()
	if err := stream.Send(m); err != nil {
		t.Fatal(err)
	}
	for {
		r, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r.GetOverrideMessageTimeout() == nil {
			return
		}
	}
}
