package compress

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestQueryTerms(t *testing.T) {
	cases := []struct {
		hint Hint
		want []string
	}{
		{bash("cd /workspace/app && python3 reproduce_issue.py 2>&1"), []string{"/workspace/app", "reproduce_issue.py"}},
		{bash(`grep -rn "def connect\|dial_timeout" src/net`), []string{"def connect", "dial_timeout", "src/net"}},
		{bash("pytest tests/test_cart.py::test_coupon -x -q"), []string{"tests/test_cart.py::test_coupon", "test_cart.py::test_coupon"}},
		{Hint{ToolName: "Grep", Args: `{"pattern":"TODO|FIXME","path":"internal/"}`}, []string{"TODO", "FIXME", "internal/"}},
		{Hint{ToolName: "Read", Args: `{"file_path":"/repo/pkg/server.go"}`}, []string{"/repo/pkg/server.go", "server.go"}},
		{Hint{ToolName: "str_replace_editor", Args: `{"command":"view","path":"/testbed/a.py"}`}, []string{"/testbed/a.py", "a.py"}},
	}
	for _, c := range cases {
		if got := queryTerms(c.hint); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.hint.Args, got, c.want)
		}
	}
}

// TestQueryAwareTraceback: the frame in the script the agent ran is kept
// whole at a ratio where the other frames are only listed by location.
func TestQueryAwareTraceback(t *testing.T) {
	var b strings.Builder
	b.WriteString("Traceback (most recent call last):\n")
	b.WriteString("  File \"/usr/lib/python3.12/runpy.py\", line 198, in _run_module_as_main\n    return _run_code(code, main_globals, None,\n")
	for i := 0; i < 30; i++ {
		if i == 15 {
			b.WriteString("  File \"/workspace/reproduce_issue.py\", line 41, in check\n    run_checks(settings)\n")
		}
		fmt.Fprintf(&b, "  File \"/usr/lib/python3.12/site-packages/framework/layer%02d.py\", line %d, in dispatch\n    return self.next.dispatch(request, *args, **kwargs)\n", i, 100+i)
	}
	b.WriteString("framework.errors.ConfigError: DATABASES is improperly configured\n")
	text := b.String()
	s := Structural(StructuralOptions{TargetRatio: 4})
	with, _ := s.Compress(text, bash("python3 reproduce_issue.py"))
	if !strings.Contains(with, "    run_checks(settings)") {
		t.Errorf("the frame of the script that was run lost its code line:\n%s", with)
	}
	without, _ := s.Compress(text, bash("python3 other.py"))
	if strings.Contains(without, "    run_checks(settings)") {
		t.Errorf("without the query the outermost frame's code is kept anyway; the test shows nothing:\n%s", without)
	}
	for _, out := range []string{with, without} {
		if !strings.Contains(out, "framework.errors.ConfigError: DATABASES is improperly configured") || !strings.Contains(out, "layer07.py:107") {
			t.Errorf("exception or a listed frame location lost:\n%s", out)
		}
	}
}

// TestSearchForms: grep without -n is read as hits grouped by file, and
// each alternative of the pattern keeps its first hits.
func TestSearchForms(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "src/pkg%02d/handler.go:\tif err := connect(ctx, addr); err != nil { // attempt %d\n", i%20, i)
	}
	b.WriteString("src/zz/late.go:\tconst dialTimeout = 30 * time.Second\n")
	text := b.String()
	h := bash(`grep -r "connect\|dialTimeout" src`)
	if k := Detect(text, h); k != KindSearch {
		t.Fatalf("detected %s", k)
	}
	out, _ := Structural(StructuralOptions{TargetRatio: 10}).Compress(text, h)
	if !strings.Contains(out, "src/zz/late.go:\tconst dialTimeout = 30 * time.Second") {
		t.Errorf("the only hit of the second alternative was lost:\n%s", out)
	}
	if !strings.Contains(out, "hits in ") {
		t.Errorf("no per-file hit marker:\n%s", out)
	}
	if err := checkGuards(Structural(StructuralOptions{TargetRatio: 10}), text, h); err != nil {
		t.Error(err)
	}
}

// TestEditorView: the text editor tool's view is a file read, or a
// listing when it viewed a directory.
func TestEditorView(t *testing.T) {
	h := Hint{ToolName: "str_replace_editor", Args: `{"command":"view","path":"/testbed/pkg/mod.py"}`}
	var b strings.Builder
	b.WriteString("Here's the result of running `cat -n` on /testbed/pkg/mod.py:\n")
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "%6d\t    value_%d = compute(%d)  # raise ValueError: if negative\n", i, i, i)
	}
	if k := Detect(b.String(), h); k != KindFileRead {
		t.Errorf("view of a file detected as %s", k)
	}
	var d strings.Builder
	d.WriteString("Here's the files and directories up to 2 levels deep in /testbed, excluding hidden items:\n/testbed\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&d, "/testbed/pkg%02d/mod%03d.py\n", i%10, i)
	}
	h.Args = `{"command":"view","path":"/testbed"}`
	if k := Detect(d.String(), h); k != KindDirListing {
		t.Errorf("view of a directory detected as %s", k)
	}
}
