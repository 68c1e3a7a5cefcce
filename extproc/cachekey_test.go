package extproc

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
)

func reqWithTool(tool, args, result string) []byte {
	return []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"go"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":` + string(wire.QuoteString(tool)) + `,"arguments":` + string(wire.QuoteString(args)) + `}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":` + string(wire.QuoteString(result)) + `}]}`)
}

// Review finding 14: the compressed-result cache was keyed on content and
// strategy, but the hint (tool name, arguments) picks the kind; a grep
// result compressed as a file read when a view_file of the same bytes had
// been seen first. A request's bytes must not depend on store history
// (replicas and restarts would disagree, and prompt caches miss).
func TestCompressedBytesDoNotDependOnStoreHistory(t *testing.T) {
	var b strings.Builder
	for i := range 800 {
		fmt.Fprintf(&b, "src/module_%03d/handler.py:%d:    result = process_request(ctx, payload_%d)  # TODO tidy\n", i%40, 10+i, i)
	}
	s := testServer(t, "")
	p, ep := s.currentProfiles()[DefaultProfile], wire.Classify("/v1/chat/completions")
	grep := reqWithTool("grep_search", `{"query":"process_request"}`, b.String())
	view := reqWithTool("view_file", `{"path":"notes.txt"}`, b.String())
	env := shadow.Env{Tenant: "tenant1"}
	run := func(st shadow.Store, body []byte) []byte {
		rr, err := rewriteRequestBody(context.Background(), p, st, env, ep, wire.ClientAsk{}, body)
		if err != nil || rr.compress == nil || rr.compress.Stats.References != 1 {
			t.Fatalf("not compressed: %v", err)
		}
		return rr.out
	}
	alone := run(shadow.NewMemory(shadow.MemoryOptions{}), grep)
	warm := shadow.NewMemory(shadow.MemoryOptions{})
	run(warm, view)
	if after := run(warm, grep); !bytes.Equal(alone, after) {
		t.Fatalf("same request, %d vs %d bytes depending on store history", len(alone), len(after))
	}
}
