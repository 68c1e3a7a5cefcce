package testenv_test

// The faults a mesh operator asks about, end to end and fast: toolproc
// killed mid-stream (Envoy's failure_mode_allow), Redis restarted
// mid-session and a Redis Cluster failing over mid-session (an
// expand_context for a lost original answers "no longer available" in
// band), and the upstream dying mid-stream during an expansion and during
// a recovery replay (the client sees a clean end, never a hang or a
// corrupted stream).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/shadow/redistest"
	"github.com/toolproc/toolproc/testenv"
)

// sseChunk is one OpenAI Chat stream event.
func sseChunk(delta, finish string) string {
	return fmt.Sprintf("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, finish)
}

// slowStream answers with n content chunks, one every gap, then [DONE];
// first is closed once the first chunk is out.
type slowStream struct {
	n     int
	gap   time.Duration
	first chan struct{}
	once  atomic.Bool
}

func (s *slowStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("content-type", "text/event-stream")
	f := w.(http.Flusher)
	for i := range s.n {
		fmt.Fprint(w, sseChunk(fmt.Sprintf(`{"content":"tok%d "}`, i), "null"))
		f.Flush()
		if s.once.CompareAndSwap(false, true) {
			close(s.first)
		}
		time.Sleep(s.gap)
	}
	fmt.Fprint(w, sseChunk(`{}`, `"stop"`)+"data: [DONE]\n\n")
}

// toolprocBehind starts toolproc in process behind a stand-in with
// failure_mode_allow, and returns the stand-in's URL and a function that
// kills toolproc's gRPC server (every stream breaks, as when the process
// dies).
func toolprocBehind(t *testing.T, up http.Handler, respMode extprocfilterv3.ProcessingMode_BodySendMode) (string, func()) {
	t.Helper()
	cfg, err := extproc.ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	upSrv := httptest.NewServer(up)
	t.Cleanup(upSrv.Close)
	srv := extproc.NewServer(cfg, nil, prometheus.NewRegistry())
	t.Cleanup(func() { _ = srv.Close() })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(extproc.GRPCServerOptions(cfg)...)
	srv.Register(g)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	mode := &extprocfilterv3.ProcessingMode{
		RequestHeaderMode: extprocfilterv3.ProcessingMode_SEND, RequestBodyMode: extprocfilterv3.ProcessingMode_BUFFERED,
		ResponseHeaderMode: extprocfilterv3.ProcessingMode_SEND, ResponseBodyMode: respMode,
	}
	if respMode == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
		mode.ResponseTrailerMode = extprocfilterv3.ProcessingMode_SEND
	}
	p, err := testenv.NewProxy(testenv.ProxyConfig{
		ExtProcAddr: lis.Addr().String(), UpstreamURL: upSrv.URL, Mode: mode,
		FailureModeAllow: true, MessageTimeout: 2 * time.Second, BufferLimit: 32 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	proxy := httptest.NewServer(p)
	t.Cleanup(proxy.Close)
	return proxy.URL, g.Stop
}

// readStream reads an SSE answer to its end (or error) within limit and
// checks that every complete event is well formed: JSON or [DONE].
func readStream(t *testing.T, resp *http.Response, limit time.Duration) (events []string, err error) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReader(resp.Body)
		for {
			line, rerr := br.ReadString('\n')
			if rest, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok && strings.HasSuffix(line, "\n") {
				if rest != "[DONE]" && !json.Valid([]byte(rest)) {
					t.Errorf("corrupted event: %.200q", rest)
				}
				events = append(events, rest)
			}
			if rerr != nil {
				if rerr != io.EOF {
					err = rerr
				}
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(limit):
		resp.Body.Close()
		<-done
		t.Fatalf("the answer did not end within %v (a hang)", limit)
	}
	return events, err
}

func streamRequest(t *testing.T, url string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", bytes.NewReader(openAIToolRequest(true, bigResult("needle-42", 3000))))
	req.Header.Set("content-type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// toolproc dies while an answer streams. With a STREAMED response body
// Envoy fails open (failure_mode_allow): the rest of the answer reaches
// the client unprocessed, every token, then [DONE]. In
// FULL_DUPLEX_STREAMED Envoy cannot fail open once body data went to the
// processor (it may hold some): the client's stream is reset at once.
// Neither hangs.
func TestFaultToolprocKilledMidStream(t *testing.T) {
	for _, tc := range []struct {
		mode     extprocfilterv3.ProcessingMode_BodySendMode
		complete bool
	}{
		{extprocfilterv3.ProcessingMode_STREAMED, true},
		{extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, false},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			up := &slowStream{n: 20, gap: 50 * time.Millisecond, first: make(chan struct{})}
			url, kill := toolprocBehind(t, up, tc.mode)
			resp := streamRequest(t, url, "authorization", "Bearer sk-fault-tenant-0123456789")
			<-up.first
			kill()
			start := time.Now()
			events, err := readStream(t, resp, 10*time.Second)
			t.Logf("%d events after the kill, ended in %v (err %v)", len(events), time.Since(start).Round(time.Millisecond), err)
			if tc.complete {
				if err != nil || len(events) == 0 || events[len(events)-1] != "[DONE]" {
					t.Fatalf("fail-open stream incomplete: %d events, err %v", len(events), err)
				}
				joined := strings.Join(events, "")
				for i := range up.n {
					if !strings.Contains(joined, fmt.Sprintf("tok%d ", i)) {
						t.Fatalf("token %d lost", i)
					}
				}
			} else if err == nil && len(events) > 0 && events[len(events)-1] == "[DONE]" {
				t.Log("the stream completed (the processor had already released it)")
			}
		})
	}
}

// Redis restarts (its data gone) between two turns of a session. The
// model asks for an original it was given a reference to before the
// restart, from a turn whose history no longer carries it (the client
// compacted it): expand_context answers in band that it is no longer
// available, and the client gets the model's answer, not an error. A turn
// that still carries the result keeps its original again, so the same
// call then resolves.
func TestFaultRedisRestartedMidSession(t *testing.T) {
	redis := redistest.Start(t)
	up := &recordingUpstream{}
	r := harness{config: fmt.Sprintf("store: {type: redis, redis: {addr: %q}, cooldown: 1s}", redis.Addr()),
		respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, upstream: up}.start(t)
	body := openAIToolRequest(false, bigResult("needle-42", 3000))
	auth := []string{"authorization", "Bearer sk-session-tenant-0123456789"}
	postChat(t, r.proxyURL, "/v1/chat/completions", body, auth...)
	ids := shadowIDRE.FindAllString(string(up.last()), -1)
	if len(ids) == 0 {
		t.Fatal("no reference on the first turn")
	}
	redis.Restart()
	compacted := openAIToolRequest(false, "tests: 3000 passed")
	resp, out := postChat(t, r.proxyURL, "/v1/chat/completions", compacted, append(auth, "x-test-expand", ids[0])...)
	if resp.StatusCode != 200 || !strings.Contains(out, `"done"`) {
		t.Fatalf("client got %d: %.300s", resp.StatusCode, out)
	}
	cont := string(up.last())
	if !strings.Contains(cont, "is no longer available") || strings.Contains(cont, "needle-42") {
		t.Fatalf("the continuation does not say the original is gone: %s", firstMatch(cont, "expand_context: "))
	}
	t.Logf("after the restart: %s", firstMatch(cont, "expand_context: "))
	resp, _ = postChat(t, r.proxyURL, "/v1/chat/completions", body, append(auth, "x-test-expand", ids[0])...)
	if resp.StatusCode != 200 || !strings.Contains(string(up.last()), "needle-42") {
		t.Fatalf("a turn carrying the result did not keep its original again (%d)", resp.StatusCode)
	}
}

// A Redis Cluster (3 masters, 3 replicas) loses the master holding a
// session's originals mid-session. After the failover the session's
// expand_context reads the original from the promoted replica (it was
// replicated), or says in band that it is no longer available; the client
// never gets an error.
func TestFaultRedisClusterFailoverMidSession(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six redis-server processes")
	}
	c := redistest.StartCluster(t, 3, 1)
	up := &recordingUpstream{}
	r := harness{config: fmt.Sprintf("store: {type: redis, redis: {addrs: [%s], timeout: 500ms}, cooldown: 1s}", strings.Join(c.Addrs(), ", ")),
		respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, upstream: up}.start(t)
	body := openAIToolRequest(false, bigResult("needle-42", 3000))
	auth := []string{"authorization", "Bearer sk-cluster-tenant-0123456789"}
	postChat(t, r.proxyURL, "/v1/chat/completions", body, auth...)
	ids := shadowIDRE.FindAllString(string(up.last()), -1)
	if len(ids) == 0 {
		t.Fatal("no reference on the first turn")
	}
	key := c.FindKey("*:original:" + ids[0])
	c.Replicate(key)
	master := c.MasterOf(key)
	killed := time.Now()
	master.Kill()
	took := c.WaitFailover(master, 30*time.Second)
	var cont string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, out := postChat(t, r.proxyURL, "/v1/chat/completions", body, append(auth, "x-test-expand", ids[0])...)
		if resp.StatusCode != 200 || !strings.Contains(out, `"done"`) {
			t.Fatalf("client got %d: %.300s", resp.StatusCode, out)
		}
		if cont = string(up.last()); strings.Contains(cont, "needle-42") {
			break
		}
		if !strings.Contains(cont, "is no longer available") && !strings.Contains(cont, "unavailable right now") {
			t.Fatalf("neither the original nor an in-band notice: %.300s", cont)
		}
	}
	if !strings.Contains(cont, "needle-42") {
		t.Fatalf("the replicated original never came back: %s", firstMatch(cont, "expand_context: "))
	}
	t.Logf("failover %v; the session's expand_context resolved again %v after the kill", took.Round(10*time.Millisecond), time.Since(killed).Round(10*time.Millisecond))
}

// dyingStream is an upstream whose answers to continuations and replays
// stop in the middle: the connection is cut after two events.
type dyingStream struct {
	overflowFirst bool // the first answer is a context-overflow error
	calls         atomic.Int32
}

func (d *dyingStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	n := d.calls.Add(1)
	f := w.(http.Flusher)
	if n == 1 && d.overflowFirst {
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(400)
		io.WriteString(w, testenv.OpenAIContextLength.Body)
		return
	}
	w.Header().Set("content-type", "text/event-stream")
	if n == 1 {
		// Ask for the original of the first reference.
		id := shadowIDRE.Find(b)
		args, _ := json.Marshal(`{"id":"` + string(id) + `"}`)
		fmt.Fprint(w, sseChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"expand_context","arguments":`+string(args)+`}}]}`, "null"))
		fmt.Fprint(w, sseChunk(`{}`, `"tool_calls"`)+"data: [DONE]\n\n")
		return
	}
	fmt.Fprint(w, sseChunk(`{"role":"assistant","content":"part one "}`, "null"))
	fmt.Fprint(w, sseChunk(`{"content":"part two "}`, "null"))
	f.Flush()
	time.Sleep(50 * time.Millisecond)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close() // the upstream dies mid-stream
	}
}

// The upstream dies mid-stream while toolproc streams the continuation of
// an expand_context call, or the replay of an overflow recovery: the
// client's answer ends (cleanly or with a reset) within seconds, every
// event it got is whole, and no expand_context call reaches it.
func TestFaultUpstreamDiesDuringReplay(t *testing.T) {
	for _, tc := range []struct {
		name string
		up   *dyingStream
	}{
		{"expansion", &dyingStream{}},
		{"recovery replay", &dyingStream{overflowFirst: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := harness{respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, upstream: tc.up, messageTimeout: 5 * time.Second}.start(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", r.proxyURL+"/v1/chat/completions", bytes.NewReader(openAIToolRequest(true, bigResult("needle-42", 3000))))
			req.Header.Set("content-type", "application/json")
			req.Header.Set("authorization", "Bearer sk-dying-tenant-0123456789")
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Logf("request failed at once: %v", err)
				return
			}
			defer resp.Body.Close()
			events, rerr := readStream(t, resp, 10*time.Second)
			t.Logf("status %d, %d events, ended after %v (err %v), upstream calls %d", resp.StatusCode, len(events), time.Since(start).Round(time.Millisecond), rerr, tc.up.calls.Load())
			for _, e := range events {
				if strings.Contains(e, "expand_context") {
					t.Fatalf("an expand_context call reached the client: %.200s", e)
				}
			}
			if tc.up.calls.Load() < 2 {
				t.Fatalf("no replay happened (%d upstream calls)", tc.up.calls.Load())
			}
		})
	}
}

func firstMatch(s, prefix string) string {
	i := strings.Index(s, prefix)
	if i < 0 {
		return "(none)"
	}
	return s[i:min(len(s), i+160)]
}
