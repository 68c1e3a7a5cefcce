package extproc

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
)

// Requests toolproc must leave alone are decided on their headers: the body
// is skipped (mode override NONE), counted under its reason.
func TestRequestsLeftAlone(t *testing.T) {
	sigv4 := "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=675f10a4"
	bedrock := "/model/anthropic.claude-sonnet-4-5-v1%3A0/converse"
	for _, tc := range []struct {
		name, config, path, reason string
		hdr                        []string
		skipped                    bool
	}{
		// Review finding 23: a replay that comes back through ext_proc.
		{"replay loop", "", "/v1/chat/completions", reasonReplayLoop, []string{ReplayHeader, "expand_context"}, true},
		// Issue item 9: the signature covers the body.
		{"sigv4 skip", "", bedrock, reasonSigV4, []string{"authorization", sigv4}, true},
		{"sigv4 rewrite (Envoy signs after ext_proc)", "profiles: {default: {sigv4: rewrite}}", bedrock, reasonSigV4, []string{"authorization", sigv4}, false},
		{"bearer on bedrock path", "", bedrock, reasonSigV4, []string{"authorization", "Bearer bedrock-api-key-0123456789"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testServer(t, tc.config)
			x := newTestExchange(s)
			r := x.handle(reqHeaders(tc.path, modeBuffered, modeBuffered, tc.hdr...))
			mo := r[0].GetModeOverride()
			skipped := mo != nil && mo.GetRequestBodyMode() == extprocfilterv3.ProcessingMode_NONE && mo.GetResponseBodyMode() == extprocfilterv3.ProcessingMode_NONE
			if skipped != tc.skipped || x.process == tc.skipped {
				t.Fatalf("skipped=%v process=%v, want skipped=%v", skipped, x.process, tc.skipped)
			}
			n := testutil.ToFloat64(s.metrics.Passthrough.WithLabelValues(tc.reason))
			if (n == 1) != tc.skipped {
				t.Fatalf("passthrough_total{reason=%q} = %v", tc.reason, n)
			}
		})
	}
}

func TestConfigRejects(t *testing.T) {
	for _, tc := range []struct{ yaml, key string }{
		{"profiles: {default: {sigv4: maybe}}", "sigv4"},
		{"store: {max_bytes: 4194304, tenant_max_bytes: 4194304}\nprofiles: {default: {compress: {max_bytes: 8388608}}}", "compress.max_bytes"},
		{"store: {tenant_max_bytes: 536870912}", "store.tenant_max_bytes"},
	} {
		if _, err := ParseConfig([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %v, want one naming %s", tc.yaml, err, tc.key)
		}
	}
}
