package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/toolproc/toolproc/extproc"
)

// command is one subcommand: what `toolproc help` says about it and how it
// runs. Its flags are not listed here: each command's own flag set prints
// them, so the help cannot drift from what the command accepts.
type command struct {
	name    string
	summary string // one line in the command list
	usage   string // the synopsis line(s)
	about   string // what it does, a paragraph or two
	example string
	exits   string // exit codes, one per line
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands in the order `toolproc help` lists them.
func commands() []command {
	return []command{
		{
			name:    "serve",
			summary: "run the ext_proc gRPC server and the admin endpoints (the default command)",
			usage:   "toolproc [serve] [--config FILE] [--grpc-addr ADDR] [--admin-addr ADDR] [--log-level LEVEL] [--cpuprofile FILE]",
			about: `Serves Envoy's ext_proc protocol and grpc.health.v1 on server.grpc_addr
(127.0.0.1:50051) and /metrics, /healthz and /readyz on server.admin_addr
(127.0.0.1:9000) until SIGINT or SIGTERM, then drains: /readyz turns 503,
gRPC health NOT_SERVING, open streams get server.shutdown_grace. Flags
override the config file, which is merged over the embedded defaults
(toolproc config prints the result). Without a subcommand toolproc serves.`,
			example: "toolproc serve --config envoy/toolproc.yaml --log-level debug",
			exits: `0  stopped cleanly after SIGINT or SIGTERM
1  the server failed (a listener could not be opened, a fatal serve error)
2  bad flags or an invalid config (the message names the key, line and column)`,
			run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int { return serve(args, stdout, stderr) },
		},
		{
			name:    "rewrite",
			summary: "dry run: rewrite one request body (or one per line) from stdin as the server would",
			usage:   "toolproc rewrite --path PATH [--config FILE] [--profile NAME] [--ndjson] < request.json > rewritten.json",
			about: `Runs the request pipeline (clamp, compression, tiers, shaping) of one
profile over a request body read from stdin and writes the rewritten body to
stdout; each change is reported on stderr. --path picks the wire format as
Envoy's :path would. A body that cannot be parsed is echoed unchanged, as the
server would pass it through, and the exit code says so. With --ndjson each
input line is one body and each output line its rewrite, in order. Stored
originals live in a memory store that ends with the process.`,
			example: "toolproc rewrite --path /v1/messages < request.json > rewritten.json",
			exits: `0  every body was processed (rewritten or left as it was)
1  a body was passed through unchanged (not JSON, not an LLM path) or I/O failed
2  bad flags, an unknown profile or an invalid config`,
			run: rewrite,
		},
		{
			name:    "config",
			summary: "print the effective configuration (defaults merged with --config) as YAML",
			usage:   "toolproc config [--config FILE]",
			about: `Loads the config file over the embedded defaults, expands profile
inheritance (every profile starts from the default profile), validates it
and prints the result: what serve would run with. Use it to check a file
before deploying it. docs/config.md explains every key, and
docs/toolproc.schema.json lets an editor check the file as you type.`,
			example: "toolproc config --config envoy/toolproc.yaml",
			exits: `0  printed
1  the config could not be printed
2  bad flags or an invalid config (the message names the key, line and column)`,
			run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
				return printConfig(args, stdout, stderr)
			},
		},
		{
			name:    "report",
			summary: "the bill from an audit log: tokens and money per day, model and tenant",
			usage:   "toolproc report --audit FILE [--format table|csv|json|html] [--prices FILE]",
			about: `Reads the JSONL audit log (audit.path) and prints, per day, model and
tenant, the billed tokens (input, cache reads and writes, output), the
cache-read share, the tokens toolproc removed and the money at a built-in
price table (override it with --prices), with net savings after the cache
costs toolproc's rewrites caused.`,
			example: "toolproc report --audit /var/log/toolproc/audit.jsonl --format csv > bill.csv",
			exits: `0  printed
1  the audit log could not be read
2  bad flags, an unreadable price file or an unknown format`,
			run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int { return runReport(args, stdout, stderr) },
		},
		{
			name:    "healthcheck",
			summary: "probe a running server's readiness (for container health checks)",
			usage:   "toolproc healthcheck [--addr HOST:PORT] [--path /readyz] [--timeout 2s]",
			about: `Asks the admin endpoint of a running toolproc over HTTP and exits 0 if it
answers 200. /readyz (the default) is false while the server drains; /healthz
only says the process is alive. Meant for images without a shell or curl,
such as the distroless image: a compose healthcheck runs
["/usr/local/bin/toolproc", "healthcheck"].`,
			example: "toolproc healthcheck --addr 127.0.0.1:9000",
			exits: `0  the endpoint answered 200
1  it answered something else, or could not be reached in time
2  bad flags`,
			run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
				return healthcheck(args, stdout, stderr)
			},
		},
		{
			name:    "version",
			summary: "print the version, commit and Go version (also --version)",
			usage:   "toolproc version",
			about: `Prints what this binary is: its release version (set at build time by the
Makefile from git describe, else the module version, else "dev"), the VCS
commit it was built from ("-dirty" if the checkout had changes) and the Go
version. The running server logs the same at startup and exports it as the
toolproc_build_info metric.`,
			example: "toolproc --version",
			exits: `0  printed
2  bad flags`,
			run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
				return printVersion(args, stdout, stderr)
			},
		},
		{
			name:    "help",
			summary: "this list, or one command's description, flags, example and exit codes",
			usage:   "toolproc help [COMMAND]   (also toolproc --help, -h, and toolproc COMMAND --help)",
			about:   `Without a command, lists every command. With one, explains it.`,
			example: "toolproc help rewrite",
			exits: `0  printed
2  no such command`,
			run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int { return help(args, stdout, stderr) },
		},
	}
}

func findCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// cli runs toolproc with its arguments (without the program name) and
// returns the exit code. No arguments, or flags first, mean serve.
func cli(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			return help(nil, stdout, stderr)
		case "-version", "--version":
			return printVersion(nil, stdout, stderr)
		}
		if !strings.HasPrefix(args[0], "-") {
			name, args = args[0], args[1:]
		}
	}
	c, ok := findCommand(name)
	if !ok {
		fmt.Fprintf(stderr, "toolproc: unknown command %q\n\n", name)
		writeOverview(stderr)
		return 2
	}
	return c.run(args, stdin, stdout, stderr)
}

// help prints the command list or one command's help.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeOverview(stdout)
		return 0
	}
	c, ok := findCommand(args[0])
	if !ok || len(args) > 1 {
		fmt.Fprintf(stderr, "toolproc help: no command %q\n\n", strings.Join(args, " "))
		writeOverview(stderr)
		return 2
	}
	if c.name == "help" {
		writeCommandHelp(stdout, c, nil)
		return 0
	}
	// The command prints its own help, flags included.
	return c.run([]string{"--help"}, strings.NewReader(""), stdout, stderr)
}

func writeOverview(w io.Writer) {
	fmt.Fprintf(w, `toolproc rewrites tool results in LLM API traffic as an Envoy ext_proc server.

Usage:
  toolproc <command> [flags]
  toolproc --help | -h | --version

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nExamples:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %s\n", c.example)
	}
	fmt.Fprintf(w, `
Exit codes (every command):
  0  success
  1  the work failed: the server stopped on an error, a body was passed
     through unchanged, a file could not be read, a probe failed
  2  usage: bad flags or arguments, an invalid config, an unknown command

Run 'toolproc help <command>' (or 'toolproc <command> --help') for a
command's flags, example and exit codes. Docs: README.md, docs/config.md.
`)
}

func writeCommandHelp(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "toolproc %s: %s\n\nUsage:\n  %s\n\n%s\n", c.name, c.summary, c.usage, c.about)
	if fs != nil && hasFlags(fs) {
		fmt.Fprintf(w, "\nFlags:\n")
		out := fs.Output()
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
	}
	fmt.Fprintf(w, "\nExample:\n  %s\n\nExit codes:\n", c.example)
	for line := range strings.SplitSeq(c.exits, "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parseFlags parses a command's flags. -h, -help and --help print the
// command's help to stdout (done, 0); a bad flag prints the flag package's
// message and the synopsis to stderr (done, 2).
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, done bool) {
	c, _ := findCommand(fs.Name())
	fs.SetOutput(stderr)
	fs.Usage = func() {} // decided below, once we know whether help was asked for
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		writeCommandHelp(stdout, c, fs)
		return 0, true
	default:
		fmt.Fprintf(stderr, "usage: %s\nRun 'toolproc help %s' for details.\n", c.usage, c.name)
		return 2, true
	}
}

// usageError reports a wrong use the flag package cannot see (a missing
// required flag, stray arguments): exit 2.
func usageError(stderr io.Writer, name, msg string) int {
	c, _ := findCommand(name)
	fmt.Fprintf(stderr, "toolproc %s: %s\nusage: %s\nRun 'toolproc help %s' for details.\n", name, msg, c.usage, name)
	return 2
}

func printVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if code, done := parseFlags(fs, args, stdout, stderr); done {
		return code
	}
	fmt.Fprintln(stdout, extproc.Build())
	return 0
}
