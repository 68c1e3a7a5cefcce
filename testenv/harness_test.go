package testenv_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/testenv"
)

// harness is one end-to-end environment: toolproc in-process on a real gRPC
// listener, the Envoy stand-in configured like envoy/envoy.yaml but with the
// given body modes, and an upstream.
type harness struct {
	config            string // toolproc YAML over the embedded defaults
	reqMode, respMode extprocfilterv3.ProcessingMode_BodySendMode
	routes            []testenv.RouteOverride
	seed              int64 // chunking of request and response bodies
	upstream          http.Handler
	messageTimeout    time.Duration // 0: a generous 20 s
}

// running is a started harness.
type running struct {
	proxyURL string // the stand-in's listener, where clients connect
	adminURL string // toolproc's admin endpoints (/metrics)
}

// xmlRoute sends paths under testenv.XMLPrefix to the "xml" profile.
var xmlRoute = testenv.RouteOverride{
	Prefix: testenv.XMLPrefix, InitialMetadata: map[string]string{extproc.ProfileMetadataKey: "xml"},
}

func (h harness) start(t *testing.T) running {
	t.Helper()
	if os.Getenv("TOOLPROC_E2E_PROXY") != "" {
		t.Skip("external mode (TOOLPROC_E2E_PROXY): this test needs an in-process upstream script or toolproc config")
	}
	cfg, err := extproc.ParseConfig([]byte(h.config))
	if err != nil {
		t.Fatal(err)
	}
	upSrv := httptest.NewServer(h.upstream)
	t.Cleanup(upSrv.Close)
	// The replay listener of envoy/envoy.yaml: the same upstream, no ext_proc.
	replay, err := testenv.NewProxy(testenv.ProxyConfig{UpstreamURL: upSrv.URL, BufferLimit: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	replaySrv := httptest.NewServer(replay)
	t.Cleanup(replaySrv.Close)
	cfg.Server.ReplayURL = replaySrv.URL
	reg := prometheus.NewRegistry()
	srv := extproc.NewServer(cfg, nil, reg)
	t.Cleanup(func() { _ = srv.Close() })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(extproc.GRPCServerOptions(cfg)...)
	srv.Register(g)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	var ready atomic.Bool
	ready.Store(true)
	admin := httptest.NewServer(extproc.AdminHandler(reg, &ready))
	t.Cleanup(admin.Close)

	reqMode := h.reqMode
	if reqMode == extprocfilterv3.ProcessingMode_NONE {
		reqMode = extprocfilterv3.ProcessingMode_BUFFERED // the recommended setting
	}
	mode := &extprocfilterv3.ProcessingMode{
		RequestHeaderMode:  extprocfilterv3.ProcessingMode_SEND,
		RequestBodyMode:    reqMode,
		ResponseHeaderMode: extprocfilterv3.ProcessingMode_SEND,
		ResponseBodyMode:   h.respMode,
	}
	// Envoy refuses FULL_DUPLEX_STREAMED without trailer mode SEND (docs/envoy-notes.md §2).
	if h.respMode == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
		mode.ResponseTrailerMode = extprocfilterv3.ProcessingMode_SEND
	}
	if reqMode == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
		mode.RequestTrailerMode = extprocfilterv3.ProcessingMode_SEND
	}
	msgTimeout := h.messageTimeout
	if msgTimeout == 0 {
		msgTimeout = 20 * time.Second // generous: the race detector is slow
	}
	p, err := testenv.NewProxy(testenv.ProxyConfig{
		ExtProcAddr:       lis.Addr().String(),
		UpstreamURL:       upSrv.URL,
		Mode:              mode,
		AllowModeOverride: true,
		MessageTimeout:    msgTimeout,
		MaxMessageTimeout: 5 * time.Minute, // envoy/envoy.yaml's max_message_timeout
		BufferLimit:       32 << 20,
		Routes:            h.routes,
		RequestChunker:    testenv.RandomChunks(h.seed, 16<<10),
		ResponseChunker:   testenv.RandomChunks(h.seed+1, 97),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	proxy := httptest.NewServer(p)
	t.Cleanup(proxy.Close)
	return running{proxyURL: proxy.URL, adminURL: admin.URL}
}
