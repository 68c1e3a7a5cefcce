package testenv

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// header is one entry of an Envoy header map. Keys are lower-case.
type header struct{ key, value string }

// headerMap is an ordered header map like Envoy's: pseudo-headers first, repeated keys as repeated
// entries, insertion order kept.
type headerMap struct{ entries []header }

func (m *headerMap) get(key string) (string, bool) {
	for _, e := range m.entries {
		if e.key == key {
			return e.value, true
		}
	}
	return "", false
}

func (m *headerMap) has(key string) bool { _, ok := m.get(key); return ok }

func (m *headerMap) add(key, value string) { m.entries = append(m.entries, header{key, value}) }

// set replaces the first entry with key and drops the others, or appends when there is none.
func (m *headerMap) set(key, value string) {
	out := m.entries[:0]
	done := false
	for _, e := range m.entries {
		if e.key != key {
			out = append(out, e)
			continue
		}
		if !done {
			out = append(out, header{key, value})
			done = true
		}
	}
	m.entries = out
	if !done {
		m.add(key, value)
	}
}

func (m *headerMap) del(key string) {
	out := m.entries[:0]
	for _, e := range m.entries {
		if e.key != key {
			out = append(out, e)
		}
	}
	m.entries = out
}

// toProto converts to the wire form Envoy sends since 1.32: the value in raw_value, value left empty
// (§1, §7 "raw_value vs value").
func (m *headerMap) toProto() *corev3.HeaderMap {
	hm := &corev3.HeaderMap{Headers: make([]*corev3.HeaderValue, 0, len(m.entries))}
	for _, e := range m.entries {
		hm.Headers = append(hm.Headers, &corev3.HeaderValue{Key: e.key, RawValue: []byte(e.value)})
	}
	return hm
}

// toHTTP copies the regular (non-pseudo) entries into h, skipping the names in skip.
func (m *headerMap) toHTTP(h http.Header, skip map[string]bool) {
	for _, e := range m.entries {
		if strings.HasPrefix(e.key, ":") || skip[e.key] {
			continue
		}
		h.Add(e.key, e.value)
	}
}

// appendHTTP appends the entries of h with lower-case keys, sorted by key so the order is stable (Go's
// http.Header has lost the wire order). Skipped names are left out.
func (m *headerMap) appendHTTP(h http.Header, skip map[string]bool) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		lk := strings.ToLower(k)
		if skip[lk] {
			continue
		}
		for _, v := range h[k] {
			m.add(lk, v)
		}
	}
}

// requestHopByHop are stripped by the HCM before any filter runs (§1, CMU 144).
var requestHopByHop = map[string]bool{
	"transfer-encoding": true,
	"connection":        true,
	"keep-alive":        true,
	"proxy-connection":  true,
}

// responseHopByHop are stripped after the filter chain, so the processor still sees them (§1, CMU 607).
var responseHopByHop = map[string]bool{
	"transfer-encoding": true,
	"connection":        true,
	"keep-alive":        true,
	"proxy-connection":  true,
	"upgrade":           true,
}

// Mutation errors. These are not gRPC or protocol errors, so they always end in a local reply with
// status_on_error, whatever failure_mode_allow says (§9 "Mutation errors").
var (
	errInvalidHeaderChar = errors.New("header_mutation_set_contains_invalid_character")
	errInvalidRemoveChar = errors.New("header_mutation_remove_contains_invalid_character")
	errTooManyMutations  = errors.New("header_mutation_count_exceeded")
)

// maxHeaderMutations is the HCM's default max_headers_count, which also bounds one mutation (§7).
const maxHeaderMutations = 100

// mutationOptions say where a HeaderMutation is applied.
type mutationOptions struct {
	response          bool // the target is a response header map (:status allowed, :path not)
	trailers          bool // the target is a trailer map: no pseudo-headers at all
	skipContentLength bool // content-length is being removed for this direction (§4 rule 1)
	allowMethod       bool // CONTINUE_AND_REPLACE may set :method (§7)
	lenient           bool // ImmediateResponse: failures are logged and the entry dropped (§7 last bullet)
}

// mutationReport lists what a mutation did not apply, for logs and tests.
type mutationReport struct {
	ignored []string
}

// applyHeaderMutation applies m to hm with Envoy's default mutation checker (§7): size check, then
// remove_headers, then set_headers; only raw_value is read; append unset or false overwrites; disallowed
// targets are silently ignored; invalid characters are an error.
func applyHeaderMutation(hm *headerMap, m *extprocv3.HeaderMutation, opt mutationOptions) (mutationReport, error) {
	var rep mutationReport
	if m == nil {
		return rep, nil
	}
	if len(m.GetSetHeaders())+len(m.GetRemoveHeaders()) > maxHeaderMutations && !opt.lenient {
		return rep, errTooManyMutations
	}
	for _, name := range m.GetRemoveHeaders() {
		key := strings.ToLower(name)
		if !validHeaderName(key) {
			if opt.lenient {
				rep.ignored = append(rep.ignored, "remove "+name)
				continue
			}
			return rep, fmt.Errorf("%w: remove %q", errInvalidRemoveChar, name)
		}
		// host and pseudo-headers are never removable; x-envoy-* is off limits by default (MR isAllowed).
		if key == "host" || strings.HasPrefix(key, ":") || strings.HasPrefix(key, "x-envoy-") {
			rep.ignored = append(rep.ignored, "remove "+key)
			continue
		}
		hm.del(key)
	}
	for _, opt2 := range m.GetSetHeaders() {
		hv := opt2.GetHeader()
		key := strings.ToLower(hv.GetKey())
		// Since 1.32 Envoy reads raw_value only: a mutation carrying only value sets an empty string.
		value := string(hv.GetRawValue())
		if !validHeaderName(key) || !validHeaderValue(value) {
			if opt.lenient {
				rep.ignored = append(rep.ignored, "set "+key)
				continue
			}
			return rep, fmt.Errorf("%w: set %q", errInvalidHeaderChar, key)
		}
		// Envoy's ext_proc reads the deprecated append BoolValue and ignores append_action (§7).
		//lint:ignore SA1019 deprecated, but it is the field Envoy's ext_proc honours
		appendValue := opt2.GetAppend().GetValue()
		if reason := disallowedSet(key, value, appendValue, opt); reason != "" {
			rep.ignored = append(rep.ignored, "set "+key+": "+reason)
			continue
		}
		if appendValue {
			hm.add(key, value)
		} else {
			hm.set(key, value)
		}
	}
	return rep, nil
}

// disallowedSet returns why the default checker silently ignores setting key, or "" if it is allowed.
func disallowedSet(key, value string, appendValue bool, opt mutationOptions) string {
	switch {
	case key == "host" || key == ":authority" || key == ":scheme":
		return "routing header"
	case key == ":method" && !opt.allowMethod:
		return "routing header"
	case strings.HasPrefix(key, "x-envoy-"):
		return "x-envoy- prefix"
	case strings.HasPrefix(key, ":") && appendValue:
		return "append to pseudo-header"
	case strings.HasPrefix(key, ":") && opt.trailers:
		return "pseudo-header in trailers"
	case key == ":status":
		if !opt.response {
			return ":status on a request"
		}
		code, err := strconv.Atoi(value)
		if err != nil || code < 200 || code > 999 {
			return "invalid :status"
		}
	case key == ":path":
		if opt.response || value == "" {
			return "invalid :path"
		}
	case key == ":method":
		if value == "" {
			return "invalid :method"
		}
	case strings.HasPrefix(key, ":"):
		return "unknown pseudo-header"
	case key == "content-length" && opt.skipContentLength:
		// content-length is being removed for this direction, so a processor-set value is skipped (§4).
		return "content-length removed by mode"
	}
	return ""
}

// validHeaderName accepts RFC 9110 token characters, with an optional leading ':' for pseudo-headers.
func validHeaderName(key string) bool {
	k := strings.TrimPrefix(key, ":")
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue rejects NUL, CR and LF, as Envoy's HeaderUtility does.
func validHeaderValue(v string) bool {
	return !strings.ContainsAny(v, "\x00\r\n")
}

// headersFromProto reads a HeaderMap as a processor sends it, preferring raw_value.
func headersFromProto(hm *corev3.HeaderMap) *headerMap {
	out := &headerMap{}
	for _, h := range hm.GetHeaders() {
		v := string(h.GetRawValue())
		if v == "" {
			v = h.GetValue()
		}
		out.add(strings.ToLower(h.GetKey()), v)
	}
	return out
}
