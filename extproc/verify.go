package extproc

import (
	"github.com/toolproc/toolproc/filters/shadow"
)

// verifyTenant tells the store that the provider accepted this caller: an
// answer for it came back 2xx. Until then the store gives the tenant a
// small share and evicts it first (review round 3, N5: originals are
// stored while the request is rewritten, before the provider has checked
// the key, so made-up keys were tenants as good as real ones). A failure
// only leaves the tenant on the small share; it is counted.
func (x *exchange) verifyTenant(status string) {
	if !x.rewrite.refs || x.rewrite.tenant == "" || len(status) != 3 || status[0] != '2' {
		return
	}
	v, ok := x.srv.store.(shadow.Verifier)
	if !ok {
		return
	}
	if err := v.Verify(x.ctx, x.rewrite.tenant); err != nil {
		x.srv.metrics.StoreErrors.WithLabelValues("verify").Inc()
		x.log.Warn("could not mark the tenant verified", "error", err.Error())
	}
}
