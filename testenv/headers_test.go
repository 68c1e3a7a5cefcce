package testenv

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func hmap(kv ...string) *headerMap {
	h := &headerMap{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.add(kv[i], kv[i+1])
	}
	return h
}

func (m *headerMap) String() string {
	var b strings.Builder
	for i, e := range m.entries {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(e.key + "=" + e.value)
	}
	return b.String()
}

// §7: the default mutation checker, raw_value only, append semantics, remove before set.
func TestApplyHeaderMutation(t *testing.T) {
	reqBase := func() *headerMap {
		return hmap(":authority", "a.test", ":path", "/v1/x", ":method", "POST", ":scheme", "http", "accept", "a", "accept", "b", "content-length", "10")
	}
	respBase := func() *headerMap { return hmap(":status", "200", "content-type", "text/plain") }
	valueOnly := &extprocv3.HeaderMutation{SetHeaders: []*corev3.HeaderValueOption{{Header: &corev3.HeaderValue{Key: "x-v", Value: "ignored"}}}}
	tests := []struct {
		name    string
		base    func() *headerMap
		m       *extprocv3.HeaderMutation
		opt     mutationOptions
		want    string
		wantErr error
	}{
		{"overwrite replaces every value", reqBase, setHeaders("accept", "c"), mutationOptions{},
			":authority=a.test :path=/v1/x :method=POST :scheme=http accept=c content-length=10", nil},
		{"append adds", reqBase, &extprocv3.HeaderMutation{SetHeaders: []*corev3.HeaderValueOption{appendHeader("accept", "c")}}, mutationOptions{},
			":authority=a.test :path=/v1/x :method=POST :scheme=http accept=a accept=b content-length=10 accept=c", nil},
		{"append false overwrites", reqBase, &extprocv3.HeaderMutation{SetHeaders: []*corev3.HeaderValueOption{{Header: &corev3.HeaderValue{Key: "accept", RawValue: []byte("z")}, Append: wrapperspb.Bool(false)}}}, mutationOptions{},
			":authority=a.test :path=/v1/x :method=POST :scheme=http accept=z content-length=10", nil},
		{"remove then set", reqBase, &extprocv3.HeaderMutation{RemoveHeaders: []string{"Accept"}, SetHeaders: setHeaders("accept", "new").SetHeaders}, mutationOptions{},
			":authority=a.test :path=/v1/x :method=POST :scheme=http content-length=10 accept=new", nil},
		{"value without raw_value sets empty", respBase, valueOnly, mutationOptions{response: true},
			":status=200 content-type=text/plain x-v=", nil},
		{"keys are lower-cased", respBase, setHeaders("X-Up", "1"), mutationOptions{response: true},
			":status=200 content-type=text/plain x-up=1", nil},
		{"routing headers ignored", reqBase, setHeaders("host", "h", ":authority", "evil", ":method", "GET", ":scheme", "https"), mutationOptions{},
			":authority=a.test :path=/v1/x :method=POST :scheme=http accept=a accept=b content-length=10", nil},
		{":method allowed under CONTINUE_AND_REPLACE", reqBase, setHeaders(":method", "PUT"), mutationOptions{allowMethod: true},
			":authority=a.test :path=/v1/x :method=PUT :scheme=http accept=a accept=b content-length=10", nil},
		{"x-envoy ignored for set and remove", reqBase, &extprocv3.HeaderMutation{RemoveHeaders: []string{"x-envoy-a"}, SetHeaders: setHeaders("x-envoy-b", "1").SetHeaders}, mutationOptions{},
			":authority=a.test :path=/v1/x :method=POST :scheme=http accept=a accept=b content-length=10", nil},
		{":path allowed", reqBase, setHeaders(":path", "/v2/y"), mutationOptions{},
			":authority=a.test :path=/v2/y :method=POST :scheme=http accept=a accept=b content-length=10", nil},
		{"append to a pseudo-header ignored", reqBase, &extprocv3.HeaderMutation{SetHeaders: []*corev3.HeaderValueOption{appendHeader(":path", "/z")}}, mutationOptions{},
			":authority=a.test :path=/v1/x :method=POST :scheme=http accept=a accept=b content-length=10", nil},
		{"pseudo-headers never removed", reqBase, &extprocv3.HeaderMutation{RemoveHeaders: []string{":path", "host"}}, mutationOptions{},
			":authority=a.test :path=/v1/x :method=POST :scheme=http accept=a accept=b content-length=10", nil},
		{":status allowed", respBase, setHeaders(":status", "418"), mutationOptions{response: true}, ":status=418 content-type=text/plain", nil},
		{":status below 200 ignored", respBase, setHeaders(":status", "199"), mutationOptions{response: true}, ":status=200 content-type=text/plain", nil},
		{":status not numeric ignored", respBase, setHeaders(":status", "ok"), mutationOptions{response: true}, ":status=200 content-type=text/plain", nil},
		{"content-length skipped while removed", reqBase, setHeaders("content-length", "5"), mutationOptions{skipContentLength: true},
			":authority=a.test :path=/v1/x :method=POST :scheme=http accept=a accept=b content-length=10", nil},
		{"content-length set when kept", reqBase, setHeaders("content-length", "5"), mutationOptions{},
			":authority=a.test :path=/v1/x :method=POST :scheme=http accept=a accept=b content-length=5", nil},
		{"invalid value is an error", respBase, setHeaders("x-a", "1\r\n2"), mutationOptions{response: true}, "", errInvalidHeaderChar},
		{"invalid key is an error", respBase, setHeaders("x a", "1"), mutationOptions{response: true}, "", errInvalidHeaderChar},
		{"invalid remove is an error", respBase, &extprocv3.HeaderMutation{RemoveHeaders: []string{"bad name"}}, mutationOptions{response: true}, "", errInvalidRemoveChar},
		{"lenient drops invalid entries", respBase, setHeaders("x a", "1", "x-b", "2"), mutationOptions{response: true, lenient: true},
			":status=200 content-type=text/plain x-b=2", nil},
		{"no pseudo-headers in trailers", func() *headerMap { return hmap("grpc-status", "0") }, setHeaders(":status", "500", "x-t", "1"), mutationOptions{trailers: true, response: true},
			"grpc-status=0 x-t=1", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.base()
			_, err := applyHeaderMutation(h, tc.m, tc.opt)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := h.String(); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestTooManyMutations(t *testing.T) {
	m := &extprocv3.HeaderMutation{}
	for i := 0; i <= maxHeaderMutations; i++ {
		m.RemoveHeaders = append(m.RemoveHeaders, "x-a")
	}
	if _, err := applyHeaderMutation(&headerMap{}, m, mutationOptions{}); !errors.Is(err, errTooManyMutations) {
		t.Fatalf("err = %v", err)
	}
}

func TestHeaderMapConversions(t *testing.T) {
	h := hmap(":status", "200", "a", "1", "a", "2")
	pm := h.toProto()
	for _, hv := range pm.GetHeaders() {
		if hv.GetValue() != "" {
			t.Fatalf("value %q set; only raw_value is used", hv.GetValue())
		}
	}
	if back := headersFromProto(pm); !reflect.DeepEqual(back.entries, h.entries) {
		t.Fatalf("round trip %v", back)
	}
	hh := http.Header{}
	h.toHTTP(hh, nil)
	if !reflect.DeepEqual(hh["A"], []string{"1", "2"}) || hh.Get(":status") != "" {
		t.Fatalf("toHTTP %v", hh)
	}
}

// §7 end to end: a :path rewrite reaches the upstream, a :status rewrite the client, routing and
// x-envoy headers stay as they were.
func TestHeaderMutationsEndToEnd(t *testing.T) {
	e := newEnv(t, ProxyConfig{Mode: mode("SEND", "NONE", "SEND", "NONE")}, autoProc(hooks{
		reqHeaders: func(*extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
			return headersResp(true, setHeaders(":path", "/v1/messages", "host", "evil.test", "x-envoy-retry-on", "5xx", "x-added", "1"))
		},
		respHeaders: func(*extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
			return headersResp(false, &extprocv3.HeaderMutation{
				SetHeaders:    setHeaders(":status", "203", "x-resp", "yes").SetHeaders,
				RemoveHeaders: []string{"x-envoy-upstream-service-time", "content-type"},
			})
		},
	}))
	r := e.do("POST", "/v1/chat/completions", chatBody(""))
	mustStatus(t, r, 203)
	if r.header.Get("X-Resp") != "yes" || r.header.Get("Content-Type") != "" || r.header.Get("X-Envoy-Upstream-Service-Time") == "" {
		t.Errorf("client headers %v", r.header)
	}
	up := e.up.Requests()[0]
	if up.Path != "/v1/messages" || up.Header.Get("X-Added") != "1" || up.Header.Get("X-Envoy-Retry-On") != "" {
		t.Errorf("upstream path %s headers %v", up.Path, up.Header)
	}
	if !strings.Contains(string(r.body), `"type":"message"`) {
		t.Errorf("the rewritten :path did not reach the Anthropic handler: %s", r.body)
	}
}
