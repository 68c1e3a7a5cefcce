package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// healthcheck is the container health check for images without a shell or
// curl (the distroless image): it asks a running server's admin endpoint
// and turns the answer into an exit code.
func healthcheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:9000", "the server's admin address (server.admin_addr), HOST:PORT")
	path := fs.String("path", "/readyz", "/readyz (accepts streams; 503 while draining) or /healthz (the process is alive)")
	timeout := fs.Duration("timeout", 2*time.Second, "give up after this long")
	if code, done := parseFlags(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 || !strings.HasPrefix(*path, "/") || *timeout <= 0 {
		return usageError(stderr, "healthcheck", "takes no arguments; --path must start with / and --timeout be positive")
	}
	host := *addr
	if strings.HasPrefix(host, "0.0.0.0:") || strings.HasPrefix(host, ":") {
		// A listen address: the server is reached on loopback.
		host = "127.0.0.1:" + host[strings.LastIndexByte(host, ':')+1:]
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+*path, nil)
	if err != nil {
		return usageError(stderr, "healthcheck", err.Error())
	}
	// No proxy from the environment: the server is local.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "toolproc healthcheck:", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "toolproc healthcheck: %s answered %s: %s\n", req.URL, resp.Status, strings.TrimSpace(string(body)))
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s\n", req.URL, strings.TrimSpace(string(body)))
	return 0
}
