package extproc

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

func TestReplayRouteHost(t *testing.T) {
	for _, tc := range []struct {
		name        string
		authorities []string
		given       string
		host        string
		ok          bool
	}{
		{"default: the peer's authority never travels", nil, "billing.internal.svc", "", true},
		{"default, no authority at all", nil, "", "", true},
		{"listed", []string{"llm.example.com"}, "LLM.example.com", "LLM.example.com", true},
		{"not listed", []string{"llm.example.com"}, "billing.internal.svc", "", false},
		{"any", []string{anyAuthority}, "billing.internal.svc", "billing.internal.svc", true},
	} {
		host, ok := replayRoute{authorities: tc.authorities}.host(tc.given)
		if host != tc.host || ok != tc.ok {
			t.Errorf("%s: host(%q) = %q, %v; want %q, %v", tc.name, tc.given, host, ok, tc.host, tc.ok)
		}
	}
}

// Review round 3, U2: a gRPC peer plays Envoy with :authority set to an
// internal host and a real LLM path, then answers with a context overflow,
// so toolproc replays. With the default config the replay must reach the
// replay listener under replay_url's own authority; the peer's only when
// the operator lists it.
func TestReplayAuthorityIsNotThePeers(t *testing.T) {
	var mu sync.Mutex
	var hosts []string
	replay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		w.WriteHeader(500)
	}))
	defer replay.Close()
	u, err := url.Parse(replay.URL)
	if err != nil {
		t.Fatal(err)
	}
	own := u.Host
	overflow := `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`
	for _, tc := range []struct {
		name, config, authority string
		want                    []string // Hosts the replay listener saw
	}{
		{"default", "", "billing.internal.svc", []string{own}},
		{"listed", "replay_authorities: [llm.example.com], ", "llm.example.com", []string{"llm.example.com"}},
		{"not listed", "replay_authorities: [llm.example.com], ", "billing.internal.svc", nil},
		{"any", `replay_authorities: ["*"], `, "billing.internal.svc", []string{"billing.internal.svc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			hosts = nil
			mu.Unlock()
			s := testServer(t, "server: {"+tc.config+"replay_url: "+replay.URL+"}")
			client := startGRPC(t, s)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			stream, err := client.Process(ctx)
			if err != nil {
				t.Fatal(err)
			}
			h := hdrs(":authority", tc.authority, ":path", "/v1/chat/completions", ":method", "POST",
				"content-type", "application/json", "authorization", "Bearer sk-proj-0123456789abcdef")
			for _, m := range []*extprocv3.ProcessingRequest{
				{Request: &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: h},
					ProtocolConfig: &extprocv3.ProtocolConfiguration{RequestBodyMode: modeBuffered, ResponseBodyMode: modeBuffered}},
				reqBody(openAIBody(bigToolOutput()), true),
				{Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: hdrs(":status", "400", "content-type", "application/json")}},
				respBody([]byte(overflow), true),
			} {
				sendAnswered(t, stream, m)
			}
			_ = stream.CloseSend()
			mu.Lock()
			defer mu.Unlock()
			if len(hosts) == 0 && len(tc.want) > 0 {
				t.Fatalf("no replay reached the replay listener")
			}
			for _, h := range hosts {
				if h != tc.want[0] {
					t.Errorf("replay Host %q, want %q", h, tc.want[0])
				}
			}
			if tc.want == nil && len(hosts) != 0 {
				t.Errorf("replays to an unlisted authority were sent: %v", hosts)
			}
		})
	}
}

func TestReplayAuthoritiesConfig(t *testing.T) {
	for _, bad := range []string{`[""]`, `[LLM.example.com]`, `["*", llm.example.com]`, `["a/b"]`} {
		if _, err := ParseConfig([]byte("server: {replay_authorities: " + bad + "}")); err == nil {
			t.Errorf("replay_authorities %s accepted", bad)
		}
	}
	for _, good := range []string{`[]`, `["*"]`, `[llm.example.com, "llm.example.com:8443"]`} {
		if _, err := ParseConfig([]byte("server: {replay_authorities: " + good + "}")); err != nil {
			t.Errorf("replay_authorities %s: %v", good, err)
		}
	}
}
