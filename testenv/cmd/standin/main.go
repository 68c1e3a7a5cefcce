// Command standin runs the Envoy stand-in in front of an LLM upstream (or the built-in fake one), with
// a second, processor-free listener for replaying traffic unmodified.
//
//	standin -extproc 127.0.0.1:50051 -upstream https://api.openai.com
//
// Without -upstream (and without $UPSTREAM) a FakeUpstream is started on -fake-upstream-listen.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"

	"github.com/toolproc/toolproc/testenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, os.Args[1:], os.Getenv, log, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		log.Error("standin failed", "err", err)
		os.Exit(1)
	}
}

// options are the parsed flags.
type options struct {
	listen, replayListen, extproc, upstream, fakeUpstreamListen string
	requestBodyMode, responseBodyMode                           string
	messageTimeout, maxMessageTimeout                           time.Duration
	bufferLimit                                                 int
	failureModeAllow, allowModeOverride                         bool
	profile                                                     string
	scenarios, xmlProfile                                       string
	debug                                                       bool
	cpuProfile                                                  string
}

// parseFlags reads args, with $UPSTREAM and $RESPONSE_BODY_MODE as defaults for their flags.
func parseFlags(args []string, getenv func(string) string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("standin", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:10000", "address of the listener with the ext_proc filter")
	fs.StringVar(&o.replayListen, "replay-listen", "127.0.0.1:10001", "address of the plain listener (no ext_proc); empty disables it")
	fs.StringVar(&o.extproc, "extproc", "127.0.0.1:50051", "processor gRPC address")
	fs.StringVar(&o.upstream, "upstream", getenv("UPSTREAM"), "upstream base URL ($UPSTREAM); empty starts a fake upstream")
	fs.StringVar(&o.fakeUpstreamListen, "fake-upstream-listen", "127.0.0.1:18080", "address of the fake upstream when -upstream is empty")
	fs.StringVar(&o.requestBodyMode, "request-body-mode", "BUFFERED", "request body mode: NONE, STREAMED, BUFFERED, BUFFERED_PARTIAL, FULL_DUPLEX_STREAMED")
	respDefault := getenv("RESPONSE_BODY_MODE")
	if respDefault == "" {
		respDefault = "FULL_DUPLEX_STREAMED"
	}
	fs.StringVar(&o.responseBodyMode, "response-body-mode", respDefault, "response body mode ($RESPONSE_BODY_MODE)")
	fs.DurationVar(&o.messageTimeout, "message-timeout", 10*time.Second, "ext_proc message_timeout")
	fs.DurationVar(&o.maxMessageTimeout, "max-message-timeout", 60*time.Second, "ext_proc max_message_timeout (0 disables override_message_timeout)")
	fs.IntVar(&o.bufferLimit, "buffer-limit", 32<<20, "per-connection buffer limit in bytes (BUFFERED body limit)")
	fs.BoolVar(&o.failureModeAllow, "failure-mode-allow", false, "fail open when the processor fails")
	fs.BoolVar(&o.allowModeOverride, "allow-mode-override", true, "honour mode_override in headers responses")
	fs.StringVar(&o.profile, "profile", "", "sent to the processor as gRPC metadata x-toolproc-profile")
	fs.StringVar(&o.scenarios, "scenarios", "", "folder of stream scenario files the fake upstream plays on header "+testenv.ScenarioHeader)
	fs.StringVar(&o.xmlProfile, "xml-profile", "xml", "profile sent for paths under "+testenv.XMLPrefix+" (empty: no such route)")
	fs.BoolVar(&o.debug, "debug", false, "debug logging")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile (go tool pprof) to this file until shutdown")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	return o, nil
}

// processingMode builds the filter's processing_mode. FULL_DUPLEX_STREAMED needs trailer mode SEND in
// the same direction, or Envoy rejects the config, so it is set automatically.
func (o options) processingMode() (*extprocfilterv3.ProcessingMode, error) {
	req, err := testenv.ParseBodyMode(o.requestBodyMode)
	if err != nil {
		return nil, fmt.Errorf("-request-body-mode: %w", err)
	}
	resp, err := testenv.ParseBodyMode(o.responseBodyMode)
	if err != nil {
		return nil, fmt.Errorf("-response-body-mode: %w", err)
	}
	m := &extprocfilterv3.ProcessingMode{
		RequestHeaderMode:  extprocfilterv3.ProcessingMode_SEND,
		RequestBodyMode:    req,
		ResponseHeaderMode: extprocfilterv3.ProcessingMode_SEND,
		ResponseBodyMode:   resp,
	}
	if req == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
		m.RequestTrailerMode = extprocfilterv3.ProcessingMode_SEND
	}
	if resp == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
		m.ResponseTrailerMode = extprocfilterv3.ProcessingMode_SEND
	}
	return m, nil
}

// run starts the listeners and serves until ctx ends. ready, if set, gets the bound addresses by name
// ("listen", "replay-listen", "fake-upstream-listen").
func run(ctx context.Context, args []string, getenv func(string) string, log *slog.Logger, ready func(map[string]net.Addr)) error {
	o, err := parseFlags(args, getenv, os.Stderr)
	if err != nil {
		return err
	}
	if o.debug {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	mode, err := o.processingMode()
	if err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	addrs := map[string]net.Addr{}
	var servers []*http.Server
	errc := make(chan error, 3)
	serve := func(name, addr string, h http.Handler, attrs ...any) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("-%s: %w", name, err)
		}
		addrs[name] = ln.Addr()
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
		servers = append(servers, srv)
		log.Info("listening", append([]any{"listener", name, "addr", ln.Addr().String()}, attrs...)...)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s: %w", name, err)
			}
		}()
		return nil
	}
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, s := range servers {
			_ = s.Shutdown(shutdownCtx)
		}
	}()

	upstream := o.upstream
	if upstream == "" {
		fake := testenv.NewFakeUpstream()
		if o.scenarios != "" {
			scenarios, err := testenv.LoadScenarios(o.scenarios)
			if err != nil {
				return err
			}
			fake.SetScript(testenv.WithDemos(testenv.ScenarioScript(scenarios)))
			log.Info("fake upstream plays stream scenarios", "count", len(scenarios), "header", testenv.ScenarioHeader)
		} else {
			fake.SetScript(testenv.WithDemos(nil))
		}
		if err := serve("fake-upstream-listen", o.fakeUpstreamListen, fake, "kind", "fake upstream"); err != nil {
			return err
		}
		upstream = "http://" + addrs["fake-upstream-listen"].String()
	}
	cfg := testenv.ProxyConfig{
		ExtProcAddr:       o.extproc,
		UpstreamURL:       upstream,
		Mode:              mode,
		AllowModeOverride: o.allowModeOverride,
		FailureModeAllow:  o.failureModeAllow,
		MessageTimeout:    o.messageTimeout,
		MaxMessageTimeout: o.maxMessageTimeout,
		BufferLimit:       o.bufferLimit,
		Logger:            log,
	}
	if o.profile != "" {
		cfg.InitialMetadata = map[string]string{"x-toolproc-profile": o.profile}
	}
	if o.xmlProfile != "" {
		cfg.Routes = []testenv.RouteOverride{{Prefix: testenv.XMLPrefix, InitialMetadata: map[string]string{"x-toolproc-profile": o.xmlProfile}}}
	}
	proxy, err := testenv.NewProxy(cfg)
	if err != nil {
		return err
	}
	defer proxy.Close()
	if err := serve("listen", o.listen, proxy, "extproc", o.extproc, "upstream", upstream,
		"request_body_mode", mode.GetRequestBodyMode().String(), "response_body_mode", mode.GetResponseBodyMode().String(),
		"message_timeout", o.messageTimeout.String(), "buffer_limit", strconv.Itoa(o.bufferLimit),
		"failure_mode_allow", o.failureModeAllow, "profile", o.profile); err != nil {
		return err
	}
	if o.replayListen != "" {
		replayCfg := cfg
		replayCfg.ExtProcAddr = ""
		replay, err := testenv.NewProxy(replayCfg)
		if err != nil {
			return err
		}
		defer replay.Close()
		if err := serve("replay-listen", o.replayListen, replay, "upstream", upstream, "extproc", "none"); err != nil {
			return err
		}
	}
	if ready != nil {
		ready(addrs)
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down")
		return nil
	case err := <-errc:
		return err
	}
}
