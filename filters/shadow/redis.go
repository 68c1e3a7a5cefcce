package shadow

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// RedisOptions configures NewRedis. Zero values take the defaults.
type RedisOptions struct {
	// Addr is one server's host:port. Addrs lists a Redis Cluster's seed
	// nodes, or the Sentinels when MasterName is set; one of the two is
	// required (Addr joins Addrs when both are set).
	Addr  string
	Addrs []string
	// MasterName selects Sentinel: the master set the Sentinels at Addrs
	// watch; writes follow a failover.
	MasterName string
	// Cluster selects Redis Cluster even with a single seed address (a
	// cluster's configuration endpoint). Several Addrs without MasterName
	// select it too.
	Cluster          bool
	Username         string // ACL user; empty for the default user
	Password         string
	SentinelPassword string
	DB               int // 0 in a cluster
	// KeyPrefix starts every key; default "toolproc:". Keys are
	// {prefix}{tenant}:{kind}:{key}, the tenant in braces: a Redis Cluster
	// hashes only the braced part, so a tenant's entries and its
	// verification keys share a slot and one script can update them.
	KeyPrefix string
	// OriginalTTL and CompressedTTL: defaults 5 h and 24 h, set on every
	// Put (SET … EX/PX).
	OriginalTTL, CompressedTTL time.Duration
	// Short defaults (200 ms each) so a dead Redis never stalls a request.
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// OpTimeout bounds one Put or Get as a whole, retries and pool waits
	// included, unless the caller's context ends earlier. Default
	// DialTimeout+WriteTimeout+ReadTimeout (600 ms with the defaults).
	OpTimeout time.Duration
	// MaxRetries after a failed command: default 1; negative disables.
	MaxRetries int
	// TLSConfig enables TLS when non-nil.
	TLSConfig *tls.Config
	// UnverifiedMaxBytes caps what a tenant no answer for has come back
	// 2xx yet may write (Verify lifts it); default
	// DefaultUnverifiedMaxBytes. Its entries live UnverifiedTTL (default
	// 15 min) until Verify gives them their kind's TTL, so with
	// maxmemory-policy volatile-ttl they are also evicted first.
	UnverifiedMaxBytes int64
	UnverifiedTTL      time.Duration
	// VerifiedTTL is how long a Verify lasts; default OriginalTTL.
	VerifiedTTL time.Duration
}

// DefaultUnverifiedTTL is how long an unverified tenant's entries live.
const DefaultUnverifiedTTL = 15 * time.Minute

// DefaultKeyPrefix starts Redis keys unless RedisOptions.KeyPrefix is set.
const DefaultKeyPrefix = "toolproc:"

const defaultRedisTimeout = 200 * time.Millisecond

// Redis is a Store on a Redis server shared by several toolproc replicas:
// a shadow id written by one replica resolves on every other. Entries
// expire through key TTLs; the byte cap is the server's maxmemory (use an
// LRU maxmemory-policy such as allkeys-lru or volatile-lru). Errors other
// than a missing key are wrapped with the operation and never include
// values. It is safe for concurrent use.
type Redis struct {
	c          redis.UniversalClient
	prefix     string
	ttl        [2]time.Duration
	opTimeout  time.Duration
	unverified int64
	unvTTL     time.Duration
	verTTL     time.Duration
	// verifiedUntil caches Verify per tenant (tenant → unix nanos) so a
	// busy tenant costs one script per half VerifiedTTL, not one per
	// answer; at most maxVerified tenants (conversation tenants come and go).
	mu            sync.Mutex
	verifiedUntil map[string]int64
}

// NewRedis returns a client for one server, a Redis Cluster or a Sentinel
// master set (see RedisOptions). It does not contact the servers
// (toolproc must start while Redis is down); use Ping for readiness.
func NewRedis(opts RedisOptions) (*Redis, error) {
	addrs := opts.Addrs
	if opts.Addr != "" {
		addrs = append([]string{opts.Addr}, addrs...)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: redis address is empty", ErrInvalid)
	}
	cluster := opts.MasterName == "" && (opts.Cluster || len(addrs) > 1)
	if cluster && opts.DB != 0 {
		return nil, fmt.Errorf("%w: redis cluster has only db 0, got %d", ErrInvalid, opts.DB)
	}
	if opts.DB < 0 {
		return nil, fmt.Errorf("%w: redis db %d", ErrInvalid, opts.DB)
	}
	prefix := opts.KeyPrefix
	if prefix == "" {
		prefix = DefaultKeyPrefix
	}
	dial := orDefault(opts.DialTimeout, defaultRedisTimeout)
	read := orDefault(opts.ReadTimeout, defaultRedisTimeout)
	write := orDefault(opts.WriteTimeout, defaultRedisTimeout)
	retries := opts.MaxRetries
	switch {
	case retries == 0:
		retries = 1
	case retries < 0:
		retries = -1 // go-redis: -1 disables retries
	}
	uo := &redis.UniversalOptions{
		Addrs:            addrs,
		MasterName:       opts.MasterName,
		IsClusterMode:    cluster,
		Username:         opts.Username,
		Password:         opts.Password,
		SentinelPassword: opts.SentinelPassword,
		DB:               opts.DB,
		TLSConfig:        opts.TLSConfig,
		Protocol:         2, // works through RESP2-only proxies
		DialTimeout:      dial,
		ReadTimeout:      read,
		WriteTimeout:     write,
		PoolTimeout:      read + write,
		MaxRetries:       retries,
		// The context deadline (OpTimeout) also bounds socket reads/writes.
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	}
	if !cluster && opts.MasterName == "" {
		uo.Addrs = addrs[:1]
	}
	op := opts.OpTimeout
	if op <= 0 {
		op = dial + write + read
	}
	ttl := [2]time.Duration{orDefault(opts.OriginalTTL, DefaultOriginalTTL), orDefault(opts.CompressedTTL, DefaultCompressedTTL)}
	unverified := opts.UnverifiedMaxBytes
	if unverified <= 0 {
		unverified = DefaultUnverifiedMaxBytes
	}
	return &Redis{
		c:          redis.NewUniversalClient(uo),
		prefix:     prefix,
		ttl:        ttl,
		opTimeout:  op,
		unverified: unverified,
		unvTTL:     orDefault(opts.UnverifiedTTL, DefaultUnverifiedTTL),
		verTTL:     orDefault(opts.VerifiedTTL, ttl[0]),
	}, nil
}

// key builds {prefix}{{tenant}}:{kind}:{key}: the tenant is the hash tag.
func (r *Redis) key(tenant string, kind Kind, key string) string {
	return r.tenantKey(tenant, string(kind)+":"+key)
}

// tenantKey builds {prefix}{{tenant}}:{rest}, in the tenant's slot.
func (r *Redis) tenantKey(tenant, rest string) string {
	b := make([]byte, 0, len(r.prefix)+len(tenant)+len(rest)+3)
	b = append(b, r.prefix...)
	b = append(b, '{')
	b = append(b, tenant...)
	b = append(b, "}:"...)
	b = append(b, rest...)
	return string(b)
}

// The verification keys of a tenant, beside its entries (no kind is named
// like them, so they cannot meet an entry).
const (
	verifiedSuffix     = "verified"
	pendingSuffix      = "pending"       // set of the keys written while unverified
	pendingBytesSuffix = "pending-bytes" // what they hold
)

// putScript writes an entry: with its kind's TTL for a verified tenant;
// for another, only within its share, with the short TTL, and remembered
// so that Verify can give it the full one. KEYS: entry, verified,
// pending, pending-bytes. ARGV: value, TTL ms, share, unverified TTL ms.
// Returns 1 (verified), 2 (unverified) or 0 (over the share).
var putScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
local n = string.len(ARGV[1])
local used = tonumber(redis.call('GET', KEYS[4]) or '0')
if used + n > tonumber(ARGV[3]) then
  return 0
end
redis.call('INCRBY', KEYS[4], n)
redis.call('PEXPIRE', KEYS[4], ARGV[4])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
redis.call('SADD', KEYS[3], KEYS[1])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return 2
`)

// verifyScript marks a tenant verified and gives the entries it wrote
// while unverified their kind's TTL. KEYS: verified, pending,
// pending-bytes. ARGV: verified TTL ms, original TTL ms, compressed TTL
// ms, the ":compressed:" marker of compressed entries' keys.
var verifyScript = redis.NewScript(`
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
local keys = redis.call('SMEMBERS', KEYS[2])
for _, k in ipairs(keys) do
  local ttl = ARGV[2]
  if string.find(k, ARGV[4], 1, true) then ttl = ARGV[3] end
  redis.call('PEXPIRE', k, ttl)
end
redis.call('DEL', KEYS[2], KEYS[3])
return #keys
`)

func (r *Redis) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= r.opTimeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, r.opTimeout)
}

// Put stores value with its kind's TTL.
func (r *Redis) Put(ctx context.Context, tenant string, kind Kind, key string, value []byte) error {
	ki, err := checkArgs(tenant, kind, key)
	if err != nil {
		return err
	}
	if value == nil {
		value = []byte{} // go-redis writes nil as an empty string too; be explicit
	}
	ctx, cancel := r.bound(ctx)
	defer cancel()
	keys := []string{r.key(tenant, kind, key), r.tenantKey(tenant, verifiedSuffix), r.tenantKey(tenant, pendingSuffix), r.tenantKey(tenant, pendingBytesSuffix)}
	n, err := putScript.Run(ctx, r.c, keys, value, r.ttl[ki].Milliseconds(), r.unverified, min(r.unvTTL, r.ttl[ki]).Milliseconds()).Int()
	if err != nil {
		r.failed()
		return fmt.Errorf("shadow: redis put %s: %w", kind, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %d bytes over an unverified tenant's share of %d", ErrTooLarge, len(value), r.unverified)
	}
	return nil
}

// Verify implements Verifier: the tenant's entries get their kind's TTL
// and its later writes no share limit, for VerifiedTTL. Repeated calls
// within half of it cost nothing.
func (r *Redis) Verify(ctx context.Context, tenant string) error {
	if _, err := checkArgs(tenant, Original, "-"); err != nil {
		return err
	}
	now := time.Now().UnixNano()
	r.mu.Lock()
	until, ok := r.verifiedUntil[tenant]
	r.mu.Unlock()
	if ok && now < until {
		return nil
	}
	ctx, cancel := r.bound(ctx)
	defer cancel()
	keys := []string{r.tenantKey(tenant, verifiedSuffix), r.tenantKey(tenant, pendingSuffix), r.tenantKey(tenant, pendingBytesSuffix)}
	if err := verifyScript.Run(ctx, r.c, keys, r.verTTL.Milliseconds(), r.ttl[0].Milliseconds(), r.ttl[1].Milliseconds(), ":"+string(Compressed)+":").Err(); err != nil {
		return fmt.Errorf("shadow: redis verify: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.verifiedUntil == nil {
		r.verifiedUntil = make(map[string]int64)
	}
	if len(r.verifiedUntil) >= maxVerified {
		for t, u := range r.verifiedUntil {
			if u <= now || len(r.verifiedUntil) >= maxVerified {
				delete(r.verifiedUntil, t) // expired first; any, past the bound
			}
		}
	}
	r.verifiedUntil[tenant] = now + int64(r.verTTL/2)
	return nil
}

// Get returns the value, ErrNotFound for a missing key, or a wrapped error
// when Redis cannot answer.
func (r *Redis) Get(ctx context.Context, tenant string, kind Kind, key string) ([]byte, error) {
	if _, err := checkArgs(tenant, kind, key); err != nil {
		return nil, err
	}
	ctx, cancel := r.bound(ctx)
	defer cancel()
	v, err := r.c.Get(ctx, r.key(tenant, kind, key)).Bytes()
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return nil, ErrNotFound
		}
		r.failed()
		return nil, fmt.Errorf("shadow: redis get %s: %w", kind, err)
	}
	return v, nil
}

// Touch restarts the TTL of a key (PEXPIRE), or returns ErrNotFound.
func (r *Redis) Touch(ctx context.Context, tenant string, kind Kind, key string) error {
	ki, err := checkArgs(tenant, kind, key)
	if err != nil {
		return err
	}
	ctx, cancel := r.bound(ctx)
	defer cancel()
	ok, err := r.c.PExpire(ctx, r.key(tenant, kind, key), r.ttl[ki]).Result()
	if err != nil {
		// As Get and Put do: a request whose results were all seen
		// before only touches, and would keep asking a dead master.
		r.failed()
		return fmt.Errorf("shadow: redis touch %s: %w", kind, err)
	}
	if !ok {
		return ErrNotFound
	}
	return nil
}

// failed asks a cluster client to reload its slot map: after a master
// died, its replica serves the slots, and the map would otherwise point at
// the dead node until the next periodic reload.
func (r *Redis) failed() {
	if cc, ok := r.c.(*redis.ClusterClient); ok {
		cc.ReloadState(context.Background())
	}
}

// Ping checks that the server answers, within OpTimeout.
func (r *Redis) Ping(ctx context.Context) error {
	ctx, cancel := r.bound(ctx)
	defer cancel()
	if err := r.c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("shadow: redis ping: %w", err)
	}
	return nil
}

// Close releases the connections; later calls fail.
func (r *Redis) Close() error {
	if err := r.c.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
		return fmt.Errorf("shadow: redis close: %w", err)
	}
	return nil
}

// secretKey holds the deployment secret. It has no braces and so cannot
// meet a {tenant}:{kind}:{key} entry.
const secretKey = "deployment-secret"

// SharedSecret returns the deployment's secret, creating it on first use:
// SET NX of 32 random bytes then GET, so every replica sharing this Redis
// (and key prefix) reads the same secret, whichever wrote it first. It
// carries no TTL.
func (r *Redis) SharedSecret(ctx context.Context) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("shadow: secret: %w", err)
	}
	ctx, cancel := r.bound(ctx)
	defer cancel()
	key := r.prefix + secretKey
	if err := r.c.SetNX(ctx, key, hex.EncodeToString(fresh), 0).Err(); err != nil {
		return nil, fmt.Errorf("shadow: redis secret: %w", err)
	}
	v, err := r.c.Get(ctx, key).Bytes()
	if err != nil {
		return nil, fmt.Errorf("shadow: redis secret: %w", err)
	}
	if len(v) < 32 {
		return nil, fmt.Errorf("%w: redis secret %q holds %d bytes", ErrInvalid, key, len(v))
	}
	return v, nil
}
