package extproc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/toolproc/toolproc/filters/shadow"
)

// keySource loads the deployment secret that keys tenants and shadow ids
// (review finding 2: unsalted ids could be computed from content alone).
// A shared store may be down when toolproc starts, so the secret is loaded
// on first use and retried at most once per cooldown; until it is known no
// references are written, because ids under another secret would not be
// the ones the other replicas compute.
type keySource struct {
	load     func(context.Context) ([]byte, error)
	cooldown time.Duration

	mu   sync.Mutex
	keys shadow.Keyring
	ok   bool
	next time.Time
}

// secretLoader picks where the secret comes from: the environment variable
// store.secret_env names, the Redis store (shared by replicas), or a random
// one for a process-local store.
func secretLoader(sc StoreConfig, redis interface {
	SharedSecret(context.Context) ([]byte, error)
}) func(context.Context) ([]byte, error) {
	switch {
	case sc.SecretEnv != "":
		return func(context.Context) ([]byte, error) {
			v := os.Getenv(sc.SecretEnv)
			if len(v) < 16 {
				return nil, fmt.Errorf("store.secret_env: $%s holds %d bytes, want at least 16", sc.SecretEnv, len(v))
			}
			return []byte(v), nil
		}
	case redis != nil:
		return redis.SharedSecret
	}
	secret := make([]byte, 32)
	_, err := rand.Read(secret)
	return func(context.Context) ([]byte, error) { return secret, err }
}

// get returns the keyring, or ok=false while the secret cannot be had.
func (k *keySource) get(ctx context.Context) (shadow.Keyring, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ok {
		return k.keys, true, nil
	}
	if time.Now().Before(k.next) {
		return shadow.Keyring{}, false, nil
	}
	secret, err := k.load(ctx)
	if err != nil {
		k.next = time.Now().Add(k.cooldown)
		return shadow.Keyring{}, false, err
	}
	if len(secret) == 0 {
		return shadow.Keyring{}, false, errors.New("empty deployment secret")
	}
	k.keys, k.ok = shadow.NewKeyring(secret), true
	return k.keys, true, nil
}
