package deploy_test

// The ext_proc filter is written out four times: envoy/envoy.yaml, envoy/istio-envoyfilter.yaml,
// and the chart's sidecar bootstrap and Istio EnvoyFilter. Its settings must not drift apart
// (the reasons for them are in envoy/README.md); only the cluster, fail-open and the message
// timeout, which depend on where toolproc runs and are chart values, may differ.

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// extProcConfigs returns every ExternalProcessor typed_config found in a document.
func extProcConfigs(v any) []map[string]any {
	var out []map[string]any
	switch x := v.(type) {
	case map[string]any:
		if x["@type"] == "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor" {
			out = append(out, x)
		}
		for _, c := range x {
			out = append(out, extProcConfigs(c)...)
		}
	case []any:
		for _, c := range x {
			out = append(out, extProcConfigs(c)...)
		}
	}
	return out
}

func TestExtProcSettingsDoNotDrift(t *testing.T) {
	load := func(name string, data []byte) any {
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var v any
		if err := json.Unmarshal(js, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	docs := map[string]any{}
	for _, f := range []string{"../envoy/envoy.yaml", "../envoy/istio-envoyfilter.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = load(f, data)
	}
	objs, err := render(t, loadChart(t), "istio: {enabled: true}\nmode: gateway\nreplayURL: http://gw:8081\n")
	if err != nil {
		t.Fatal(err)
	}
	sidecar, err := render(t, loadChart(t), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range append(objs, sidecar...) {
		switch {
		case o.gvk().Kind == "EnvoyFilter":
			docs["chart EnvoyFilter"] = o.doc
		case o.gvk().Kind == "ConfigMap" && o.name() == "toolproc-envoy":
			docs["chart sidecar bootstrap"] = load("sidecar", []byte(digString(o.doc, "data", "envoy.yaml")))
		}
	}
	if len(docs) != 4 {
		t.Fatalf("found %d of the 4 documents", len(docs))
	}
	var refName string
	var ref map[string]any
	for _, name := range []string{"../envoy/envoy.yaml", "../envoy/istio-envoyfilter.yaml", "chart EnvoyFilter", "chart sidecar bootstrap"} {
		cfgs := extProcConfigs(docs[name])
		if len(cfgs) != 1 {
			t.Fatalf("%s: %d ext_proc filters, want 1", name, len(cfgs))
		}
		c := map[string]any{}
		for k, v := range cfgs[0] {
			switch k {
			case "grpc_service", "failure_mode_allow", "message_timeout":
			default:
				c[k] = v
			}
		}
		if ref == nil {
			refName, ref = name, c
			continue
		}
		if !reflect.DeepEqual(c, ref) {
			a, _ := json.MarshalIndent(c, "", " ")
			b, _ := json.MarshalIndent(ref, "", " ")
			t.Errorf("%s's ext_proc settings differ from %s's:\n%s\nvs\n%s", name, refName, a, b)
		}
	}
}
