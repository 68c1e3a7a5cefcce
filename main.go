// Command toolproc is an Envoy ext_proc server that rewrites tool results in
// LLM API traffic. `toolproc serve` runs the server; `toolproc rewrite` runs
// the same request pipeline over stdin; `toolproc config` prints the
// effective configuration; `toolproc help` lists every command (cli.go).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/report"
)

func main() {
	os.Exit(cli(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func serve(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	configPath := fs.String("config", "", "YAML config file (default: embedded defaults)")
	grpcAddr := fs.String("grpc-addr", "", "override server.grpc_addr")
	adminAddr := fs.String("admin-addr", "", "override server.admin_addr")
	logLevel := fs.String("log-level", "", "override log.level (debug, info, warn, error)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (go tool pprof) to this file until shutdown")
	reloadEvery := fs.Duration("reload-interval", 2*time.Second, "with --config: reload it when its modification time changes, checked this often (0: on SIGHUP only)")
	if code, done := parseFlags(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "serve", fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "toolproc:", err)
			return 2
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "toolproc:", err)
			return 2
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	cfg, err := extproc.LoadConfig(*configPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolproc:", err)
		return 2
	}
	// The command line wins over the file, at start and on every reload.
	override := func(cfg *extproc.Config) {
		if *grpcAddr != "" {
			cfg.Server.GRPCAddr = *grpcAddr
		}
		if *adminAddr != "" {
			cfg.Server.AdminAddr = *adminAddr
		}
		if *logLevel != "" {
			cfg.Log.Level = *logLevel
		}
	}
	override(cfg)
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "toolproc:", err)
		return 2
	}
	log := extproc.NewLogger(cfg.Log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var opts []extproc.RunOption
	if *configPath != "" {
		opts = append(opts, extproc.WithReload(extproc.ReloadOptions{Path: *configPath, Apply: override, Interval: *reloadEvery}))
	}
	if err := extproc.Run(ctx, cfg, log, opts...); err != nil {
		log.Error("toolproc failed", "error", err)
		return 1
	}
	return 0
}

// rewrite is the dry run of the request pipeline. A body it cannot parse
// is echoed unchanged, as the server would pass it through, but the exit
// code says so (1) with a one-line reason on stderr: a dry-run tool that
// reports success for input it never understood hides the problem. Usage
// errors exit 2. With --ndjson every input line is one body and every
// output line its rewrite, in order; lines that could not be parsed are
// named on stderr and make the exit code 1.
func rewrite(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rewrite", flag.ContinueOnError)
	path := fs.String("path", "", "request path, e.g. /v1/messages (picks the dialect)")
	configPath := fs.String("config", "", "YAML config file (default: embedded defaults)")
	profile := fs.String("profile", extproc.DefaultProfile, "profile name")
	ndjson := fs.Bool("ndjson", false, "one request body per input line, one rewritten body per output line")
	if code, done := parseFlags(fs, args, stdout, stderr); done {
		return code
	}
	if *path == "" || fs.NArg() > 0 {
		return usageError(stderr, "rewrite", "--path is required and no arguments are taken")
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
	if *ndjson {
		return rewriteLines(cfg, *profile, *path, stdin, stdout, stderr)
	}
	body, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "toolproc rewrite: read stdin:", err)
		return 1
	}
	out, ok := rewriteOne(cfg, *profile, *path, body, stderr, "")
	if _, err := stdout.Write(out); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

// rewriteOne rewrites one body and reports on stderr; ok is false when the
// body could not be processed (it is then returned unchanged). where
// prefixes the report lines ("line 7: ") in --ndjson mode.
func rewriteOne(cfg *extproc.Config, profile, path string, body []byte, stderr io.Writer, where string) ([]byte, bool) {
	out, rep, err := extproc.RewriteBody(cfg, profile, path, body)
	if err != nil {
		fmt.Fprintf(stderr, "toolproc rewrite: %snot rewritten, passed through unchanged: %v\n", where, err)
		return body, false
	}
	if rep.Dialect == wire.Unknown {
		fmt.Fprintf(stderr, "toolproc rewrite: %s%s is not an LLM API path toolproc rewrites; passed through\n", where, path)
		return body, false
	}
	for _, c := range rep.Changes {
		name := c.ToolName
		if name == "" {
			name = "?"
		}
		fmt.Fprintf(stderr, "%s%s result #%d tool=%s call=%s: %d -> %d bytes, %d -> %d lines (%s)\n",
			where, c.Filter, c.Ordinal, name, c.CallID, c.BytesBefore, c.BytesAfter, c.LinesBefore, c.LinesAfter, c.Detail)
	}
	fmt.Fprintf(stderr, "%s%s: %d tool results, %d changed, %d -> %d bytes\n",
		where, rep.Dialect, rep.Results, len(rep.Changes), rep.BytesIn, rep.BytesOut)
	return out, true
}

// maxLine bounds one --ndjson line: the largest body the server accepts
// (server.max_recv_msg_bytes' default) with room to spare.
const maxLine = 128 << 20

// rewriteLines is --ndjson: a corpus rewritten in one process. A rewritten
// body never contains a raw newline (JSON escapes it in strings, and the
// rewrite keeps the body's own whitespace), so one line in is one line out.
func rewriteLines(cfg *extproc.Config, profile, path string, stdin io.Reader, stdout, stderr io.Writer) int {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	w := bufio.NewWriter(stdout)
	failed, n := 0, 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		out, ok := rewriteOne(cfg, profile, path, line, stderr, fmt.Sprintf("line %d: ", n))
		if !ok {
			failed++
		}
		if _, err := w.Write(append(out, '\n')); err != nil {
			return 1
		}
	}
	if err := w.Flush(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return 1
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "toolproc rewrite: after line %d: %v\n", n, err)
		return 1
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "toolproc rewrite: %d of %d lines passed through unchanged\n", failed, n)
		return 1
	}
	return 0
}

func printConfig(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	configPath := fs.String("config", "", "YAML config file (default: embedded defaults)")
	if code, done := parseFlags(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "config", "no arguments are taken; the file goes after --config")
	}
	cfg, err := extproc.LoadConfig(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, "toolproc:", err)
		return 2
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "toolproc:", err)
		return 1
	}
	if _, err := stdout.Write(b); err != nil {
		return 1
	}
	return 0
}

// runReport prints the bill read from an audit log (report package).
func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	audit := fs.String("audit", "", "the audit log (audit.path), JSONL")
	format := fs.String("format", "table", "table, csv, json or html")
	prices := fs.String("prices", "", "YAML/JSON list of {match, input, output, cache_read, cache_write} in USD per million tokens, over the built-in table")
	if code, done := parseFlags(fs, args, stdout, stderr); done {
		return code
	}
	if *audit == "" || fs.NArg() > 0 {
		return usageError(stderr, "report", "--audit is required and no arguments are taken")
	}
	ps, err := report.LoadPrices(*prices)
	if err != nil {
		fmt.Fprintln(stderr, "toolproc report:", err)
		return 2
	}
	f, err := os.Open(*audit)
	if err != nil {
		fmt.Fprintln(stderr, "toolproc report:", err)
		return 1
	}
	defer f.Close()
	a, err := report.Read(f)
	if err != nil {
		fmt.Fprintln(stderr, "toolproc report:", err)
		return 1
	}
	if err := report.Write(stdout, report.Build(a, ps), *format); err != nil {
		fmt.Fprintln(stderr, "toolproc report:", err)
		return 2
	}
	return 0
}
