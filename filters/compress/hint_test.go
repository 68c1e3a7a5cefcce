package compress

import (
	"encoding/json"
	"strings"
	"testing"
)

// codexHead is the header Codex's exec_command puts over a command's output
// (the format of the Codex CLI sessions in testenv/sessions/corpus): it
// hides a pytest or Django run's banner from the first line, so only the
// command line says what the output is.
const codexHead = "Chunk ID: 3f9a1c\nWall time: 41.2 seconds\nProcess exited with code 1\nOriginal token count: 3921\nOutput:\n"

// TestHintArgsEitherForm: OpenAI Chat and Responses send a call's
// arguments as a string of JSON, the other dialects as the object. The
// command line, the file a read names and the query terms must be read
// through either form, so one output compresses to the same bytes whatever
// dialect carried it (the string form once lost every command hint: a
// pytest run under Codex's header compressed as prose).
func TestHintArgsEitherForm(t *testing.T) {
	head := func(file string, n int) string {
		s := readTestdata(t, file)
		cut := strings.LastIndexByte(s[:min(n, len(s))], '\n')
		return codexHead + s[:cut+1]
	}
	for _, c := range []struct {
		name, text, tool, args string
		want                   Kind
	}{
		{"pytest under a header", head("pytest_failures.log", 15000), "exec_command", `{"cmd":"pytest -rA lib/matplotlib/tests/test_figure.py","workdir":"/repo"}`, KindTestLog},
		{"django under a header", head("django_errors.log", 15000), "bash", `{"command":"./tests/runtests.py --verbosity 2"}`, KindTestLog},
		{"git diff", readTestdata(t, "git_patch.diff"), "bash", `{"command":"git diff"}`, KindDiff},
		{"read of a source file", readTestdata(t, "claude_read.txt"), "Read", `{"file_path":"/repo/src/server.py"}`, KindFileRead},
		{"search", readTestdata(t, "grep_hits.txt"), "Grep", `{"pattern":"def get_","path":"src"}`, KindSearch},
	} {
		q, _ := json.Marshal(c.args)
		obj, str := Hint{ToolName: c.tool, Args: c.args}, Hint{ToolName: c.tool, Args: string(q)}
		if k := Detect(c.text, str); k != c.want || Detect(c.text, obj) != c.want {
			t.Errorf("%s: detected %s as a string of JSON, %s as an object; want %s", c.name, k, Detect(c.text, obj), c.want)
		}
		for _, ratio := range []float64{0, 4} {
			s := Structural(StructuralOptions{TargetBytes: 4096, TargetRatio: ratio})
			a, _ := s.Compress(c.text, obj)
			b, _ := s.Compress(c.text, str)
			if a != b {
				t.Errorf("%s at %gx: the string of JSON compresses differently from the object", c.name, ratio)
			}
		}
		if got, want := strings.Join(queryTerms(str.decoded()), " "), strings.Join(queryTerms(obj), " "); got != want {
			t.Errorf("%s: query terms %q through the string, %q through the object", c.name, got, want)
		}
	}
}

// TestHintDecodedLeavesOtherArgs: only a string that holds a JSON object is
// decoded; free-form input (a Responses custom tool's patch), a bare
// command line, a string of invalid JSON and an object stay as they are.
func TestHintDecodedLeavesOtherArgs(t *testing.T) {
	for _, args := range []string{
		`"*** Begin Patch\n*** Update File: a.go\n*** End Patch"`,
		`pytest -x tests`,
		`"{\"command\": \"pytest"`,
		`{"command":"pytest"}`,
		`"[1,2]"`,
		``,
		`"`,
	} {
		if got := (Hint{ToolName: "t", Args: args}).decoded().Args; got != args {
			t.Errorf("decoded(%q) = %q", args, got)
		}
	}
	for _, args := range []string{`" {\"cmd\":[\"bash\",\"-lc\",\"go test ./...\"]} "`, `"\n\t{\"cmd\":[\"bash\",\"-lc\",\"go test ./...\"]}"`} {
		if got := (Hint{Args: args}).decoded().Args; got != `{"cmd":["bash","-lc","go test ./..."]}` {
			t.Errorf("a string of a JSON object %s decoded to %q", args, got)
		}
	}
}
