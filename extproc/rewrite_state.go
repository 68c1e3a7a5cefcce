package extproc

import (
	"bytes"
	"crypto/sha256"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
)

// rewriteState is what the request rewrite learned and decided: what the
// client asked for, who the caller is, and what went upstream. Expansion
// and recovery read it; continuations and replays that answer replace the
// body last sent upstream.
type rewriteState struct {
	// Filled by the request rewrite, sent as dynamic metadata.
	report *pipeline.Report

	// What the client asked for, read from the request body; nil until then.
	clientAsk *wire.ClientAsk

	// For answering expand_context and replaying: the request's headers as
	// Envoy gave them (credentials included; never logged), the caller's
	// tenant and the keys deriving its shadow ids.
	reqHeaders *corev3.HeaderMap
	tenant     string
	keys       shadow.Keyring
	// refs: this exchange may write shadow references (a store, the
	// deployment secret, and a caller who is not Anonymous).
	refs bool

	model      string // for the audit log and the window
	compressed int    // results that carry a shadow reference
	tierStep   int    // the tiers' step for this request, 0 when they did not act

	// upstreamBody is the body last sent upstream: the rewrite's, then
	// each continuation's or recovery replay's that answered.
	upstreamBody []byte
	// firstSent is the first body sent upstream in this exchange, and sent
	// a digest of each one after it: a recovery rung that would send one
	// of them again is skipped, no replay. The first is kept as it is (the
	// exchange holds it as upstreamBody anyway) and compared byte for byte
	// only when recovery builds a body: hashing it on every request cost a
	// SHA-256 pass over the whole body for the rare exchange that recovers.
	firstSent []byte
	sent      map[[sha256.Size]byte]bool
}

// markSent records that body went upstream.
func (r *rewriteState) markSent(body []byte) {
	if r.firstSent == nil {
		r.firstSent = body
		return
	}
	if r.sent == nil {
		r.sent = map[[sha256.Size]byte]bool{}
	}
	r.sent[sha256.Sum256(body)] = true
}

// wasSent reports whether body went upstream in this exchange already.
func (r *rewriteState) wasSent(body []byte) bool {
	return r.firstSent != nil && bytes.Equal(r.firstSent, body) || len(r.sent) > 0 && r.sent[sha256.Sum256(body)]
}
