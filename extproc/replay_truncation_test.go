package extproc

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// Review finding 19: a recovery replay cut short (reset mid-body) was
// delivered as a complete 200 of truncated JSON. The client now gets the
// upstream's original error, in BUFFERED and FULL_DUPLEX_STREAMED.
func TestTruncatedReplayIsNotAnAnswer(t *testing.T) {
	replay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "application/json")
		w.Header().Set("content-length", "4000")
		w.WriteHeader(200)
		_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assis`))
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer replay.Close()
	errBody := []byte(`{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	for _, mode := range []string{"buffered", "duplex"} {
		s := testServer(t, "server: {replay_url: "+replay.URL+"}")
		x := newTestExchange(s)
		m := modeBuffered
		if mode == "duplex" {
			m = modeDuplex
		}
		x.handle(reqHeaders("/v1/chat/completions", modeBuffered, m, "authorization", "Bearer sk-trunc-0123456789"))
		x.handle(reqBody(openAIBody(bigToolOutput()), true))
		hr := x.handle(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
			ResponseHeaders: hdrs(":status", "400", "content-type", "application/json")}})
		resps := append(hr, x.handle(respBody(errBody, true))...)
		var body []byte
		var status string
		for _, r := range resps {
			if h := r.GetResponseHeaders(); h != nil {
				for _, hv := range h.GetResponse().GetHeaderMutation().GetSetHeaders() {
					if hv.GetHeader().GetKey() == ":status" {
						status = string(hv.GetHeader().GetRawValue())
					}
				}
			}
			cr := r.GetResponseBody().GetResponse()
			for _, hv := range cr.GetHeaderMutation().GetSetHeaders() {
				if hv.GetHeader().GetKey() == ":status" {
					status = string(hv.GetHeader().GetRawValue())
				}
			}
			switch bm := cr.GetBodyMutation().GetMutation().(type) {
			case *extprocv3.BodyMutation_Body:
				body = append(body, bm.Body...)
			case *extprocv3.BodyMutation_StreamedResponse:
				body = append(body, bm.StreamedResponse.GetBody()...)
			case nil:
				if r.GetResponseBody() != nil && mode == "buffered" {
					body = append(body, errBody...)
				}
			}
		}
		if status == "200" || string(body) != string(errBody) {
			t.Fatalf("%s: client gets status %q body %q; want the original error", mode, status, body)
		}
	}
}
