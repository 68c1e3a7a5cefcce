package extproc

import (
	"context"
	"fmt"

	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
)

// dryRunTenant stands for the caller in `toolproc rewrite`: a server gives
// references only to identified callers, and the dry run shows what one
// would get (under the zero keyring: ids differ from a server's).
const dryRunTenant = "dry-run"

// RewriteBody runs exactly what the server runs for a request body sent to
// path under the named profile ("" means default), with a fresh in-memory
// store and a fixed identified tenant (dryRunTenant). It is what `toolproc rewrite` uses.
// On any error the original body comes back with it.
func RewriteBody(cfg *Config, profile, path string, body []byte) ([]byte, pipeline.Report, error) {
	if profile == "" {
		profile = DefaultProfile
	}
	p, ok := cfg.Profiles[profile]
	if !ok {
		return body, pipeline.Report{}, fmt.Errorf("unknown profile %q (have %v)", profile, cfg.ProfileNames())
	}
	ep := wire.Detect(path, body)
	if ep.Dialect == wire.Unknown || !p.Handles(ep.Dialect) {
		return body, pipeline.Report{Dialect: ep.Dialect, BytesIn: len(body), BytesOut: len(body)}, nil
	}
	cp := &compiledProfile{Profile: p, name: profile, compress: compressOptions(p, nil), tiers: tiersOptions(p)}
	ask, _ := wire.AskOf(ep, body)
	store := shadow.NewMemory(shadow.MemoryOptions{})
	defer store.Close()
	rr, err := rewriteRequestBody(context.Background(), cp, store, shadow.Env{Tenant: dryRunTenant}, ep, ask, body)
	return rr.out, rr.report, err
}
