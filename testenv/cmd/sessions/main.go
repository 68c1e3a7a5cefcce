// Command sessions replays recorded agent sessions through toolproc's
// request rewrite and prints, per session and in total, what a provider
// would see: bytes sent, the largest request, turns that fit a window raw
// and rewritten, prompt-cache cost under the Anthropic and OpenAI models,
// steps and prefix breaks, and invariant checks.
//
//	go run ./testenv/cmd/sessions -tune FILES -test FILES [-head FILE] [-window N] [-fraction F] [-flatten old|all] [-config FILE] [-v]
//
// FILES is a comma-separated list of JSONL files (gzipped when named .gz).
// The tuning set is what the policy was tuned on; the test set is held out
// by source (testenv/sessions/corpus/SOURCES.md), and its figures are the
// ones that count. Without -window and -fraction every set is replayed at
// three windows: the model's own (the defaults), each session's final
// request (the raw session just fits: cost) and each session's first
// request plus a third of its growth (the raw session overflows: turns).
// `make bench-sessions` runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/testenv/sessions"
)

func main() {
	file := flag.String("file", "", "sessions JSONL files, comma-separated (an alias of -tune)")
	tune := flag.String("tune", "", "the tuning set: sessions JSONL files, comma-separated")
	test := flag.String("test", "", "the test set (held out by source): sessions JSONL files, comma-separated")
	headFile := flag.String("head", "", "a realistic agent head (testenv/sessions/heads) for sessions whose own system prompt and tools are a stub")
	window := flag.Int("window", 0, "context window in tokens; 0: the three windows (defaults, final request, first request + 1/fraction of the growth); -1: the defaults only")
	config := flag.String("config", "", "toolproc config (default: the embedded defaults)")
	verbose := flag.Bool("v", false, "one row per session")
	fraction := flag.Int("fraction", 0, "with -window 0: only the window the raw session exhausts 1/fraction of the way through its growth")
	flatten := flag.String("flatten", "", "profiles.default.tiers.flatten: off, old or all (tool exchanges as text)")
	flag.Parse()
	if *tune == "" {
		*tune = *file
	}
	var head *sessions.Head
	if *headFile != "" {
		h, err := sessions.LoadHead(*headFile)
		if err != nil {
			fail(err)
		}
		head = h
	}
	cfg, err := extproc.LoadConfig(*config)
	if err != nil {
		fail(err)
	}
	if *flatten != "" {
		cfg.Profiles[extproc.DefaultProfile].Tiers.Flatten = *flatten
	}
	// The declaration rides on every request of every session, whether or
	// not anything is shortened.
	fmt.Print("expand_context declaration, bytes on every request:")
	for _, d := range wire.Dialects {
		fmt.Printf(" %s %d", d, len(wire.ExpandToolJSON(d)))
	}
	fmt.Println()
	type run struct{ window, fraction int }
	var runs []run
	switch {
	case *window != 0:
		runs = []run{{*window, 0}}
	case *fraction != 0:
		runs = []run{{0, *fraction}}
	default:
		runs = []run{{sessions.Defaults, 0}, {0, 1}, {0, 3}}
	}
	for _, set := range []struct{ name, files string }{{"tuning set", *tune}, {"test set", *test}} {
		if set.files == "" {
			continue
		}
		var files []string
		for _, f := range strings.Split(set.files, ",") {
			if f = strings.TrimSpace(f); f != "" {
				files = append(files, f)
			}
		}
		// One session in memory at a time, replayed in every window and
		// dialect before the next is read: a corpus's requests together do
		// not fit in memory (sessions.Each).
		type cell struct {
			run
			d wire.Dialect
		}
		var cells []cell
		for _, r := range runs {
			for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat} {
				cells = append(cells, cell{r, d})
			}
		}
		results := make([][]sessions.Result, len(cells))
		n := 0
		err := sessions.Each(files, head, func(s sessions.Session) error {
			n++
			for k, c := range cells {
				rs, err := sessions.RunFraction(cfg, []sessions.Session{s}, c.d, c.window, c.fraction)
				if err != nil {
					return err
				}
				results[k] = append(results[k], rs...)
			}
			return nil
		})
		if err != nil {
			fail(err)
		}
		headName := "as recorded"
		if head != nil {
			headName = fmt.Sprintf("%s's where the recorded one is under %d KB", head.Agent, sessions.StubHeadBytes>>10)
		}
		fmt.Printf("\n## %s: %d sessions (%s), head %s\n", set.name, n, set.files, headName)
		for k, c := range cells {
			report(results[k], c.d, c.window, c.fraction, *verbose)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sessions:", err)
	os.Exit(1)
}

func report(rs []sessions.Result, d wire.Dialect, window, fraction int, verbose bool) {
	fmt.Printf("\n### %s, window %s\n\n%s\n", d, windowName(window, fraction), sessions.Header)
	if verbose {
		for _, r := range rs {
			fmt.Println(r.Row())
		}
	}
	fmt.Println(sessions.Totals(rs).Row())
	fmt.Println()
	fmt.Println(sessions.Summary(rs))
}

func windowName(w, fraction int) string {
	switch {
	case w == sessions.Defaults:
		return "the model's own (the defaults)"
	case w == 0 && fraction <= 1:
		return "per session: its final request (the raw session just fits)"
	case w == 0:
		return fmt.Sprintf("per session: its first request + 1/%d of its growth (the raw session overflows)", fraction)
	}
	return fmt.Sprintf("%d tokens", w)
}
