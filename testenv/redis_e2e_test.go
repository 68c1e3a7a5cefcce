package testenv_test

// Two toolproc processes (the real binary) behind two stand-ins share one
// real redis-server: an id one creates, the other expands; another tenant
// cannot; and killing Redis mid-run fails no request.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"

	"github.com/toolproc/toolproc/filters/shadow/redistest"
	"github.com/toolproc/toolproc/testenv"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// toolprocBinary builds the toolproc command once per test run.
func toolprocBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolproc-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "toolproc")
		cmd := exec.Command("go", "build", "-o", binPath, "..")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// toolprocProcess runs the binary with a Redis store and returns its gRPC
// and admin addresses once /readyz answers.
func toolprocProcess(t *testing.T, name, redisAddr, replayURL string) (grpcAddr, adminAddr string) {
	t.Helper()
	grpcAddr, adminAddr = freeAddr(t), freeAddr(t)
	cfg := fmt.Sprintf(`server: {grpc_addr: %q, admin_addr: %q, replay_url: %q}
log: {level: warn}
store: {type: redis, redis: {addr: %q}, cooldown: 1s}
`, grpcAddr, adminAddr, replayURL, redisAddr)
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(toolprocBinary(t), "serve", "--config", path)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s logs:\n%s", name, logs.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + adminAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return grpcAddr, adminAddr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not become ready: %v\n%s", name, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// standIn is a stand-in in front of one toolproc process.
func standIn(t *testing.T, grpcAddr, upstreamURL string) string {
	t.Helper()
	p, err := testenv.NewProxy(testenv.ProxyConfig{
		ExtProcAddr: grpcAddr,
		UpstreamURL: upstreamURL,
		Mode: &extprocfilterv3.ProcessingMode{
			RequestHeaderMode:   extprocfilterv3.ProcessingMode_SEND,
			RequestBodyMode:     extprocfilterv3.ProcessingMode_BUFFERED,
			ResponseHeaderMode:  extprocfilterv3.ProcessingMode_SEND,
			ResponseBodyMode:    extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED,
			ResponseTrailerMode: extprocfilterv3.ProcessingMode_SEND,
		},
		MessageTimeout:    20 * time.Second,
		MaxMessageTimeout: 5 * time.Minute,
		BufferLimit:       32 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	s := httptest.NewServer(p)
	t.Cleanup(s.Close)
	return s.URL
}

func scrape(t *testing.T, adminAddr string) string {
	t.Helper()
	resp, err := http.Get("http://" + adminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

var refID = regexp.MustCompile(`shadow_id=(sh_[0-9a-f]{32})`)

func TestTwoProcessesShareRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the toolproc binary")
	}
	redis := redistest.Start(t)
	up := testenv.NewFakeUpstream()
	var mu sync.Mutex
	model := testenv.ExpandModel{Needle: needle}
	plain := false // answer without expanding: the request side only
	up.SetScript(func(r testenv.RecordedRequest) *testenv.ScriptedResponse {
		mu.Lock()
		m, p := model, plain
		mu.Unlock()
		if p {
			return nil // the default answer
		}
		return m.Script()(r)
	})
	setModel := func(m testenv.ExpandModel, p bool) {
		mu.Lock()
		model, plain = m, p
		mu.Unlock()
	}
	upSrv := httptest.NewServer(up)
	t.Cleanup(upSrv.Close)
	replay, err := testenv.NewProxy(testenv.ProxyConfig{UpstreamURL: upSrv.URL, BufferLimit: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	replaySrv := httptest.NewServer(replay)
	t.Cleanup(replaySrv.Close)

	grpcA, adminA := toolprocProcess(t, "toolproc-a", redis.Addr(), replaySrv.URL)
	grpcB, adminB := toolprocProcess(t, "toolproc-b", redis.Addr(), replaySrv.URL)
	proxyA, proxyB := standIn(t, grpcA, upSrv.URL), standIn(t, grpcB, upSrv.URL)
	log := pytestLog()

	// 1. Replica A compresses: the original goes to Redis under tenant a.
	setModel(model, true)
	up.Reset()
	a := anthropicClientCall(t, proxyA, "sk-ant-tenant-a", false, anthropicToolRequest(false, log))
	if a.text == "" {
		t.Fatal("no answer from replica A")
	}
	sm := refID.FindStringSubmatch(string(up.Requests()[0].Body))
	if sm == nil {
		t.Fatal("replica A did not compress with a reference")
	}
	id := sm[1]

	// 2. Replica B sees the same conversation: it reuses A's compressed
	// result (cache hit, same id), and expands A's original.
	setModel(model, false)
	up.Reset()
	b := anthropicClientCall(t, proxyB, "sk-ant-tenant-a", true, anthropicToolRequest(true, log))
	if !strings.Contains(b.text, needle) || strings.Contains(b.raw, "expand_context") {
		t.Fatalf("replica B did not expand A's id: %q", b.text)
	}
	if got := refID.FindStringSubmatch(string(up.Requests()[0].Body)); got == nil || got[1] != id {
		t.Fatalf("replica B made a different id: %v, want %s", got, id)
	}
	mb := scrape(t, adminB)
	for _, want := range []string{`toolproc_compress_cache_total{result="hit"} 1`, `toolproc_expansions_total{dialect="anthropic",outcome="resolved"} 1`} {
		if !strings.Contains(mb, want) {
			t.Errorf("replica B metrics lack %s", want)
		}
	}

	// 3. Another tenant asking for tenant a's id gets "not found".
	setModel(testenv.ExpandModel{Needle: needle, ForceID: id}, false)
	up.Reset()
	c := anthropicClientCall(t, proxyB, "sk-ant-tenant-b", false, anthropicToolRequest(false, log))
	if strings.Contains(c.text, needle) {
		t.Fatalf("tenant b read tenant a's original: %q", c.text)
	}
	reqs := up.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "is no longer available") {
		t.Fatalf("tenant b's continuation should carry the not-found answer (%d requests)", len(reqs))
	}

	// 4. Redis dies mid-run: every request still succeeds, compression
	// degrades to the clamp.
	setModel(model, true)
	up.Reset()
	const n = 16
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		if i == n/4 {
			redis.Kill()
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			proxy := proxyA
			if i%2 == 1 {
				proxy = proxyB
			}
			body := anthropicToolRequest(i%3 == 0, log)
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, proxy+"/v1/messages", bytes.NewReader(body))
			req.Header.Set("x-api-key", "sk-ant-tenant-a")
			req.Header.Set("content-type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != http.StatusOK {
				errs <- fmt.Errorf("request %d: status %d", i, resp.StatusCode)
			}
		}(i)
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(up.Requests()); got != n {
		t.Errorf("upstream got %d requests, want %d", got, n)
	}
	for _, r := range up.Requests()[n/4+2:] {
		if len(r.Body) > 60_000 {
			t.Errorf("a request after the kill reached the upstream unclamped (%d bytes)", len(r.Body))
		}
	}
	if !strings.Contains(scrape(t, adminA)+scrape(t, adminB), `toolproc_store_errors_total{op="compress"}`) {
		t.Error("no store error counted after Redis died")
	}
}
