package shadow

import (
	"context"
	"testing"
	"time"

	"github.com/toolproc/toolproc/filters/shadow/redistest"
)

// The store behind Sentinel (a master, a replica, one Sentinel): after the
// master dies the Sentinel promotes the replica, and the store, which asks
// the Sentinel where the master is, reads an original written before.
func TestRedisSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three redis-server processes")
	}
	s := redistest.StartSentinel(t)
	ctx := context.Background()
	r := newTestRedis(t, RedisOptions{Addrs: []string{s.Sentinel.Addr()}, MasterName: redistest.MasterName, OpTimeout: 3 * time.Second})
	tn := testTenants[0]
	v := []byte("an original before the failover")
	id := ID(tn, v)
	if err := r.Put(ctx, tn, Original, id, v); err != nil {
		t.Fatal(err)
	}
	// Wait until the replica has the write (WAIT counts this
	// connection's writes: one of its own, after the store's).
	raw := rawClient(t, s.Master.Addr())
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_ = raw.Set(ctx, "wait-marker", "1", time.Minute).Err()
		if n, err := raw.Wait(ctx, 1, time.Second).Result(); err == nil && n >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica never caught up")
		}
	}
	s.Master.Kill()
	took := s.WaitFailover(s.Master, 30*time.Second)
	start := time.Now()
	var got []byte
	var err error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got, err = r.Get(ctx, tn, Original, id); err == nil {
			break
		}
	}
	if err != nil || string(got) != string(v) {
		t.Fatalf("after the Sentinel failover: %q, %v", got, err)
	}
	if err := r.Put(ctx, tn, Original, "after", []byte("x")); err != nil {
		t.Fatalf("write after the failover: %v", err)
	}
	t.Logf("Sentinel promoted the replica %v after the kill; the store read the original %v later", took.Round(10*time.Millisecond), time.Since(start).Round(10*time.Millisecond))
}
