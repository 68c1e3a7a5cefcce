package pipeline_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
)

type panicky struct{}

func (panicky) Name() string { return "panicky" }
func (panicky) Rewrite(*wire.Conversation) ([]wire.Edit, []pipeline.Change) {
	panic("boom")
}

type badEdit struct{}

func (badEdit) Name() string { return "bad" }
func (badEdit) Rewrite(c *wire.Conversation) ([]wire.Edit, []pipeline.Change) {
	if len(c.Results) == 0 {
		return nil, nil
	}
	return []wire.Edit{{Span: c.Results[0].Texts[0].Span, Raw: `"unterminated`}}, []pipeline.Change{{Filter: "bad"}}
}

const anthropicBody = `{"model":"claude","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]},` +
	`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"LONG","cache_control":{"type":"ephemeral"}}]}]}`

func TestRunClampsAndReports(t *testing.T) {
	body := []byte(strings.Replace(anthropicBody, "LONG", strings.Repeat("x\\n", 5000), 1))
	p := pipeline.New(clamp.NewFilter(clamp.Limits{MaxBytes: 4096, MaxLines: 100}))
	out, rep, err := p.Run(wire.Anthropic, body)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Changed() || rep.Results != 1 || rep.BytesIn != len(body) || rep.BytesOut != len(out) {
		t.Fatalf("report = %+v", rep)
	}
	c := rep.Changes[0]
	if c.Filter != "clamp" || c.ToolName != "Bash" || c.CallID != "t1" || c.LinesBefore != 5000 || c.LinesAfter > 100 || c.BytesAfter > 4096 {
		t.Fatalf("change = %+v", c)
	}
	if gjson.GetBytes(out, "messages.1.content.0.cache_control.type").String() != "ephemeral" {
		t.Fatal("cache_control must stay on its block")
	}
}

func TestRunFailsOpen(t *testing.T) {
	body := []byte(strings.Replace(anthropicBody, "LONG", "short", 1))
	for name, tc := range map[string]struct {
		p    *pipeline.Pipeline
		body []byte
		want error
	}{
		"panic":       {pipeline.New(panicky{}), body, pipeline.ErrInternal},
		"bad edit":    {pipeline.New(badEdit{}), body, wire.ErrBadEdit},
		"not json":    {pipeline.New(clamp.NewFilter(clamp.Limits{})), []byte(`{"messages":[`), wire.ErrNotJSON},
		"not object":  {pipeline.New(), []byte(`[1]`), wire.ErrNotJSON},
		"zero filter": {&pipeline.Pipeline{}, body, nil},
	} {
		out, rep, err := tc.p.Run(wire.Anthropic, tc.body)
		if !errors.Is(err, tc.want) || string(out) != string(tc.body) || rep.Changed() {
			t.Errorf("%s: err=%v changed=%v same=%v", name, err, rep.Changed(), string(out) == string(tc.body))
		}
	}
}

// TestClampReadsKeepBothEnds: with WithReadKeep, a file read over the
// limit keeps its start and its end (the last definitions of a source
// file), while a shell result in the same request keeps its head.
func TestClampReadsKeepBothEnds(t *testing.T) {
	var file strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&file, "def f%04d(x):\\n", i)
	}
	body := `{"model":"claude","messages":[{"role":"assistant","content":[` +
		`{"type":"tool_use","id":"r1","name":"Read","input":{"file_path":"/src/mod.py"}},` +
		`{"type":"tool_use","id":"b1","name":"Bash","input":{"command":"python mod.py"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"r1","content":"` + file.String() + `"},` +
		`{"type":"tool_result","tool_use_id":"b1","content":"` + file.String() + `"}]}]}`
	isRead := func(name, _ string) bool { return name == "Read" }
	p := pipeline.New(clamp.NewFilter(clamp.Limits{MaxBytes: 4096, MaxLines: 200}).WithReadKeep(clamp.KeepHeadTail, isRead))
	out, _, err := p.Run(wire.Anthropic, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	read := gjson.GetBytes(out, "messages.1.content.0.content").String()
	shell := gjson.GetBytes(out, "messages.1.content.1.content").String()
	if !strings.HasPrefix(read, "def f0001(x):") || !strings.Contains(read, "def f3000(x):") {
		t.Errorf("the read lost an end:\n%.300s\n…\n%s", read, read[max(len(read)-300, 0):])
	}
	if !strings.HasPrefix(shell, "def f0001(x):") || strings.Contains(shell, "def f3000(x):") {
		t.Errorf("the shell result is not head-only:\n%s", shell[max(len(shell)-300, 0):])
	}
}

// wholeMessage rewrites the first message as a whole (as flattening does):
// an edit the parsed model cannot hold, so the body is spliced and parsed
// again before the next filter.
type wholeMessage struct{}

func (wholeMessage) Name() string { return "whole" }
func (wholeMessage) Rewrite(c *wire.Conversation) ([]wire.Edit, []pipeline.Change) {
	m := gjson.GetBytes(c.Body, "messages.0")
	at := wire.Span{Start: m.Index, End: m.Index + len(m.Raw)}
	return []wire.Edit{{Span: at, Raw: m.Raw}}, []pipeline.Change{{Filter: "whole"}}
}

// TestLastStepSplicedInOneCopy: a last step's edit of the parsed body
// (the expand_context tool) is spliced with the filters' edits into the
// bytes the two splices made before; it is skipped, and said so, when the
// body was parsed again meanwhile or when its edit cannot be spliced.
func TestLastStepSplicedInOneCopy(t *testing.T) {
	body := []byte(strings.Replace(anthropicBody, "LONG", strings.Repeat("x\\n", 5000), 1))
	clampF := clamp.NewFilter(clamp.Limits{MaxBytes: 4096, MaxLines: 100})
	parse := func() *wire.Conversation {
		c, err := wire.Parse(wire.Anthropic, body)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	twice, _, err := pipeline.New(clampF).RunConversation(parse())
	if err != nil {
		t.Fatal(err)
	}
	want, changed, err := wire.InjectExpandTool(wire.Anthropic, twice)
	if err != nil || !changed {
		t.Fatalf("inject: %v %v", changed, err)
	}

	conv := parse()
	var seen pipeline.Report
	out, rep, ran, err := pipeline.New(clampF).RunConversationThen(conv, func(r pipeline.Report) []wire.Edit {
		seen = r
		e, ok, err := conv.ExpandToolEdit()
		if err != nil || !ok {
			t.Fatalf("edit: %v %v", ok, err)
		}
		return []wire.Edit{e}
	})
	if err != nil || !ran || string(out) != string(want) || rep.BytesOut != len(out) || len(seen.Changes) != 1 {
		t.Fatalf("ran %v, err %v, same bytes %v, bytes out %d of %d, changes seen %d", ran, err, string(out) == string(want), rep.BytesOut, len(out), len(seen.Changes))
	}

	// Parsed again after a whole message was rewritten: the caller's
	// step is its own, on the new body.
	called := false
	out, _, ran, err = pipeline.New(wholeMessage{}, clampF).RunConversationThen(parse(), func(pipeline.Report) []wire.Edit { called = true; return nil })
	if err != nil || ran || called || string(out) != string(twice) {
		t.Fatalf("after a reparse: ran %v, called %v, err %v, same as without %v", ran, called, err, string(out) == string(twice))
	}

	// An edit that overlaps a filter's is dropped, never the filter's.
	conv = parse()
	out, rep, ran, err = pipeline.New(clampF).RunConversationThen(conv, func(pipeline.Report) []wire.Edit {
		at := conv.Results[0].Texts[0].Span
		return []wire.Edit{{Span: wire.Span{Start: at.Start + 1, End: at.End + 1}, Raw: `"x"`}}
	})
	if err != nil || ran || string(out) != string(twice) || !rep.Changed() {
		t.Fatalf("overlapping last edit: ran %v, err %v, same as without %v", ran, err, string(out) == string(twice))
	}
}
