package extproc

import (
	"crypto/tls"
	"fmt"
	"os"
	"time"

	"github.com/toolproc/toolproc/filters/shadow"
)

// OpenStore builds the shadow store the config names, behind a breaker so a
// dead Redis costs one timeout per cooldown rather than one per result.
func OpenStore(cfg *Config) (shadow.Store, error) {
	s, _, err := openStore(cfg)
	return s, err
}

// openStore is OpenStore plus where the deployment secret comes from.
func openStore(cfg *Config) (shadow.Store, *keySource, error) {
	sc := cfg.Store
	var s shadow.Store
	var redis *shadow.Redis
	switch sc.Type {
	case "redis":
		opts := shadow.RedisOptions{
			Addr:               sc.Redis.Addr,
			Addrs:              sc.Redis.Addrs,
			MasterName:         sc.Redis.MasterName,
			Cluster:            sc.Redis.Mode == "cluster",
			UnverifiedMaxBytes: sc.UnverifiedTenantMaxBytes,
			Username:           sc.Redis.Username,
			DB:                 sc.Redis.DB,
			KeyPrefix:          sc.Redis.KeyPrefix,
			OriginalTTL:        time.Duration(sc.OriginalTTL),
			CompressedTTL:      time.Duration(sc.CompressedTTL),
			DialTimeout:        time.Duration(sc.Redis.Timeout),
			ReadTimeout:        time.Duration(sc.Redis.Timeout),
			WriteTimeout:       time.Duration(sc.Redis.Timeout),
		}
		switch sc.Redis.Mode {
		case "single":
			opts.Addrs, opts.MasterName = nil, ""
			if opts.Addr == "" && len(sc.Redis.Addrs) > 0 {
				opts.Addr = sc.Redis.Addrs[0]
			}
		case "cluster":
			opts.MasterName = ""
		}
		if sc.Redis.SentinelPasswordEnv != "" {
			opts.SentinelPassword = os.Getenv(sc.Redis.SentinelPasswordEnv)
		}
		if sc.Redis.PasswordEnv != "" {
			opts.Password = os.Getenv(sc.Redis.PasswordEnv)
		}
		if sc.Redis.TLS {
			opts.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		r, err := shadow.NewRedis(opts)
		if err != nil {
			return nil, nil, fmt.Errorf("store: %w", err)
		}
		s, redis = r, r
	default:
		s = shadow.NewMemory(shadow.MemoryOptions{
			OriginalTTL:        time.Duration(sc.OriginalTTL),
			CompressedTTL:      time.Duration(sc.CompressedTTL),
			MaxBytes:           sc.MaxBytes,
			TenantMaxBytes:     sc.TenantMaxBytes,
			UnverifiedMaxBytes: sc.UnverifiedTenantMaxBytes,
		})
	}
	keys := &keySource{cooldown: max(time.Duration(sc.Cooldown), time.Second)}
	if redis != nil {
		keys.load = secretLoader(sc, redis)
	} else {
		keys.load = secretLoader(sc, nil)
	}
	return shadow.NewBreaker(s, time.Duration(sc.Cooldown)), keys, nil
}
