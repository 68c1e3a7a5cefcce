// Command fakeupstream runs the fake LLM upstream on its own, for topologies
// where the proxy is another process: a real Envoy (envoy/e2e's compose file)
// or the stand-in started separately (make e2e-processes).
//
//	fakeupstream -listen 127.0.0.1:18080 -admin-listen 127.0.0.1:18081
//
// It answers OpenAI Chat and Anthropic Messages calls with canned JSON or SSE,
// plays the README's demo models on x-toolproc-scenario, the canned scripts
// of testenv.Scripts on x-toolproc-e2e-script, and the stream scenarios of
// -scenarios. The admin listener serves GET /requests?tag=T (the requests a
// test tagged with x-toolproc-e2e-tag) and GET /healthz. Recorded requests
// are kept in memory until the process ends: it is a test fixture.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/toolproc/toolproc/testenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, os.Args[1:], log, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		log.Error("fakeupstream failed", "err", err)
		os.Exit(1)
	}
}

func probeURL(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	return nil
}

// run serves until ctx ends; ready, if set, gets the bound addresses.
func run(ctx context.Context, args []string, log *slog.Logger, ready func(upstream, admin net.Addr)) error {
	fs := flag.NewFlagSet("fakeupstream", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:18080", "address of the fake LLM API")
	adminListen := fs.String("admin-listen", "127.0.0.1:18081", "address of the admin API (recorded requests, health)")
	scenarios := fs.String("scenarios", "", "folder of stream scenario files played on header "+testenv.ScenarioHeader)
	probe := fs.String("probe", "", "instead of serving: GET this URL and exit 0 on 200 (a container healthcheck: the image has no shell)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *probe != "" {
		return probeURL(ctx, *probe)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	fake := testenv.NewFakeUpstream()
	var next func(testenv.RecordedRequest) *testenv.ScriptedResponse
	if *scenarios != "" {
		sc, err := testenv.LoadScenarios(*scenarios)
		if err != nil {
			return err
		}
		next = testenv.ScenarioScript(sc)
	}
	fake.SetScript(testenv.WithDemos(testenv.WithScripts(next)))

	upLn, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("-listen: %w", err)
	}
	adminLn, err := net.Listen("tcp", *adminListen)
	if err != nil {
		upLn.Close()
		return fmt.Errorf("-admin-listen: %w", err)
	}
	servers := []*http.Server{
		{Handler: fake, ReadHeaderTimeout: 30 * time.Second},
		{Handler: fake.AdminHandler(), ReadHeaderTimeout: 30 * time.Second},
	}
	errc := make(chan error, 2)
	for i, ln := range []net.Listener{upLn, adminLn} {
		go func() {
			if err := servers[i].Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	log.Info("fake upstream listening", "addr", upLn.Addr().String(), "admin", adminLn.Addr().String())
	if ready != nil {
		ready(upLn.Addr(), adminLn.Addr())
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, s := range servers {
			_ = s.Shutdown(sctx)
		}
	}()
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}
