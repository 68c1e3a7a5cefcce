package testenv_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"

	"github.com/toolproc/toolproc/filters/wire"
)

var shadowIDPattern = regexp.MustCompile(`sh_[0-9a-f]{32}`)

// slowContinuation answers the first request with an expand_context call
// for the id it finds in the body, and the continuation with 60 tokens,
// 100 ms apart, noting when its client goes away.
type slowContinuation struct {
	served, aborted atomic.Int32
}

func (s *slowContinuation) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("content-type", "text/event-stream")
	f := w.(http.Flusher)
	chunk := func(delta, finish string) {
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, finish)
		f.Flush()
	}
	if !bytes.Contains(b, []byte(`"tool_call_id":"call_rv"`)) {
		args := wire.QuoteString(`{"id":"` + string(shadowIDPattern.Find(b)) + `"}`)
		chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_rv","type":"function","function":{"name":"expand_context","arguments":`+string(args)+`}}]}`, "null")
		chunk(`{}`, `"tool_calls"`)
		fmt.Fprint(w, "data: [DONE]\n\n")
		return
	}
	chunk(`{"role":"assistant","content":""}`, "null")
	for i := range 60 {
		select {
		case <-r.Context().Done():
			s.aborted.Add(1)
			return
		case <-time.After(100 * time.Millisecond):
		}
		chunk(fmt.Sprintf(`{"content":"token%d "}`, i), "null")
		s.served.Add(1)
	}
	chunk(`{}`, `"stop"`)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// Review finding 4 / issue item 5: a client that goes away must stop the
// replays made for it. The stand-in resets the ext_proc stream when the
// client disconnects, as Envoy does; the continuation toolproc is pulling
// through the replay listener must be cancelled at once, not read to its
// end (each continuation is a billed, full-context LLM call).
func TestE2EClientAbortCancelsContinuation(t *testing.T) {
	up := &slowContinuation{}
	r := harness{respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, upstream: up}.start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", r.proxyURL+"/v1/chat/completions",
		bytes.NewReader(openAIToolRequest(true, pytestLog())))
	req.Header.Set("content-type", "application/json")
	req.Header.Set("authorization", "Bearer sk-test-cancel")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for up.served.Load() < 3 {
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatalf("stream ended before the continuation: %v", err)
		}
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for up.aborted.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if up.aborted.Load() == 0 {
		t.Fatalf("the continuation was not cancelled: %d/60 tokens served", up.served.Load())
	}
	if n := up.served.Load(); n > 10 {
		t.Fatalf("%d/60 tokens served after the client left", n)
	}
}
