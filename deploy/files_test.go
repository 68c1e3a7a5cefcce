package deploy_test

// The YAML files shipped outside the chart get the same object validation as rendered ones:
// deploy/envoy-gateway/*.yaml, and envoy/'s Istio EnvoyFilter and lock-down policies (whose
// Envoy parts envoy/'s own tests already check).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/envoy"
)

func TestShippedManifests(t *testing.T) {
	files, err := filepath.Glob("envoy-gateway/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../envoy/istio-envoyfilter.yaml", "../envoy/lockdown.yaml")
	kinds := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := splitDocs(f, string(data))
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) == 0 {
			t.Errorf("%s: no objects", f)
		}
		for _, o := range objs {
			kinds[o.gvk().Kind]++
			for _, p := range validateObject(t, o) {
				t.Errorf("%s: %s", o, p)
			}
			if o.gvk().Kind == "EnvoyFilter" {
				for _, p := range envoy.CheckIstioEnvoyFilter(o.String(), o.doc) {
					t.Error(p)
				}
			}
		}
	}
	// Guard against checking nothing after a rename.
	for _, k := range []string{"Gateway", "HTTPRoute", "Backend", "NetworkPolicy", "EnvoyFilter", "AuthorizationPolicy"} {
		if kinds[k] == 0 {
			t.Errorf("no %s among the shipped manifests (%v)", k, kinds)
		}
	}
	t.Logf("%d files, objects by kind: %v", len(files), kinds)
}

// TestGatewayExampleMatchesChart: the example Gateway has the listeners the chart's defaults
// name, and its HTTPRoute serves the same routes on both.
func TestGatewayExampleMatchesChart(t *testing.T) {
	data, err := os.ReadFile("envoy-gateway/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := splitDocs("gateway.yaml", string(data))
	if err != nil {
		t.Fatal(err)
	}
	vals := loadChart(t).Values["envoyGateway"].(map[string]any)["gateway"].(map[string]any)
	listeners := map[string]bool{}
	var parents []string
	for _, o := range objs {
		switch o.gvk().Kind {
		case "Gateway":
			if o.name() != vals["name"] || digString(o.doc, "metadata", "namespace") != vals["namespace"] {
				t.Errorf("Gateway %s/%s, chart default %s/%s", digString(o.doc, "metadata", "namespace"), o.name(), vals["namespace"], vals["name"])
			}
			for _, l := range asList(dig(o.doc, "spec", "listeners")) {
				listeners[digString(l, "name")] = true
			}
		case "HTTPRoute":
			for _, p := range asList(dig(o.doc, "spec", "parentRefs")) {
				parents = append(parents, digString(p, "sectionName"))
			}
			for _, r := range asList(dig(o.doc, "spec", "rules")) {
				if digString(r, "timeouts", "request") != "0s" {
					t.Errorf("HTTPRoute %s rule %s: LLM routes need timeouts.request 0s", o.name(), digString(r, "name"))
				}
			}
		}
	}
	for _, l := range []string{vals["listener"].(string), vals["replayListener"].(string)} {
		if !listeners[l] {
			t.Errorf("the Gateway has no listener %q, which the chart's policies name", l)
		}
	}
	if strings.Join(parents, ",") != vals["listener"].(string)+","+vals["replayListener"].(string) {
		t.Errorf("HTTPRoute parents %v: want the same routes on both listeners", parents)
	}
}
