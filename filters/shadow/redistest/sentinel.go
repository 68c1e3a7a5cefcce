package redistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the master set StartSentinel's Sentinel watches.
const MasterName = "toolproc-test"

// Sentinel is a master, one replica, and one Sentinel that fails over to
// the replica a second after the master stops answering.
type Sentinel struct {
	tb       testing.TB
	Master   *Server
	Replica  *Server
	Sentinel *Server
}

// StartSentinel starts the three processes and waits until the Sentinel
// knows the replica. Without redis-server it skips (fails under CI).
func StartSentinel(tb testing.TB) *Sentinel {
	tb.Helper()
	master := Start(tb)
	replica := start(tb, []string{"--replicaof", "127.0.0.1", strconv.Itoa(master.port)}, freePort)
	dir := tb.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(
		"sentinel monitor %s 127.0.0.1 %d 1\nsentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 5000\n",
		MasterName, master.port, MasterName, MasterName)), 0o600); err != nil {
		tb.Fatal(err)
	}
	// A Sentinel rewrites its config file, so the file must come first
	// and be writable.
	sentinel := startWith(tb, conf, []string{"--sentinel"}, freePort)
	s := &Sentinel{tb: tb, Master: master, Replica: replica, Sentinel: sentinel}
	ctx := context.Background()
	c := redis.NewSentinelClient(&redis.Options{Addr: sentinel.Addr(), Protocol: 2, DisableIdentity: true})
	defer c.Close()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		reps, err := c.Replicas(ctx, MasterName).Result()
		if err == nil && len(reps) > 0 {
			return s
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: the Sentinel does not see the replica: %v", err)
		}
	}
}

// WaitFailover waits until the Sentinel names another master than the
// killed one and that node answers as a master; it returns how long that
// took.
func (s *Sentinel) WaitFailover(killed *Server, timeout time.Duration) time.Duration {
	s.tb.Helper()
	start := time.Now()
	ctx := context.Background()
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Sentinel.Addr(), Protocol: 2, DisableIdentity: true})
	defer c.Close()
	for time.Since(start) < timeout {
		addr, err := c.GetMasterAddrByName(ctx, MasterName).Result()
		if err == nil && len(addr) == 2 && addr[1] != strconv.Itoa(killed.port) {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.tb.Fatalf("redistest: no failover within %v", timeout)
	return 0
}
