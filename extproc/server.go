// Package extproc is toolproc's Envoy side: the ext_proc gRPC service, one
// exchange per stream, body handling per processing mode, and the admin and
// health endpoints. The rewriting itself lives in filters/.
package extproc

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolproc/toolproc/filters/shadow"
)

// Server implements envoy.service.ext_proc.v3.ExternalProcessor.
type Server struct {
	extprocv3.UnimplementedExternalProcessorServer

	cfg      *Config
	log      *slog.Logger
	metrics  *Metrics
	profiles atomic.Pointer[map[string]*compiledProfile] // swapped whole by a reload (reload.go)
	store    shadow.Store                                // nil: compression off (the store could not be opened)
	keys     *keySource                                  // the deployment secret; set with store
	replay   *ReplayClient                               // nil: expansions cannot be answered, so nothing is compressed
	audit    *auditLog                                   // nil: no audit log
	tracer   trace.Tracer                                // nil: not traced (tracing.go)

	warnedProfiles sync.Map // unknown profile names already logged
}

// NewServer builds a server from a validated config. Metrics register on
// reg. A store, replay URL or audit path that cannot be opened is logged
// and leaves compression (or the audit) off; requests are still served.
func NewServer(cfg *Config, log *slog.Logger, reg prometheus.Registerer) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, metrics: newMetrics(reg)}
	var err error
	if s.replay, err = NewReplayClient(cfg, s.metrics); err != nil {
		log.Error("replay client unavailable; compression with references is off", "error", err)
	}
	if s.replay != nil {
		if s.store, s.keys, err = openStore(cfg); err != nil {
			log.Error("shadow store unavailable; compression is off", "error", err)
		}
	}
	if s.audit, err = openAudit(cfg.Audit.Path); err != nil {
		log.Error("audit log unavailable", "error", err)
	}
	s.setProfiles(compileProfiles(cfg, s.llmCompleter))
	return s
}

// Close releases the store and the audit log.
func (s *Server) Close() error {
	var errs []error
	if s.store != nil {
		errs = append(errs, s.store.Close())
	}
	errs = append(errs, s.audit.Close())
	return errors.Join(errs...)
}

// Register adds the ext_proc service to g.
func (s *Server) Register(g *grpc.Server) {
	extprocv3.RegisterExternalProcessorServer(g, s)
}

// Process runs one exchange. Envoy ends every stream itself (half-close then
// reset), so io.EOF and Canceled are the normal end, not errors
// (docs/envoy-notes.md §9). Returning early with OK would make Envoy carry on
// without us, which is never what we want mid-exchange.
func (s *Server) Process(stream grpc.BidiStreamingServer[extprocv3.ProcessingRequest, extprocv3.ProcessingResponse]) error {
	s.metrics.ActiveStreams.Inc()
	defer s.metrics.ActiveStreams.Dec()
	x := newExchange(s, s.profileFor(stream.Context()))
	x.ctx = stream.Context()
	x.send = stream.Send
	metadataSent := false
	// An exchange whose answer never ended (the client went away) is
	// recorded when its stream closes.
	defer x.finish()
	tr := newExchangeTrace(s, stream.Context())
	var streamErr error
	defer func() { tr.end(x, streamErr) }()
	for {
		m, err := stream.Recv()
		if err == nil {
			x.ctx = tr.onMessage(m, phaseOf(m))
		} else if !errors.Is(err, io.EOF) && status.Code(err) != codes.Canceled {
			streamErr = err
		}
		if err != nil {
			if errors.Is(err, io.EOF) || status.Code(err) == codes.Canceled {
				s.metrics.Streams.WithLabelValues("ok").Inc()
				return nil
			}
			s.metrics.Streams.WithLabelValues("error").Inc()
			s.log.Warn("ext_proc stream receive failed", "error", err)
			return err
		}
		resps := x.handle(m)
		if !metadataSent && len(resps) > 0 && x.rewrite.report != nil {
			// Envoy keeps dynamic metadata only in namespaces listed in
			// metadata_options.receiving_namespaces (docs/envoy-notes.md §6).
			resps[0].DynamicMetadata = x.dynamicMetadata()
			metadataSent = true
		}
		if x.resp.eos && len(resps) > 0 {
			// The answer is over: what it cost goes to the metrics, the
			// audit log and, with its last message, the access log.
			if md := x.finish(); md != nil {
				last := resps[len(resps)-1]
				last.DynamicMetadata = mergeMetadata(last.DynamicMetadata, md)
			}
		}
		for _, r := range resps {
			if err := stream.Send(r); err != nil {
				if status.Code(err) == codes.Canceled || errors.Is(err, io.EOF) {
					s.metrics.Streams.WithLabelValues("ok").Inc()
					return nil
				}
				s.metrics.Streams.WithLabelValues("error").Inc()
				s.log.Warn("ext_proc stream send failed", "error", err)
				return err
			}
		}
	}
}
