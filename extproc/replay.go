package extproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"go.opentelemetry.io/otel/trace"
)

// ReplayHeader marks requests toolproc sends itself, for Envoy access logs
// and for the upstream; its value says why (expand_context, overflow rung).
const ReplayHeader = "x-toolproc-replay"

// ReplayClient sends the requests toolproc must issue itself (a retry after
// compressing harder, a continuation after expand_context) to Envoy's replay
// listener: the same routes with the ext_proc filter disabled. Envoy keeps
// owning TLS, credentials policy, retries and egress (docs/design.md §1).
type ReplayClient struct {
	base    *url.URL
	client  *http.Client
	timeout time.Duration
	metrics *Metrics
	route   replayRoute
	tracer  trace.Tracer // nil: not traced
}

// NewReplayClient builds a client for cfg.Server.ReplayURL.
func NewReplayClient(cfg *Config, m *Metrics) (*ReplayClient, error) {
	u, err := url.Parse(cfg.Server.ReplayURL)
	if err != nil {
		return nil, fmt.Errorf("server.replay_url: %w", err)
	}
	return &ReplayClient{
		base: u,
		client: &http.Client{
			Transport: &http.Transport{
				// Bytes pass as they are: toolproc parses what comes back.
				DisableCompression:  true,
				MaxIdleConnsPerHost: 64,
				IdleConnTimeout:     90 * time.Second,
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		timeout: time.Duration(cfg.Server.ReplayTimeout),
		metrics: m,
		route:   replayRoute{prefixes: cfg.Server.ReplayPathPrefixes, authorities: cfg.Server.ReplayAuthorities},
	}, nil
}

// Replay is one request to send: the original request's headers (as Envoy
// gave them to ext_proc) with a new body.
type Replay struct {
	Purpose string
	Headers *corev3.HeaderMap
	Body    []byte
}

// Do sends r and returns the response; the caller closes its body. The
// context bounds the whole exchange together with server.replay_timeout.
// Credentials travel in the headers and are never logged.
func (c *ReplayClient) Do(ctx context.Context, r Replay) (*http.Response, error) {
	return traceReplay(ctx, c.tracer, r, c.do)
}

func (c *ReplayClient) do(ctx context.Context, r Replay) (*http.Response, error) {
	start := time.Now()
	method, path := getHeader(r.Headers, ":method"), getHeader(r.Headers, ":path")
	authority := getHeader(r.Headers, ":authority")
	if r.Purpose != replayPurposeCompress && !c.route.allows(path, authority) {
		// The summariser's route is the operator's own setting; every other
		// replay repeats a path a gRPC peer gave us.
		c.count(r.Purpose, "refused", start)
		return nil, fmt.Errorf("replay %s to %s: %w", r.Purpose, pathForLog(path), errRouteRefused)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	if method == "" {
		method = http.MethodPost
	}
	target := *c.base
	// :path is already percent-encoded (a Bedrock model id's ':' arrives as
	// %3A): keep it as the raw path so it is not encoded a second time.
	p, q, _ := strings.Cut(path, "?")
	raw := strings.TrimRight(c.base.EscapedPath(), "/") + p
	target.RawQuery = q
	if un, err := url.PathUnescape(raw); err == nil {
		target.Path, target.RawPath = un, raw
	} else {
		target.Path, target.RawPath = raw, ""
	}
	req, err := http.NewRequestWithContext(ctx, method, target.String(), bytes.NewReader(r.Body))
	if err != nil {
		cancel()
		c.count(r.Purpose, "error", start)
		return nil, fmt.Errorf("replay %s: %w", r.Purpose, err)
	}
	copyReplayHeaders(req, r.Headers)
	// The summariser's request is the operator's own, so an authority that
	// is not listed is dropped rather than refused: replay_url's goes.
	req.Host, _ = c.route.host(authority)
	injectTrace(ctx, req.Header)
	req.ContentLength = int64(len(r.Body))
	req.Header.Set("content-length", strconv.Itoa(len(r.Body)))
	req.Header.Set(ReplayHeader, r.Purpose)
	resp, err := c.client.Do(req)
	if err != nil {
		cancel()
		c.count(r.Purpose, "error", start)
		return nil, fmt.Errorf("replay %s to %s%s: %w", r.Purpose, c.base.Host, pathForLog(path), redactURLError(err))
	}
	c.count(r.Purpose, strconv.Itoa(resp.StatusCode/100)+"xx", start)
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

func (c *ReplayClient) count(purpose, outcome string, start time.Time) {
	if c.metrics == nil {
		return
	}
	c.metrics.Replays.WithLabelValues(purpose, outcome).Inc()
	c.metrics.ReplaySeconds.WithLabelValues(purpose).Observe(time.Since(start).Seconds())
}

// replayDropped are headers that describe the original hop or its body, not
// the request: the HCM strips hop-by-hop headers itself (docs/envoy-notes.md §1),
// content-length is recomputed, and Envoy adds its own x-envoy-* and
// x-request-id on the replay listener.
var replayDropped = map[string]bool{
	"content-length": true, "transfer-encoding": true, "connection": true, "keep-alive": true,
	"proxy-connection": true, "upgrade": true, "te": true, "trailer": true, "expect": true,
	"x-request-id": true, "x-forwarded-proto": true, "accept-encoding": true,
}

// copyReplayHeaders copies the request headers; :authority is the route's to
// decide (replayRoute.host).
func copyReplayHeaders(req *http.Request, hm *corev3.HeaderMap) {
	for _, h := range hm.GetHeaders() {
		k := h.GetKey()
		switch {
		case strings.HasPrefix(k, ":"), replayDropped[k], strings.HasPrefix(k, "x-envoy-"):
		default:
			req.Header.Add(k, headerValue(h))
		}
	}
}

// cancelOnClose releases the request's context once the body is consumed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// redactURLError drops the URL from net/http's *url.Error: its text holds
// the whole request URL, and Gemini's API key rides in ?key= (review
// finding 10). What is left says what failed (Op) and why (Err).
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
