package extproc

// OpenTelemetry tracing, off by default (tracing.enabled). One exchange is one trace branch:
//
//	<caller's span, from the request's W3C traceparent>
//	└─ toolproc.exchange                      the ext_proc stream
//	   ├─ ext_proc request_headers            one span per phase, first message to last
//	   ├─ ext_proc request_body
//	   │  ├─ toolproc.compress                the request pipeline
//	   │  └─ toolproc.store put|get|touch     shadow store calls
//	   ├─ ext_proc response_headers
//	   └─ ext_proc response_body
//	      └─ toolproc.replay                  expand_context / overflow replays (traceparent sent on)
//
// Envoy passes the client's request headers to ext_proc, traceparent included
// (www.w3.org/TR/trace-context), so toolproc joins the caller's trace even when
// Envoy itself does not trace. A phase span covers all of that phase's messages,
// not one span per streamed chunk: an SSE answer of a thousand chunks is one
// response_body span with a message count.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolproc/toolproc/filters/shadow"
)

// TracingConfig is the `tracing:` block.
type TracingConfig struct {
	Enabled bool `json:"enabled"`
	// Endpoint is the OTLP/gRPC collector, as a URL (http://host:4317 is
	// plaintext, https:// TLS). "" leaves it to the standard
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT
	// variables, else localhost:4317.
	Endpoint string `json:"endpoint"`
	// SampleRatio samples traces that start here (a request without a
	// traceparent); a request with one follows its caller's decision.
	SampleRatio float64 `json:"sample_ratio"`
	ServiceName string  `json:"service_name"`
}

func (t TracingConfig) validate(bad func(key, format string, args ...any)) {
	if t.SampleRatio < 0 || t.SampleRatio > 1 {
		bad("tracing.sample_ratio", "must be between 0 and 1 (got %g)", t.SampleRatio)
	}
	if t.Endpoint != "" {
		u, err := url.Parse(t.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("tracing.endpoint", "want a URL such as http://otel-collector:4317 (got %q)", t.Endpoint)
		}
	}
	if t.Enabled && t.ServiceName == "" {
		bad("tracing.service_name", "must not be empty when tracing is enabled")
	}
}

// tracerName is the instrumentation scope of toolproc's spans.
const tracerName = "github.com/toolproc/toolproc/extproc"

// StartTracing builds the OTLP tracer provider the config asks for; shutdown
// flushes what is buffered. Disabled, it is a no-op provider. The exporter
// connects lazily: a collector that is down costs dropped spans, never a
// failed request or a failed start.
func StartTracing(ctx context.Context, cfg TracingConfig) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	if !cfg.Enabled {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	var opts []otlptracegrpc.Option
	if cfg.Endpoint != "" {
		opts = append(opts, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: %w", err)
	}
	sdk := NewTracerProvider(cfg, sdktrace.NewBatchSpanProcessor(exp))
	return sdk, sdk.Shutdown, nil
}

// NewTracerProvider is the SDK provider with toolproc's resource and sampler
// around the given span processor (tests pass an in-memory one).
func NewTracerProvider(cfg TracingConfig, sp sdktrace.SpanProcessor) *sdktrace.TracerProvider {
	name := cfg.ServiceName
	if name == "" {
		name = "toolproc"
	}
	return sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(sp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", name))),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))),
	)
}

// startTracing is Run's hook: the exporter the config asks for, and a stop
// that flushes buffered spans (bounded: a collector that is away must not
// hold up shutdown).
func (s *Server) startTracing(ctx context.Context, cfg TracingConfig, log *slog.Logger) (stop func(), err error) {
	tp, shutdown, err := StartTracing(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.SetTracerProvider(tp)
	if cfg.Enabled {
		log.Info("tracing on", "endpoint", cfg.Endpoint, "sample_ratio", cfg.SampleRatio, "service_name", cfg.ServiceName)
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Warn("tracing: spans not flushed at shutdown", "error", err)
		}
	}, nil
}

// SetTracerProvider makes the server trace with tp. Call it before serving.
func (s *Server) SetTracerProvider(tp trace.TracerProvider) {
	s.tracer = tp.Tracer(tracerName)
	if s.store != nil {
		s.store = tracedStore{inner: s.store, tracer: s.tracer}
	}
	if s.replay != nil {
		s.replay.tracer = s.tracer
	}
}

// tracerOf returns t, or a no-op tracer for a server that was never given one.
func tracerOf(t trace.Tracer) trace.Tracer {
	if t == nil {
		return noop.NewTracerProvider().Tracer(tracerName)
	}
	return t
}

var traceContext = propagation.TraceContext{}

// exchangeTrace follows one ext_proc stream: its exchange span and the span
// of the phase whose messages are arriving.
type exchangeTrace struct {
	tracer   trace.Tracer
	base     context.Context // the stream's context
	exchange context.Context // base + the exchange span
	span     trace.Span      // the exchange span; nil before the first message
	phase    string
	phaseEnd trace.Span
	messages int
}

func newExchangeTrace(s *Server, stream context.Context) *exchangeTrace {
	return &exchangeTrace{tracer: tracerOf(s.tracer), base: stream}
}

// onMessage returns the context m is handled under: the span of its phase.
// The first message opens the exchange span, a child of the traceparent in
// the request headers when it carries one.
func (t *exchangeTrace) onMessage(m *extprocv3.ProcessingRequest, phase string) context.Context {
	if t.span == nil {
		parent := t.base
		if h := m.GetRequestHeaders(); h != nil {
			parent = traceContext.Extract(parent, headerCarrier{h.GetHeaders()})
		}
		t.exchange, t.span = t.tracer.Start(parent, "toolproc.exchange", trace.WithSpanKind(trace.SpanKindServer))
		if h := m.GetRequestHeaders(); h != nil {
			t.span.SetAttributes(attribute.String("http.request.method", getHeader(h.GetHeaders(), ":method")),
				attribute.String("url.path", pathForLog(getHeader(h.GetHeaders(), ":path"))))
		}
	}
	if phase != t.phase || t.phaseEnd == nil {
		t.endPhase()
		var ctx context.Context
		ctx, t.phaseEnd = t.tracer.Start(t.exchange, "ext_proc "+phase)
		t.phase = phase
		return ctx
	}
	t.messages++
	return trace.ContextWithSpan(t.exchange, t.phaseEnd)
}

func (t *exchangeTrace) endPhase() {
	if t.phaseEnd != nil {
		t.phaseEnd.SetAttributes(attribute.Int("ext_proc.messages", t.messages+1))
		t.phaseEnd.End()
	}
	t.phaseEnd, t.messages = nil, 0
}

// end closes the phase and exchange spans when the stream ends; err is the
// stream's error, nil for a normal end.
func (t *exchangeTrace) end(x *exchange, err error) {
	t.endPhase()
	if t.span == nil {
		return
	}
	if x != nil {
		t.span.SetAttributes(attribute.String("toolproc.dialect", string(x.dialect)),
			attribute.Int("toolproc.replays", x.recovery.replays))
		if x.profile != nil {
			t.span.SetAttributes(attribute.String("toolproc.profile", x.profile.name))
		}
	}
	if err != nil {
		t.span.SetStatus(codes.Error, err.Error())
	}
	t.span.End()
}

// headerCarrier reads W3C trace context from the HeaderMap Envoy sends.
type headerCarrier struct{ h *corev3.HeaderMap }

func (c headerCarrier) Get(key string) string { return getHeader(c.h, strings.ToLower(key)) }
func (c headerCarrier) Set(string, string)    {}
func (c headerCarrier) Keys() []string {
	keys := make([]string, 0, len(c.h.GetHeaders()))
	for _, hv := range c.h.GetHeaders() {
		keys = append(keys, hv.GetKey())
	}
	return keys
}

// startSpan starts a child of ctx's span with the tracer in ctx's span's
// provider; outside a traced exchange it is a no-op.
func startSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return trace.SpanFromContext(ctx).TracerProvider().Tracer(tracerName).Start(ctx, name, trace.WithAttributes(attrs...))
}

// endSpan records err (if any) and ends span.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// traceCompress is the request pipeline's hook: a span over the rewrite.
func traceCompress(ctx context.Context, profile string) (context.Context, func(error)) {
	ctx, span := startSpan(ctx, "toolproc.compress", attribute.String("toolproc.profile", profile))
	return ctx, func(err error) { endSpan(span, err) }
}

// traceReplay wraps one replay: a client span, and its traceparent on the
// request so the provider's side (and Envoy's access log) can join it.
func traceReplay(ctx context.Context, tracer trace.Tracer, r Replay, do func(context.Context, Replay) (*http.Response, error)) (*http.Response, error) {
	ctx, span := tracerOf(tracer).Start(ctx, "toolproc.replay", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("toolproc.replay.purpose", r.Purpose)))
	resp, err := do(ctx, r)
	if resp != nil {
		span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	}
	endSpan(span, err)
	return resp, err
}

// injectTrace writes ctx's trace context into an outgoing request's headers,
// replacing the client's own traceparent: the replay is our child span.
func injectTrace(ctx context.Context, h http.Header) {
	traceContext.Inject(ctx, propagation.HeaderCarrier(h))
}

// tracedStore puts a span around every shadow store call.
type tracedStore struct {
	inner  shadow.Store
	tracer trace.Tracer
}

func (s tracedStore) Put(ctx context.Context, tenant string, kind shadow.Kind, key string, value []byte) error {
	ctx, span := s.tracer.Start(ctx, "toolproc.store put", trace.WithAttributes(attribute.Int("toolproc.store.bytes", len(value))))
	err := s.inner.Put(ctx, tenant, kind, key, value)
	endSpan(span, err)
	return err
}

// Adopt implements shadow.Adopter, handing value to the inner store when
// it can take it.
func (s tracedStore) Adopt(ctx context.Context, tenant string, kind shadow.Kind, key string, value []byte) error {
	ctx, span := s.tracer.Start(ctx, "toolproc.store put", trace.WithAttributes(attribute.Int("toolproc.store.bytes", len(value))))
	err := shadow.PutOwned(ctx, s.inner, tenant, kind, key, value, true)
	endSpan(span, err)
	return err
}

func (s tracedStore) Get(ctx context.Context, tenant string, kind shadow.Kind, key string) ([]byte, error) {
	ctx, span := s.tracer.Start(ctx, "toolproc.store get")
	v, err := s.inner.Get(ctx, tenant, kind, key)
	span.SetAttributes(attribute.Bool("toolproc.store.hit", err == nil))
	if errors.Is(err, shadow.ErrNotFound) {
		span.End() // a miss is an answer, not an error
	} else {
		endSpan(span, err)
	}
	return v, err
}

// Touch keeps the inner store's Toucher behaviour: a store that cannot touch
// answers ErrNotFound, and shadow.Keep then puts the value.
func (s tracedStore) Touch(ctx context.Context, tenant string, kind shadow.Kind, key string) error {
	t, ok := s.inner.(shadow.Toucher)
	if !ok {
		return shadow.ErrNotFound
	}
	ctx, span := s.tracer.Start(ctx, "toolproc.store touch")
	err := t.Touch(ctx, tenant, kind, key)
	if errors.Is(err, shadow.ErrNotFound) {
		span.End()
	} else {
		endSpan(span, err)
	}
	return err
}

func (s tracedStore) Close() error { return s.inner.Close() }
