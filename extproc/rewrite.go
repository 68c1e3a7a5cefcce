package extproc

import (
	"context"
	"fmt"

	"github.com/toolproc/toolproc/filters/history"
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
	r, err := NewRewriter(cfg, profile)
	if err != nil {
		return body, pipeline.Report{}, err
	}
	defer r.Close()
	out, err := r.Rewrite(path, body)
	return out.Body, out.Report, err
}

// Rewriter is the server's request rewrite outside the server: one
// profile, one in-memory store kept across calls (as a session's requests
// share the server's), one identified tenant. The session replay benchmark
// and `toolproc rewrite` use it.
type Rewriter struct {
	cp    *compiledProfile
	store shadow.Store
}

// Rewritten is one rewrite's outcome.
type Rewritten struct {
	Body   []byte
	Report pipeline.Report
	// Tiers is what the tool-history tiers did (zero when off or below the
	// trigger); Tiers.Step is what x-toolproc-tiers says.
	Tiers history.Stats
}

// NewRewriter builds a Rewriter for the named profile ("" = default).
func NewRewriter(cfg *Config, profile string) (*Rewriter, error) {
	if profile == "" {
		profile = DefaultProfile
	}
	p, ok := cfg.Profiles[profile]
	if !ok {
		return nil, fmt.Errorf("unknown profile %q (have %v)", profile, cfg.ProfileNames())
	}
	return &Rewriter{cp: newCompiledProfile(profile, p, nil), store: shadow.NewMemory(shadow.MemoryOptions{})}, nil
}

// Rewrite rewrites one body sent to path. On any error the original body
// comes back with it.
func (r *Rewriter) Rewrite(path string, body []byte) (Rewritten, error) {
	ep := wire.Detect(path, body)
	if ep.Dialect == wire.Unknown || !r.cp.Handles(ep.Dialect) {
		return Rewritten{Body: body, Report: pipeline.Report{Dialect: ep.Dialect, BytesIn: len(body), BytesOut: len(body)}}, nil
	}
	conv, err := wire.ParseEndpoint(ep, body)
	if err != nil {
		return Rewritten{Body: body, Report: pipeline.Report{Dialect: ep.Dialect, BytesIn: len(body), BytesOut: len(body)}}, err
	}
	rr, err := rewriteParsed(context.Background(), r.cp, r.store, shadow.Env{Tenant: dryRunTenant}, ep, conv.Ask(ep), conv)
	out := Rewritten{Body: rr.out, Report: rr.report}
	if rr.tiers != nil {
		out.Tiers = rr.tiers.Stats
	}
	return out, err
}

// RecoverTiers is the body the overflow ladder's tiers rung would replay
// if the provider refused this request as too long (changed=false when the
// rung has nothing to summarise).
func (r *Rewriter) RecoverTiers(path string, body []byte) (out []byte, changed bool, err error) {
	ep := wire.Detect(path, body)
	if ep.Dialect == wire.Unknown || !r.cp.Handles(ep.Dialect) || !r.cp.Tiers.Enabled {
		return body, false, nil
	}
	ask, _ := wire.AskOf(ep, body)
	rr, err := rewriteRequestBody(context.Background(), r.cp.tiersRung(), r.store, shadow.Env{Tenant: dryRunTenant}, ep, ask, body)
	if err != nil || rr.tiers == nil || rr.tiers.Stats.Summarized+rr.tiers.Stats.Inputs == 0 {
		return body, false, err
	}
	return rr.out, true, nil
}

// Lookup reads an original kept by an earlier Rewrite, as expand_context
// would.
func (r *Rewriter) Lookup(id string) ([]byte, error) {
	return r.store.Get(context.Background(), dryRunTenant, shadow.Original, id)
}

// Close releases the store.
func (r *Rewriter) Close() error { return r.store.Close() }
