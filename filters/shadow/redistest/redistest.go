// Package redistest runs a real redis-server for tests.
package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startTimeout bounds how long Start and Restart wait for PING to answer.
const startTimeout = 10 * time.Second

// Server is a redis-server child process listening on 127.0.0.1.
type Server struct {
	tb   testing.TB
	bin  string
	dir  string
	port int
	args []string // more redis-server arguments (cluster mode)
	conf string   // a config file to start with (a Sentinel's)

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	out  *syncBuffer
}

// Start starts redis-server on a free 127.0.0.1 port with persistence off
// and a temporary working directory, waits until PING answers and stops it
// when the test ends. Without the binary it skips the test, unless CI=true
// or TOOLPROC_REQUIRE_REDIS=1 (make test sets it): a skipped store test is
// not a passed one, so there it fails, naming the command to run.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return start(tb, nil, freePort)
}

// lookPath finds a Redis binary, or skips (fails under CI) without it.
func lookPath(tb testing.TB, name string) string {
	tb.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("TOOLPROC_REQUIRE_REDIS") == "1" {
			tb.Fatalf("%s not installed: apt-get install -y redis-server", name)
		}
		tb.Skipf("%s not installed (apt-get install -y redis-server)", name)
	}
	return bin
}

func start(tb testing.TB, args []string, port func() (int, error)) *Server {
	tb.Helper()
	return startWith(tb, "", args, port)
}

// startWith starts redis-server with a config file first (conf may be
// empty) and args after the defaults.
func startWith(tb testing.TB, conf string, args []string, port func() (int, error)) *Server {
	tb.Helper()
	bin := lookPath(tb, "redis-server")
	s := &Server{tb: tb, bin: bin, dir: tb.TempDir(), out: &syncBuffer{}, args: args, conf: conf}
	tb.Cleanup(s.cleanup)
	// A free port can be taken between probing and binding; try a few.
	for attempt := 0; ; attempt++ {
		port, err := port()
		if err != nil {
			tb.Fatalf("redistest: find a free port: %v", err)
		}
		s.mu.Lock()
		s.port = port
		err = s.startLocked()
		s.mu.Unlock()
		if err == nil {
			return s
		}
		if attempt == 4 {
			tb.Fatalf("redistest: start redis-server: %v\n%s", err, s.out.String())
		}
	}
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Kill stops the server with SIGKILL (no shutdown, connections reset) and
// waits for it to exit. Killing a stopped server does nothing.
func (s *Server) Kill() {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
}

// Restart starts the server again on the same port, killing it first if
// it is still running. Data is not kept (persistence is off).
func (s *Server) Restart() {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
	var err error
	deadline := time.Now().Add(startTimeout)
	for {
		if err = s.startLocked(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("redistest: restart redis-server on port %d: %v\n%s", s.port, err, s.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) startLocked() error {
	var first []string
	if s.conf != "" {
		first = []string{s.conf}
	}
	cmd := exec.Command(s.bin, append(first,
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--daemonize", "no",
	)...)
	cmd.Args = append(cmd.Args, s.args...)
	cmd.Dir = s.dir
	cmd.Stdout = s.out
	cmd.Stderr = s.out
	setPdeathsig(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	if err := waitPing(s.Addr(), done); err != nil {
		s.killLocked()
		return err
	}
	return nil
}

func (s *Server) killLocked() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd, s.done = nil, nil
}

func (s *Server) cleanup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
	if s.tb.Failed() {
		if out := s.out.String(); out != "" {
			s.tb.Logf("redis-server output:\n%s", out)
		}
	}
}

// waitPing polls addr with a raw RESP PING until it answers +PONG, the
// process exits, or startTimeout passes.
func waitPing(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("redis-server exited during startup")
		default:
		}
		if last = ping(addr); last == nil {
			select {
			case <-exited: // someone else answered on this port
				return errors.New("redis-server exited during startup")
			default:
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no PONG from %s within %s: %v", addr, startTimeout, last)
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer collects the child's output; exec writes to it from its own
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.Len() > 1<<20 { // keep the tail bounded
		b.b.Reset()
	}
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
