package extproc

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/toolproc/toolproc/filters/overflow"
)

// When recovery gives up (or is off), the client's own recovery must still
// work: Claude Code, Codex, OpenCode and the SDKs compact or trim their
// history only for an overflow in the provider's canonical form
// (filters/overflow/canonical.go). Behind a front proxy or a router the
// overflow may arrive as an HTML 413, an opaque OpenRouter 400 or another
// provider's error; the client then gives up. So an overflow no rung fixed
// is answered in the client's dialect's form (recovery.canonical_errors),
// and the upstream's original goes to the log.

// canonicalizes reports whether an overflow this exchange does not fix is
// answered in the client's canonical form.
func (x *exchange) canonicalizes() bool {
	return x.process && x.rewrite.clientAsk != nil && x.profile.Recovery.CanonicalErrors
}

// holdsErrors reports whether error answers are held and classified:
// to recover, or to answer an overflow in the client's form.
func (x *exchange) holdsErrors() bool { return x.recoverable() || x.canonicalizes() }

// tryLadder runs the ladder when recovery may replay; otherwise it is a
// ladder that tried nothing.
func (x *exchange) tryLadder(v overflow.Verdict) ladderResult {
	if !x.recoverable() {
		return ladderResult{}
	}
	return x.runLadder(v)
}

// errorAnswer is an error the client gets in place of the upstream's.
type errorAnswer struct {
	status      int
	contentType string
	body        []byte
	extra       []*corev3.HeaderValueOption
}

// failedAnswer is what the client gets for an overflow the ladder did not
// recover (v classified the original answer: status, headers, body): the
// last error a replay got (or the original), in the client's canonical
// form when the profile asks for it and it is not in that form already.
// ok=false: the original passes as it came.
func (x *exchange) failedAnswer(v overflow.Verdict, res ladderResult, status int, headers map[string]string, body []byte) (errorAnswer, bool) {
	last, lastHeaders, changed := errorAnswer{status: status, body: body}, headers, false
	last.contentType = headers["content-type"]
	if res.status != 0 {
		last = errorAnswer{status: res.status, contentType: res.contentType, body: res.body}
		lastHeaders, changed = res.headers, true
	}
	if !x.canonicalizes() || overflow.IsCanonical(x.dialect, last.status, lastHeaders, last.body) {
		return last, changed
	}
	input, limit := x.overflowCounts(v)
	c, ok := overflow.CanonicalError(x.dialect, input, limit)
	if !ok {
		return last, changed
	}
	x.srv.metrics.Recoveries.WithLabelValues(v.Provider, string(v.Class), "none", "canonical").Inc()
	// The upstream's own answer, for the operator: the client gets the
	// canonical one. Error bodies carry no credentials; capped all the same.
	x.log.Warn("overflow answered in the client's canonical form", "dialect", string(x.dialect), "provider", v.Provider,
		"class", string(v.Class), "reason", v.Reason, "upstream_status", last.status,
		"upstream_content_type", last.contentType, "upstream_body", logSnippet(last.body))
	a := errorAnswer{status: c.Status, contentType: c.ContentType, body: c.Body}
	if c.HeaderName != "" {
		a.extra = append(a.extra, setHeader(c.HeaderName, c.HeaderValue))
	}
	return a, true
}

// canonicalStream is the canonical error event stream that replaces a 200
// stream which opened with an overflow no rung fixed. It returns refused
// when the held original goes on (it is canonical already, the profile
// says no, or the dialect's stream has no SSE form).
func (x *exchange) canonicalStream(v overflow.Verdict, refused error) (io.ReadCloser, error) {
	if !x.canonicalizes() || overflow.IsCanonicalStream(x.dialect, v) {
		return nil, refused
	}
	input, limit := x.overflowCounts(v)
	ev, ok := overflow.CanonicalStreamError(x.dialect, input, limit)
	if !ok {
		return nil, refused
	}
	x.srv.metrics.Recoveries.WithLabelValues(v.Provider, string(v.Class), "none", "canonical").Inc()
	x.log.Warn("overflow in a stream answered in the client's canonical form", "dialect", string(x.dialect),
		"provider", v.Provider, "class", string(v.Class), "reason", v.Reason)
	return io.NopCloser(bytes.NewReader(ev)), nil
}

// overflowCounts are the prompt size and window a canonical answer
// reports: the upstream's own counts when its message gave them, else the
// model's window (recovery.windows) and an estimate of the request as sent
// at four bytes a token.
func (x *exchange) overflowCounts(v overflow.Verdict) (input, limit int) {
	input, limit = v.Tokens.Overflowing(), v.Tokens.Limit
	if limit == 0 {
		rp := x.profile.Recovery
		limit = overflow.Window(x.rewrite.model, x.srv.windows(rp), rp.DefaultWindow)
	}
	if input == 0 {
		body := x.rewrite.upstreamBody
		if body == nil {
			body = x.recovery.clientBody
		}
		input = len(body) / 4
	}
	return input, limit
}

// logSnippet is at most 512 bytes of an error body, as valid UTF-8.
func logSnippet(b []byte) string {
	if len(b) > 512 {
		b = b[:512]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// plainErrorBody is an error body as the classifier must read it: decoded
// when it came gzip-encoded (nginx compresses its own error pages for
// clients that accept gzip, and SDK clients do), at most max_error_bytes;
// the body as it came otherwise, or when it does not decode.
func (x *exchange) plainErrorBody(headers map[string]string, body []byte) []byte {
	if !strings.EqualFold(strings.TrimSpace(headers["content-encoding"]), "gzip") {
		return body
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return body
	}
	limit := int64(x.profile.Recovery.MaxErrorBytes)
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil || int64(len(out)) > limit {
		return body
	}
	return out
}
