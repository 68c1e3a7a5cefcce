package testenv_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
)

// TestE2EStreamingNotBuffered: with the normalizer in the path, the first
// text delta reaches the client while the upstream is still holding the rest
// of its stream. The upstream waits until the client saw the text, so a
// buffering toolproc would deadlock into the timeout: no timing assumptions.
func TestE2EStreamingNotBuffered(t *testing.T) {
	for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{
		extprocfilterv3.ProcessingMode_STREAMED,
		extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED,
	} {
		for _, tc := range []struct{ dialect, path, first, rest, text string }{
			{
				"openai_chat", "/v1/chat/completions",
				`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}` + "\n\n",
				`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n",
				"Hello",
			},
			{
				"anthropic", "/v1/messages",
				"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
					"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
					"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n",
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
					"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":2}}\n\n" +
					"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
				"Hello",
			},
		} {
			t.Run(mode.String()+"/"+tc.dialect, func(t *testing.T) {
				sawText := make(chan struct{})
				upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("content-type", "text/event-stream")
					_, _ = w.Write([]byte(tc.first))
					w.(http.Flusher).Flush()
					select {
					case <-sawText:
					case <-time.After(10 * time.Second):
					}
					_, _ = w.Write([]byte(tc.rest))
				})
				base := newHandlerEnv(t, mode, upstream)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+tc.path,
					strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
				req.Header.Set("content-type", "application/json")
				start := time.Now()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				seen := false
				for sc.Scan() {
					if !seen && strings.Contains(sc.Text(), tc.text) {
						seen = true
						if time.Since(start) > 8*time.Second {
							t.Fatal("first text only arrived after the upstream gave up waiting: the stream was buffered")
						}
						close(sawText)
					}
				}
				if !seen {
					t.Fatal("text never arrived")
				}
			})
		}
	}
}
