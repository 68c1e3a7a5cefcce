// Command toolproc is an Envoy ext_proc server that rewrites tool results in
// LLM API traffic. `toolproc serve` runs the server; `toolproc rewrite` runs
// the same request pipeline over stdin; `toolproc config` prints the
// effective configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"sigs.k8s.io/yaml"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/wire"
)

const usage = `usage:
  toolproc [serve] [--config FILE] [--grpc-addr ADDR] [--admin-addr ADDR] [--log-level LEVEL]
  toolproc rewrite --path PATH [--config FILE] [--profile NAME] < request.json > rewritten.json
  toolproc config [--config FILE]     print the effective configuration
`

func main() {
	args := os.Args[1:]
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		os.Exit(serve(args))
	case "rewrite":
		os.Exit(rewrite(args, os.Stdin, os.Stdout, os.Stderr))
	case "config":
		os.Exit(printConfig(args))
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "toolproc: unknown command %q\n%s", cmd, usage)
		os.Exit(2)
	}
}

func serve(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	configPath := fs.String("config", "", "YAML config file (default: embedded defaults)")
	grpcAddr := fs.String("grpc-addr", "", "override server.grpc_addr")
	adminAddr := fs.String("admin-addr", "", "override server.admin_addr")
	logLevel := fs.String("log-level", "", "override log.level (debug, info, warn, error)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := extproc.LoadConfig(*configPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolproc:", err)
		return 2
	}
	if *grpcAddr != "" {
		cfg.Server.GRPCAddr = *grpcAddr
	}
	if *adminAddr != "" {
		cfg.Server.AdminAddr = *adminAddr
	}
	if *logLevel != "" {
		cfg.Log.Level = *logLevel
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "toolproc:", err)
		return 2
	}
	log := extproc.NewLogger(cfg.Log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := extproc.Run(ctx, cfg, log); err != nil {
		log.Error("toolproc failed", "error", err)
		return 1
	}
	return 0
}

// rewrite echoes unparseable input unchanged with a warning, as the server
// would pass it through; only usage errors exit non-zero.
func rewrite(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rewrite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("path", "", "request path, e.g. /v1/messages (picks the dialect)")
	configPath := fs.String("config", "", "YAML config file (default: embedded defaults)")
	profile := fs.String("profile", extproc.DefaultProfile, "profile name")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" || fs.NArg() > 0 {
		fmt.Fprint(stderr, "toolproc rewrite: --path is required and no arguments are taken\n", usage)
		return 2
	}
	cfg, err := extproc.LoadConfig(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, "toolproc rewrite:", err)
		return 2
	}
	if _, ok := cfg.Profiles[*profile]; !ok {
		fmt.Fprintf(stderr, "toolproc rewrite: unknown profile %q (have %v)\n", *profile, cfg.ProfileNames())
		return 2
	}
	body, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "toolproc rewrite: read stdin:", err)
		return 1
	}
	out, rep, err := extproc.RewriteBody(cfg, *profile, *path, body)
	if err != nil {
		fmt.Fprintf(stderr, "toolproc rewrite: warning: passed through unchanged: %v\n", err)
	}
	if rep.Dialect == wire.Unknown {
		fmt.Fprintf(stderr, "toolproc rewrite: warning: %s is not an LLM API path toolproc rewrites; passed through\n", *path)
	}
	for _, c := range rep.Changes {
		name := c.ToolName
		if name == "" {
			name = "?"
		}
		fmt.Fprintf(stderr, "%s result #%d tool=%s call=%s: %d -> %d bytes, %d -> %d lines (%s)\n",
			c.Filter, c.Ordinal, name, c.CallID, c.BytesBefore, c.BytesAfter, c.LinesBefore, c.LinesAfter, c.Detail)
	}
	if err == nil {
		fmt.Fprintf(stderr, "%s: %d tool results, %d changed, %d -> %d bytes\n",
			rep.Dialect, rep.Results, len(rep.Changes), rep.BytesIn, rep.BytesOut)
	}
	if _, err := stdout.Write(out); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return 1
	}
	return 0
}

func printConfig(args []string) int {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	configPath := fs.String("config", "", "YAML config file (default: embedded defaults)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := extproc.LoadConfig(*configPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolproc:", err)
		return 2
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolproc:", err)
		return 1
	}
	os.Stdout.Write(b)
	return 0
}
