package extproc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The caller's trace, as a W3C traceparent header (version 00, sampled).
const (
	callerTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpanID  = "00f067aa0ba902b7"
	callerParent  = "00-" + callerTraceID + "-" + callerSpanID + "-01"
)

func tracedServer(t *testing.T, yaml string) (*Server, *tracetest.SpanRecorder) {
	t.Helper()
	s := testServer(t, yaml)
	rec := tracetest.NewSpanRecorder()
	tp := NewTracerProvider(TracingConfig{Enabled: true, SampleRatio: 0, ServiceName: "toolproc-test"}, rec)
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s.SetTracerProvider(tp)
	return s, rec
}

// TestTracingSpansJoinTraceparent: one exchange through the gRPC server
// yields an exchange span that is a child of the request's traceparent, one
// span per ext_proc phase (not per chunk) under it, and the compression and
// store spans under the request body's phase. The sampler's ratio is 0, so
// the spans exist only because the caller's traceparent says "sampled".
func TestTracingSpansJoinTraceparent(t *testing.T) {
	s, rec := tracedServer(t, "")
	client := startGRPC(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := client.Process(ctx)
	if err != nil {
		t.Fatal(err)
	}
	steps := []*extprocv3.ProcessingRequest{
		reqHeaders("/v1/chat/completions", modeBuffered, modeStreamed, "traceparent", callerParent, "authorization", "Bearer sk-test-trace"),
		reqBody(openAIBody(bigToolOutput()), true),
		{Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: hdrs(":status", "200", "content-type", "text/event-stream")}},
		respBody([]byte("data: {\"choices\":[]}\n\n"), false),
		respBody([]byte("data: {\"choices\":[]}\n\n"), false),
		respBody(nil, true),
	}
	for _, m := range steps {
		if err := stream.Send(m); err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	_, _ = stream.Recv()

	var exchange sdktrace.ReadOnlySpan
	deadline := time.Now().Add(5 * time.Second)
	for exchange == nil {
		for _, sp := range rec.Ended() {
			if sp.Name() == "toolproc.exchange" {
				exchange = sp
			}
		}
		if exchange == nil && time.Now().After(deadline) {
			t.Fatalf("no exchange span; ended: %v", spanNames(rec.Ended()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := exchange.SpanContext().TraceID().String(); got != callerTraceID {
		t.Fatalf("exchange span in trace %s, want the caller's %s", got, callerTraceID)
	}
	if got := exchange.Parent().SpanID().String(); got != callerSpanID || !exchange.Parent().IsRemote() {
		t.Fatalf("exchange span's parent %s (remote %v), want the caller's span %s", got, exchange.Parent().IsRemote(), callerSpanID)
	}
	if exchange.SpanKind() != trace.SpanKindServer {
		t.Errorf("exchange span kind %v, want server", exchange.SpanKind())
	}
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range rec.Ended() {
		if sp.SpanContext().TraceID() != exchange.SpanContext().TraceID() {
			t.Errorf("span %s in another trace", sp.Name())
		}
		byName[sp.Name()] = append(byName[sp.Name()], sp)
	}
	for _, phase := range []string{"request_headers", "request_body", "response_headers", "response_body"} {
		spans := byName["ext_proc "+phase]
		if len(spans) != 1 {
			t.Fatalf("%d spans for phase %s, want 1 (all: %v)", len(spans), phase, spanNames(rec.Ended()))
		}
		if spans[0].Parent().SpanID() != exchange.SpanContext().SpanID() {
			t.Errorf("phase %s is not a child of the exchange span", phase)
		}
	}
	if n := attrInt(byName["ext_proc response_body"][0], "ext_proc.messages"); n != 3 {
		t.Errorf("response_body span counts %d messages, want 3", n)
	}
	body := byName["ext_proc request_body"][0].SpanContext().SpanID()
	comp := byName["toolproc.compress"]
	if len(comp) != 1 || comp[0].Parent().SpanID() != body {
		t.Fatalf("want one compress span under the request body phase, got %v", spanNames(comp))
	}
	puts := byName["toolproc.store put"]
	if len(puts) == 0 {
		t.Fatalf("no store spans: compression stored nothing? spans: %v", spanNames(rec.Ended()))
	}
	for _, p := range puts {
		if p.Parent().SpanID() != comp[0].SpanContext().SpanID() {
			t.Errorf("store span %s is not under the compress span", p.Name())
		}
	}
}

// TestTracingRootSampling: without a traceparent the sampler's ratio decides.
func TestTracingRootSampling(t *testing.T) {
	s, rec := tracedServer(t, clampOnly) // ratio 0
	client := startGRPC(t, s)
	stream, err := client.Process(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(reqHeaders("/v1/messages", modeBuffered, modeNone)); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	_ = stream.CloseSend()
	_, _ = stream.Recv()
	time.Sleep(50 * time.Millisecond)
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("ratio 0 and no traceparent: %d spans recorded", n)
	}
}

// TestTracingReplaySpan: a replay is a client span of the current trace, and
// the request it sends carries the replay span as its traceparent instead of
// the client's own.
func TestTracingReplaySpan(t *testing.T) {
	var got string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("traceparent")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer up.Close()
	cfg := DefaultConfig()
	cfg.Server.ReplayURL = up.URL
	rc, err := NewReplayClient(cfg, newMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := NewTracerProvider(TracingConfig{SampleRatio: 1}, rec)
	rc.tracer = tp.Tracer(tracerName)
	ctx, parent := tp.Tracer("test").Start(context.Background(), "phase")
	h := &corev3.HeaderMap{Headers: []*corev3.HeaderValue{
		{Key: ":path", RawValue: []byte("/v1/chat/completions")}, {Key: ":method", RawValue: []byte("POST")},
		{Key: "traceparent", RawValue: []byte(callerParent)},
	}}
	resp, err := rc.Do(ctx, Replay{Purpose: "expand_context", Headers: h, Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	parent.End()
	var replay sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Name() == "toolproc.replay" {
			replay = sp
		}
	}
	if replay == nil || replay.Parent().SpanID() != parent.SpanContext().SpanID() || replay.SpanKind() != trace.SpanKindClient {
		t.Fatalf("replay span missing or not a client child of the phase span: %v", spanNames(rec.Ended()))
	}
	want := "00-" + replay.SpanContext().TraceID().String() + "-" + replay.SpanContext().SpanID().String() + "-01"
	if got != want {
		t.Fatalf("replay sent traceparent %q, want the replay span's %q", got, want)
	}
	if attrInt(replay, "http.response.status_code") != 200 {
		t.Errorf("replay span lacks the status code")
	}
}

// TestTracingConfig: off by default; bad values are named.
func TestTracingConfig(t *testing.T) {
	if DefaultConfig().Tracing.Enabled {
		t.Fatal("tracing must be off by default")
	}
	for _, bad := range []string{
		"tracing: {sample_ratio: 1.5}",
		"tracing: {endpoint: 'otel:4317'}",
		"tracing: {enabled: true, service_name: ''}",
	} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if _, err := ParseConfig([]byte("tracing: {enabled: true, endpoint: 'http://otel-collector:4317', sample_ratio: 0.1}")); err != nil {
		t.Fatal(err)
	}
	tp, shutdown, err := StartTracing(context.Background(), TracingConfig{Enabled: true, Endpoint: "http://127.0.0.1:1", SampleRatio: 1, ServiceName: "x"})
	if err != nil || tp == nil {
		t.Fatalf("StartTracing: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = shutdown(ctx) // nothing listens there: spans are dropped, nothing fails
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	slices.Sort(out)
	return out
}

func attrInt(s sdktrace.ReadOnlySpan, key string) int64 {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.AsInt64()
		}
	}
	return -1
}
