package shadow

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// RedisOptions configures NewRedis. Zero values take the defaults.
type RedisOptions struct {
	Addr     string // host:port, required
	Username string // ACL user; empty for the default user
	Password string
	DB       int
	// KeyPrefix starts every key; default "toolproc:". Keys are
	// {prefix}{tenant}:{kind}:{key}.
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
}

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
	c         *redis.Client
	prefix    string
	ttl       [2]time.Duration
	opTimeout time.Duration
}

// NewRedis returns a client for opts.Addr. It does not contact the server
// (toolproc must start while Redis is down); use Ping for readiness.
func NewRedis(opts RedisOptions) (*Redis, error) {
	if opts.Addr == "" {
		return nil, fmt.Errorf("%w: redis address is empty", ErrInvalid)
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
	c := redis.NewClient(&redis.Options{
		Addr:          opts.Addr,
		Username:      opts.Username,
		Password:      opts.Password,
		DB:            opts.DB,
		TLSConfig:     opts.TLSConfig,
		Protocol:      2, // GET and SET only; works through RESP2-only proxies
		DialTimeout:   dial,
		ReadTimeout:   read,
		WriteTimeout:  write,
		PoolTimeout:   read + write,
		MaxRetries:    retries,
		DialerRetries: 1,
		// The context deadline (OpTimeout) also bounds socket reads/writes.
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	})
	op := opts.OpTimeout
	if op <= 0 {
		op = dial + write + read
	}
	return &Redis{
		c:         c,
		prefix:    prefix,
		ttl:       [2]time.Duration{orDefault(opts.OriginalTTL, DefaultOriginalTTL), orDefault(opts.CompressedTTL, DefaultCompressedTTL)},
		opTimeout: op,
	}, nil
}

// key builds {prefix}{tenant}:{kind}:{key}.
func (r *Redis) key(tenant string, kind Kind, key string) string {
	b := make([]byte, 0, len(r.prefix)+len(tenant)+len(kind)+len(key)+2)
	b = append(b, r.prefix...)
	b = append(b, tenant...)
	b = append(b, ':')
	b = append(b, kind...)
	b = append(b, ':')
	b = append(b, key...)
	return string(b)
}

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
	if err := r.c.Set(ctx, r.key(tenant, kind, key), value, r.ttl[ki]).Err(); err != nil {
		return fmt.Errorf("shadow: redis put %s: %w", kind, err)
	}
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
		return fmt.Errorf("shadow: redis touch %s: %w", kind, err)
	}
	if !ok {
		return ErrNotFound
	}
	return nil
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

// secretKey holds the deployment secret. It has no ':' and so cannot meet
// a {tenant}:{kind}:{key} entry.
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
