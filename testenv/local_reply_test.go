package testenv

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// errStop ends a script with status OK and without draining.
var errStop = errors.New("stop")

// script runs steps in order on one stream, then drains it.
func script(steps ...func(*procStream) error) func(*procStream) error {
	return func(s *procStream) error {
		for _, st := range steps {
			if err := st(s); errors.Is(err, errStop) {
				return nil
			} else if err != nil {
				return err
			}
		}
		s.drain()
		return nil
	}
}

func expect(k string) func(*procStream) error {
	return func(s *procStream) error {
		for {
			r, err := s.recv()
			if err != nil {
				return nil
			}
			if strings.HasPrefix(kind(r), k) {
				return nil
			}
		}
	}
}

func reply(r *extprocv3.ProcessingResponse) func(*procStream) error {
	return func(s *procStream) error { _ = s.send(r); return nil }
}

func pause(d time.Duration) func(*procStream) error {
	return func(*procStream) error { time.Sleep(d); return nil }
}

// closeWith ends the stream: nil closes with OK.
func closeWith(err error) func(*procStream) error {
	if err == nil {
		err = errStop
	}
	return func(*procStream) error { return err }
}

// passRequest answers a BUFFERED request's headers and body unchanged.
func passRequest() func(*procStream) error {
	return func(s *procStream) error {
		for _, st := range []func(*procStream) error{expect("request_headers"), reply(headersResp(true, nil)),
			expect("request_body"), reply(bodyResp(true, nil, nil))} {
			_ = st(s)
		}
		return nil
	}
}

// §1 "Response discipline" and §9 "Spurious": anything but exactly the expected response is a local
// reply with status_on_error, or with failure_mode_allow the request goes on without the processor,
// except once FULL_DUPLEX_STREAMED body went to the processor (canFailOpen).
func TestStrictResponses(t *testing.T) {
	buffered := mode("SEND", "BUFFERED", "SKIP", "NONE")
	duplex := mode("SEND", "FULL_DUPLEX_STREAMED", "SKIP", "NONE")
	tests := []struct {
		name          string
		mode          string // "buffered" or "duplex"
		steps         []func(*procStream) error
		statusOnError int
		wantStatus    int
		wantDetails   string
		failOpenOK    bool // with failure_mode_allow the request succeeds unmodified
	}{
		{
			name:       "wrong oneof for request headers",
			steps:      []func(*procStream) error{expect("request_headers"), reply(bodyResp(true, nil, nil))},
			wantStatus: 500, wantDetails: "spurious_message", failOpenOK: true,
		},
		{
			name:       "no oneof set",
			steps:      []func(*procStream) error{expect("request_headers"), reply(&extprocv3.ProcessingResponse{})},
			wantStatus: 500, wantDetails: "unhandled_message", failOpenOK: true,
		},
		{
			name:       "body response before the headers response",
			steps:      []func(*procStream) error{expect("request_headers"), reply(bodyResp(true, nil, replaceBody("x")))},
			wantStatus: 500, wantDetails: "spurious_message", failOpenOK: true,
		},
		{
			name: "a second headers response",
			steps: []func(*procStream) error{expect("request_headers"), reply(headersResp(true, nil)),
				expect("request_body"), reply(headersResp(true, nil))},
			wantStatus: 500, wantDetails: "spurious_message", failOpenOK: true,
		},
		{
			name: "streamed_response outside FULL_DUPLEX_STREAMED",
			steps: []func(*procStream) error{expect("request_headers"), reply(headersResp(true, nil)),
				expect("request_body"), reply(streamedResp(true, []byte("x"), true))},
			wantStatus: 500, wantDetails: "spurious_message", failOpenOK: true,
		},
		{
			name:          "status_on_error is used",
			steps:         []func(*procStream) error{expect("request_headers"), reply(&extprocv3.ProcessingResponse{})},
			statusOnError: 503, wantStatus: 503, wantDetails: "unhandled_message", failOpenOK: true,
		},
		{
			name: "FULL_DUPLEX body response without streamed_response cannot fail open",
			mode: "duplex",
			steps: []func(*procStream) error{expect("request_body(eos)"), reply(headersResp(true, nil)),
				reply(bodyResp(true, nil, replaceBody("x")))},
			wantStatus: 500, wantDetails: "spurious_message",
		},
		{
			name:       "FULL_DUPLEX body response before the headers response",
			mode:       "duplex",
			steps:      []func(*procStream) error{expect("request_body(eos)"), reply(streamedResp(true, []byte("x"), true))},
			wantStatus: 500, wantDetails: "spurious_message",
		},
	}
	for _, tc := range tests {
		for _, failOpen := range []bool{false, true} {
			name := tc.name
			if failOpen {
				name += "/failure_mode_allow"
			}
			t.Run(name, func(t *testing.T) {
				m := buffered
				if tc.mode == "duplex" {
					m = duplex
				}
				cfg := ProxyConfig{Mode: m, FailureModeAllow: failOpen, StatusOnError: tc.statusOnError}
				e := newEnv(t, cfg, script(tc.steps...))
				body := chatBody("")
				r := e.do("POST", "/v1/chat/completions", body)
				if failOpen && tc.failOpenOK {
					mustStatus(t, r, 200)
					if up := e.up.Requests(); len(up) != 1 || !bytes.Equal(up[0].Body, body) {
						t.Fatalf("fail-open: upstream did not get the original body")
					}
					return
				}
				mustStatus(t, r, tc.wantStatus)
				if got := r.header.Get(DetailsHeader); got != tc.wantDetails {
					t.Errorf("details %q, want %q", got, tc.wantDetails)
				}
				// FULL_DUPLEX lets the headers go upstream with the headers response; BUFFERED holds them.
				if tc.mode != "duplex" && len(e.up.Requests()) != 0 {
					t.Error("the upstream was contacted")
				}
			})
		}
	}
}

// §9 message timeout and override_message_timeout.
func TestMessageTimeout(t *testing.T) {
	override := func(d time.Duration) *extprocv3.ProcessingResponse {
		return &extprocv3.ProcessingResponse{OverrideMessageTimeout: durationpb.New(d),
			// Everything else in a timer extension is ignored, even a valid answer.
			Response: &extprocv3.ProcessingResponse_RequestHeaders{RequestHeaders: &extprocv3.HeadersResponse{}}}
	}
	tests := []struct {
		name       string
		mode       string
		maxTimeout time.Duration
		failOpen   bool
		steps      []func(*procStream) error
		wantStatus int
	}{
		{name: "no answer", steps: []func(*procStream) error{expect("request_headers")}, wantStatus: 504},
		{name: "no answer, fail open", failOpen: true, steps: []func(*procStream) error{expect("request_headers")}, wantStatus: 200},
		{
			name: "override accepted", maxTimeout: 3 * time.Second,
			steps: []func(*procStream) error{expect("request_headers"), reply(override(2 * time.Second)), pause(600 * time.Millisecond),
				reply(headersResp(true, nil)), expect("request_body"), reply(bodyResp(true, nil, nil))},
			wantStatus: 200,
		},
		{
			name:       "override ignored without max_message_timeout",
			steps:      []func(*procStream) error{expect("request_headers"), reply(override(2 * time.Second)), pause(600 * time.Millisecond), reply(headersResp(true, nil))},
			wantStatus: 504,
		},
		{
			name: "override above max_message_timeout ignored", maxTimeout: 400 * time.Millisecond,
			steps:      []func(*procStream) error{expect("request_headers"), reply(override(2 * time.Second)), pause(600 * time.Millisecond), reply(headersResp(true, nil))},
			wantStatus: 504,
		},
		{
			name: "only one override per state", maxTimeout: 3 * time.Second,
			steps: []func(*procStream) error{expect("request_headers"), reply(override(500 * time.Millisecond)), pause(200 * time.Millisecond),
				reply(override(2 * time.Second)), pause(600 * time.Millisecond), reply(headersResp(true, nil))},
			wantStatus: 504,
		},
		{
			name: "no timer in FULL_DUPLEX_STREAMED", mode: "duplex",
			steps: []func(*procStream) error{expect("request_body(eos)"), pause(600 * time.Millisecond), reply(headersResp(true, nil)),
				reply(streamedResp(true, chatBody(""), true))},
			wantStatus: 200,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mode("SEND", "BUFFERED", "SKIP", "NONE")
			if tc.mode == "duplex" {
				m = mode("SEND", "FULL_DUPLEX_STREAMED", "SKIP", "NONE")
			}
			cfg := ProxyConfig{Mode: m, MessageTimeout: 300 * time.Millisecond, MaxMessageTimeout: tc.maxTimeout, FailureModeAllow: tc.failOpen}
			e := newEnv(t, cfg, script(tc.steps...))
			r := e.do("POST", "/v1/chat/completions", chatBody(""))
			mustStatus(t, r, tc.wantStatus)
			if tc.wantStatus == 504 && r.header.Get(DetailsHeader) != "ext_proc_error_per-message_timeout_exceeded" {
				t.Errorf("details %q", r.header.Get(DetailsHeader))
			}
		})
	}
}

// §9: closing with OK continues unprocessed; an error status (or an unreachable processor) is
// status_on_error unless failure_mode_allow.
func TestProcessorFailures(t *testing.T) {
	tests := []struct {
		name        string
		steps       []func(*procStream) error
		unreachable bool
		hanging     bool
		failOpen    bool
		wantStatus  int
		wantDetails string
	}{
		{name: "close OK", steps: []func(*procStream) error{expect("request_headers"), closeWith(nil)}, wantStatus: 200},
		{name: "close with error", steps: []func(*procStream) error{expect("request_headers"), closeWith(status.Error(codes.Internal, "boom"))},
			wantStatus: 500, wantDetails: "ext_proc_error_gRPC_error_13{boom}"},
		{name: "close with error, fail open", failOpen: true, steps: []func(*procStream) error{expect("request_headers"), closeWith(status.Error(codes.Internal, "boom"))},
			wantStatus: 200},
		{name: "unreachable", unreachable: true, wantStatus: 500, wantDetails: "ext_proc_error_gRPC_error_14"},
		{name: "unreachable, fail open", unreachable: true, failOpen: true, wantStatus: 200},
		{name: "handshake never completes", hanging: true, wantStatus: 504, wantDetails: "ext_proc_error_per-message_timeout_exceeded"},
		{name: "handshake never completes, fail open", hanging: true, failOpen: true, wantStatus: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ProxyConfig{FailureModeAllow: tc.failOpen, Mode: mode("SEND", "BUFFERED", "SEND", "STREAMED"), MessageTimeout: 300 * time.Millisecond}
			var e *env
			switch {
			case tc.unreachable:
				cfg.ExtProcAddr = resettingAddr(t)
				e = newEnv(t, cfg, nil)
			case tc.hanging:
				cfg.ExtProcAddr = hangingAddr(t)
				e = newEnv(t, cfg, nil)
			default:
				e = newEnv(t, cfg, script(tc.steps...))
			}
			body := chatBody("")
			r := e.do("POST", "/v1/chat/completions", body)
			mustStatus(t, r, tc.wantStatus)
			if !strings.HasPrefix(r.header.Get(DetailsHeader), tc.wantDetails) {
				t.Errorf("details %q, want prefix %q", r.header.Get(DetailsHeader), tc.wantDetails)
			}
			if tc.wantStatus == 200 && (len(e.up.Requests()) != 1 || !bytes.Equal(e.up.Requests()[0].Body, body)) {
				t.Error("the upstream did not get the original request")
			}
		})
	}
}

// §9: in FULL_DUPLEX_STREAMED, body already handed to a processor that then closes with OK is lost.
func TestFullDuplexCloseLosesBody(t *testing.T) {
	steps := script(expect("response_headers"), reply(headersResp(false, nil)), expect("response_body(eos)"), closeWith(nil))
	e := newEnv(t, ProxyConfig{Mode: mode("SKIP", "NONE", "SEND", "FULL_DUPLEX_STREAMED"), ResponseChunker: FixedChunks(1 << 20)}, steps)
	r := e.do("POST", "/v1/chat/completions", chatBody(""))
	mustStatus(t, r, 200)
	if len(r.body) != 0 {
		t.Fatalf("client got %q; the body sent to the processor should be lost", r.body)
	}
}

// Mutation errors are local replies even with failure_mode_allow (§9).
func TestMutationErrorIgnoresFailOpen(t *testing.T) {
	e := newEnv(t, ProxyConfig{FailureModeAllow: true}, autoProc(hooks{reqHeaders: func(*extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
		return headersResp(true, setHeaders("x-bad", "a\nb"))
	}}))
	r := e.do("POST", "/v1/chat/completions", chatBody(""))
	mustStatus(t, r, 500)
	if got := r.header.Get(DetailsHeader); got != "header_mutation_set_contains_invalid_character" {
		t.Fatalf("details %q", got)
	}
}

// §8: ImmediateResponse in every phase. Before the client has response headers it replaces the
// response (status floored at 200, header rules, content-length/content-type defaults); after, the
// client sees a reset.
func TestImmediateResponse(t *testing.T) {
	ir := func(code int, body string, hm *extprocv3.HeaderMutation) *extprocv3.ProcessingResponse {
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ImmediateResponse{ImmediateResponse: &extprocv3.ImmediateResponse{
			Status: &typev3.HttpStatus{Code: typev3.StatusCode(code)}, Body: []byte(body), Headers: hm, Details: "by the processor",
		}}}
	}
	tests := []struct {
		name        string
		mode        string
		steps       []func(*procStream) error
		wantStatus  int
		wantReset   bool
		wantBody    string
		wantCT      string
		wantHeader  string // x-why
		upstreamHit bool
		slowBody    bool // the upstream body trickles, so STREAMED headers go out before it completes
	}{
		{
			name:       "request headers",
			steps:      []func(*procStream) error{expect("request_headers"), reply(ir(403, "denied", setHeaders("x-why", "policy", "x-envoy-nope", "1")))},
			wantStatus: 403, wantBody: "denied", wantCT: "text/plain", wantHeader: "policy",
		},
		{
			name: "request body, content-type from the mutation kept",
			steps: []func(*procStream) error{expect("request_headers"), reply(headersResp(true, nil)), expect("request_body"),
				reply(ir(429, `{"error":"slow down"}`, setHeaders("content-type", "application/json")))},
			wantStatus: 429, wantBody: `{"error":"slow down"}`, wantCT: "application/json",
		},
		{
			name:       "status below 200 becomes 200",
			steps:      []func(*procStream) error{expect("request_headers"), reply(ir(100, "", nil))},
			wantStatus: 200,
		},
		{
			name:       "response headers",
			steps:      []func(*procStream) error{passRequest(), expect("response_headers"), reply(ir(502, "bad upstream", nil))},
			wantStatus: 502, wantBody: "bad upstream", wantCT: "text/plain", upstreamHit: true,
		},
		{
			name: "response body BUFFERED (headers still held)", mode: "BUFFERED",
			steps: []func(*procStream) error{passRequest(), expect("response_headers"), reply(headersResp(false, nil)), expect("response_body"),
				reply(ir(500, "nope", nil))},
			wantStatus: 500, wantBody: "nope", wantCT: "text/plain", upstreamHit: true,
		},
		{
			name: "response body STREAMED after headers went out", mode: "STREAMED",
			steps: []func(*procStream) error{passRequest(), expect("response_headers"), reply(headersResp(false, nil)), expect("response_body"),
				reply(ir(500, "too late", nil))},
			wantReset: true, upstreamHit: true, slowBody: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			respMode := "NONE"
			if tc.mode != "" {
				respMode = tc.mode
			}
			e := newEnv(t, ProxyConfig{Mode: mode("SEND", "BUFFERED", "SEND", respMode)}, script(tc.steps...))
			if tc.slowBody {
				e.up.SetScript(func(req RecordedRequest) *ScriptedResponse {
					sr := DefaultResponse(req)
					sr.ChunkDelay = 50 * time.Millisecond
					return sr
				})
			}
			r := e.do("POST", "/v1/chat/completions", chatBody(`,"stream":true`))
			if tc.wantReset {
				if !isReset(r) {
					t.Fatalf("status %d err %v, want a reset", r.status, r.err)
				}
				return
			}
			mustStatus(t, r, tc.wantStatus)
			if string(r.body) != tc.wantBody || r.header.Get("Content-Type") != tc.wantCT {
				t.Errorf("body %q content-type %q, want %q %q", r.body, r.header.Get("Content-Type"), tc.wantBody, tc.wantCT)
			}
			if r.header.Get("X-Why") != tc.wantHeader || r.header.Get("X-Envoy-Nope") != "" {
				t.Errorf("headers %v", r.header)
			}
			if r.header.Get(DetailsHeader) != "by_the_processor" {
				t.Errorf("details %q", r.header.Get(DetailsHeader))
			}
			if hit := len(e.up.Requests()) > 0; hit != tc.upstreamHit {
				t.Errorf("upstream contacted = %v, want %v", hit, tc.upstreamHit)
			}
		})
	}
}

// §8: a gRPC caller gets 200 with grpc-status and grpc-message.
func TestImmediateResponseGRPC(t *testing.T) {
	e := newEnv(t, ProxyConfig{}, script(expect("request_headers"), reply(&extprocv3.ProcessingResponse{
		Response: &extprocv3.ProcessingResponse_ImmediateResponse{ImmediateResponse: &extprocv3.ImmediateResponse{
			Status: &typev3.HttpStatus{Code: typev3.StatusCode_Forbidden}, Body: []byte("no way"),
		}}})))
	r := e.do("POST", "/pkg.Svc/Method", []byte{0, 0, 0, 0, 0}, "Content-Type", "application/grpc")
	mustStatus(t, r, 200)
	if r.header.Get("Grpc-Status") != "7" || r.header.Get("Grpc-Message") != "no%20way" || len(r.body) != 0 {
		t.Fatalf("headers %v body %q", r.header, r.body)
	}
}
