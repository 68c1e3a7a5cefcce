package shadow

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolproc/toolproc/filters/shadow/redistest"
)

// The store on a real 3-master, 3-replica Redis Cluster: entries of many
// tenants spread over the masters, a tenant's entries and verification
// keys share a slot (the tenant is the hash tag), and after the master of
// a tenant's slot is killed its replica takes over and the entries that
// had reached it still read back. Entries written while no master served
// the slot are refused with an error, never answered wrongly.
func TestRedisClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six redis-server processes")
	}
	c := redistest.StartCluster(t, 3, 1)
	ctx := context.Background()
	r := newTestRedis(t, RedisOptions{Addrs: c.Addrs()})
	masters := map[string]bool{}
	ids := map[string]string{}
	for i := range 12 {
		tn := fmt.Sprintf("tenant%02d", i)
		v := []byte("original of " + tn)
		id := ID(tn, v)
		if err := r.Put(ctx, tn, Original, id, v); err != nil {
			t.Fatal(err)
		}
		if err := r.Verify(ctx, tn); err != nil {
			t.Fatal(err)
		}
		ids[tn] = id
		masters[c.MasterOf(r.key(tn, Original, id)).Addr()] = true
		// The tenant's keys share one slot: the scripts ran, no CROSSSLOT.
		if a, b := c.MasterOf(r.key(tn, Original, id)), c.MasterOf(r.tenantKey(tn, verifiedSuffix)); a != b {
			t.Fatalf("%s: entry and verification on different nodes", tn)
		}
	}
	if len(masters) < 2 {
		t.Fatalf("12 tenants on %d master(s): keys are not spread", len(masters))
	}
	victim := "tenant00"
	key := r.key(victim, Original, ids[victim])
	c.Replicate(key)
	master := c.MasterOf(key)
	master.Kill()
	took := c.WaitFailover(master, 30*time.Second)
	t.Logf("master of %s's slot killed; its replica serves the slot %v later", victim, took.Round(10*time.Millisecond))
	// The client finds the new master (its first error reloads the slot
	// map); until then a read is an error, never another value.
	var v []byte
	var err error
	start := time.Now()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		t0 := time.Now()
		if v, err = r.Get(ctx, victim, Original, ids[victim]); err == nil {
			break
		}
		t.Logf("%v: %v (%v)", time.Since(start).Round(time.Millisecond), err, time.Since(t0).Round(time.Millisecond))
	}
	if err != nil || string(v) != "original of "+victim {
		t.Fatalf("after failover: %q, %v", v, err)
	}
	t.Logf("the store reads the original again %v after the failover", time.Since(start).Round(10*time.Millisecond))
	for tn, id := range ids {
		if _, err := r.Get(ctx, tn, Original, id); err != nil && !errors.Is(err, ErrNotFound) {
			t.Errorf("%s after failover: %v", tn, err)
		}
	}
}
