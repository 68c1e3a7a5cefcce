package envoy

import (
	"os"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"sigs.k8s.io/yaml"

	"github.com/toolproc/toolproc/filters/wire"
)

// TestProviderRoutes: a request of each provider, as its SDK sends it, takes the first
// matching route of the ingress listener to that provider's host over TLS (SNI and SAN), runs
// through ext_proc with the request body BUFFERED and the response body FULL_DUPLEX_STREAMED,
// and its path is one toolproc recognises as the provider's wire format.
func TestProviderRoutes(t *testing.T) {
	cases := []struct {
		provider, path, host string
		dialect              wire.Dialect
	}{
		{"openai chat", "/v1/chat/completions", "api.openai.com", wire.OpenAIChat},
		{"openai responses", "/v1/responses", "api.openai.com", wire.OpenAIResponses},
		{"anthropic", "/v1/messages", "api.anthropic.com", wire.Anthropic},
		{"gemini", "/v1beta/models/gemini-2.5-pro:generateContent", "generativelanguage.googleapis.com", wire.Gemini},
		{"gemini stream", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "generativelanguage.googleapis.com", wire.Gemini},
		{"bedrock converse", "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse", "bedrock-runtime.us-east-1.amazonaws.com", wire.Bedrock},
		{"bedrock converse-stream", "/model/us.amazon.nova-pro-v1%3A0/converse-stream", "bedrock-runtime.us-east-1.amazonaws.com", wire.Bedrock},
		{"azure openai deployment", "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", "my-resource.openai.azure.com", wire.OpenAIChat},
		{"azure openai v1", "/openai/v1/responses", "my-resource.openai.azure.com", wire.OpenAIResponses},
		{"openrouter", "/api/v1/chat/completions", "openrouter.ai", wire.OpenAIChat},
	}
	data, err := os.ReadFile("envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	bs := &bootstrapv3.Bootstrap{}
	rep := &report{file: "envoy.yaml"}
	if !unmarshalStrict(rep, "", js, bs) {
		t.Fatal(rep.probs)
	}
	var ingress *hcmRef
	for _, l := range bs.GetStaticResources().GetListeners() {
		if l.GetName() == "ingress" {
			ingress = listenerHCMs(rep, l.GetName(), l)[0]
		}
	}
	if ingress == nil || len(ingress.extProcs) != 1 {
		t.Fatal("no ingress listener with one ext_proc filter")
	}
	clusterHost := map[string][2]string{} // cluster → {address, sni}
	for _, c := range bs.GetStaticResources().GetClusters() {
		addr := c.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
		var sni string
		if ts := c.GetTransportSocket().GetTypedConfig(); ts != nil {
			tc := &tlsv3.UpstreamTlsContext{}
			if ts.UnmarshalTo(tc) == nil {
				sni = tc.GetSni()
			}
		}
		clusterHost[c.GetName()] = [2]string{addr.GetAddress(), sni}
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			if got := wire.Classify(tc.path).Dialect; got != tc.dialect {
				t.Errorf("toolproc reads %s as %q, want %q", tc.path, got, tc.dialect)
			}
			r, levels := firstMatch(ingress, tc.path)
			if r == nil {
				t.Fatalf("no route matches %s", tc.path)
			}
			cluster := r.GetRoute().GetCluster()
			if got := clusterHost[cluster]; got != [2]string{tc.host, tc.host} {
				t.Fatalf("%s → route %s → cluster %q at %v (address, sni), want %s", tc.path, r.GetName(), cluster, got, tc.host)
			}
			if !r.GetRoute().GetAutoHostRewrite().GetValue() {
				t.Errorf("route %s does not rewrite Host to %s", r.GetName(), tc.host)
			}
			f := ingress.extProcs[0]
			if !extProcActive(f, levels...) {
				t.Fatalf("route %s bypasses ext_proc", r.GetName())
			}
			pm := f.cfg.GetProcessingMode()
			for _, lvl := range levels {
				if pr, ok := parsePerRoute(lvl[f.name]); ok && pr.ep.GetOverrides().GetProcessingMode() != nil {
					pm = pr.ep.GetOverrides().GetProcessingMode()
				}
			}
			if pm.GetRequestBodyMode() != extprocfilterv3.ProcessingMode_BUFFERED || pm.GetResponseBodyMode() != extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
				t.Fatalf("route %s: request body %s, response body %s; want BUFFERED and FULL_DUPLEX_STREAMED", r.GetName(), pm.GetRequestBodyMode(), pm.GetResponseBodyMode())
			}
		})
	}
}

// firstMatch is Envoy's route selection for the catch-all virtual host: the first route
// whose path match fits (the query string is not part of the match), and the per-filter
// config levels from most to least specific.
func firstMatch(h *hcmRef, path string) (*routev3.Route, []map[string]*anypb.Any) {
	path, _, _ = strings.Cut(path, "?")
	rc := h.hcm.GetRouteConfig()
	for _, vh := range rc.GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			m := r.GetMatch()
			ok := false
			switch p := m.GetPathSpecifier().(type) {
			case *routev3.RouteMatch_Prefix:
				ok = strings.HasPrefix(path, p.Prefix)
			case *routev3.RouteMatch_Path:
				ok = path == p.Path
			}
			if ok {
				return r, []map[string]*anypb.Any{r.GetTypedPerFilterConfig(), vh.GetTypedPerFilterConfig(), rc.GetTypedPerFilterConfig()}
			}
		}
	}
	return nil, nil
}
