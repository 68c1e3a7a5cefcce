package history

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

func TestCategorize(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		want       Category
	}{
		{"Read", `{"file_path":"/src/a.ts"}`, Read},
		{"Edit", `{"file_path":"a","old_string":"x","new_string":"y"}`, Write},
		{"Bash", `{"command":"npm test"}`, Terminal},
		{"Grep", `{"pattern":"foo"}`, Search},
		{"shell", `"{\"command\":[\"bash\",\"-lc\",\"ls\"]}"`, Terminal}, // Codex, JSON-string arguments
		{"apply_patch", `{"input":"*** Begin Patch"}`, Write},
		{"run_in_terminal", `{"command":"go test"}`, Terminal},
		{"semantic_search", `{"query":"auth"}`, Search},
		{"str_replace_editor", `{"command":"view","path":"/a.py"}`, Read},
		{"str_replace_editor", `{"command":"create","path":"/a.py","file_text":"x"}`, Write},
		{"execute_bash", `{"command":"ls"}`, Terminal},
		{"mcp__fs__read_file", `{"path":"a"}`, Read},
		{"frobnicate", `{"cmd":"make"}`, Terminal}, // unknown: by shape
		{"frobnicate", `{"path":"a","content":"b"}`, Write},
		{"frobnicate", `{"query":"x"}`, Search},
		{"frobnicate", `{"url":"https://x"}`, Read},
		{"frobnicate", `{}`, Other},
		{"frobnicate", `"not json`, Other},
	} {
		if got := Categorize(tc.name, tc.args); got != tc.want {
			t.Errorf("Categorize(%s, %s) = %s, want %s", tc.name, tc.args, got, tc.want)
		}
	}
}

// The seed's examples, in this package's words: a read says what was read,
// a failed command keeps its failing test and error lines verbatim.
func TestSummaryLines(t *testing.T) {
	read := summarizeResult(withText(exchange{category: Read, tool: "read_file", args: wire.ArgsObject(`{"path":"/src/foo.ts","startLine":1,"endLine":50}`)},
		strings.Repeat("export const x = 1;\n", 50)), "")
	if want := "[Earlier: Read /src/foo.ts lines 1-50 — 50 lines, 1,000 bytes]"; read != want {
		t.Errorf("read summary %q, want %q", read, want)
	}
	log := "PASS src/bar.test.ts\nFAIL src/foo.test.ts\n  ✕ should handle edge case (15ms)\n    Error: Expected 42 but got undefined\n" +
		"      at Object.<anonymous> (foo.test.ts:23:5)\nTests:       1 failed, 12 passed, 13 total\n"
	ran := summarizeResult(withText(exchange{category: Terminal, tool: "run_in_terminal", args: wire.ArgsObject(`{"command":"npm test"}`)}, log),
		expandHint("expand_context", "sh_0123456789abcdef0123456789abcdef"))
	for _, want := range []string{"[Earlier: Ran `npm test` — FAILED, ", `expand_context {"id":"sh_0123456789abcdef0123456789abcdef"} returns it]`,
		"\nFAIL src/foo.test.ts", "\n  ✕ should handle edge case (15ms)", "\n    Error: Expected 42 but got undefined",
		"\nTests:       1 failed, 12 passed, 13 total"} {
		if !strings.Contains(ran, want) {
			t.Errorf("command summary lacks %q:\n%s", want, ran)
		}
	}
	if strings.Contains(ran, "PASS src/bar.test.ts") {
		t.Errorf("a passing line is not a key line:\n%s", ran)
	}
	// Codex's code mode: the summary names the command the program ran,
	// not the program's first bytes.
	codeMode := `{"input":"const r = await tools.exec_command({cmd:\"cargo test -p hk\",\"workdir\":\"/w/hk\",\"yield_time_ms\":10000}); text(r.output);\n"}`
	if c := Categorize("exec", codeMode); c != Terminal {
		t.Errorf("a code-mode exec is %s, want %s", c, Terminal)
	}
	exec := summarizeResult(withText(exchange{category: Terminal, tool: "exec", args: wire.ArgsObject(codeMode)}, log), "")
	if !strings.HasPrefix(exec, "[Earlier: Ran `cargo test -p hk` — FAILED, ") {
		t.Errorf("code-mode summary: %q", exec)
	}
	errRead := summarizeResult(withText(exchange{category: Read, tool: "Read", args: wire.ArgsObject(`{"file_path":"/nope"}`), isError: true},
		"File does not exist."), "")
	if !strings.Contains(errRead, "ERROR") || !strings.HasSuffix(errRead, "\nFile does not exist.") {
		t.Errorf("an error result keeps its message: %q", errRead)
	}
}

func TestPatchInputSummary(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: src/a.go\n@@\n-old\n+new\n+more\n*** Add File: src/b.go\n+x\n*** End Patch\n" + strings.Repeat("\n", 600)
	call := wire.ToolCall{Args: string(wire.QuoteString(patch)), Name: "apply_patch"}
	call.ArgsSpan = wire.Span{Start: 0, End: len(call.Args)}
	rw := summarizeInput(&call, 512, func(string) (string, string) { return "", "" })
	if len(rw.edits) != 1 {
		t.Fatalf("%d edits", len(rw.edits))
	}
	got := string(rw.edits[0].Raw)
	if !strings.Contains(got, "update src/a.go +2 -1, add src/b.go +1 -0") {
		t.Errorf("patch summary %s", got)
	}
}

// results builds n command outputs of size bytes, the i-th failing when
// fail(i).
func results(n, size int, fail func(int) bool) []string {
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for j := 0; b.Len() < size; j++ {
			fmt.Fprintf(&b, "tests/test_mod%d.py::test_case_%d PASSED\n", i, j)
		}
		if fail(i) {
			fmt.Fprintf(&b, "FAILED tests/test_mod%d.py::test_edge - AssertionError: expected 42\n===== 1 failed, 40 passed in 1.2s =====\n", i)
		}
		out[i] = b.String()
	}
	return out
}

func runTiers(t *testing.T, d wire.Dialect, body []byte, opts Options, env Env) ([]byte, *Filter) {
	t.Helper()
	f := New(opts, env)
	out, _, err := pipeline.New(f).Run(d, body)
	if err != nil {
		t.Fatal(err)
	}
	return out, f
}

// Every dialect: below the trigger nothing changes; above it old results
// become summaries in place, the newest keep_recent stay byte-identical,
// pairing holds, error lines survive, and the originals are in the store.
func TestTiersEveryDialect(t *testing.T) {
	outs := results(12, 6000, func(i int) bool { return i%3 == 0 })
	for _, d := range []wire.Dialect{wire.OpenAIChat, wire.OpenAIResponses, wire.Anthropic, wire.Gemini, wire.Bedrock} {
		t.Run(string(d), func(t *testing.T) {
			body := wiretest.Request(d, outs...)
			store := shadow.NewMemory(shadow.MemoryOptions{})
			defer store.Close()
			env := Env{Ctx: context.Background(), Store: store, Tenant: "t1", Keys: shadow.NewKeyring([]byte("secret"))}

			calm, f := runTiers(t, d, body, Options{TriggerTokens: len(body), TargetTokens: len(body) / 8, CostModel: CostNone}, env)
			if !bytes.Equal(calm, body) || f.Stats.Step != 0 {
				t.Fatalf("below the trigger the body changed (step %d)", f.Stats.Step)
			}

			opts := Options{TriggerTokens: len(body) / 4 / 2, TargetTokens: len(body) / 4 / 5, CostModel: CostNone}
			out, f := runTiers(t, d, body, opts, env)
			if f.Stats.Step == 0 || f.Stats.Summarized == 0 {
				t.Fatalf("above the trigger nothing happened: %+v", f.Stats)
			}
			if err := wiretest.CheckPairing(d, out); err != nil {
				t.Fatal(err)
			}
			if !jsonsafe.Valid(out) {
				t.Fatal("invalid JSON")
			}
			before, _ := wire.Parse(d, body)
			after, _ := wire.Parse(d, out)
			if len(after.Results) != len(before.Results) {
				t.Fatalf("%d results, want %d", len(after.Results), len(before.Results))
			}
			for i := len(before.Results) - DefaultKeepRecent; i < len(before.Results); i++ {
				a, b := before.Results[i], after.Results[i]
				for k := range a.Texts {
					if a.Texts[k].Text() != b.Texts[k].Text() {
						t.Errorf("recent result %d changed", i)
					}
				}
			}
			summarized := 0
			for i, r := range after.Results {
				text := ""
				for _, tb := range r.Texts {
					text += tb.Text()
				}
				for _, j := range r.JSON {
					text += j.Raw
				}
				if !strings.Contains(text, Prefix) {
					continue
				}
				summarized++
				if i%3 == 0 && !strings.Contains(text, fmt.Sprintf("FAILED tests/test_mod%d.py::test_edge - AssertionError: expected 42", i)) {
					t.Errorf("result %d lost its failing test: %s", i, text)
				}
				id := text[strings.Index(text, `{\"id\":\"`)+len(`{\"id\":\"`):]
				if k := strings.Index(text, `{"id":"`); k >= 0 {
					id = text[k+len(`{"id":"`):]
				}
				id = id[:strings.IndexAny(id, `"\`)]
				orig, err := store.Get(context.Background(), "t1", shadow.Original, id)
				if err != nil {
					t.Fatalf("result %d: original %s not kept: %v", i, id, err)
				}
				quoted := wire.QuoteString(string(orig))
				if !bytes.Contains(body, orig) && !bytes.Contains(body, quoted[1:len(quoted)-1]) {
					t.Errorf("result %d: kept value is not an original of the body", i)
				}
			}
			if summarized == 0 || summarized > len(before.Results)-DefaultKeepRecent {
				t.Fatalf("%d results summarised", summarized)
			}
			again, _ := runTiers(t, d, body, opts, env)
			if !bytes.Equal(again, out) {
				t.Fatal("the rewrite is not a pure function of the request")
			}
		})
	}
}

// Between steps, request N+1 repeats request N's rewritten messages byte for
// byte: the cut only moves when the conversation has grown by the spacing.
// A flattened prefix is as stable as the summaries.
func TestCacheStableBetweenSteps(t *testing.T) {
	outs := results(40, 8000, func(i int) bool { return i%5 == 0 })
	for _, flatten := range []string{FlattenOff, FlattenOld} {
		t.Run("flatten="+flatten, func(t *testing.T) {
			opts := Options{TriggerTokens: 30000, TargetTokens: 17500, Flatten: flatten, CostModel: CostNone}
			store := shadow.NewMemory(shadow.MemoryOptions{})
			var prev []byte
			prevStep, steps, flattened := 0, 0, 0
			for n := 1; n <= len(outs); n++ {
				body := wiretest.Request(wire.OpenAIChat, outs[:n]...)
				out, f := runTiers(t, wire.OpenAIChat, body, opts, Env{Store: store, Tenant: "t1"})
				if prev != nil && f.Stats.Step == prevStep {
					// Everything before the closing of the message list is kept.
					cut := bytes.LastIndex(prev, []byte(`],"tools"`))
					if !bytes.HasPrefix(out, prev[:cut]) {
						t.Fatalf("turn %d: no step, but the rewritten prefix changed", n)
					}
				}
				if err := wiretest.CheckPairing(wire.OpenAIChat, out); err != nil {
					t.Fatalf("turn %d: %v", n, err)
				}
				if f.Stats.Step != prevStep {
					steps++
				}
				prev, prevStep = out, f.Stats.Step
				flattened = max(flattened, f.Stats.Flattened)
			}
			if steps < 2 || steps > 6 {
				t.Fatalf("%d steps over 40 turns of 8 KB with a 120 KB trigger", steps)
			}
			if (flatten == FlattenOld) != (flattened > 0) {
				t.Fatalf("flatten %q: %d messages flattened", flatten, flattened)
			}
		})
	}
}

// Old call arguments that carry file bodies are summarised as what they
// held; the call keeps its id, name and other arguments.
func TestOldInputsSummarised(t *testing.T) {
	var msgs []string
	for i := range 10 {
		file := strings.Repeat(fmt.Sprintf("line %d of the new file\n", i), 200)
		in := fmt.Sprintf(`{"file_path":"/src/f%d.py","content":%s}`, i, wire.QuoteString(file))
		msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%d","name":"Write","input":%s}]}`, i, in),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"File created successfully at: /src/f%d.py"}]}`, i, i))
	}
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":10,"tools":[{"name":"Write","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"write files"},` + strings.Join(msgs, ",") + `]}`)
	out, f := runTiers(t, wire.Anthropic, body, Options{TriggerTokens: len(body) / 8, TargetTokens: len(body) / 40, CostModel: CostNone}, Env{Store: shadow.NewMemory(shadow.MemoryOptions{}), Tenant: "t1"})
	if f.Stats.Inputs == 0 {
		t.Fatalf("no input summarised: %+v", f.Stats)
	}
	if err := wiretest.CheckPairing(wire.Anthropic, out); err != nil {
		t.Fatal(err)
	}
	c, _ := wire.Parse(wire.Anthropic, out)
	if !strings.Contains(c.Calls[0].Args, `"file_path":"/src/f0.py","content":"[Earlier: content of 200 lines, 4,600 bytes; expand_context {\"id\":\"sh_`) {
		t.Errorf("old input: %s", c.Calls[0].Args)
	}
	if last := c.Calls[len(c.Calls)-1].Args; strings.Contains(last, Prefix) {
		t.Errorf("the newest call's input changed: %s", last)
	}
}

// Flatten: the old exchanges reach the provider as text (no tool call or
// result before the cut), the recent ones as they were sent, pairing
// intact; the summaries' failing tests and expand hints are in the text,
// and the rewrite is a pure function of the request.
func TestFlattenOldExchanges(t *testing.T) {
	outs := results(12, 6000, func(i int) bool { return i%3 == 0 })
	for _, d := range []wire.Dialect{wire.OpenAIChat, wire.OpenAIResponses, wire.Anthropic, wire.Gemini, wire.Bedrock} {
		t.Run(string(d), func(t *testing.T) {
			body := wiretest.Request(d, outs...)
			store := shadow.NewMemory(shadow.MemoryOptions{})
			defer store.Close()
			env := Env{Ctx: context.Background(), Store: store, Tenant: "t1", Keys: shadow.NewKeyring([]byte("secret"))}
			opts := Options{TriggerTokens: len(body) / 4 / 2, TargetTokens: len(body) / 4 / 5, Flatten: FlattenOld, CostModel: CostNone}
			out, f := runTiers(t, d, body, opts, env)
			if f.Stats.Flattened == 0 {
				t.Fatalf("nothing flattened: %+v", f.Stats)
			}
			if err := wiretest.CheckPairing(d, out); err != nil {
				t.Fatal(err)
			}
			before, _ := wire.Parse(d, body)
			after, err := wire.Parse(d, out)
			if err != nil {
				t.Fatal(err)
			}
			flat := len(before.Results) - len(after.Results)
			if flat != f.Stats.Summarized || len(after.Calls) != len(after.Results) {
				t.Fatalf("%d results flattened, %d summarised; %d calls and %d results left", flat, f.Stats.Summarized, len(after.Calls), len(after.Results))
			}
			for i := range after.Results {
				a, b := before.Results[flat+i], after.Results[i]
				if a.CallID != b.CallID || len(a.Texts) != len(b.Texts) {
					t.Fatalf("recent result %d is not the original", i)
				}
				for k := range a.Texts {
					if a.Texts[k].Text() != b.Texts[k].Text() {
						t.Errorf("recent result %d changed", i)
					}
				}
			}
			text := wiretest.AllText(out)
			for i := 0; i < flat; i++ {
				if !strings.Contains(text, fmt.Sprintf("earlier tool call %s", before.Results[i].CallID)) {
					t.Errorf("result %d has no note", i)
				}
				if i%3 == 0 && !strings.Contains(text, fmt.Sprintf("FAILED tests/test_mod%d.py::test_edge - AssertionError: expected 42", i)) {
					t.Errorf("flattened result %d lost its failing test", i)
				}
			}
			if n := strings.Count(text, `expand_context {"id":"sh_`); n < flat {
				t.Errorf("%d expand hints for %d flattened results", n, flat)
			}
			if d == wire.Anthropic || d == wire.Bedrock || d == wire.Gemini {
				if before.Messages != after.Messages {
					t.Errorf("%d messages, want %d: block dialects flatten in place", after.Messages, before.Messages)
				}
			}
			again, _ := runTiers(t, d, body, opts, env)
			if !bytes.Equal(again, out) {
				t.Fatal("not a pure function of the request")
			}
		})
	}
}

// Flatten "all" renders every exchange as text whatever the budget, and
// FlattenBody (used on toolproc's own continuations) leaves text alone.
func TestFlattenAll(t *testing.T) {
	for _, d := range []wire.Dialect{wire.OpenAIChat, wire.OpenAIResponses, wire.Anthropic, wire.Gemini, wire.Bedrock} {
		t.Run(string(d), func(t *testing.T) {
			body := wiretest.Request(d, "a.go\nb.go", "FAIL x_test.go:3", "ok")
			out, f := runTiers(t, d, body, Options{TriggerTokens: 1 << 20, TargetTokens: 1 << 10, Flatten: FlattenAll}, Env{})
			if f.Stats.Step != 0 || f.Stats.Flattened == 0 {
				t.Fatalf("stats %+v", f.Stats)
			}
			c, err := wire.Parse(d, out)
			if err != nil || len(c.Results) != 0 || len(c.Calls) != 0 {
				t.Fatalf("%v: %d results and %d calls left:\n%s", err, len(c.Results), len(c.Calls), out)
			}
			if err := wiretest.CheckPairing(d, out); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"a.go\nb.go", "FAIL x_test.go:3"} {
				if !strings.Contains(wiretest.AllText(out), want) {
					t.Errorf("%q lost", want)
				}
			}
			again, err := FlattenBody(d, out)
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("FlattenBody changed a flattened body (%v)", err)
			}
			direct, err := FlattenBody(d, body)
			if err != nil || !bytes.Equal(direct, out) {
				t.Fatalf("FlattenBody and the filter disagree (%v)", err)
			}
		})
	}
}

// Force (the overflow ladder's rung): below the trigger and between steps
// the cut still moves as far as the target needs, keeping KeepRecent.
func TestForceCut(t *testing.T) {
	body := wiretest.Request(wire.Anthropic, results(12, 6000, func(i int) bool { return i%3 == 0 })...)
	opts := Options{TriggerTokens: len(body), TargetTokens: len(body) / 4 / 4, KeepRecent: 2, CostModel: CostNone}
	calm, f := runTiers(t, wire.Anthropic, body, opts, Env{})
	if !bytes.Equal(calm, body) || f.Stats.Step != 0 {
		t.Fatal("below the trigger the body changed")
	}
	opts.Force = true
	out, f := runTiers(t, wire.Anthropic, body, opts, Env{})
	if f.Stats.Summarized != 10 || f.Stats.Step != 1 {
		t.Fatalf("forced: %+v, want 10 of 12 summarised", f.Stats)
	}
	if err := wiretest.CheckPairing(wire.Anthropic, out); err != nil {
		t.Fatal(err)
	}
	c, _ := wire.Parse(wire.Anthropic, out)
	for _, r := range c.Results[10:] {
		if strings.HasPrefix(r.Texts[0].Text(), Prefix) {
			t.Fatal("a kept result was summarised")
		}
	}
}

// When the recent results alone would keep the request over the window,
// one step compresses the older of them (the middle tier) with a reference,
// every key line of each kept verbatim; the newest result reaches the
// provider byte-identical, pairing holds, and the originals can be read
// back.
func TestMiddleTierRewrite(t *testing.T) {
	outs := results(8, 12000, func(i int) bool { return i%2 == 0 })
	for _, d := range []wire.Dialect{wire.OpenAIChat, wire.Anthropic, wire.Gemini, wire.Bedrock} {
		t.Run(string(d), func(t *testing.T) {
			body := wiretest.Request(d, outs...)
			store := shadow.NewMemory(shadow.MemoryOptions{})
			defer store.Close()
			env := Env{Ctx: context.Background(), Store: store, Tenant: "t1", Keys: shadow.NewKeyring([]byte("secret"))}
			// 8 results of 12 KB (96 KB) against a 64 KB window: the six
			// recent ones alone are over it.
			window := 16000
			out, f := runTiers(t, d, body, Options{Window: func(string) int { return window }}, env)
			if f.Stats.Middle == 0 || !f.Stats.Urgent {
				t.Fatalf("no middle tier: %+v", f.Stats)
			}
			if err := wiretest.CheckPairing(d, out); err != nil {
				t.Fatal(err)
			}
			before, _ := wire.Parse(d, body)
			after, err := wire.Parse(d, out)
			if err != nil {
				t.Fatal(err)
			}
			if Estimate(after) > window*4 {
				t.Fatalf("%d bytes after the step, over the %d-token window", Estimate(after), window)
			}
			last := len(before.Results) - 1
			if a, b := resultText(before.Results[last]), resultText(after.Results[last]); a != b {
				t.Fatal("the newest result changed")
			}
			middle := 0
			for i, r := range after.Results {
				text := resultText(r)
				id, _, _, ok := shadow.ParseReference(text)
				if !ok {
					continue
				}
				middle++
				orig := resultText(before.Results[i])
				key, _ := compress.KeyLines(orig, compress.MaxKeyLines)
				for _, l := range key {
					if !strings.Contains(text, "\n"+l) {
						t.Errorf("result %d lost its key line %q", i, l)
					}
				}
				got, err := store.Get(context.Background(), "t1", shadow.Original, id)
				if err != nil || string(got) != orig {
					t.Errorf("result %d: original not kept (%v)", i, err)
				}
			}
			if middle == 0 {
				t.Fatal("no result carries a middle-tier reference")
			}
		})
	}
}

// resultText is a result's text: its first text value, or for a JSON
// result (Gemini, Bedrock json) its longest string.
func resultText(r wire.ToolResult) string {
	if len(r.Texts) > 0 {
		return r.Texts[0].Text()
	}
	if len(r.JSON) > 0 {
		return longestString(r.JSON[0].Raw)
	}
	return ""
}

// A client may stream one request and not the next, or change max_tokens
// between turns: the conversation is the same, so the rewrite of its
// messages must be too, or every switch breaks the cached prefix. The
// estimate counts the prompt, not the request's parameters.
func TestRewriteIgnoresRequestParameters(t *testing.T) {
	outs := results(30, 6000, func(i int) bool { return i%4 == 0 })
	for _, d := range []wire.Dialect{wire.OpenAIChat, wire.OpenAIResponses, wire.Anthropic, wire.Gemini, wire.Bedrock} {
		t.Run(string(d), func(t *testing.T) {
			for n := 4; n <= len(outs); n++ {
				body := wiretest.Request(d, outs[:n]...)
				padded, err := sjson.SetBytes(body, "stream", true)
				if err != nil {
					t.Fatal(err)
				}
				padded, _ = sjson.SetBytes(padded, "max_tokens", 64000)
				padded, _ = sjson.SetBytes(padded, "metadata", map[string]string{"user_id": strings.Repeat("u", 200)})
				a, _ := wire.Parse(d, body)
				b, _ := wire.Parse(d, padded)
				if Estimate(a) != Estimate(b) {
					t.Fatalf("%d turns: estimate %d without parameters, %d with", n, Estimate(a), Estimate(b))
				}
				// A window this conversation crosses about half-way, so
				// that steps happen on some turns.
				w := len(wiretest.Request(d, outs...)) / 4 / 2
				opts := Options{Window: func(string) int { return w }, TriggerShare: 0.6, TargetShare: 0.35}
				plain, f1 := runTiers(t, d, body, opts, Env{})
				withParams, f2 := runTiers(t, d, padded, opts, Env{})
				if f1.Stats.Step != f2.Stats.Step || f1.Stats.Summarized != f2.Stats.Summarized || f1.Stats.Middle != f2.Stats.Middle {
					t.Fatalf("%d turns: %+v without parameters, %+v with", n, f1.Stats, f2.Stats)
				}
				ma, mb := gjson.GetBytes(plain, listKey(d)).Raw, gjson.GetBytes(withParams, listKey(d)).Raw
				if ma != mb {
					t.Fatalf("%d turns: the messages differ with request parameters", n)
				}
			}
		})
	}
}

func listKey(d wire.Dialect) string {
	switch d {
	case wire.OpenAIResponses:
		return "input"
	case wire.Gemini:
		return "contents"
	}
	return "messages"
}

// withText is ex with its text set, as rewriteGroup sets a decoded one.
func withText(ex exchange, text string) exchange {
	ex.setText(text)
	return ex
}

// TestRepeatedSummariesReadNoText: the next request of a conversation
// carries the same old results; their summaries, ids and kept originals
// come from what was read of them before, and no result's text is decoded
// again. The bytes are the first request's.
func TestRepeatedSummariesReadNoText(t *testing.T) {
	outs := results(12, 6000, func(i int) bool { return i%3 == 0 })
	outs[0] += "\nunique to TestRepeatedSummariesReadNoText\n"
	body := wiretest.Request(wire.Anthropic, outs...)
	store := shadow.NewMemory(shadow.MemoryOptions{})
	defer store.Close()
	env := Env{Ctx: context.Background(), Store: store, Tenant: "t1", Keys: shadow.NewKeyring([]byte("secret"))}
	opts := Options{TriggerTokens: len(body) / 4 / 2, TargetTokens: len(body) / 4 / 5, CostModel: CostNone}
	first, f := runTiers(t, wire.Anthropic, body, opts, env)
	if f.Stats.Summarized == 0 {
		t.Fatalf("nothing summarised: %+v", f.Stats)
	}

	c, err := wire.Parse(wire.Anthropic, body)
	if err != nil {
		t.Fatal(err)
	}
	g := New(opts, env)
	edits, _ := g.Rewrite(c)
	out, err := wire.Apply(body, edits)
	if err != nil || !bytes.Equal(out, first) {
		t.Fatalf("the repeated request differs: %v", err)
	}
	for i, r := range c.Results[:g.Stats.Summarized] {
		for k := range r.Texts {
			if tb := &c.Results[i].Texts[k]; tb.MaxLen() != len(tb.Raw)-2 {
				t.Fatalf("result %d: summarised again by decoding its text", i)
			}
		}
	}
}

// TestRememberedSummariesPerTenant: a summary remembered for one caller
// (summaryCache) is never another's: each tenant's summaries name its own
// shadow ids, a request that cannot keep originals says so, and the first
// tenant's next request is its first byte for byte.
func TestRememberedSummariesPerTenant(t *testing.T) {
	outs := results(12, 6000, func(i int) bool { return i%3 == 0 })
	outs[1] += "\nunique to TestRememberedSummariesPerTenant\n"
	body := wiretest.Request(wire.OpenAIChat, outs...)
	store := shadow.NewMemory(shadow.MemoryOptions{})
	defer store.Close()
	keys := shadow.NewKeyring([]byte("secret"))
	opts := Options{TriggerTokens: len(body) / 4 / 2, TargetTokens: len(body) / 4 / 5, CostModel: CostNone}
	env := func(tenant string) Env {
		return Env{Ctx: context.Background(), Store: store, Tenant: tenant, Keys: keys}
	}
	idsIn := func(out []byte) map[string]bool {
		ids := map[string]bool{}
		for _, m := range regexp.MustCompile(`\{\\"id\\":\\"([^\\"]+)\\"\}`).FindAllSubmatch(out, -1) {
			ids[string(m[1])] = true
		}
		return ids
	}
	first, f := runTiers(t, wire.OpenAIChat, body, opts, env("t1"))
	if f.Stats.Summarized == 0 || len(idsIn(first)) == 0 {
		t.Fatalf("nothing summarised with a reference: %+v", f.Stats)
	}
	other, _ := runTiers(t, wire.OpenAIChat, body, opts, env("t2"))
	for id := range idsIn(other) {
		if idsIn(first)[id] {
			t.Fatalf("tenant t2's summaries name t1's id %s", id)
		}
		if _, err := store.Get(context.Background(), "t2", shadow.Original, id); err != nil {
			t.Fatalf("t2's id %s: %v", id, err)
		}
	}
	if len(idsIn(other)) != len(idsIn(first)) {
		t.Fatalf("t2 has %d ids, t1 %d", len(idsIn(other)), len(idsIn(first)))
	}
	// No store: originals cannot be kept, and the summaries say so (the
	// tiers act only when the window forces it, so force the cut).
	noKeep := opts
	noKeep.Force = true
	bare, _ := runTiers(t, wire.OpenAIChat, body, noKeep, Env{Ctx: context.Background()})
	if len(idsIn(bare)) != 0 || !bytes.Contains(bare, []byte(strings.TrimPrefix(notKeptHint, "; "))) {
		t.Fatal("a request that keeps no original got a remembered summary with an id")
	}
	again, _ := runTiers(t, wire.OpenAIChat, body, opts, env("t1"))
	if !bytes.Equal(again, first) {
		t.Fatal("t1's next request differs from its first")
	}
}
