package extproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/overflow"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
)

// Review finding 3: an expansion was quoted whole into the continuation (a
// 2.75 MB original made a 2.8 MB request through the replay listener, where
// nothing clamps). It is now cut to the model's share of its window, head
// and tail kept, and says so.
func TestExpansionIsFittedToTheWindow(t *testing.T) {
	var mu sync.Mutex
	var continuation []byte
	replay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		continuation = b
		mu.Unlock()
		w.Header().Set("content-type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}`)
	}))
	defer replay.Close()
	s := testServer(t, "server: {replay_url: "+replay.URL+"}")
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeBuffered, "authorization", "Bearer sk-expand-fit-0123456789"))
	x.handle(reqBody(openAIBody(pytestRun()), true))
	if !x.rewrite.refs || !x.expansion.expandable {
		t.Fatal("request not compressed with references")
	}
	var b strings.Builder
	for i := 0; b.Len() < 2_750_000; i++ {
		fmt.Fprintf(&b, "line %07d of a very large original tool result\n", i)
	}
	big := b.String()
	id := x.rewrite.keys.ID(x.rewrite.tenant, []byte(big))
	if err := s.store.Put(context.Background(), x.rewrite.tenant, shadow.Original, id, []byte(big)); err != nil {
		t.Fatal(err)
	}
	args := wire.QuoteString(`{"id":"` + id + `"}`)
	answer := `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_x","type":"function","function":{"name":"expand_context","arguments":` + string(args) + `}}]},"finish_reason":"tool_calls"}]}`
	out, changed := x.expandJSON([]byte(answer))
	if !changed || !strings.Contains(string(out), `"content":"done"`) {
		t.Fatalf("answer %s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	budget := overflow.ShareBytes(overflow.Window("gpt-4o", overflow.DefaultWindows, 128000), 0.5)
	quoted := gjson.GetBytes(continuation, "messages.#(tool_call_id==call_x).content").String()
	if len(quoted) > budget || !strings.HasPrefix(quoted, "line 0000000") || !strings.Contains(quoted, id+wire.PageSep) {
		t.Fatalf("expansion of %d bytes quoted as %d bytes (budget %d): %.200q", len(big), len(quoted), budget, quoted)
	}
	// The note names the next part; asking for it continues exactly where
	// this one stopped, and paging through reaches the end.
	// The next part is asked for as the model would: the id the note
	// names, read by the same parse as any expand_context call.
	nextCall := func(part string) wire.ExpandCall {
		i := strings.LastIndex(part, `{"id":`)
		if i < 0 {
			t.Fatalf("no next id in %q", part[max(0, len(part)-200):])
		}
		args := part[i : strings.Index(part[i:], "}")+i+1]
		return wire.NewExpandCall("call_next", gjson.Parse(args), 0)
	}
	call := nextCall(quoted)
	next := call.Offset
	if call.ID != id || next < 2 {
		t.Fatalf("next part %+v in %q", call, quoted[len(quoted)-200:])
	}
	lastShown := strings.Count(quoted[:strings.LastIndex(quoted, "\n[expand_context")], "\n")
	if next != lastShown+1 {
		t.Fatalf("next offset %d after %d lines shown", next, lastShown)
	}
	var got strings.Builder
	got.WriteString(quoted[:strings.LastIndex(quoted, "\n[expand_context")])
	for parts := 1; ; parts++ {
		part := x.fitExpansion(big, true, call, 1)
		if !strings.HasPrefix(part, fmt.Sprintf("line %07d", next-1)) || len(part) > budget {
			t.Fatalf("part %d: %.80q", parts, part)
		}
		i := strings.LastIndex(part, "\n[expand_context")
		got.WriteString(part[:i])
		if strings.Contains(part[i:], "this is the end") {
			break
		}
		if call = nextCall(part); call.ID != id || call.Offset <= next || parts > 20 {
			t.Fatalf("part %d: next %+v", parts, call)
		}
		next = call.Offset
	}
	if got.String() != big {
		t.Fatalf("the parts add up to %d bytes, the original has %d", got.Len(), len(big))
	}
	// A window asked for explicitly.
	if part := x.fitExpansion(big, true, wire.ExpandCall{ID: id, Offset: 11, Limit: 2}, 1); !strings.HasPrefix(part, "line 0000010") ||
		strings.Count(part, "of a very large") != 2 || !strings.Contains(part, "lines 11-12 of") {
		t.Fatalf("offset 11 limit 2: %q", part)
	}
}

// Review finding 3: a continuation that fails (here the upstream's 400)
// left the client an empty 200. The client now reads the model's answer
// without the phantom call, and a note where nothing else was left.
func TestFailedContinuationIsNeverAnEmptySuccess(t *testing.T) {
	replay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":{"code":"context_length_exceeded","message":"maximum context length"}}`)
	}))
	defer replay.Close()
	for _, d := range []struct {
		dialect wire.Dialect
		path    string
		answer  string
		text    string
	}{
		{wire.OpenAIChat, "/v1/chat/completions",
			`{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"expand_context","arguments":"{\"id\":\"sh_00000000000000000000000000000000\"}"}}]},"finish_reason":"tool_calls"}]}`,
			"choices.0.message.content"},
		{wire.Anthropic, "/v1/messages",
			`{"id":"m","type":"message","role":"assistant","model":"claude","content":[{"type":"tool_use","id":"toolu_1","name":"expand_context","input":{"id":"sh_00000000000000000000000000000000"}}],"stop_reason":"tool_use"}`,
			"content.0.text"},
	} {
		s := testServer(t, "server: {replay_url: "+replay.URL+"}")
		x := newTestExchange(s)
		x.handle(reqHeaders(d.path, modeBuffered, modeBuffered, "authorization", "Bearer sk-expand-fail-0123456789"))
		x.handle(reqBody(openAIBody(pytestRun()), true))
		x.rewrite.upstreamBody = []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"x"}]}`)
		if d.dialect == wire.Anthropic {
			x.dialect = wire.Anthropic
			x.rewrite.upstreamBody = []byte(`{"model":"claude","max_tokens":10,"messages":[{"role":"user","content":"x"}]}`)
		}
		out, _ := x.expandJSON([]byte(d.answer))
		if got := gjson.GetBytes(out, d.text).String(); !strings.Contains(got, "follow-up request failed") || strings.Contains(string(out), "expand_context") {
			t.Fatalf("%s: client gets %s", d.dialect, out)
		}
	}
}
