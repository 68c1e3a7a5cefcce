package extproc

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Review finding 20: with a summariser that never answers, each result
// waited its own 30 s timeout, one after another (10 results = 300 s, past
// Envoy's max_message_timeout). All summaries of a request now share one
// budget: past it, every remaining result takes the fallback at once.
func TestLLMSummariesShareOneBudget(t *testing.T) {
	var calls atomic.Int32
	done := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer hang.Close()
	defer close(done)
	s := testServer(t, "server: {replay_url: "+hang.URL+"}\n"+
		"profiles: {default: {tiers: {enabled: false}, compress: {strategy: llm, llm: {timeout: 3s, request_budget: 500ms}, fallback_strategy: structural}}}")
	var msgs []string
	for i := range 10 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function","function":{"name":"bash","arguments":"{}"}}]},`+
			`{"role":"tool","tool_call_id":"c%d","content":%s}`, i, i, quote(pytestRun())))
	}
	body := []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"go"},` + strings.Join(msgs, ",") + `]}`)
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeBuffered, "authorization", "Bearer sk-budget-0123456789"))
	start := time.Now()
	out := x.handle(reqBody(body, true))[0].GetRequestBody().GetResponse().GetBodyMutation().GetBody()
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("10 hanging summaries took %v", took)
	}
	// Every result still got the fallback (structural) under a reference.
	if n := strings.Count(string(out), "[toolproc shadow_id=sh_"); n != 10 {
		t.Fatalf("%d of 10 results compressed", n)
	}
	if c := calls.Load(); c > 10 {
		t.Fatalf("%d summariser calls", c)
	}
}
