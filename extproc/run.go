package extproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// GRPCServerOptions are the options toolproc's gRPC server needs. A
// BUFFERED body arrives as one message, and grpc-go refuses anything over
// 4 MiB by default (docs/envoy-notes.md §5), so the limit is raised.
func GRPCServerOptions(cfg *Config) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(cfg.Server.MaxRecvMsgBytes),
		grpc.MaxSendMsgSize(cfg.Server.MaxRecvMsgBytes),
	}
}

// NewLogger builds the slog logger the config asks for.
func NewLogger(cfg LogConfig) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(strings.ToUpper(cfg.Level)))
	opts := &slog.HandlerOptions{Level: lvl}
	if cfg.Format == "text" {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, opts))
}

// Run serves ext_proc and gRPC health on server.grpc_addr and the admin
// endpoints on server.admin_addr until ctx is done, then drains: readiness
// goes false, health NOT_SERVING, in-flight streams get shutdown_grace.
func Run(ctx context.Context, cfg *Config, log *slog.Logger, opts ...RunOption) error {
	var ro runOptions
	for _, o := range opts {
		o(&ro)
	}
	defer applyMemoryLimits(cfg, log)()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv := NewServer(cfg, log, reg)
	defer srv.Close()
	stopTracing, err := srv.startTracing(ctx, cfg.Tracing, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	if ro.reload != nil {
		WatchConfig(ctx, srv, *ro.reload, reg, log)
	}

	grpcLis, err := listenGRPC(cfg.Server.GRPCAddr)
	if err != nil {
		return fmt.Errorf("listen grpc %s: %w", cfg.Server.GRPCAddr, err)
	}
	adminLis, err := net.Listen("tcp", cfg.Server.AdminAddr)
	if err != nil {
		grpcLis.Close()
		return fmt.Errorf("listen admin %s: %w", cfg.Server.AdminAddr, err)
	}

	g := grpc.NewServer(GRPCServerOptions(cfg)...)
	srv.Register(g)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(g, hs)
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)

	var ready atomic.Bool
	ready.Store(true)
	admin := &http.Server{Handler: AdminHandler(reg, &ready), ReadHeaderTimeout: 5 * time.Second}

	errc := make(chan error, 2)
	go func() { errc <- g.Serve(grpcLis) }()
	go func() {
		if err := admin.Serve(adminLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	log.Info("toolproc serving", "version", Build().Version, "revision", Build().ShortRevision(), "grpc", grpcLis.Addr().String(), "admin", adminLis.Addr().String(),
		"profiles", cfg.ProfileNames(), "max_recv_msg_bytes", cfg.Server.MaxRecvMsgBytes)

	select {
	case <-ctx.Done():
	case err := <-errc:
		g.Stop()
		_ = admin.Close()
		return err
	}

	log.Info("shutting down", "grace", time.Duration(cfg.Server.ShutdownGrace).String())
	ready.Store(false)
	hs.Shutdown()
	done := make(chan struct{})
	go func() { g.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Duration(cfg.Server.ShutdownGrace)):
		log.Warn("grace period over; closing remaining streams")
		g.Stop()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = admin.Shutdown(sctx)
	log.Info("stopped")
	return nil
}

// RunOption adjusts Run.
type RunOption func(*runOptions)

type runOptions struct {
	reload *ReloadOptions
}

// WithReload reloads the config file on SIGHUP and on change (reload.go).
func WithReload(o ReloadOptions) RunOption {
	return func(ro *runOptions) { ro.reload = &o }
}

// AdminHandler serves /metrics, /healthz (the process is alive) and /readyz
// (it accepts new streams; false while draining).
func AdminHandler(reg *prometheus.Registry, ready *atomic.Bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	return mux
}

// listenGRPC listens on a TCP address, or on a Unix socket for
// "unix:///path": a sidecar Envoy reaches toolproc through the socket (a
// `pipe` address in its cluster) and nothing else on the network can.
func listenGRPC(addr string) (net.Listener, error) {
	if path, ok := strings.CutPrefix(addr, "unix://"); ok {
		_ = os.Remove(path) // a socket left by a previous run
		return net.Listen("unix", path)
	}
	return net.Listen("tcp", addr)
}

// applyMemoryLimits sets the Go runtime's soft memory limit from the
// config, unless GOMEMLIMIT is set, and keeps the heap goal at what is
// live plus server.heap_headroom_bytes (heap.go), unless GOGC is set. It
// returns the function that stops the latter.
func applyMemoryLimits(cfg *Config, log *slog.Logger) (stop func()) {
	if limit := cfg.MemoryLimit(); limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
		if log != nil {
			log.Info("memory limit set", "bytes", limit)
		}
	}
	return startHeadroomTuner(cfg.Server.HeapHeadroomBytes)
}
