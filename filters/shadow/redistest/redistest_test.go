package redistest

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestStartKillRestart(t *testing.T) {
	s := Start(t)
	if err := ping(s.Addr()); err != nil {
		t.Fatalf("PING after Start: %v", err)
	}
	if host, _, err := net.SplitHostPort(s.Addr()); err != nil || host != "127.0.0.1" {
		t.Fatalf("Addr = %q", s.Addr())
	}
	s.Kill()
	if err := ping(s.Addr()); err == nil {
		t.Fatal("PING answered after Kill")
	}
	s.Kill() // no-op
	s.Restart()
	if err := ping(s.Addr()); err != nil {
		t.Fatalf("PING after Restart: %v", err)
	}
	s.Restart() // restart a running server
	if err := ping(s.Addr()); err != nil {
		t.Fatalf("PING after second Restart: %v", err)
	}
}

func TestTwoServers(t *testing.T) {
	a, b := Start(t), Start(t)
	if a.Addr() == b.Addr() {
		t.Fatalf("two servers on %s", a.Addr())
	}
	a.Kill()
	if err := ping(b.Addr()); err != nil {
		t.Fatalf("killing one server stopped the other: %v", err)
	}
}

func TestWaitPingGivesUpWhenProcessExits(t *testing.T) {
	exited := make(chan struct{})
	close(exited)
	start := time.Now()
	if err := waitPing("127.0.0.1:1", exited); err == nil {
		t.Fatal("waitPing succeeded")
	}
	if time.Since(start) > time.Second {
		t.Fatal("waitPing did not notice the exit")
	}
}

func TestMissingBinary(t *testing.T) {
	if os.Getenv("REDISTEST_CHILD") == "1" {
		Start(t)
		t.Fatal("Start returned without redis-server on PATH")
	}
	tests := []struct {
		ci, require string
		want        string
		fails       bool
	}{
		{"", "", "--- SKIP: TestMissingBinary", false},
		{"false", "", "--- SKIP: TestMissingBinary", false},
		{"true", "", "redis-server not installed: apt-get install -y redis-server", true},
		// make test sets TOOLPROC_REQUIRE_REDIS=1: a skipped store test is
		// not a passed one.
		{"", "1", "redis-server not installed: apt-get install -y redis-server", true},
	}
	for _, tt := range tests {
		t.Run("CI="+tt.ci+"/require="+tt.require, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMissingBinary$", "-test.v")
			cmd.Env = append(os.Environ(), "REDISTEST_CHILD=1", "PATH="+t.TempDir(), "CI="+tt.ci, "TOOLPROC_REQUIRE_REDIS="+tt.require)
			out, err := cmd.CombinedOutput()
			if !strings.Contains(string(out), tt.want) {
				t.Fatalf("output lacks %q:\n%s", tt.want, out)
			}
			if failed := err != nil; failed != tt.fails {
				t.Fatalf("child failed = %v (%v), want %v:\n%s", failed, err, tt.fails, out)
			}
		})
	}
}
