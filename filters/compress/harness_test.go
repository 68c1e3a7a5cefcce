package compress

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestHarnessOverJSON: Codex's code mode returns a shell's result as JSON
// under its own header ("Script completed", "Wall time …", "Output:");
// the output member is compressed as the test run it is, so its summary
// survives a tight aim, the header stays as it is and the JSON valid.
func TestHarnessOverJSON(t *testing.T) {
	var run strings.Builder
	run.WriteString("    Finished `test` profile [unoptimized + debuginfo] target(s) in 1m 17s\n     Running unittests src/main.rs (target/debug/deps/mise-845fdec67234878e)\n\nrunning 120 tests\n")
	for i := range 120 {
		fmt.Fprintf(&run, "test system::packages::brew::cask::tests::case_%03d_keeps_its_prefix ... ok\n", i)
	}
	run.WriteString("\ntest result: ok. 120 passed; 0 failed; 0 ignored; 0 measured; 1603 filtered out; finished in 0.10s\n")
	body := fmt.Sprintf(`{"chunk_id":"ecf08e","wall_time_seconds":9.87,"exit_code":0,"original_token_count":1070,"output":%s}`, jsonString(run.String()))
	header := "Script completed\nWall time 9.9 seconds\nOutput:\n"
	text := header + body
	h := Hint{ToolName: "exec", Args: `{"input":"const r = await tools.write_stdin({session_id:4091,chars:\"\"}); text(JSON.stringify(r));\n"}`}
	for _, ratio := range []float64{4, 10} {
		s := Structural(StructuralOptions{TargetRatio: ratio})
		out, rep := s.Compress(text, h)
		if !strings.HasPrefix(out, header) || !gjson.Valid(out[len(header):]) {
			t.Fatalf("%gx: header or JSON broken:\n%s", ratio, out)
		}
		inner := gjson.Get(out[len(header):], "output").String()
		if !strings.Contains(inner, "test result: ok. 120 passed; 0 failed") || rep.Kind != KindJSON {
			t.Errorf("%gx (%s): the run's summary lost:\n%s", ratio, rep.Kind, out)
		}
		if err := checkGuards(s, text, h); err != nil {
			t.Errorf("%gx: %v", ratio, err)
		}
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{text, true},
		{body, false}, // bare JSON is JSON's own case
		{header + "not json", false},
		{strings.Repeat("a line of a header\n", 9) + body, false},
		{header + strings.Repeat("x", 400) + "\n" + `{"output":"short"}`, false},
	} {
		if _, _, ok := harnessJSON(c.text); ok != c.want {
			t.Errorf("harnessJSON(%.60q) = %v", c.text, ok)
		}
	}
}

// TestCILogUnderHeader: `gh run view --log` under Codex's header is read
// through its job, step and time stamp prefixes, as it is bare.
func TestCILogUnderHeader(t *testing.T) {
	var b strings.Builder
	b.WriteString("Chunk ID: fb05d5\nWall time: 1.8384 seconds\nProcess exited with code 0\nOriginal token count: 66588\nOutput:\nWarning: truncated output (original token count: 66588)\nTotal output lines: 2061\n\n")
	for i := range 200 {
		fmt.Fprintf(&b, "test-vfox\tRun mise --cd crates/vfox run test\t2026-07-07T12:55:%02d.8152384Z test lua_mod::tests::case_%03d ... ok\n", i%60, i)
	}
	b.WriteString("test-vfox\tRun mise --cd crates/vfox run test\t2026-07-07T12:55:16.8152384Z test result: FAILED. 83 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out; finished in 10.88s\n")
	for i := range 100 {
		fmt.Fprintf(&b, "test-vfox\tPost Run actions/checkout@v4\t2026-07-07T12:56:%02d.1000000Z Cleaning up orphan process %d\n", i%60, i)
	}
	text := b.String()
	if prefixOf(text) != ciPrefix {
		t.Fatalf("prefix %v, want the CI log's", prefixOf(text))
	}
	h := Hint{ToolName: "exec_command", Args: `{"cmd":"gh run view 28867562229 --job 85621483525 --log"}`}
	s := Structural(StructuralOptions{TargetRatio: 10})
	if out, _ := s.Compress(text, h); !strings.Contains(out, "test result: FAILED. 83 passed; 1 failed") {
		t.Errorf("the run's summary lost:\n%s", out)
	}
}
