package extproc

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/metadata"
)

// syncBuffer is a log sink the watcher goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

const strictProfile = "profiles: {strict: {clamp: {max_bytes: %d}}}\n"

// watched starts a server on the config in a temporary file and watches it.
func watched(t *testing.T, interval time.Duration) (s *Server, path string, reg *prometheus.Registry, logs *syncBuffer) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "toolproc.yaml")
	writeConfig(t, path, strings.Replace(strictProfile, "%d", "4096", 1), time.Now().Add(-time.Hour))
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	reg = prometheus.NewRegistry()
	s = NewServer(cfg, nil, reg)
	t.Cleanup(func() { _ = s.Close() })
	logs = &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	WatchConfig(ctx, s, ReloadOptions{Path: path, Interval: interval}, reg, slog.New(slog.NewTextHandler(logs, nil)))
	return s, path, reg, logs
}

// writeConfig replaces the file as deployment tools do (write a temporary
// file, rename it over), with an explicit modification time so that a change
// is visible whatever the file system's timestamp granularity.
func writeConfig(t *testing.T, path, text string, mtime time.Time) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func strictMaxBytes(s *Server) int {
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(ProfileMetadataKey, "strict"))
	return s.profileFor(ctx).Clamp.MaxBytes
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReloadOnFileChange: a valid new file swaps the profiles for new
// exchanges while a profile already handed to an exchange keeps its
// values; a bad file keeps the running config, and the error is logged and
// counted.
func TestReloadOnFileChange(t *testing.T) {
	s, path, reg, logs := watched(t, 10*time.Millisecond)
	inFlight := s.profileFor(metadata.NewIncomingContext(context.Background(), metadata.Pairs(ProfileMetadataKey, "strict")))
	if strictMaxBytes(s) != 4096 {
		t.Fatalf("strict max_bytes %d at start", strictMaxBytes(s))
	}
	writeConfig(t, path, strings.Replace(strictProfile, "%d", "2048", 1), time.Now())
	waitFor(t, "the new profile", func() bool { return strictMaxBytes(s) == 2048 })
	if inFlight.Clamp.MaxBytes != 4096 {
		t.Fatalf("the in-flight exchange's profile changed to %d", inFlight.Clamp.MaxBytes)
	}
	// The swap is seen before the line that reports it is written.
	waitFor(t, "the reload to be logged", func() bool { return strings.Contains(logs.String(), "config reloaded") })

	writeConfig(t, path, "profiles: {strict: {clamp: {max_byte: 10}}}\n", time.Now().Add(time.Second))
	waitFor(t, "the error to be logged", func() bool { return strings.Contains(logs.String(), "config reload failed") })
	if !strings.Contains(logs.String(), "max_byte") {
		t.Fatalf("the log does not name the bad key: %s", logs)
	}
	if got := strictMaxBytes(s); got != 2048 {
		t.Fatalf("a bad file changed the running profile to %d", got)
	}
	if n := testutil.ToFloat64(mustCounter(t, reg, "error")); n != 1 {
		t.Fatalf("reloads{error} = %v, want 1", n)
	}
	if n := testutil.ToFloat64(mustCounter(t, reg, "ok")); n != 1 {
		t.Fatalf("reloads{ok} = %v, want 1", n)
	}

	// An empty file (one caught between truncate and write) is refused.
	writeConfig(t, path, "", time.Now().Add(2*time.Second))
	waitFor(t, "the empty file to be refused", func() bool { return strings.Contains(logs.String(), "empty file") })
	if got := strictMaxBytes(s); got != 2048 {
		t.Fatalf("an empty file changed the running profile to %d", got)
	}
}

// TestReloadOnSIGHUP: with polling off, SIGHUP reloads; a change outside the
// profiles is reported as needing a restart and not applied.
func TestReloadOnSIGHUP(t *testing.T) {
	s, path, _, logs := watched(t, 0)
	writeConfig(t, path, strings.Replace(strictProfile, "%d", "1024", 1)+"store: {max_bytes: 300000000}\n", time.Now())
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the SIGHUP reload", func() bool { return strictMaxBytes(s) == 1024 })
	waitFor(t, "the restart warning", func() bool { return strings.Contains(logs.String(), "take effect on restart only") })
	if !strings.Contains(logs.String(), "sections=[store]") {
		t.Fatalf("the warning does not name the store section: %s", logs)
	}
	if s.cfg.Store.MaxBytes == 300000000 {
		t.Fatal("the store section was applied without a restart")
	}
}

// mustCounter is toolproc_config_reloads_total{outcome}.
func mustCounter(t *testing.T, reg *prometheus.Registry, outcome string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "toolproc_config_reloads_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == outcome {
				c := prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})
				c.Add(m.GetCounter().GetValue())
				return c
			}
		}
	}
	t.Fatalf("no toolproc_config_reloads_total{outcome=%q}", outcome)
	return nil
}
