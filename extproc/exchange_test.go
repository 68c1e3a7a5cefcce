package extproc

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/tidwall/gjson"
	"google.golang.org/grpc/metadata"

	"github.com/toolproc/toolproc/filters/clamp"
)

const (
	modeNone     = extprocfilterv3.ProcessingMode_NONE
	modeStreamed = extprocfilterv3.ProcessingMode_STREAMED
	modeBuffered = extprocfilterv3.ProcessingMode_BUFFERED
	modePartial  = extprocfilterv3.ProcessingMode_BUFFERED_PARTIAL
	modeDuplex   = extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
)

func testServer(t testing.TB, yaml string) *Server {
	t.Helper()
	cfg, err := ParseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return NewServer(cfg, nil, prometheus.NewRegistry())
}

// bigToolOutput is a 6,000-line, ~300 KB tool result with multi-byte text.
func bigToolOutput() string {
	var b strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&b, "line %04d: héllo wörld 中文 🙂 some log text here\n", i)
	}
	return b.String()
}

func openAIBody(result string) []byte {
	return []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"go"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":` + string(quote(result)) + `}],"stream":true}`)
}

func quote(s string) []byte {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.Bytes()
}

func hdrs(kv ...string) *extprocv3.HttpHeaders {
	hm := &corev3.HeaderMap{}
	for i := 0; i+1 < len(kv); i += 2 {
		hm.Headers = append(hm.Headers, &corev3.HeaderValue{Key: kv[i], RawValue: []byte(kv[i+1])})
	}
	return &extprocv3.HttpHeaders{Headers: hm}
}

func reqHeaders(path string, reqMode, respMode extprocfilterv3.ProcessingMode_BodySendMode, extra ...string) *extprocv3.ProcessingRequest {
	h := hdrs(append([]string{":authority", "api", ":path", path, ":method", "POST", "content-type", "application/json"}, extra...)...)
	return &extprocv3.ProcessingRequest{
		Request:        &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: h},
		ProtocolConfig: &extprocv3.ProtocolConfiguration{RequestBodyMode: reqMode, ResponseBodyMode: respMode},
	}
}

func reqBody(b []byte, eos bool) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestBody{RequestBody: &extprocv3.HttpBody{Body: b, EndOfStream: eos}}}
}

func respBody(b []byte, eos bool) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{ResponseBody: &extprocv3.HttpBody{Body: b, EndOfStream: eos}}}
}

// setValue is the value a set_headers list gives key, "" when none.
func setValue(set []*corev3.HeaderValueOption, key string) string {
	for _, h := range set {
		if h.GetHeader().GetKey() == key {
			return string(h.GetHeader().GetRawValue())
		}
	}
	return ""
}

func newTestExchange(s *Server) *exchange { return newExchange(s, s.currentProfiles()[DefaultProfile]) }

// forwarded computes what Envoy forwards for a sequence of chunks and the
// answers to them, for the non-duplex modes.
func forwarded(chunks [][]byte, resps []*extprocv3.ProcessingResponse, req bool) []byte {
	var out []byte
	for i, c := range chunks {
		var bm *extprocv3.BodyMutation
		if req {
			bm = resps[i].GetRequestBody().GetResponse().GetBodyMutation()
		} else {
			bm = resps[i].GetResponseBody().GetResponse().GetBodyMutation()
		}
		switch m := bm.GetMutation().(type) {
		case nil:
			out = append(out, c...)
		case *extprocv3.BodyMutation_Body:
			out = append(out, m.Body...)
		case *extprocv3.BodyMutation_ClearBody:
			if !m.ClearBody {
				out = append(out, c...)
			}
		}
	}
	return out
}

func assertClamped(t *testing.T, original, out []byte) {
	t.Helper()
	if !gjson.ValidBytes(out) {
		t.Fatal("forwarded body is not valid JSON")
	}
	content := gjson.GetBytes(out, "messages.2.content").String()
	if len(content) > clamp.DefaultMaxBytes || clamp.CountLines(content) > clamp.DefaultMaxLines || !utf8.ValidString(content) {
		t.Fatalf("tool result not clamped: %d bytes, %d lines", len(content), clamp.CountLines(content))
	}
	// Every byte outside the tool result is unchanged.
	orig := gjson.GetBytes(original, "messages.2.content")
	now := gjson.GetBytes(out, "messages.2.content")
	if !bytes.Equal(original[:orig.Index], out[:now.Index]) ||
		!bytes.Equal(original[orig.Index+len(orig.Raw):], out[now.Index+len(now.Raw):]) {
		t.Fatal("bytes outside the tool result changed")
	}
}

func TestBufferedRequestIsClamped(t *testing.T) {
	s := testServer(t, clampOnly)
	x := newTestExchange(s)
	body := openAIBody(bigToolOutput())
	r := x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex, "content-length", fmt.Sprint(len(body))))
	if len(r) != 1 || r[0].GetRequestHeaders() == nil || r[0].ModeOverride != nil {
		t.Fatalf("headers answer = %v", r)
	}
	if hm := r[0].GetRequestHeaders().GetResponse().GetHeaderMutation(); hm != nil {
		t.Fatalf("BUFFERED keeps content-length at headers time, got %v", hm)
	}
	r = x.handle(reqBody(body, true))
	if len(r) != 1 {
		t.Fatalf("want one answer, got %d", len(r))
	}
	cr := r[0].GetRequestBody().GetResponse()
	out := cr.GetBodyMutation().GetBody()
	assertClamped(t, body, out)
	cl := cr.GetHeaderMutation().GetSetHeaders()
	if len(cl) != 1 || cl[0].GetHeader().GetKey() != "content-length" || string(cl[0].GetHeader().GetRawValue()) != fmt.Sprint(len(out)) || cl[0].GetHeader().GetValue() != "" {
		t.Fatalf("content-length mutation = %v (body %d)", cl, len(out))
	}
	if got := testutil.ToFloat64(s.metrics.Requests.WithLabelValues("openai_chat", "default", outcomeRewritten)); got != 1 {
		t.Fatalf("rewritten counter = %v", got)
	}
	if x.dynamicMetadata().GetFields()["toolproc"].GetStructValue().GetFields()["results_changed"].GetNumberValue() != 1 {
		t.Fatal("dynamic metadata missing")
	}
}

func TestSmallRequestUnchanged(t *testing.T) {
	s := testServer(t, clampOnly)
	x := newTestExchange(s)
	body := openAIBody("short result")
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex))
	r := x.handle(reqBody(body, true))
	if len(r) != 1 || r[0].GetRequestBody().GetResponse().GetBodyMutation() != nil || r[0].GetRequestBody().GetResponse().GetHeaderMutation() != nil {
		t.Fatalf("small request must pass untouched, got %v", r)
	}
}

func TestNonLLMPathSkipsBodies(t *testing.T) {
	for _, tc := range []struct{ path, method string }{{"/v1/models", "POST"}, {"/v1/chat/completions", "GET"}, {"/healthz", "POST"}} {
		s := testServer(t, clampOnly)
		x := newTestExchange(s)
		m := reqHeaders(tc.path, modeBuffered, modeStreamed)
		m.GetRequestHeaders().Headers.Headers[2].RawValue = []byte(tc.method)
		r := x.handle(m)
		mo := r[0].GetModeOverride()
		if mo == nil || mo.RequestBodyMode != modeNone || mo.ResponseBodyMode != modeNone {
			t.Fatalf("%s %s: override = %v", tc.method, tc.path, mo)
		}
		// If Envoy ignores the override the body still comes: answered unchanged.
		r = x.handle(reqBody([]byte(`{"x":1}`), true))
		if len(r) != 1 || r[0].GetRequestBody().GetResponse().GetBodyMutation() != nil {
			t.Fatalf("body answer = %v", r)
		}
	}
}

func TestStreamedRequestInChunks(t *testing.T) {
	s := testServer(t, clampOnly)
	x := newTestExchange(s)
	body := openAIBody(bigToolOutput())
	r := x.handle(reqHeaders("/v1/chat/completions", modeStreamed, modeStreamed))
	if rm := r[0].GetRequestHeaders().GetResponse().GetHeaderMutation().GetRemoveHeaders(); len(rm) != 1 || rm[0] != "content-length" {
		t.Fatalf("STREAMED must drop content-length at headers time: %v", rm)
	}
	chunks := [][]byte{body[:1000], body[1000:200000], body[200000:]}
	var resps []*extprocv3.ProcessingResponse
	for i, c := range chunks {
		got := x.handle(reqBody(c, i == len(chunks)-1))
		if i < len(chunks)-1 && len(got) != 0 {
			t.Fatalf("chunk %d answered early", i)
		}
		resps = append(resps, got...)
	}
	if len(resps) != len(chunks) {
		t.Fatalf("want one answer per chunk, got %d", len(resps))
	}
	assertClamped(t, body, forwarded(chunks, resps, true))
}

func TestStreamedWholeBodyInOneMessage(t *testing.T) {
	s := testServer(t, clampOnly)
	x := newTestExchange(s)
	body := openAIBody(bigToolOutput())
	x.handle(reqHeaders("/v1/chat/completions", modeStreamed, modeNone))
	r := x.handle(reqBody(body, true))
	if len(r) != 1 {
		t.Fatalf("answers = %d", len(r))
	}
	assertClamped(t, body, forwarded([][]byte{body}, r, true))
}

func TestStreamedRequestWithTrailersPassesThrough(t *testing.T) {
	s := testServer(t, clampOnly)
	x := newTestExchange(s)
	body := openAIBody(bigToolOutput())
	x.handle(reqHeaders("/v1/chat/completions", modeStreamed, modeNone))
	chunks := [][]byte{body[:5000], body[5000:]}
	var resps []*extprocv3.ProcessingResponse
	for _, c := range chunks {
		resps = append(resps, x.handle(reqBody(c, false))...)
	}
	tr := x.handle(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestTrailers{RequestTrailers: &extprocv3.HttpTrailers{}}})
	resps = append(resps, tr...)
	if len(resps) != 3 || resps[2].GetRequestTrailers() == nil {
		t.Fatalf("answers = %v", resps)
	}
	if got := forwarded(chunks, resps[:2], true); !bytes.Equal(got, body) {
		t.Fatal("held chunks must be released unchanged when trailers end the body")
	}
	if testutil.ToFloat64(s.metrics.Passthrough.WithLabelValues(reasonTrailers)) != 1 {
		t.Fatal("trailers pass-through not counted")
	}
}

func TestFullDuplexRequest(t *testing.T) {
	s := testServer(t, clampOnly)
	x := newTestExchange(s)
	body := openAIBody(bigToolOutput())
	x.handle(reqHeaders("/v1/chat/completions", modeDuplex, modeDuplex))
	var out []byte
	var last *extprocv3.StreamedBodyResponse
	for i := 0; i < len(body); i += 7000 {
		end := min(i+7000, len(body))
		for _, r := range x.handle(reqBody(body[i:end], end == len(body))) {
			sr := r.GetRequestBody().GetResponse().GetBodyMutation().GetStreamedResponse()
			if sr == nil {
				t.Fatal("FULL_DUPLEX answers must carry streamed_response")
			}
			if len(sr.Body) > fullDuplexChunk {
				t.Fatalf("streamed chunk of %d bytes", len(sr.Body))
			}
			out = append(out, sr.Body...)
			last = sr
		}
	}
	if last == nil || !last.EndOfStream {
		t.Fatal("last streamed_response must end the stream")
	}
	assertClamped(t, body, out)
	// A duplicate end_of_stream chunk (envoy#46237) is ignored.
	if r := x.handle(reqBody(nil, true)); len(r) != 0 {
		t.Fatalf("duplicate eos answered: %v", r)
	}
}

func TestResponsePassthroughPerMode(t *testing.T) {
	sse := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"héllo\"}}]}\n\ndata: [DONE]\n\n")
	chunks := [][]byte{sse[:10], sse[10:37], sse[37:], {}}
	for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{modeStreamed, modeBuffered, modeDuplex} {
		t.Run(mode.String(), func(t *testing.T) {
			s := testServer(t, clampOnly)
			x := newTestExchange(s)
			x.handle(reqHeaders("/v1/chat/completions", modeBuffered, mode))
			x.handle(reqBody(openAIBody("x"), true))
			r := x.handle(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: hdrs(":status", "200")}})
			if len(r) != 1 || r[0].GetResponseHeaders() == nil {
				t.Fatalf("response headers answer = %v", r)
			}
			send := chunks
			if mode == modeBuffered {
				send = [][]byte{sse}
			}
			var out []byte
			var resps []*extprocv3.ProcessingResponse
			for i, c := range send {
				got := x.handle(respBody(c, i == len(send)-1))
				if mode != modeDuplex && len(got) != 1 {
					t.Fatalf("chunk %d: %d answers", i, len(got))
				}
				for _, g := range got {
					if sr := g.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse(); sr != nil {
						out = append(out, sr.Body...)
					}
				}
				resps = append(resps, got...)
			}
			if mode != modeDuplex {
				out = forwarded(send, resps, false)
			}
			if !bytes.Equal(out, sse) {
				t.Fatalf("response changed: %q", out)
			}
		})
	}
}

func TestMalformedJSONPassesThroughAndIsCounted(t *testing.T) {
	s := testServer(t, clampOnly)
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/messages", modeBuffered, modeNone))
	r := x.handle(reqBody([]byte(`{"messages":[{"role":"user",`), true))
	if len(r) != 1 || r[0].GetRequestBody().GetResponse().GetBodyMutation() != nil {
		t.Fatalf("answer = %v", r)
	}
	if testutil.ToFloat64(s.metrics.Passthrough.WithLabelValues(reasonMalformedJSON)) != 1 {
		t.Fatal("malformed JSON not counted")
	}
}

func TestFailClosedRejects(t *testing.T) {
	s := testServer(t, "profiles: {default: {failure_mode: closed}}")
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/messages", modeBuffered, modeNone))
	r := x.handle(reqBody([]byte(`not json`), true))
	ir := r[0].GetImmediateResponse()
	if ir == nil || ir.GetStatus().GetCode() != typev3.StatusCode_BadRequest || !gjson.ValidBytes(ir.Body) {
		t.Fatalf("want a 400 immediate response, got %v", r)
	}
}

func TestBufferedPartialIsNotRewritten(t *testing.T) {
	s := testServer(t, clampOnly)
	x := newTestExchange(s)
	body := openAIBody(bigToolOutput())
	x.handle(reqHeaders("/v1/chat/completions", modePartial, modeNone))
	r := x.handle(reqBody(body[:100000], false))
	if len(r) != 1 || r[0].GetRequestBody().GetResponse().GetBodyMutation() != nil {
		t.Fatalf("partial body must pass unchanged, got %v", r)
	}
	if testutil.ToFloat64(s.metrics.Passthrough.WithLabelValues(reasonPartialBody)) != 1 {
		t.Fatal("partial body not counted")
	}
}

func TestCompressedRequestIsNotProcessed(t *testing.T) {
	s := testServer(t, clampOnly)
	x := newTestExchange(s)
	r := x.handle(reqHeaders("/v1/messages", modeBuffered, modeNone, "content-encoding", "gzip"))
	if r[0].GetModeOverride() == nil || x.process {
		t.Fatal("gzip request body must be skipped")
	}
}

func TestProfileSelection(t *testing.T) {
	s := testServer(t, "profiles: {strict: {clamp: {max_bytes: 1024, max_lines: 10}}, quiet: {enabled: false}}")
	pick := func(name string) *compiledProfile {
		ctx := context.Background()
		if name != "" {
			ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(ProfileMetadataKey, name))
		}
		return s.profileFor(ctx)
	}
	if p := pick("strict"); p.name != "strict" || p.Clamp.MaxBytes != 1024 || p.Clamp.Keep != "head" {
		t.Fatalf("strict = %+v", p.Profile)
	}
	if p := pick(""); p.name != "default" {
		t.Fatal("no metadata must pick default")
	}
	if p := pick("nope"); p.name != "default" || testutil.ToFloat64(s.metrics.UnknownProfile) != 1 {
		t.Fatal("unknown profile must fall back to default and be counted")
	}
	x := newExchange(s, pick("quiet"))
	if r := x.handle(reqHeaders("/v1/messages", modeBuffered, modeNone)); r[0].GetModeOverride() == nil {
		t.Fatal("disabled profile must skip the body")
	}
}

// TestJSONAnswerToStreamingRequest: a client asked for a stream and got
// JSON. A chat.completion becomes a stream; anything else still arrives as a
// well-formed stream (an error chunk carrying the original, then [DONE]).
func TestJSONAnswerToStreamingRequest(t *testing.T) {
	completion := []byte(`{"id":"chatcmpl-9","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hi there"},"finish_reason":"stop"}]}`)
	for _, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{modeStreamed, modeBuffered, modeDuplex} {
		for _, tc := range []struct {
			name string
			body []byte
			has  []string
		}{
			{"chat.completion", completion, []string{`"content":"hi there"`, `"finish_reason":"stop"`, "data: [DONE]\n\n"}},
			{"other JSON", []byte(`{"ok":true}`), []string{`"type":"upstream_error"`, `"body":{"ok":true}`, "data: [DONE]\n\n"}},
		} {
			t.Run(mode.String()+"/"+tc.name, func(t *testing.T) {
				s := testServer(t, clampOnly)
				x := newTestExchange(s)
				x.handle(reqHeaders("/v1/chat/completions", modeBuffered, mode))
				x.handle(reqBody(openAIBody("x"), true)) // "stream":true
				r := x.handle(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
					ResponseHeaders: hdrs(":status", "200", "content-type", "application/json"),
				}})
				set := r[0].GetResponseHeaders().GetResponse().GetHeaderMutation().GetSetHeaders()
				if len(set) != 2 || setValue(set, "content-type") != "text/event-stream" || setValue(set, ReceiptHeader) == "" {
					t.Fatalf("content-type not switched: %v", set)
				}
				chunks := [][]byte{tc.body[:5], tc.body[5:], nil}
				if mode == modeBuffered {
					chunks = [][]byte{tc.body}
				}
				var out []byte
				var resps []*extprocv3.ProcessingResponse
				for i, c := range chunks {
					got := x.handle(respBody(c, i == len(chunks)-1))
					for _, g := range got {
						if sr := g.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse(); sr != nil {
							out = append(out, sr.Body...)
						}
					}
					resps = append(resps, got...)
				}
				if mode != modeDuplex {
					out = forwarded(chunks, resps, false)
				}
				for _, h := range tc.has {
					if !bytes.Contains(out, []byte(h)) {
						t.Fatalf("stream lacks %q:\n%s", h, out)
					}
				}
				if !bytes.HasSuffix(out, []byte("data: [DONE]\n\n")) {
					t.Fatalf("stream must end with [DONE]:\n%s", out)
				}
			})
		}
	}
}

// clampOnly turns compression off: these tests pin the clamp's behaviour,
// where every byte outside a tool result must stay as it was.
const clampOnly = "store: {keyless_references: false}\nprofiles: {default: {compress: {enabled: false}}}"
