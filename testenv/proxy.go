package testenv

import (
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// maxGRPCMessage bounds processor messages both ways. Envoy's own default is unlimited (§5); 256 MiB
// is far above any buffer limit a test uses.
const maxGRPCMessage = 256 << 20

// Proxy is the Envoy stand-in: an HTTP reverse proxy with an ext_proc filter in front of the router.
type Proxy struct {
	cfg       ProxyConfig
	upstream  *url.URL
	transport *http.Transport
	client    *http.Client
	conn      *grpc.ClientConn // nil without a processor
	proc      extprocv3.ExternalProcessorClient
	log       *slog.Logger
}

// NewProxy validates cfg like Envoy's config loader and prepares the processor client. The gRPC
// connection is lazy, so the processor does not have to be up yet.
func NewProxy(cfg ProxyConfig) (*Proxy, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	u, _ := url.Parse(cfg.UpstreamURL) // validated above
	tr := &http.Transport{
		// Bytes pass through untouched: Envoy never decodes content-encoding (§4).
		DisableCompression:  true,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:   true,
	}
	p := &Proxy{
		cfg:       cfg,
		upstream:  u,
		transport: tr,
		// No client timeout: LLM routes use timeout 0s (§10); the idle timeout bounds a stalled exchange.
		client: &http.Client{
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		log: cfg.Logger,
	}
	if cfg.ExtProcAddr != "" {
		conn, err := grpc.NewClient(cfg.ExtProcAddr,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(
				grpc.MaxCallRecvMsgSize(maxGRPCMessage),
				grpc.MaxCallSendMsgSize(maxGRPCMessage),
			),
		)
		if err != nil {
			return nil, fmt.Errorf("testenv: processor client for %q: %w", cfg.ExtProcAddr, err)
		}
		p.conn = conn
		p.proc = extprocv3.NewExternalProcessorClient(conn)
	}
	return p, nil
}

// Close releases the processor connection and idle upstream connections.
func (p *Proxy) Close() error {
	p.transport.CloseIdleConnections()
	if p.conn != nil {
		return p.conn.Close()
	}
	return nil
}

// ServeHTTP proxies one exchange, consulting the processor as Envoy's ext_proc filter would.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := newExchange(p, w, r)
	if x.run() {
		// Envoy resets the downstream stream when it cannot send a local reply any more (§8, §9).
		// ErrAbortHandler makes net/http drop the connection, so the client sees a truncated response.
		panic(http.ErrAbortHandler)
	}
}

// requestHeaderMap builds the header map Envoy's HCM hands the filter chain (§1): pseudo-headers first
// (:authority, :path, :method, :scheme), lower-case keys, hop-by-hop headers stripped, and the
// x-forwarded-proto and x-request-id headers the HCM adds.
func requestHeaderMap(r *http.Request) *headerMap {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	h := &headerMap{}
	h.add(":authority", r.Host)
	h.add(":path", r.URL.RequestURI())
	h.add(":method", r.Method)
	h.add(":scheme", scheme)
	skip := map[string]bool{"host": true}
	for k := range requestHopByHop {
		skip[k] = true
	}
	h.appendHTTP(r.Header, skip)
	if r.ContentLength > 0 && !h.has("content-length") {
		h.add("content-length", strconv.FormatInt(r.ContentLength, 10))
	}
	if !h.has("x-forwarded-proto") {
		h.add("x-forwarded-proto", scheme)
	}
	if !h.has("x-request-id") {
		h.add("x-request-id", newRequestID())
	}
	return h
}

// responseHeaderMap builds the response header map the filter sees: :status first, then the upstream
// headers, transfer-encoding when the upstream used it (hop-by-hop headers are stripped only after the
// filter chain, §1), and x-envoy-upstream-service-time.
func responseHeaderMap(resp *http.Response, serviceTime time.Duration) *headerMap {
	h := &headerMap{}
	h.add(":status", strconv.Itoa(resp.StatusCode))
	h.appendHTTP(resp.Header, nil)
	if len(resp.TransferEncoding) > 0 && !h.has("transfer-encoding") {
		h.add("transfer-encoding", strings.Join(resp.TransferEncoding, ", "))
	}
	h.add("x-envoy-upstream-service-time", strconv.FormatInt(serviceTime.Milliseconds(), 10))
	return h
}

// responseHasNoBody reports whether Envoy would see end_stream on the response headers.
func responseHasNoBody(method string, resp *http.Response) bool {
	return method == http.MethodHead || resp.StatusCode == http.StatusNoContent ||
		resp.StatusCode == http.StatusNotModified || resp.ContentLength == 0
}

// realTrailers returns the trailers that actually carry values, or nil. Envoy only calls the trailer
// callbacks when trailers exist (§3.3).
func realTrailers(t http.Header) *headerMap {
	hm := &headerMap{}
	hm.appendHTTP(t, nil) // announced trailers that never arrived have no values and add nothing
	if len(hm.entries) == 0 {
		return nil
	}
	return hm
}

// newRequestID returns a random UUIDv4 like the HCM's generate_request_id.
func newRequestID() string {
	var b [16]byte
	_, _ = io.ReadFull(rand.Reader, b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// upstreamSkip are not copied onto the outgoing request: net/http derives them from the request fields.
var upstreamSkip = map[string]bool{
	"host":              true,
	"content-length":    true,
	"transfer-encoding": true,
	"connection":        true,
	"keep-alive":        true,
	"proxy-connection":  true,
	"upgrade":           true,
	"te":                true,
}
