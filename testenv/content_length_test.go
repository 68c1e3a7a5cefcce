package testenv

import (
	"strconv"
	"testing"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

func TestRemovesContentLength(t *testing.T) {
	tests := []struct {
		body        extprocfilterv3.ProcessingMode_BodySendMode
		sendHeaders bool
		allow       bool
		want        bool
	}{
		{modeNone, true, false, false},
		{modeNone, false, false, false},
		{modeBuffered, true, false, false},
		{modeBuffered, false, false, true},
		{modeStreamed, true, false, true},
		{modePartial, true, false, true},
		{modeDuplex, true, false, true},
		{modeStreamed, true, true, false},
		{modeBuffered, false, true, false},
	}
	for _, tc := range tests {
		if got := removesContentLength(tc.body, tc.sendHeaders, tc.allow); got != tc.want {
			t.Errorf("%v sendHeaders=%v allow=%v: got %v", tc.body, tc.sendHeaders, tc.allow, got)
		}
	}
}

func TestApplyBodyMutation(t *testing.T) {
	orig := []byte("original")
	tests := []struct {
		name string
		bm   *extprocv3.BodyMutation
		want string
	}{
		{"none", nil, "original"},
		{"empty mutation", &extprocv3.BodyMutation{}, "original"},
		{"body", replaceBody("new"), "new"},
		{"body empty clears", replaceBody(""), ""},
		{"clear_body true", &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_ClearBody{ClearBody: true}}, ""},
		{"clear_body false is a no-op", &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_ClearBody{ClearBody: false}}, "original"},
	}
	for _, tc := range tests {
		if got := applyBodyMutation(orig, tc.bm); string(got) != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCheckMutatedContentLength(t *testing.T) {
	withCL := func(v string) *headerMap { h := &headerMap{}; h.add("content-length", v); return h }
	tests := []struct {
		name string
		h    *headerMap
		bm   *extprocv3.BodyMutation
		ok   bool
	}{
		{"match", withCL("3"), replaceBody("abc"), true},
		{"mismatch", withCL("4"), replaceBody("abc"), false},
		{"no content-length", &headerMap{}, replaceBody("abc"), true},
		{"unparsable is not checked", withCL("x"), replaceBody("abc"), true},
		{"clear_body counts as 0", withCL("0"), &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_ClearBody{ClearBody: true}}, true},
		// Envoy compares against body() whatever the oneof holds, so even the no-op clear_body:false
		// fails against a non-zero content-length.
		{"clear_body false against a length", withCL("8"), &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_ClearBody{}}, false},
		{"headers already gone", nil, replaceBody("abc"), true},
	}
	for _, tc := range tests {
		if err := checkMutatedContentLength(tc.h, tc.bm); (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}

// §4 end to end: when content-length is kept or removed, how a processor-set one is treated, and the
// BUFFERED length check that failure_mode_allow cannot bypass.
func TestContentLengthRules(t *testing.T) {
	body := chatBody("")
	origCL := int64(len(body))
	const newBody = `{"model":"m","messages":[]}`
	replaceWith := func(hm *extprocv3.HeaderMutation) func(*extprocv3.HttpBody) *extprocv3.ProcessingResponse {
		return func(*extprocv3.HttpBody) *extprocv3.ProcessingResponse {
			return bodyResp(true, hm, replaceBody(newBody))
		}
	}
	sameLengthUpper := func(b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
		return bodyResp(true, nil, &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: upper(b.GetBody())}})
	}
	tests := []struct {
		name       string
		cfg        ProxyConfig
		hooks      hooks
		wantStatus int
		wantCL     int64 // upstream: -1 chunked
		wantBody   string
	}{
		{
			name:       "BUFFERED keeps content-length; the processor sets the new one",
			cfg:        ProxyConfig{Mode: mode("SEND", "BUFFERED", "SKIP", "NONE")},
			hooks:      hooks{reqBody: replaceWith(setHeaders("content-length", strconv.Itoa(len(newBody))))},
			wantStatus: 200, wantCL: int64(len(newBody)), wantBody: newBody,
		},
		{
			name:       "BUFFERED mismatch is a 500",
			cfg:        ProxyConfig{Mode: mode("SEND", "BUFFERED", "SKIP", "NONE")},
			hooks:      hooks{reqBody: replaceWith(nil)},
			wantStatus: 500,
		},
		{
			name:       "BUFFERED mismatch is a 500 even with failure_mode_allow",
			cfg:        ProxyConfig{Mode: mode("SEND", "BUFFERED", "SKIP", "NONE"), FailureModeAllow: true},
			hooks:      hooks{reqBody: replaceWith(setHeaders("content-length", "1"))},
			wantStatus: 500,
		},
		{
			name:       "BUFFERED with content-length removed by the processor goes chunked",
			cfg:        ProxyConfig{Mode: mode("SEND", "BUFFERED", "SKIP", "NONE")},
			hooks:      hooks{reqBody: replaceWith(&extprocv3.HeaderMutation{RemoveHeaders: []string{"Content-Length"}})},
			wantStatus: 200, wantCL: -1, wantBody: newBody,
		},
		{
			name: "BUFFERED clear_body:false with content-length fails the length check",
			cfg:  ProxyConfig{Mode: mode("SEND", "BUFFERED", "SKIP", "NONE")},
			hooks: hooks{reqBody: func(*extprocv3.HttpBody) *extprocv3.ProcessingResponse {
				return bodyResp(true, nil, &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_ClearBody{}})
			}},
			wantStatus: 500,
		},
		{
			name:       "STREAMED removes it and skips a processor-set one",
			cfg:        ProxyConfig{Mode: mode("SEND", "STREAMED", "SKIP", "NONE")},
			hooks:      hooks{reqBody: replaceWith(setHeaders("content-length", "999"))},
			wantStatus: 200, wantCL: -1, wantBody: newBody,
		},
		{
			name:       "BUFFERED with header SKIP removes it",
			cfg:        ProxyConfig{Mode: mode("SKIP", "BUFFERED", "SKIP", "NONE")},
			wantStatus: 200, wantCL: -1, wantBody: string(body),
		},
		{
			name:       "allow_content_length_header keeps it",
			cfg:        ProxyConfig{Mode: mode("SEND", "STREAMED", "SKIP", "NONE"), AllowContentLengthHeader: true},
			hooks:      hooks{reqBody: sameLengthUpper},
			wantStatus: 200, wantCL: origCL, wantBody: string(upper(body)),
		},
		{
			name:       "NONE keeps it",
			cfg:        ProxyConfig{Mode: mode("SEND", "NONE", "SKIP", "NONE")},
			wantStatus: 200, wantCL: origCL, wantBody: string(body),
		},
		{
			name:       "a route mode decides removal",
			cfg:        ProxyConfig{Mode: mode("SEND", "NONE", "SKIP", "NONE"), Routes: []RouteOverride{{Prefix: "/v1", Mode: mode("SEND", "STREAMED", "SKIP", "NONE")}}},
			wantStatus: 200, wantCL: -1, wantBody: string(body),
		},
		{
			// §4 rule 3: removal is decided at headers time, so an override from NONE to STREAMED keeps
			// the original content-length (the processor must remove it itself to change the length).
			name: "mode_override NONE to STREAMED keeps the original",
			cfg:  ProxyConfig{Mode: mode("SEND", "NONE", "SKIP", "NONE"), AllowModeOverride: true},
			hooks: hooks{
				reqHeaders: func(*extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
					r := headersResp(true, nil)
					r.ModeOverride = &extprocfilterv3.ProcessingMode{RequestBodyMode: modeStreamed}
					return r
				},
				reqBody: sameLengthUpper,
			},
			wantStatus: 200, wantCL: origCL, wantBody: string(upper(body)),
		},
		{
			name: "mode_override with the processor removing content-length",
			cfg:  ProxyConfig{Mode: mode("SEND", "NONE", "SKIP", "NONE"), AllowModeOverride: true},
			hooks: hooks{
				reqHeaders: func(*extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
					r := headersResp(true, &extprocv3.HeaderMutation{RemoveHeaders: []string{"content-length"}})
					r.ModeOverride = &extprocfilterv3.ProcessingMode{RequestBodyMode: modeStreamed}
					return r
				},
				reqBody: replaceWith(nil),
			},
			wantStatus: 200, wantCL: -1, wantBody: newBody,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.cfg, autoProc(tc.hooks))
			r := e.do("POST", "/v1/chat/completions", body, "Content-Type", "application/json")
			mustStatus(t, r, tc.wantStatus)
			if tc.wantStatus != 200 {
				if got := r.header.Get(DetailsHeader); got != errContentLengthMismatch.Error() {
					t.Errorf("details %q", got)
				}
				return
			}
			up := e.up.Requests()[0]
			if up.ContentLength != tc.wantCL || string(up.Body) != tc.wantBody {
				t.Errorf("upstream content-length %d body %q, want %d %q", up.ContentLength, up.Body, tc.wantCL, tc.wantBody)
			}
		})
	}
}

// §4 on the response: BUFFERED keeps content-length (so the processor must fix it), STREAMED removes it.
func TestResponseContentLength(t *testing.T) {
	tests := []struct {
		name       string
		mode       string
		setCL      bool
		wantStatus int
		wantCL     string
	}{
		{"BUFFERED with the right length", "BUFFERED", true, 200, "2"},
		{"BUFFERED mismatch", "BUFFERED", false, 500, ""},
		{"STREAMED", "STREAMED", false, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, ProxyConfig{Mode: mode("SKIP", "NONE", "SEND", tc.mode)}, autoProc(hooks{respBody: func(b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
				var hm *extprocv3.HeaderMutation
				if tc.setCL {
					hm = setHeaders("content-length", "2")
				}
				if !b.GetEndOfStream() {
					return bodyResp(false, nil, replaceBody(""))
				}
				return bodyResp(false, hm, replaceBody("{}"))
			}}))
			r := e.do("POST", "/v1/chat/completions", chatBody(""))
			mustStatus(t, r, tc.wantStatus)
			if got := r.header.Get("Content-Length"); tc.wantStatus == 200 && got != tc.wantCL {
				t.Errorf("client content-length %q, want %q", got, tc.wantCL)
			}
		})
	}
}
