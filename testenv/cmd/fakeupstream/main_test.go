package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolproc/toolproc/testenv"
)

// TestFakeUpstreamProcess: the upstream answers, a named script applies, and the admin
// listener returns exactly the requests carrying a tag; -probe is the healthcheck.
func TestFakeUpstreamProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := make(chan [2]net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0"}, slog.New(slog.DiscardHandler),
			func(up, admin net.Addr) { addrs <- [2]net.Addr{up, admin} })
	}()
	var a [2]net.Addr
	select {
	case a = <-addrs:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(5 * time.Second):
		t.Fatal("not ready")
	}
	up, admin := "http://"+a[0].String(), "http://"+a[1].String()
	post := func(tag, script string) string {
		req, _ := http.NewRequest(http.MethodPost, up+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[]}`))
		req.Header.Set(testenv.TagHeader, tag)
		if script != "" {
			req.Header.Set(testenv.ScriptHeader, script)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := post("a", ""); !strings.Contains(got, `"chat.completion"`) {
		t.Fatalf("default answer: %s", got)
	}
	if got := post("b", "plain-ok"); got != `{"ok":true}` {
		t.Fatalf("plain-ok script: %s", got)
	}
	post("a", "")
	reqs, err := testenv.RemoteUpstream{Admin: admin, Tag: "a"}.Requests()
	if err != nil || len(reqs) != 2 || reqs[0].Path != "/v1/chat/completions" || string(reqs[0].Body) != `{"model":"m","messages":[]}` {
		t.Fatalf("tag a: %d requests, %v", len(reqs), err)
	}
	if err := probeURL(ctx, admin+"/healthz"); err != nil {
		t.Fatal(err)
	}
	if err := probeURL(ctx, admin+"/nope"); err == nil {
		t.Fatal("probe of a 404 succeeded")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
