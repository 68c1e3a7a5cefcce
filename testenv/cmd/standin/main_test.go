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

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, env(map[string]string{"UPSTREAM": "http://up", "RESPONSE_BODY_MODE": "STREAMED"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.upstream != "http://up" || o.responseBodyMode != "STREAMED" || o.listen != "127.0.0.1:10000" || o.bufferLimit != 33554432 || o.messageTimeout != 10*time.Second {
		t.Fatalf("defaults %+v", o)
	}
	o, err = parseFlags([]string{"-upstream", "http://flag", "-response-body-mode", "BUFFERED", "-profile", "p1", "-failure-mode-allow"}, env(map[string]string{"UPSTREAM": "http://up"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.upstream != "http://flag" || o.responseBodyMode != "BUFFERED" || o.profile != "p1" || !o.failureModeAllow {
		t.Fatalf("flags do not win over the environment: %+v", o)
	}
	if _, err := parseFlags([]string{"extra"}, env(nil), io.Discard); err == nil {
		t.Fatal("stray arguments accepted")
	}
}

func TestProcessingMode(t *testing.T) {
	tests := []struct {
		req, resp          string
		reqTrail, rspTrail extprocfilterv3.ProcessingMode_HeaderSendMode
		wantErr            bool
	}{
		{"BUFFERED", "FULL_DUPLEX_STREAMED", 0, extprocfilterv3.ProcessingMode_SEND, false},
		{"FULL_DUPLEX_STREAMED", "STREAMED", extprocfilterv3.ProcessingMode_SEND, 0, false},
		{"BUFFERED", "BOGUS", 0, 0, true},
	}
	for _, tc := range tests {
		m, err := options{requestBodyMode: tc.req, responseBodyMode: tc.resp}.processingMode()
		if (err != nil) != tc.wantErr {
			t.Fatalf("%s/%s: err %v", tc.req, tc.resp, err)
		}
		if err == nil && (m.GetRequestTrailerMode() != tc.reqTrail || m.GetResponseTrailerMode() != tc.rspTrail) {
			t.Fatalf("%s/%s: trailer modes %v", tc.req, tc.resp, m)
		}
	}
}

// The command starts with no processor listening (the gRPC dial is lazy), serves through the fake
// upstream, fails open when asked to, and stops when its context ends.
func TestRunServesAndStops(t *testing.T) {
	// A processor that resets every connection: unreachable, and immune to port reuse.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	deadProc := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan map[string]net.Addr, 1)
	done := make(chan error, 1)
	args := []string{"-listen", "127.0.0.1:0", "-replay-listen", "127.0.0.1:0", "-fake-upstream-listen", "127.0.0.1:0",
		"-extproc", deadProc, "-failure-mode-allow", "-profile", "test"}
	go func() {
		done <- run(ctx, args, env(nil), slog.New(slog.NewTextHandler(io.Discard, nil)), func(a map[string]net.Addr) { ready <- a })
	}()
	var addrs map[string]net.Addr
	select {
	case addrs = <-ready:
	case err := <-done:
		t.Fatalf("run: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("not ready")
	}
	for _, name := range []string{"listen", "replay-listen"} {
		resp, err := http.Post("http://"+addrs[name].String()+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), "chat.completion") {
			t.Fatalf("%s: %d %s", name, resp.StatusCode, b)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop")
	}
}
