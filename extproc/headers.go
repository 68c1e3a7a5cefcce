package extproc

import (
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// headerValue reads a header the way Envoy ≥1.32 sends it: in raw_value,
// with value empty (docs/envoy-notes.md §7). value is the fallback for ≤1.26.
func headerValue(h *corev3.HeaderValue) string {
	if len(h.GetRawValue()) > 0 {
		return string(h.GetRawValue())
	}
	return h.GetValue()
}

// getHeader returns the first value of key (lower-case) or "".
func getHeader(hm *corev3.HeaderMap, key string) string {
	for _, h := range hm.GetHeaders() {
		if h.GetKey() == key {
			return headerValue(h)
		}
	}
	return ""
}

// setHeader builds a set_headers entry. Only raw_value is written: Envoy
// ignores value since 1.32, and a value-only mutation sets an empty header.
func setHeader(key, val string) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{Header: &corev3.HeaderValue{Key: key, RawValue: []byte(val)}}
}

// pathForLog drops the query string: Gemini puts the API key in ?key=.
// It is the only part of a request's headers toolproc ever logs: no log
// line carries header values, so there is nothing else to redact.
func pathForLog(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		return p[:i]
	}
	return p
}

// headerMap flattens the headers with lower-case names, first value wins
// (Envoy hands ext_proc lower-case keys already).
func headerMap(hm *corev3.HeaderMap) map[string]string {
	out := make(map[string]string, len(hm.GetHeaders()))
	for _, h := range hm.GetHeaders() {
		k := strings.ToLower(h.GetKey())
		if _, seen := out[k]; !seen {
			out[k] = headerValue(h)
		}
	}
	return out
}
