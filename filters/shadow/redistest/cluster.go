package redistest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterNodeTimeout is cluster-node-timeout: how long a master may be
// unreachable before its replica takes over (failover takes about two of
// these).
const clusterNodeTimeout = 1000 * time.Millisecond

// Cluster is a Redis Cluster of redis-server children on 127.0.0.1.
type Cluster struct {
	tb    testing.TB
	Nodes []*Server
}

// StartCluster starts masters × (1 + replicas) nodes in cluster mode,
// joins them with `redis-cli --cluster create`, and waits until every
// slot is served and every master has its replicas in sync. Without
// redis-server or redis-cli it skips (fails under CI, as Start).
func StartCluster(tb testing.TB, masters, replicas int) *Cluster {
	tb.Helper()
	cli := lookPath(tb, "redis-cli")
	c := &Cluster{tb: tb}
	args := []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.Itoa(int(clusterNodeTimeout / time.Millisecond))}
	var addrs []string
	for range masters * (1 + replicas) {
		n := start(tb, args, clusterPort)
		c.Nodes = append(c.Nodes, n)
		addrs = append(addrs, n.Addr())
	}
	cmd := exec.Command(cli, append(append([]string{"--cluster", "create"}, addrs...),
		"--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	c.waitHealthy(30*time.Second, nil)
	return c
}

// clusterPort is a free port whose cluster bus port (+10000) is free too.
func clusterPort() (int, error) {
	for range 100 {
		p := 20000 + rand.IntN(30000)
		if free(p) && free(p+10000) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port pair")
}

func free(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Addrs are the nodes' addresses (seeds for a cluster client).
func (c *Cluster) Addrs() []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.Addr())
	}
	return out
}

// MasterOf is the node that serves key's slot now.
func (c *Cluster) MasterOf(key string) *Server {
	c.tb.Helper()
	ctx := context.Background()
	for _, n := range c.live() {
		cl := rawNode(n)
		slot, err := cl.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			cl.Close()
			continue
		}
		shards, err := cl.ClusterShards(ctx).Result()
		cl.Close()
		if err != nil {
			continue
		}
		for _, sh := range shards {
			master := shardMaster(sh)
			for _, r := range sh.Slots {
				if r.Start <= slot && slot <= r.End {
					for _, m := range c.Nodes {
						if m.Addr() == master {
							return m
						}
					}
				}
			}
		}
	}
	c.tb.Fatalf("redistest: no node serves %q", key)
	return nil
}

// WaitFailover waits until the slots of the killed master are served by a
// live node again and the cluster reports ok on every live node; it
// returns how long that took.
func (c *Cluster) WaitFailover(killed *Server, timeout time.Duration) time.Duration {
	c.tb.Helper()
	start := time.Now()
	c.waitHealthy(timeout, killed)
	return time.Since(start)
}

// waitHealthy polls until every live node says cluster_state:ok with all
// slots served by live masters, and (when killed is nil) every master has
// a replica in sync.
func (c *Cluster) waitHealthy(timeout time.Duration, killed *Server) {
	c.tb.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		ok := true
		for _, n := range c.live() {
			cl := rawNode(n)
			info, err := cl.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
				ok, last = false, fmt.Sprintf("%s: %v %s", n.Addr(), err, firstLine(info))
			}
			if ok && killed != nil {
				shards, err := cl.ClusterShards(ctx).Result()
				if err != nil || len(shards) == 0 {
					ok, last = false, fmt.Sprintf("%s: CLUSTER SHARDS: %v", n.Addr(), err)
				}
				for _, sh := range shards {
					if len(sh.Slots) > 0 && (shardMaster(sh) == "" || shardMaster(sh) == killed.Addr()) {
						ok, last = false, fmt.Sprintf("%s: a shard's slots are still on the killed master", n.Addr())
					}
				}
			}
			if ok && killed == nil {
				repl, err := cl.Info(ctx, "replication").Result()
				if err != nil || strings.Contains(repl, "role:master") && !strings.Contains(repl, "state=online") {
					ok, last = false, fmt.Sprintf("%s: replica not online", n.Addr())
				}
			}
			cl.Close()
			if !ok {
				break
			}
		}
		if ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.tb.Fatalf("redistest: cluster not healthy within %s: %s", timeout, last)
}

// live lists the nodes still running.
func (c *Cluster) live() []*Server {
	var out []*Server
	for _, n := range c.Nodes {
		n.mu.Lock()
		if n.cmd != nil {
			out = append(out, n)
		}
		n.mu.Unlock()
	}
	return out
}

func rawNode(n *Server) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: n.Addr(), Protocol: 2, DisableIdentity: true,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: time.Second, MaxRetries: -1})
}

// Replicate waits (WAIT) until the master serving key has sent its writes
// to at least one replica, so that a failover keeps them.
func (c *Cluster) Replicate(key string) {
	c.tb.Helper()
	m := rawNode(c.MasterOf(key))
	defer m.Close()
	ctx := context.Background()
	// WAIT counts this connection's writes: one write in key's slot, after
	// every earlier one in the replication stream, then WAIT for it.
	marker := "{" + key + "}~wait"
	if strings.Contains(key, "{") {
		marker = key + "~wait"
	}
	if err := m.Set(ctx, marker, "1", time.Minute).Err(); err != nil {
		c.tb.Fatalf("redistest: write before WAIT: %v", err)
	}
	n, err := m.Wait(ctx, 1, 2*time.Second).Result()
	if err != nil || n < 1 {
		c.tb.Fatalf("redistest: WAIT on the master of %q: %d replicas, %v", key, n, err)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}

// FindKey returns the first key matching pattern on any live master.
func (c *Cluster) FindKey(pattern string) string {
	c.tb.Helper()
	ctx := context.Background()
	for _, n := range c.live() {
		cl := rawNode(n)
		keys, _, err := cl.Scan(ctx, 0, pattern, 10000).Result()
		cl.Close()
		if err == nil && len(keys) > 0 {
			return keys[0]
		}
	}
	c.tb.Fatalf("redistest: no key matches %q", pattern)
	return ""
}

// shardMaster is the address of a shard's live master, "" when it has none.
func shardMaster(sh redis.ClusterShard) string {
	for _, n := range sh.Nodes {
		if n.Role == "master" && n.Health == "online" {
			return net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
		}
	}
	return ""
}
