package shadow

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolproc/toolproc/filters/shadow/redistest"
)

func newTestRedis(t testing.TB, opts RedisOptions) *Redis {
	t.Helper()
	r, err := NewRedis(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	// The store suite is about verified tenants (full TTLs, no share
	// limit); unverified ones have tests of their own.
	for _, tn := range testTenants {
		_ = r.Verify(context.Background(), tn)
	}
	return r
}

// rawClient talks to the test server directly, to look at keys and TTLs.
func rawClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRedisStore(t *testing.T) {
	srv := redistest.Start(t)
	r := newTestRedis(t, RedisOptions{Addr: srv.Addr()})
	raw := rawClient(t, srv.Addr())
	testStore(t, r, storeEnv{
		originalTTL:   DefaultOriginalTTL,
		compressedTTL: DefaultCompressedTTL,
		ttlOf: func(t *testing.T, tenant string, kind Kind, key string) time.Duration {
			d, err := raw.PTTL(context.Background(), "toolproc:{"+tenant+"}:"+string(kind)+":"+key).Result()
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
	})
}

func TestRedisStoreExpiry(t *testing.T) {
	// Real expiry with short (sub-second, so SET … PX) TTLs; about 0.7 s of sleep.
	srv := redistest.Start(t)
	r := newTestRedis(t, RedisOptions{Addr: srv.Addr(), OriginalTTL: 200 * time.Millisecond, CompressedTTL: 600 * time.Millisecond})
	testStore(t, r, storeEnv{
		originalTTL:   200 * time.Millisecond,
		compressedTTL: 600 * time.Millisecond,
		advance:       time.Sleep,
		margin:        100 * time.Millisecond,
	})
}

func TestRedisKeyFormat(t *testing.T) {
	srv := redistest.Start(t)
	raw := rawClient(t, srv.Addr())
	ctx := context.Background()
	tenant := testTenants[0]
	id := ID(tenant, []byte("content"))
	tests := []struct {
		name    string
		prefix  string
		kind    Kind
		wantKey string
		ttl     time.Duration
	}{
		{"default prefix original", "", Original, "toolproc:{" + tenant + "}:original:" + id, DefaultOriginalTTL},
		{"default prefix compressed", "", Compressed, "toolproc:{" + tenant + "}:compressed:" + id, DefaultCompressedTTL},
		{"custom prefix", "prod:tp:", Original, "prod:tp:{" + tenant + "}:original:" + id, DefaultOriginalTTL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRedis(t, RedisOptions{Addr: srv.Addr(), KeyPrefix: tt.prefix})
			if err := r.Put(ctx, tenant, tt.kind, id, []byte("value "+tt.name)); err != nil {
				t.Fatal(err)
			}
			got, err := raw.Get(ctx, tt.wantKey).Result()
			if err != nil || got != "value "+tt.name {
				t.Fatalf("GET %s = %q, %v", tt.wantKey, got, err)
			}
			ttl, err := raw.TTL(ctx, tt.wantKey).Result()
			if err != nil || ttl > tt.ttl || ttl < tt.ttl-5*time.Second {
				t.Fatalf("TTL %s = %v, %v; want about %v", tt.wantKey, ttl, err, tt.ttl)
			}
		})
	}
	// Stores with different prefixes do not see each other.
	a := newTestRedis(t, RedisOptions{Addr: srv.Addr(), KeyPrefix: "a:"})
	b := newTestRedis(t, RedisOptions{Addr: srv.Addr(), KeyPrefix: "b:"})
	if err := a.Put(ctx, tenant, Original, id, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, tenant, Original, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other prefix: %v, want ErrNotFound", err)
	}
}

func TestRedisTouchRestartsTTL(t *testing.T) {
	srv := redistest.Start(t)
	raw := rawClient(t, srv.Addr())
	ctx := context.Background()
	r := newTestRedis(t, RedisOptions{Addr: srv.Addr(), OriginalTTL: time.Hour, CompressedTTL: 2 * time.Hour})
	for _, tt := range []struct {
		kind Kind
		ttl  time.Duration
	}{{Original, time.Hour}, {Compressed, 2 * time.Hour}} {
		key := ID(testTenants[0], []byte("touch"))
		full := "toolproc:{" + testTenants[0] + "}:" + string(tt.kind) + ":" + key
		if err := r.Put(ctx, testTenants[0], tt.kind, key, []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := raw.PExpire(ctx, full, 5*time.Second).Err(); err != nil {
			t.Fatal(err)
		}
		if err := r.Touch(ctx, testTenants[0], tt.kind, key); err != nil {
			t.Fatal(err)
		}
		if d := raw.PTTL(ctx, full).Val(); d > tt.ttl || d < tt.ttl-5*time.Second {
			t.Fatalf("%s TTL after Touch = %v, want about %v", tt.kind, d, tt.ttl)
		}
	}
}

func TestRedisReplicas(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	replicas := []*Redis{
		newTestRedis(t, RedisOptions{Addr: srv.Addr()}),
		newTestRedis(t, RedisOptions{Addr: srv.Addr()}),
	}
	ta, tb := testTenants[0], testTenants[1]
	content := []byte("tool result compressed by replica 0")
	id := ID(ta, content) // every replica computes the same id
	if err := replicas[0].Put(ctx, ta, Original, id, content); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		replica int
		tenant  string
		want    string // "" means ErrNotFound
	}{
		{"writer reads", 0, ta, string(content)},
		{"other replica reads", 1, ta, string(content)},
		{"other tenant on other replica", 1, tb, ""},
		{"other tenant on writer", 0, tb, ""},
	}
	for _, tt := range tests {
		got, err := replicas[tt.replica].Get(ctx, tt.tenant, Original, id)
		switch {
		case tt.want == "" && !errors.Is(err, ErrNotFound):
			t.Errorf("%s: %q, %v; want ErrNotFound", tt.name, got, err)
		case tt.want != "" && (err != nil || string(got) != tt.want):
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

// failFast is how long a store operation may take against a broken Redis.
const failFast = 1500 * time.Millisecond

func checkFails(t *testing.T, s Store, what string) {
	t.Helper()
	ctx := context.Background()
	id := ID(testTenants[0], []byte(what))
	start := time.Now()
	err := s.Put(ctx, testTenants[0], Original, id, []byte("v"))
	if el := time.Since(start); err == nil || el > failFast || errors.Is(err, ErrNotFound) {
		t.Errorf("%s: Put = %v after %v; want a non-NotFound error within %v", what, err, el, failFast)
	}
	start = time.Now()
	_, err = s.Get(ctx, testTenants[0], Original, id)
	if el := time.Since(start); err == nil || el > failFast || errors.Is(err, ErrNotFound) {
		t.Errorf("%s: Get = %v after %v; want a non-NotFound error within %v", what, err, el, failFast)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "shadow: redis ") {
		t.Errorf("%s: error %q lacks context", what, err)
	}
	start = time.Now()
	err = Keep(ctx, s, testTenants[0], Original, id, []byte("v"))
	if el := time.Since(start); err == nil || el > failFast || errors.Is(err, ErrNotFound) {
		t.Errorf("%s: Keep = %v after %v; want a non-NotFound error within %v", what, err, el, failFast)
	}
}

func TestRedisServerKilled(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	r := newTestRedis(t, RedisOptions{Addr: srv.Addr()})
	id := ID(testTenants[0], []byte("before kill"))
	if err := r.Put(ctx, testTenants[0], Original, id, []byte("v")); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	for i := range 3 { // repeated failures stay fast (pooled conns, then dials)
		checkFails(t, r, "killed "+string(rune('0'+i)))
	}
	if err := r.Ping(ctx); err == nil {
		t.Error("Ping succeeded against a killed server")
	}

	// Redis comes back (empty: persistence is off); the store recovers
	// without being recreated.
	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := r.Put(ctx, testTenants[0], Original, id, []byte("after"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store did not recover after restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got, err := r.Get(ctx, testTenants[0], Original, id); err != nil || string(got) != "after" {
		t.Fatalf("after restart: %q, %v", got, err)
	}
}

func TestRedisUnresponsive(t *testing.T) {
	// A server that accepts connections and never answers (a stalled
	// Redis, a black-holing proxy): operations must still end quickly.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	_ = closed.Close()

	tests := []struct {
		name string
		opts RedisOptions
	}{
		{"silent server", RedisOptions{Addr: l.Addr().String()}},
		{"silent server, no retries", RedisOptions{Addr: l.Addr().String(), MaxRetries: -1}},
		{"nobody listening", RedisOptions{Addr: closedAddr}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkFails(t, newTestRedis(t, tt.opts), tt.name)
		})
	}
}

func TestRedisCallerDeadline(t *testing.T) {
	// A caller deadline shorter than OpTimeout wins.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	r := newTestRedis(t, RedisOptions{Addr: l.Addr().String(), OpTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = r.Get(ctx, testTenants[0], Original, "k")
	if el := time.Since(start); err == nil || el > time.Second {
		t.Fatalf("Get = %v after %v; want an error soon after 100ms", err, el)
	}
	if !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Logf("error (not a deadline error, but bounded): %v", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestNewRedisOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    RedisOptions
		wantErr bool
	}{
		{"no address", RedisOptions{}, true},
		{"negative db", RedisOptions{Addr: "127.0.0.1:1", DB: -1}, true},
		{"minimal", RedisOptions{Addr: "127.0.0.1:1"}, false},
		{"everything", RedisOptions{Addr: "127.0.0.1:1", Username: "u", Password: "p", DB: 2, KeyPrefix: "x:",
			OriginalTTL: time.Minute, CompressedTTL: time.Hour, DialTimeout: time.Second, OpTimeout: time.Second, MaxRetries: 2}, false},
	}
	for _, tt := range tests {
		r, err := NewRedis(tt.opts)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v, wantErr %v", tt.name, err, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", tt.name, err)
		}
		if r != nil {
			if err := r.Close(); err != nil {
				t.Errorf("%s: Close: %v", tt.name, err)
			}
			if err := r.Close(); err != nil {
				t.Errorf("%s: second Close: %v", tt.name, err)
			}
		}
	}
}

func TestRedisPingAndClose(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	r, err := NewRedis(RedisOptions{Addr: srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Put(ctx, testTenants[0], Original, "k", []byte("v")); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("Put after Close: %v", err)
	}
}

// Replicas sharing a Redis agree on the deployment secret, whichever asks
// first; another key prefix is another deployment.
func TestRedisSharedSecret(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a := newTestRedis(t, RedisOptions{Addr: srv.Addr()})
	b := newTestRedis(t, RedisOptions{Addr: srv.Addr()})
	other := newTestRedis(t, RedisOptions{Addr: srv.Addr(), KeyPrefix: "elsewhere:"})
	sa, err := a.SharedSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.SharedSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	so, err := other.SharedSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(sa) != string(sb) || len(sa) < 32 || string(sa) == string(so) {
		t.Fatalf("secrets: a=%q b=%q other=%q", sa, sb, so)
	}
	if again, _ := a.SharedSecret(ctx); string(again) != string(sa) {
		t.Fatal("secret changed on a second read")
	}
}
