// Command sessions replays recorded agent sessions through toolproc's
// request rewrite and prints, per session and in total, what a provider
// would see: bytes sent, the largest request, turns that fit a window raw
// and rewritten, prompt-cache cost, prefix breaks and invariant checks.
//
//	go run ./testenv/cmd/sessions -file sessions.jsonl [-window 16000] [-fraction 3] [-flatten old|all] [-config FILE] [-v]
//
// `make bench-sessions` runs it on the shared session corpus when present
// and on the committed sample otherwise.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/testenv/sessions"
)

func main() {
	file := flag.String("file", "testenv/sessions/testdata/sample.jsonl", "sessions JSONL")
	window := flag.Int("window", 0, "context window in tokens; 0: each session's own, exhausted a third of the way through the raw session's growth")
	config := flag.String("config", "", "toolproc config (default: the embedded defaults)")
	verbose := flag.Bool("v", false, "one row per session")
	fraction := flag.Int("fraction", 0, "with -window 0: the raw session exhausts its window 1/fraction of the way through its growth; 0 runs 1 (cost: the raw session just fits) and 3 (turns: it overflows a third of the way in)")
	flatten := flag.String("flatten", "", "profiles.default.tiers.flatten: off, old or all (tool exchanges as text)")
	flag.Parse()
	ss, err := sessions.Load(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sessions:", err)
		os.Exit(1)
	}
	cfg, err := extproc.LoadConfig(*config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sessions:", err)
		os.Exit(1)
	}
	if *flatten != "" {
		cfg.Profiles[extproc.DefaultProfile].Tiers.Flatten = *flatten
	}
	fractions := []int{*fraction}
	if *window == 0 && *fraction == 0 {
		fractions = []int{1, 3}
	}
	for _, f := range fractions {
		for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat} {
			run(cfg, ss, d, *window, f, *verbose)
		}
	}
}

func run(cfg *extproc.Config, ss []sessions.Session, d wire.Dialect, window, fraction int, verbose bool) {
	{
		rs, err := sessions.RunFraction(cfg, ss, d, window, fraction)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sessions:", err)
			os.Exit(1)
		}
		fmt.Printf("\n%s, %d sessions, window %s\n\n%s\n", d, len(ss), windowName(window, fraction), sessions.Header)
		if verbose {
			for _, r := range rs {
				fmt.Println(r.Row())
			}
		}
		fmt.Println(sessions.Totals(rs).Row())
		fmt.Println()
		fmt.Println(sessions.Summary(rs))
	}
}

func windowName(w, fraction int) string {
	switch {
	case w == 0 && fraction <= 1:
		return "per session: its final request (the raw session just fits)"
	case w == 0:
		return fmt.Sprintf("per session: its first request + 1/%d of its growth (the raw session overflows)", fraction)
	}
	return fmt.Sprintf("%d tokens", w)
}
