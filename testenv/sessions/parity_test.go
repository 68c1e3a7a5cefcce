package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
)

// TestResultsCompressAlikeInBothDialects: a recorded session's tool results
// reach compression through the wire model, in the dialect the agent
// speaks. Every result must compress to the same text in the Anthropic
// and the OpenAI Chat form of the same request, and to what compression
// gives that text alone with its call's arguments as an object (the form
// the quality harness measures). OpenAI's string-of-JSON arguments once
// broke this for every OpenAI caller: the harness never saw it.
func TestResultsCompressAlikeInBothDialects(t *testing.T) {
	files := []string{filepath.Join("testdata", "sample.jsonl")}
	for _, name := range parityFiles() {
		files = append(files, filepath.Join("corpus", name+".jsonl.gz"))
	}
	strategy := compress.Structural(compress.StructuralOptions{})
	opts := shadow.CompressOptions{Strategy: strategy, MinBytes: 4096, Clamp: clamp.Limits{MaxBytes: 1 << 30, MaxLines: 1 << 30}}
	compared, sessions := 0, 0
	err := Each(files, nil, func(s Session) error {
		sessions++
		got := map[wire.Dialect]map[string]string{}
		for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat} {
			reqs := s.Anthropic
			if d == wire.OpenAIChat {
				reqs = s.OpenAI
			}
			body := reqs[len(reqs)-1]
			in, err := wire.Parse(d, body)
			if err != nil {
				t.Fatalf("%s %s: %v", s.Name, d, err)
			}
			f := shadow.NewCompressFilter(opts, shadow.Env{Store: shadow.NewMemory(shadow.MemoryOptions{}), Tenant: "t"})
			out, _, err := pipeline.New(f).Run(d, body)
			if err != nil {
				t.Fatalf("%s %s: %v", s.Name, d, err)
			}
			oc, err := wire.Parse(d, out)
			if err != nil {
				t.Fatalf("%s %s: the rewrite is not a request: %v", s.Name, d, err)
			}
			texts := map[string]string{}
			for i, r := range in.Results {
				if len(r.Texts) != 1 || len(oc.Results[i].Texts) != 1 {
					continue
				}
				text, sent := r.Texts[0].Text(), oc.Results[i].Texts[0].Text()
				if len(text) <= opts.MinBytes || isBackgroundRead(r.ToolName) {
					continue
				}
				if _, _, rest, ok := shadow.ParseReference(sent); ok {
					want, _ := strategy.Compress(text, compress.Hint{ToolName: r.ToolName, Args: wire.ArgsObject(r.Args).Raw})
					if rest != want {
						t.Errorf("%s %s, result %d (%s): sent %d bytes, compression alone gives %d", s.Name, d, i, r.ToolName, len(rest), len(want))
					}
				} else if sent != text {
					// Left whole when the reference would make it no smaller.
					t.Errorf("%s %s, result %d (%s): changed without a reference", s.Name, d, i, r.ToolName)
				}
				texts[r.CallID] = sent
			}
			got[d] = texts
		}
		for id, a := range got[wire.Anthropic] {
			if b, ok := got[wire.OpenAIChat][id]; ok {
				compared++
				if a != b {
					t.Errorf("%s, call %s: the two dialects compress the result differently", s.Name, id)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if compared < 50 {
		t.Fatalf("compared %d results of %d sessions: the files did not load", compared, sessions)
	}
	t.Logf("%d sessions, %d results compared", sessions, compared)
}

// isBackgroundRead: a background task's output takes the hint of the call
// that started it (filters/shadow/background.go), not its own.
func isBackgroundRead(tool string) bool {
	switch tool {
	case "TaskOutput", "BashOutput", "write_stdin":
		return true
	}
	return false
}

// parityFiles are the corpus files the test reads: one per agent (fewer
// under the race detector), or with
// PARITY_ALL=1 every file (670 sessions, about 35 s).
func parityFiles() []string {
	if os.Getenv("PARITY_ALL") != "" {
		m, _ := filepath.Glob("corpus/*.jsonl.gz")
		var out []string
		for _, f := range m {
			out = append(out, strings.TrimSuffix(filepath.Base(f), ".jsonl.gz"))
		}
		return out
	}
	if raceEnabled {
		// The race detector makes compression ten times slower; the
		// smaller files keep every dialect form of the arguments.
		return []string{"codex-cli-hk", "copilot-cli-azure-dev", "gemini-cli-gastownhall"}
	}
	return []string{"codex-cli-hk", "claude-code-ned", "copilot-cli-azure-dev", "gemini-cli-gastownhall", "pi-coding-agent"}
}
