package extproc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
)

// multiTurnOutputs are real tool outputs (filters/compress/testdata, see
// its SOURCES.md for provenance and licences), in the order an agent
// session might produce them, each with the call that produced it.
var multiTurnOutputs = []struct{ tool, args, file string }{
	{"bash", `{"command":"python -m pytest tests/"}`, "pytest_many_errors.log"},
	{"grep", `{"pattern":"def test_","path":"."}`, "grep_hits.txt"},
	{"bash", `{"command":"./runtests.py"}`, "django_errors.log"},
	{"Read", `{"file_path":"/repo/main.py"}`, "claude_read.txt"},
	{"bash", `{"command":"git diff"}`, "git_patch.diff"},
	{"fetch", `{"url":"https://api.github.com/repos/x/y"}`, "github_get_repository.json"},
	{"bash", `{"command":"pytest -x lib/matplotlib"}`, "pytest_failures.log"},
}

// conversation builds the turn-n request (n tool exchanges) of one session.
func conversation(t *testing.T, d wire.Dialect, n int) []byte {
	t.Helper()
	var msgs []string
	q := func(s string) string { return string(wire.QuoteString(s)) }
	for i, o := range multiTurnOutputs[:n] {
		b, err := os.ReadFile(filepath.Join("..", "filters", "compress", "testdata", o.file))
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("call_%02d", i)
		if d == wire.Anthropic {
			msgs = append(msgs,
				`{"role":"user","content":`+q(fmt.Sprintf("Step %d: go on.", i))+`}`,
				`{"role":"assistant","content":[{"type":"text","text":"Running."},{"type":"tool_use","id":"`+id+`","name":"`+o.tool+`","input":`+o.args+`}]}`,
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":`+q(string(b))+`}]}`)
			continue
		}
		msgs = append(msgs,
			`{"role":"user","content":`+q(fmt.Sprintf("Step %d: go on.", i))+`}`,
			`{"role":"assistant","content":"Running.","tool_calls":[{"id":"`+id+`","type":"function","function":{"name":"`+o.tool+`","arguments":`+q(o.args)+`}}]}`,
			`{"role":"tool","tool_call_id":"`+id+`","content":`+q(string(b))+`}`)
	}
	model := "gpt-4.1"
	if d == wire.Anthropic {
		model = "claude-sonnet-4-5"
	}
	return []byte(`{"model":"` + model + `","max_tokens":4096,"messages":[` + strings.Join(msgs, ",") +
		`],"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object"}}}]}`)
}

// TestRewriteDeterministicAcrossTurns: a session's request on turn N and
// turn N+1 rewrites to byte-identical bytes for every message both carry,
// and the tools list is the same, with the compressed-result cache warm
// (one server) and cold (a new store each turn, as after a restart), so
// the provider's prompt cache keeps matching.
func TestRewriteDeterministicAcrossTurns(t *testing.T) {
	cfg := DefaultConfig()
	p := &compiledProfile{Profile: cfg.Profiles[DefaultProfile], name: DefaultProfile}
	p.compress = compressOptions(p.Profile, nil)
	keys := shadow.NewKeyring([]byte("a deployment secret"))
	env := shadow.Env{Keys: keys, Tenant: keys.Tenant(map[string]string{"authorization": "Bearer sk-session-0123456789"}, "")}
	for _, d := range []wire.Dialect{wire.OpenAIChat, wire.Anthropic} {
		for _, warm := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/warm=%v", d, warm), func(t *testing.T) {
				store := shadow.NewMemory(shadow.MemoryOptions{})
				ep := wire.Endpoint{Dialect: d}
				var prev []byte
				compressed := 0
				for n := 1; n <= len(multiTurnOutputs); n++ {
					if !warm {
						store = shadow.NewMemory(shadow.MemoryOptions{})
					}
					rr, err := rewriteRequestBody(context.Background(), p, store, env, ep, wire.ClientAsk{}, conversation(t, d, n))
					if err != nil {
						t.Fatal(err)
					}
					compressed = rr.compress.Stats.References
					if prev != nil {
						before := gjson.GetBytes(prev, "messages").Array()
						after := gjson.GetBytes(rr.out, "messages").Array()
						for i := range before {
							if before[i].Raw != after[i].Raw {
								t.Fatalf("turn %d: message %d differs from turn %d", n, i, n-1)
							}
						}
						if gjson.GetBytes(prev, "tools").Raw != gjson.GetBytes(rr.out, "tools").Raw {
							t.Fatalf("turn %d: tools list changed", n)
						}
					}
					prev = rr.out
				}
				// The session must have exercised compression, not only the clamp.
				if compressed < 4 {
					t.Fatalf("only %d results compressed with a reference", compressed)
				}
				if !strings.Contains(string(prev), `"expand_context"`) {
					t.Fatal("expand_context not offered")
				}
				if strings.Contains(string(prev), "toolproc shadow_id") && !strings.Contains(string(prev), "original=") {
					t.Fatal("reference line malformed")
				}
			})
		}
	}
}
