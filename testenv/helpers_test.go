package testenv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// procServer is a scripted ext_proc server on 127.0.0.1:0. Each Process stream runs handler.
type procServer struct {
	extprocv3.UnimplementedExternalProcessorServer
	addr    string
	handler func(*procStream) error
	streams chan *procStream
}

// procStream is one Process stream as the scripted server sees it.
type procStream struct {
	s    grpc.BidiStreamingServer[extprocv3.ProcessingRequest, extprocv3.ProcessingResponse]
	md   metadata.MD
	mu   sync.Mutex
	got  []*extprocv3.ProcessingRequest
	end  error // how the last Recv ended
	done chan struct{}
}

func startProc(t testing.TB, handler func(*procStream) error) *procServer {
	t.Helper()
	ps := &procServer{handler: handler, streams: make(chan *procStream, 1024)}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(maxGRPCMessage), grpc.MaxSendMsgSize(maxGRPCMessage))
	extprocv3.RegisterExternalProcessorServer(srv, ps)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ps.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return ps
}

func (p *procServer) Process(s grpc.BidiStreamingServer[extprocv3.ProcessingRequest, extprocv3.ProcessingResponse]) error {
	md, _ := metadata.FromIncomingContext(s.Context())
	st := &procStream{s: s, md: md, done: make(chan struct{})}
	select {
	case p.streams <- st:
	default: // nobody inspects streams this far back (benchmarks)
	}
	defer close(st.done)
	return p.handler(st)
}

// next returns the next stream the server accepted.
func (p *procServer) next(t *testing.T) *procStream {
	t.Helper()
	select {
	case s := <-p.streams:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no processor stream opened")
		return nil
	}
}

// noStream asserts that no stream was opened.
func (p *procServer) noStream(t *testing.T) {
	t.Helper()
	select {
	case <-p.streams:
		t.Fatal("a processor stream was opened")
	case <-time.After(50 * time.Millisecond):
	}
}

func (s *procStream) recv() (*extprocv3.ProcessingRequest, error) {
	r, err := s.s.Recv()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.end = err
		return nil, err
	}
	s.got = append(s.got, r)
	return r, nil
}

func (s *procStream) send(r *extprocv3.ProcessingResponse) error { return s.s.Send(r) }

// drain reads until the stream ends, recording what arrives.
func (s *procStream) drain() {
	for {
		if _, err := s.recv(); err != nil {
			return
		}
	}
}

// wait waits for the handler to return and gives the messages received.
func (s *procStream) wait(t *testing.T) []*extprocv3.ProcessingRequest {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		t.Fatal("processor stream did not end")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*extprocv3.ProcessingRequest(nil), s.got...)
}

// hooks customise autoProc. A nil hook gives the plain answer; a hook returning nil sends nothing.
type hooks struct {
	reqHeaders, respHeaders   func(*extprocv3.HttpHeaders) *extprocv3.ProcessingResponse
	reqBody, respBody         func(*extprocv3.HttpBody) *extprocv3.ProcessingResponse
	reqTrailers, respTrailers func(*extprocv3.HttpTrailers) *extprocv3.ProcessingResponse
}

// autoProc answers every message correctly: CONTINUE for headers and trailers, an unmodified body
// response, and in FULL_DUPLEX_STREAMED (as announced by protocol_config) an echo of each chunk.
func autoProc(h hooks) func(*procStream) error {
	return func(s *procStream) error {
		var reqMode, respMode extprocfilterv3.ProcessingMode_BodySendMode
		for {
			r, err := s.recv()
			if err != nil {
				return nil
			}
			if pc := r.GetProtocolConfig(); pc != nil {
				reqMode, respMode = pc.GetRequestBodyMode(), pc.GetResponseBodyMode()
			}
			var out *extprocv3.ProcessingResponse
			switch v := r.GetRequest().(type) {
			case *extprocv3.ProcessingRequest_RequestHeaders:
				out = call(h.reqHeaders, v.RequestHeaders, headersResp(true, nil))
			case *extprocv3.ProcessingRequest_ResponseHeaders:
				out = call(h.respHeaders, v.ResponseHeaders, headersResp(false, nil))
			case *extprocv3.ProcessingRequest_RequestBody:
				def := bodyResp(true, nil, nil)
				if reqMode == modeDuplex {
					def = streamedResp(true, v.RequestBody.GetBody(), v.RequestBody.GetEndOfStream())
				}
				out = call(h.reqBody, v.RequestBody, def)
			case *extprocv3.ProcessingRequest_ResponseBody:
				def := bodyResp(false, nil, nil)
				if respMode == modeDuplex {
					def = streamedResp(false, v.ResponseBody.GetBody(), v.ResponseBody.GetEndOfStream())
				}
				out = call(h.respBody, v.ResponseBody, def)
			case *extprocv3.ProcessingRequest_RequestTrailers:
				out = call(h.reqTrailers, v.RequestTrailers, trailersResp(true, nil))
			case *extprocv3.ProcessingRequest_ResponseTrailers:
				out = call(h.respTrailers, v.ResponseTrailers, trailersResp(false, nil))
			}
			if out != nil {
				if err := s.send(out); err != nil {
					s.drain() // record how the stream really ended
					return nil
				}
			}
		}
	}
}

func call[T any](hook func(T) *extprocv3.ProcessingResponse, v T, def *extprocv3.ProcessingResponse) *extprocv3.ProcessingResponse {
	if hook == nil {
		return def
	}
	return hook(v)
}

// --- response builders ---

func headersResp(request bool, hm *extprocv3.HeaderMutation) *extprocv3.ProcessingResponse {
	hr := &extprocv3.HeadersResponse{Response: &extprocv3.CommonResponse{HeaderMutation: hm}}
	if request {
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestHeaders{RequestHeaders: hr}}
	}
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseHeaders{ResponseHeaders: hr}}
}

func bodyResp(request bool, hm *extprocv3.HeaderMutation, bm *extprocv3.BodyMutation) *extprocv3.ProcessingResponse {
	br := &extprocv3.BodyResponse{Response: &extprocv3.CommonResponse{HeaderMutation: hm, BodyMutation: bm}}
	if request {
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestBody{RequestBody: br}}
	}
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseBody{ResponseBody: br}}
}

func streamedResp(request bool, body []byte, eos bool) *extprocv3.ProcessingResponse {
	return bodyResp(request, nil, &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_StreamedResponse{
		StreamedResponse: &extprocv3.StreamedBodyResponse{Body: body, EndOfStream: eos},
	}})
}

func trailersResp(request bool, hm *extprocv3.HeaderMutation) *extprocv3.ProcessingResponse {
	tr := &extprocv3.TrailersResponse{HeaderMutation: hm}
	if request {
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestTrailers{RequestTrailers: tr}}
	}
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseTrailers{ResponseTrailers: tr}}
}

func replaceBody(b string) *extprocv3.BodyMutation {
	return &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: []byte(b)}}
}

// setHeaders builds a HeaderMutation that overwrites each key with its value (raw_value only).
func setHeaders(kv ...string) *extprocv3.HeaderMutation {
	hm := &extprocv3.HeaderMutation{}
	for i := 0; i+1 < len(kv); i += 2 {
		hm.SetHeaders = append(hm.SetHeaders, &corev3.HeaderValueOption{
			Header: &corev3.HeaderValue{Key: kv[i], RawValue: []byte(kv[i+1])},
		})
	}
	return hm
}

func appendHeader(key, value string) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Header: &corev3.HeaderValue{Key: key, RawValue: []byte(value)},
		//lint:ignore SA1019 the deprecated field is the one ext_proc reads (§7)
		Append: wrapperspb.Bool(true),
	}
}

// --- inspecting requests ---

func kind(r *extprocv3.ProcessingRequest) string {
	switch v := r.GetRequest().(type) {
	case *extprocv3.ProcessingRequest_RequestHeaders:
		return "request_headers"
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		return "response_headers"
	case *extprocv3.ProcessingRequest_RequestBody:
		if v.RequestBody.GetEndOfStream() {
			return "request_body(eos)"
		}
		return "request_body"
	case *extprocv3.ProcessingRequest_ResponseBody:
		if v.ResponseBody.GetEndOfStream() {
			return "response_body(eos)"
		}
		return "response_body"
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return "request_trailers"
	case *extprocv3.ProcessingRequest_ResponseTrailers:
		return "response_trailers"
	}
	return "?"
}

func kinds(rs []*extprocv3.ProcessingRequest) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = kind(r)
	}
	return out
}

// bodies concatenates the body messages of one direction.
func bodies(rs []*extprocv3.ProcessingRequest, request bool) []byte {
	var b []byte
	for _, r := range rs {
		if request {
			b = append(b, r.GetRequestBody().GetBody()...)
		} else {
			b = append(b, r.GetResponseBody().GetBody()...)
		}
	}
	return b
}

func bodyMsgs(rs []*extprocv3.ProcessingRequest, request bool) []*extprocv3.HttpBody {
	var out []*extprocv3.HttpBody
	for _, r := range rs {
		if request && r.GetRequestBody() != nil {
			out = append(out, r.GetRequestBody())
		}
		if !request && r.GetResponseBody() != nil {
			out = append(out, r.GetResponseBody())
		}
	}
	return out
}

func headerValue(hm *corev3.HeaderMap, key string) (string, bool) {
	for _, h := range hm.GetHeaders() {
		if h.GetKey() == key {
			return string(h.GetRawValue()), true
		}
	}
	return "", false
}

func hasKind(rs []*extprocv3.ProcessingRequest, k string) bool {
	for _, r := range rs {
		if strings.HasPrefix(kind(r), k) {
			return true
		}
	}
	return false
}

// resettingAddr returns an address that accepts TCP connections and closes them at once: a dead
// processor or upstream that, unlike a closed port, no other test can start listening on meanwhile.
func resettingAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// hangingAddr accepts TCP connections and never answers: a processor stuck before the gRPC handshake.
func hangingAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return ln.Addr().String()
}

// --- the environment: scripted processor + fake upstream + stand-in ---

type env struct {
	t     *testing.T
	proc  *procServer
	up    *FakeUpstream
	upURL string
	proxy *Proxy
	url   string
}

// newEnv starts an upstream (FakeUpstream unless upstream is given), the scripted processor (unless
// handler is nil and cfg.ExtProcAddr is set or empty on purpose) and the stand-in.
func newEnv(t *testing.T, cfg ProxyConfig, handler func(*procStream) error, upstream ...http.Handler) *env {
	t.Helper()
	e := &env{t: t, up: NewFakeUpstream()}
	var h http.Handler = e.up
	if len(upstream) > 0 {
		h = upstream[0]
	}
	upSrv := httptest.NewServer(h)
	t.Cleanup(upSrv.Close)
	e.upURL = upSrv.URL
	if handler != nil {
		e.proc = startProc(t, handler)
		cfg.ExtProcAddr = e.proc.addr
	}
	cfg.UpstreamURL = upSrv.URL
	if cfg.MessageTimeout == 0 {
		cfg.MessageTimeout = 2 * time.Second // generous under -race; timeout tests set their own
	}
	p, err := NewProxy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() {
		srv.Close()
		_ = p.Close()
	})
	e.proxy, e.url = p, srv.URL
	return e
}

type result struct {
	status  int
	header  http.Header
	body    []byte
	trailer http.Header
	err     error // reading the body failed (e.g. a reset)
}

// do sends a request through the stand-in.
func (e *env) do(method, path string, body []byte, hdr ...string) result {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return e.send(req)
}

func (e *env) send(req *http.Request) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), 10*time.Second)
	defer cancel()
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req.WithContext(ctx))
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, header: resp.Header, body: b, trailer: resp.Trailer, err: err}
}

func chatBody(extra string) []byte {
	return []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"héllo 中文 🙂"}]` + extra + `}`)
}

func mustStatus(t *testing.T, r result, want int) {
	t.Helper()
	if r.err != nil && r.status == 0 {
		t.Fatalf("request failed: %v", r.err)
	}
	if r.status != want {
		t.Fatalf("status = %d, want %d (details %q, body %q)", r.status, want, r.header.Get(DetailsHeader), r.body)
	}
}

func isReset(r result) bool {
	return r.err != nil && (errors.Is(r.err, io.ErrUnexpectedEOF) || strings.Contains(r.err.Error(), "EOF") ||
		strings.Contains(r.err.Error(), "reset") || strings.Contains(r.err.Error(), "closed"))
}

func mode(reqHeader, reqBody, respHeader, respBody string) *extprocfilterv3.ProcessingMode {
	hm := func(s string) extprocfilterv3.ProcessingMode_HeaderSendMode {
		return extprocfilterv3.ProcessingMode_HeaderSendMode(extprocfilterv3.ProcessingMode_HeaderSendMode_value[s])
	}
	bm := func(s string) extprocfilterv3.ProcessingMode_BodySendMode {
		return extprocfilterv3.ProcessingMode_BodySendMode(extprocfilterv3.ProcessingMode_BodySendMode_value[s])
	}
	m := &extprocfilterv3.ProcessingMode{
		RequestHeaderMode: hm(reqHeader), RequestBodyMode: bm(reqBody),
		ResponseHeaderMode: hm(respHeader), ResponseBodyMode: bm(respBody),
	}
	if m.RequestBodyMode == modeDuplex {
		m.RequestTrailerMode = extprocfilterv3.ProcessingMode_SEND
	}
	if m.ResponseBodyMode == modeDuplex {
		m.ResponseTrailerMode = extprocfilterv3.ProcessingMode_SEND
	}
	return m
}
