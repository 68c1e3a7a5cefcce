package testenv

import (
	"strings"
	"testing"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/proto"
)

func TestOverrideMode(t *testing.T) {
	base := mode("SEND", "BUFFERED", "SEND", "STREAMED")
	base.ResponseTrailerMode = extprocfilterv3.ProcessingMode_SEND
	got := overrideMode(base, &extprocfilterv3.ProcessingMode{
		ResponseHeaderMode: extprocfilterv3.ProcessingMode_SKIP,
		RequestBodyMode:    modeStreamed,
	})
	want := &extprocfilterv3.ProcessingMode{
		RequestHeaderMode:   extprocfilterv3.ProcessingMode_SEND, // DEFAULT leaves the base
		RequestBodyMode:     modeStreamed,
		ResponseHeaderMode:  extprocfilterv3.ProcessingMode_SKIP,
		ResponseBodyMode:    modeNone, // unset body mode is taken verbatim: NONE
		ResponseTrailerMode: extprocfilterv3.ProcessingMode_SEND,
	}
	if !proto.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestParseBodyMode(t *testing.T) {
	for _, s := range []string{"NONE", "streamed", " BUFFERED ", "BUFFERED_PARTIAL", "FULL_DUPLEX_STREAMED"} {
		if _, err := ParseBodyMode(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"", "GRPC", "STREAMY"} {
		if _, err := ParseBodyMode(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// §6 mode_override: honoured only with allow_mode_override, on a headers response, without
// send_body_without_waiting and without a FULL_DUPLEX filter-level mode; the base is the filter-level
// mode; body modes verbatim.
func TestModeOverride(t *testing.T) {
	withOverride := func(request bool, o *extprocfilterv3.ProcessingMode) func(*extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
		return func(*extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
			r := headersResp(request, nil)
			r.ModeOverride = o
			return r
		}
	}
	bufferBoth := &extprocfilterv3.ProcessingMode{RequestBodyMode: modeBuffered, ResponseBodyMode: modeBuffered}
	tests := []struct {
		name      string
		cfg       ProxyConfig
		hooks     hooks
		wantKinds string
	}{
		{
			name:      "ignored without allow_mode_override",
			cfg:       ProxyConfig{Mode: mode("SEND", "NONE", "SEND", "NONE")},
			hooks:     hooks{reqHeaders: withOverride(true, bufferBoth)},
			wantKinds: "request_headers,response_headers",
		},
		{
			name:      "honoured on the request headers response, for both directions",
			cfg:       ProxyConfig{Mode: mode("SEND", "NONE", "SEND", "NONE"), AllowModeOverride: true},
			hooks:     hooks{reqHeaders: withOverride(true, bufferBoth)},
			wantKinds: "request_headers,request_body(eos),response_headers,response_body(eos)",
		},
		{
			name:      "honoured on the response headers response (body only for errors)",
			cfg:       ProxyConfig{Mode: mode("SEND", "NONE", "SEND", "NONE"), AllowModeOverride: true},
			hooks:     hooks{respHeaders: withOverride(false, &extprocfilterv3.ProcessingMode{ResponseBodyMode: modeBuffered})},
			wantKinds: "request_headers,response_headers,response_body(eos)",
		},
		{
			name:      "an unset body mode becomes NONE",
			cfg:       ProxyConfig{Mode: mode("SEND", "BUFFERED", "SEND", "STREAMED"), AllowModeOverride: true},
			hooks:     hooks{reqHeaders: withOverride(true, &extprocfilterv3.ProcessingMode{ResponseBodyMode: modeBuffered})},
			wantKinds: "request_headers,response_headers,response_body(eos)",
		},
		{
			name:      "DEFAULT header mode keeps the base, the base being the filter mode and not the route's",
			cfg:       ProxyConfig{Mode: mode("SEND", "NONE", "SEND", "NONE"), AllowModeOverride: true, Routes: []RouteOverride{{Prefix: "/", Mode: mode("SEND", "NONE", "SKIP", "NONE")}}},
			hooks:     hooks{reqHeaders: withOverride(true, &extprocfilterv3.ProcessingMode{})},
			wantKinds: "request_headers,response_headers",
		},
		{
			name: "ignored on a body response",
			cfg:  ProxyConfig{Mode: mode("SEND", "BUFFERED", "SEND", "NONE"), AllowModeOverride: true},
			hooks: hooks{reqBody: func(*extprocv3.HttpBody) *extprocv3.ProcessingResponse {
				r := bodyResp(true, nil, nil)
				r.ModeOverride = bufferBoth
				return r
			}},
			wantKinds: "request_headers,request_body(eos),response_headers",
		},
		{
			name:      "ignored when a filter-level body mode is FULL_DUPLEX_STREAMED",
			cfg:       ProxyConfig{Mode: mode("SEND", "NONE", "SEND", "FULL_DUPLEX_STREAMED"), AllowModeOverride: true},
			hooks:     hooks{reqHeaders: withOverride(true, bufferBoth)},
			wantKinds: `request_headers,response_headers(,response_body)*,response_body\(eos\)`,
		},
		{
			name:      "ignored with send_body_without_waiting_for_header_response",
			cfg:       ProxyConfig{Mode: mode("SEND", "NONE", "SEND", "NONE"), AllowModeOverride: true, SendBodyWithoutWaitingForHeaderResponse: true},
			hooks:     hooks{reqHeaders: withOverride(true, bufferBoth)},
			wantKinds: "request_headers,response_headers",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.cfg, autoProc(tc.hooks))
			mustStatus(t, e.do("POST", "/v1/chat/completions", chatBody("")), 200)
			if got := strings.Join(kinds(e.proc.next(t).wait(t)), ","); !kindsMatch(got, tc.wantKinds) {
				t.Fatalf("messages %s, want %s", got, tc.wantKinds)
			}
		})
	}
}

// §6: overriding to FULL_DUPLEX_STREAMED from the request headers response works (trailer mode need
// not be SEND); the body held during the headers wait goes to the processor.
func TestModeOverrideToFullDuplex(t *testing.T) {
	handler := func(s *procStream) error {
		for {
			r, err := s.recv()
			if err != nil {
				return nil
			}
			switch {
			case r.GetRequestHeaders() != nil:
				resp := headersResp(true, &extprocv3.HeaderMutation{RemoveHeaders: []string{"content-length"}})
				resp.ModeOverride = &extprocfilterv3.ProcessingMode{RequestBodyMode: modeDuplex}
				_ = s.send(resp)
			case r.GetRequestBody() != nil:
				b := r.GetRequestBody()
				_ = s.send(streamedResp(true, upper(b.GetBody()), b.GetEndOfStream()))
			}
		}
	}
	cfg := ProxyConfig{Mode: mode("SEND", "NONE", "SKIP", "NONE"), AllowModeOverride: true, RequestChunker: FixedChunks(16)}
	e := newEnv(t, cfg, handler)
	body := []byte(`{"model":"m","x":"lower case text"}`)
	mustStatus(t, e.do("POST", "/v1/other", body), 404)
	up := e.up.Requests()[0]
	if string(up.Body) != string(upper(body)) || up.ContentLength != -1 {
		t.Fatalf("upstream got %q (content-length %d)", up.Body, up.ContentLength)
	}
}
