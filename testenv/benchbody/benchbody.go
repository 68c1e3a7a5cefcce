// Package benchbody builds the request bodies the speed and memory
// benchmarks send: OpenAI Chat requests whose tool results are real tool
// outputs (the samples in filters/compress/testdata, with their provenance
// in that folder's SOURCES.md), twenty results per body, as an agent's
// history would hold them.
package benchbody

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Results is how many tool results every body carries.
const Results = 20

// samples are the outputs used, by file name and the call that made them:
// a mix of test logs, tracebacks, searches, file reads, diffs, listings and
// JSON, as coding agents see them.
var samples = []struct{ file, tool, args string }{
	{"pytest_failures.log", "bash", `{"command":"pytest -rA lib/matplotlib/tests/test_figure.py"}`},
	{"grep_hits.txt", "Grep", `{"pattern":"def get_","path":"src"}`},
	{"claude_read.txt", "Read", `{"file_path":"/repo/src/server.py"}`},
	{"git_patch.diff", "bash", `{"command":"git diff"}`},
	{"github_get_repository.json", "http_get", `{"url":"https://api.github.com/repos/octokit/fixtures"}`},
	{"django_errors.log", "bash", `{"command":"./tests/runtests.py --verbosity 2"}`},
	{"file_list.txt", "bash", `{"command":"git ls-files"}`},
	{"py_traceback.txt", "bash", `{"command":"python3 inventory.py"}`},
	{"sympy_failures.log", "bash", `{"command":"bin/test sympy/core"}`},
	{"ls_laR.txt", "bash", `{"command":"ls -laR"}`},
}

// Builder makes bodies from the samples it loaded.
type Builder struct {
	texts []string
}

// Load reads the samples from dir (filters/compress/testdata).
func Load(dir string) (*Builder, error) {
	b := &Builder{}
	for _, s := range samples {
		raw, err := os.ReadFile(filepath.Join(dir, s.file))
		if err != nil {
			return nil, err
		}
		b.texts = append(b.texts, string(raw))
	}
	return b, nil
}

// Body returns an OpenAI Chat request of about size bytes with Results tool
// results of about size/Results bytes each, cut from (or repeated out of)
// the samples at line ends. A non-empty nonce starts every result with a
// line naming it, so a body built with a new nonce is new to every cache
// (the "every request new" case); the same nonce gives the same bytes.
func (b *Builder) Body(size int, nonce string) []byte {
	per := max(size/Results-160, 64) // the call and the message around each result
	var out strings.Builder
	out.Grow(size + size/8)
	out.WriteString(`{"model":"gpt-4o","stream":false,"messages":[{"role":"system","content":"You are a coding agent. Use the tools to inspect and fix the repository."},{"role":"user","content":"The test suite fails; find out why and fix it."}`)
	for i := range Results {
		s := samples[i%len(samples)]
		text := b.fill(i%len(b.texts), per)
		if nonce != "" {
			text = fmt.Sprintf("# run %s/%d\n%s", nonce, i, text)
		}
		id := fmt.Sprintf("call_%02d", i)
		fmt.Fprintf(&out, `,{"role":"assistant","content":null,"tool_calls":[{"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}]}`,
			id, s.tool, quote(s.args))
		fmt.Fprintf(&out, `,{"role":"tool","tool_call_id":%q,"content":%s}`, id, quote(text))
	}
	out.WriteString(`],"tools":[{"type":"function","function":{"name":"bash","description":"Run a shell command.","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}]}`)
	return []byte(out.String())
}

// fill returns about n bytes of sample k: its first lines, or the sample
// repeated, ending at a line end.
func (b *Builder) fill(k, n int) string {
	src := b.texts[k]
	var t strings.Builder
	for t.Len() < n {
		rest := n - t.Len()
		if len(src) <= rest {
			t.WriteString(src)
			continue
		}
		cut := strings.LastIndexByte(src[:rest], '\n')
		if cut < 0 {
			break
		}
		t.WriteString(src[:cut+1])
		break
	}
	return t.String()
}

func quote(s string) string {
	q, _ := json.Marshal(s) // a string always encodes
	return string(q)
}
