package envoy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestE2EEnvoyConfig: e2e/envoy.yaml (the real-Envoy end-to-end job's bootstrap) passes the
// same checks as envoy.yaml and routes exactly envoy.yaml's paths, all to the fake upstream.
func TestE2EEnvoyConfig(t *testing.T) {
	doc := func(name string) (map[string]any, []byte) { return yamlDoc(t, name) }
	e2e, js := doc("e2e/envoy.yaml")
	for _, p := range checkBootstrap("e2e/envoy.yaml", js) {
		t.Error(p)
	}
	prod, _ := doc("envoy.yaml")
	routesOf := func(d map[string]any) (names []string, clusters map[string]bool) {
		clusters = map[string]bool{}
		for _, r := range list(t, obj(t, list(t, obj(t, hcmOf(t, listenerNamed(t, d, "ingress"))["route_config"])["virtual_hosts"])[0])["routes"]) {
			m := obj(t, r)
			match, _ := json.Marshal(m["match"])
			names = append(names, m["name"].(string)+" "+string(match))
			if ra, ok := m["route"].(map[string]any); ok {
				clusters[ra["cluster"].(string)] = true
			}
		}
		return names, clusters
	}
	want, _ := routesOf(prod)
	got, clusters := routesOf(e2e)
	if !slices.Equal(got, want) {
		t.Errorf("e2e/envoy.yaml routes\n  %s\nwant envoy.yaml's\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if len(clusters) != 1 || !clusters["fake_upstream"] {
		t.Errorf("e2e routes go to %v, want only fake_upstream", clusters)
	}
}

// TestE2ECompose: the end-to-end compose file runs the three services the job needs, each
// with a healthcheck, Envoy pinned by digest and started only once the others are healthy,
// everything it builds or mounts present in the repository.
func TestE2ECompose(t *testing.T) {
	const dir = "e2e"
	d, _ := yamlDoc(t, filepath.Join(dir, "docker-compose.yaml"))
	services := obj(t, d["services"])
	for _, name := range []string{"envoy", "toolproc", "fakeupstream"} {
		s, ok := services[name].(map[string]any)
		if !ok {
			t.Fatalf("no service %q", name)
		}
		if _, ok := s["healthcheck"]; !ok {
			t.Errorf("service %s has no healthcheck", name)
		}
		if b, ok := s["build"].(map[string]any); ok {
			df := filepath.Join(dir, b["context"].(string), b["dockerfile"].(string))
			if _, err := os.Stat(df); err != nil {
				t.Errorf("service %s: %v", name, err)
			}
		} else if img, _ := s["image"].(string); !strings.Contains(img, "@sha256:") {
			t.Errorf("service %s: image %q is neither built nor pinned by digest", name, img)
		}
		for _, v := range listOf(s["volumes"]) {
			src, _ := volumeParts(v)
			if _, err := os.Stat(filepath.Join(dir, src)); err != nil {
				t.Errorf("service %s mounts %s: %v", name, src, err)
			}
		}
	}
	envoy := obj(t, services["envoy"])
	if envoy["network_mode"] != "service:toolproc" {
		t.Error("envoy must share toolproc's network namespace: envoy.yaml dials 127.0.0.1:50051 and toolproc replays to 127.0.0.1:10001")
	}
	deps := obj(t, envoy["depends_on"])
	for _, s := range []string{"toolproc", "fakeupstream"} {
		if c, _ := obj(t, deps[s])["condition"].(string); c != "service_healthy" {
			t.Errorf("envoy must wait for %s to be healthy (condition %q)", s, c)
		}
	}
	if hc := strings.Join(stringList(obj(t, services["toolproc"])["healthcheck"].(map[string]any)["test"]), " "); !strings.Contains(hc, "toolproc healthcheck") {
		t.Errorf("toolproc's healthcheck %q does not use `toolproc healthcheck` (the image has no shell)", hc)
	}
}

// yamlDoc reads a YAML file as JSON: the generic map and the JSON bytes.
func yamlDoc(t *testing.T, name string) (map[string]any, []byte) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(js, &d); err != nil {
		t.Fatal(err)
	}
	return d, js
}
