package extproc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Review finding 1: gjson's validator recursed once per nesting level, so
// 6.5 MB of '[' was a fatal stack overflow (not a recoverable panic) on the
// first POST. Finding 16: with a key given twice toolproc clamped the first
// and the provider read the second. Each body must reach the upstream
// byte-identical, in every request mode, counted under its reason.
func TestHostileBodiesPassThroughByteIdentical(t *testing.T) {
	big := bigToolOutput()
	for _, tc := range []struct {
		name, reason string
		body         []byte
	}{
		{"8MB of [", reasonTooDeep, bytes.Repeat([]byte("["), 8_000_000)},
		{"valid, 3M deep", reasonTooDeep, []byte(`{"model":"gpt-4o","messages":[{"role":"tool","tool_call_id":"c","content":` +
			string(quote(big)) + `}],"x":` + strings.Repeat("[", 3_000_000) + strings.Repeat("]", 3_000_000) + `}`)},
		{"duplicate content key", reasonDuplicateKeys, []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"go"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"small","content":` + string(quote(big)) + `}]}`)},
		{"duplicate key spelled with an escape", reasonDuplicateKeys, []byte(`{"model":"gpt-4o","messages":[` +
			`{"role":"tool","tool_call_id":"c1","content":"small","\u0063ontent":` + string(quote(big)) + `}]}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{"buffered", "streamed", "duplex"} {
				s := testServer(t, "")
				x := newTestExchange(s)
				var out []byte
				switch mode {
				case "buffered":
					x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeBuffered))
					resps := x.handle(reqBody(tc.body, true))
					out = forwarded([][]byte{tc.body}, resps, true)
				case "streamed":
					x.handle(reqHeaders("/v1/chat/completions", modeStreamed, modeStreamed))
					chunks := [][]byte{tc.body[:len(tc.body)/2], tc.body[len(tc.body)/2:]}
					var resps = x.handle(reqBody(chunks[0], false))
					resps = append(resps, x.handle(reqBody(chunks[1], true))...)
					out = forwarded(chunks, resps, true)
				case "duplex":
					x.handle(reqHeaders("/v1/chat/completions", modeDuplex, modeDuplex))
					for _, r := range x.handle(reqBody(tc.body, true)) {
						out = append(out, r.GetRequestBody().GetResponse().GetBodyMutation().GetStreamedResponse().GetBody()...)
					}
				}
				if !bytes.Equal(out, tc.body) {
					t.Fatalf("%s: upstream got %d bytes, want the %d the client sent, unchanged", mode, len(out), len(tc.body))
				}
				if n := testutil.ToFloat64(s.metrics.Passthrough.WithLabelValues(tc.reason)); n != 1 {
					t.Fatalf("%s: passthrough_total{reason=%q} = %v, want 1", mode, tc.reason, n)
				}
			}
		})
	}
}

// Under failure_mode: closed such a body is refused with a 400 naming the
// reason, never forwarded.
func TestHostileBodyFailClosed(t *testing.T) {
	s := testServer(t, "profiles: {default: {failure_mode: closed}}")
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeBuffered))
	resps := x.handle(reqBody(bytes.Repeat([]byte("{\"a\":"), 1000), true))
	ir := resps[0].GetImmediateResponse()
	if ir == nil || ir.GetStatus().GetCode() != 400 || !strings.Contains(string(ir.GetBody()), reasonTooDeep) {
		t.Fatalf("want a 400 immediate response naming %s, got %v", reasonTooDeep, resps[0])
	}
}
