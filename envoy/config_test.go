// The tests of this folder validate the deployable Envoy configuration in this folder without an
// Envoy binary: every bootstrap is parsed strictly with go-control-plane's protos, every
// message (including those inside typed_config Anys) runs protoc-gen-validate's ValidateAll,
// and hand-written checks cover what only Envoy's C++ enforces (rules.go). The compose
// file, Dockerfile and Istio EnvoyFilter get structural checks (deploy_test.go, istio.go).
//
// The negative tests prove each check fires on a realistic mistake, with a message naming the
// file and the path of the offending field.
package envoy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/toolproc/toolproc/extproc"
)

type fileKind string

const (
	kindBootstrap   fileKind = "Envoy bootstrap"
	kindCompose     fileKind = "docker compose file"
	kindEnvoyFilter fileKind = "Istio EnvoyFilter"
	kindToolproc    fileKind = "toolproc config"
	kindLockdown    fileKind = "Kubernetes/Istio lock-down policies"
	kindUnknown     fileKind = "unknown"
)

func classify(doc map[string]any) fileKind {
	if _, ok := doc["static_resources"]; ok {
		return kindBootstrap
	}
	if _, ok := doc["services"]; ok {
		return kindCompose
	}
	if api, _ := doc["apiVersion"].(string); strings.HasPrefix(api, "networking.istio.io/") && doc["kind"] == "EnvoyFilter" {
		return kindEnvoyFilter
	}
	if _, ok := doc["profiles"]; ok {
		return kindToolproc
	}
	if doc["apiVersion"] == "v1" && doc["kind"] == "List" {
		return kindLockdown
	}
	return kindUnknown
}

// checkFile runs the checks appropriate for a file in this folder and returns its kind and
// problems. name is the base name; data the file content (JSON is fine for YAML files).
func checkFile(t *testing.T, name string, data []byte) (fileKind, []string) {
	t.Helper()
	if name == "Dockerfile" {
		return "Dockerfile", checkDockerfile(name, string(data))
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return kindUnknown, []string{name + ": YAML: " + err.Error()}
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		return kindUnknown, []string{name + ": not a YAML mapping: " + err.Error()}
	}
	switch k := classify(doc); k {
	case kindBootstrap:
		return k, checkBootstrap(name, js)
	case kindCompose:
		dir, err := filepath.Abs(".")
		if err != nil {
			t.Fatal(err)
		}
		return k, checkCompose(name, dir, doc)
	case kindEnvoyFilter:
		return k, checkIstioEnvoyFilter(name, doc)
	case kindLockdown:
		return k, checkLockdown(name, doc)
	case kindToolproc:
		if _, err := extproc.ParseConfig(data); err != nil {
			return k, []string{name + ": " + err.Error()}
		}
		return k, nil
	default:
		return k, []string{name + ": not recognised as an Envoy bootstrap (static_resources), a compose file (services) " +
			"or an Istio EnvoyFilter; teach config_test.go how to validate it"}
	}
}

// TestConfigFiles validates every YAML file in this folder and the Dockerfile.
func TestConfigFiles(t *testing.T) {
	var files []string
	for _, pat := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	files = append(files, "Dockerfile")
	kinds := map[string]fileKind{}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			kind, probs := checkFile(t, f, data)
			kinds[f] = kind
			t.Logf("%s: checked as %s, %d problem(s)", f, kind, len(probs))
			for _, p := range probs {
				t.Error(p)
			}
		})
	}
	// Guard against the test quietly checking nothing after a rename.
	for f, want := range map[string]fileKind{
		"envoy.yaml": kindBootstrap, "docker-compose.yaml": kindCompose, "istio-envoyfilter.yaml": kindEnvoyFilter,
		"toolproc.yaml": kindToolproc, "lockdown.yaml": kindLockdown,
	} {
		if kinds[f] != want {
			t.Errorf("%s: checked as %q, want %q (missing or renamed?)", f, kinds[f], want)
		}
	}
}

// mutation breaks one file in one realistic way. Exactly one of old/new (a text replacement
// that must match exactly once) or edit (a change to the parsed document; aliases are already
// expanded there, so it can change one listener's copy of the shared routes) is used.
type mutation struct {
	name     string
	file     string // default envoy.yaml
	old, new string
	drop     string // also remove lines starting with this (after trimming spaces)
	edit     func(t *testing.T, doc map[string]any)
	wantPath string // substring of the reported path
	wantMsg  string // substring of the reported message
	notPath  string // no problem may mention this path (optional)
}

// TestChecksCatchBrokenConfigs applies each mutation and requires a problem that names the
// file, the offending path and what is wrong.
func TestChecksCatchBrokenConfigs(t *testing.T) {
	const (
		ingressHCM = "static_resources.listeners[0](ingress).filter_chains[0].filters[0](envoy.filters.network.http_connection_manager).typed_config<HttpConnectionManager>"
		replayHCM  = "static_resources.listeners[1](replay).filter_chains[0].filters[0](envoy.filters.network.http_connection_manager).typed_config<HttpConnectionManager>"
		extProc    = ingressHCM + ".http_filters[0](envoy.filters.http.ext_proc).typed_config<ExternalProcessor>"
		routes     = ".route_config.virtual_hosts[0](llm_providers).routes"
	)
	cases := []mutation{
		{
			name: "FULL_DUPLEX response body without response trailer SEND",
			old:  "response_trailer_mode: SEND", new: "response_trailer_mode: SKIP",
			wantPath: extProc + ".processing_mode.response_trailer_mode",
			wantMsg:  "response_body_mode FULL_DUPLEX_STREAMED requires response_trailer_mode SEND (got SKIP)",
		},
		{
			name: "misspelt field",
			old:  "allow_mode_override: true", new: "allow_mode_overide: true",
			wantPath: extProc + ".allow_mode_overide",
			wantMsg:  `unknown field "allow_mode_overide" in envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor (did you mean "allow_mode_override"?)`,
		},
		{
			name: "unknown enum value",
			old:  "response_body_mode: FULL_DUPLEX_STREAMED", new: "response_body_mode: STREAMY",
			wantPath: extProc + ".processing_mode.response_body_mode",
			wantMsg:  `invalid value "STREAMY" for enum envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode`,
		},
		{
			name: "max_message_timeout above the 1h cap",
			old:  "max_message_timeout: 300s", new: "max_message_timeout: 7200s",
			wantPath: extProc,
			wantMsg:  "MaxMessageTimeout: value must be inside range [0s, 1h0m0s]",
		},
		{
			name: "message_timeout above max_message_timeout",
			old:  "message_timeout: 30s", new: "message_timeout: 600s",
			wantPath: extProc + ".message_timeout",
			wantMsg:  "message_timeout 10m0s exceeds max_message_timeout 5m0s",
		},
		{
			// Proves the ValidateAll walk reaches into map values holding Anys, and lists.
			name: "empty header key in per-route grpc_initial_metadata",
			old:  "- key: x-toolproc-profile", new: `- key: ""`,
			wantPath: ingressHCM + routes + "[1](anthropic).typed_per_filter_config[envoy.filters.http.ext_proc]<ExtProcPerRoute>.overrides.grpc_initial_metadata[0]",
			wantMsg:  "HeaderValue.Key: value length must be at least 1 runes",
		},
		{
			name: "stream_idle_timeout disabled with a FULL_DUPLEX processor",
			edit: func(t *testing.T, doc map[string]any) {
				hcmOf(t, listenerNamed(t, doc, "ingress"))["stream_idle_timeout"] = "0s"
			},
			wantPath: ingressHCM + ".stream_idle_timeout",
			wantMsg:  "the only bound on a stalled processor",
		},
		{
			name: "unresolvable @type",
			old:  "ext_proc.v3.ExternalProcessor", new: "ext_proc.v3.ExternalProcesor",
			wantPath: ingressHCM + ".http_filters[0](envoy.filters.http.ext_proc).typed_config",
			wantMsg:  `cannot resolve "@type"`,
		},
		{
			name: "ext_proc cluster does not exist",
			old:  "cluster_name: toolproc}", new: "cluster_name: toolprok}",
			wantPath: extProc + ".grpc_service.envoy_grpc.cluster_name",
			wantMsg:  `ext_proc gRPC cluster "toolprok" does not exist`,
		},
		{
			name: "empty ext_proc cluster name",
			old:  "cluster_name: toolproc}", new: `cluster_name: ""}`,
			wantPath: extProc + ".grpc_service.envoy_grpc",
			wantMsg:  "ClusterName: value length must be at least 1 runes",
		},
		{
			name: "ext_proc cluster speaks HTTP/1.1",
			edit: func(t *testing.T, doc map[string]any) {
				opts := obj(t, obj(t, clusterNamed(t, doc, "toolproc")["typed_extension_protocol_options"])["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"])
				opts["explicit_http_config"] = map[string]any{"http_protocol_options": map[string]any{}}
			},
			wantPath: extProc + ".grpc_service.envoy_grpc.cluster_name",
			wantMsg:  `cluster "toolproc" carries gRPC but is not HTTP/2: explicit_http_config selects HTTP/1.1`,
		},
		{
			name: "auto_config on the plaintext ext_proc cluster",
			edit: func(t *testing.T, doc map[string]any) {
				opts := obj(t, obj(t, clusterNamed(t, doc, "toolproc")["typed_extension_protocol_options"])["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"])
				delete(opts, "explicit_http_config")
				opts["auto_config"] = map[string]any{"http2_protocol_options": map[string]any{}}
			},
			wantPath: "static_resources.clusters[0](toolproc).typed_extension_protocol_options[envoy.extensions.upstreams.http.v3.HttpProtocolOptions].auto_config",
			wantMsg:  "auto_config needs a transport socket with ALPN (TLS)",
		},
		{
			name: "both grpc_service and http_service",
			edit: func(t *testing.T, doc map[string]any) {
				ep := obj(t, httpFilterNamed(t, hcmOf(t, listenerNamed(t, doc, "ingress")), "envoy.filters.http.ext_proc")["typed_config"])
				ep["http_service"] = map[string]any{"http_service": map[string]any{
					"http_uri": map[string]any{"uri": "http://127.0.0.1:9000/", "cluster": "toolproc", "timeout": "1s"},
				}}
			},
			wantPath: extProc,
			wantMsg:  "both grpc_service and http_service are set; Envoy requires exactly one of them",
		},
		{
			name: "route to a cluster that does not exist",
			old:  "cluster: anthropic\n", new: "cluster: anthropik\n",
			wantPath: ingressHCM + routes + "[1](anthropic).route.cluster",
			wantMsg:  `route references cluster "anthropik", which does not exist`,
		},
		{
			name: "router filter not last",
			edit: func(t *testing.T, doc map[string]any) {
				hcm := hcmOf(t, listenerNamed(t, doc, "ingress"))
				fs := list(t, hcm["http_filters"])
				fs[0], fs[1] = fs[1], fs[0]
			},
			wantPath: ingressHCM + ".http_filters[0](envoy.filters.http.router)",
			wantMsg:  "it must be the last HTTP filter",
		},
		{
			name: "LLM route without timeout: 0s",
			edit: func(t *testing.T, doc map[string]any) {
				r := routeNamed(t, hcmOf(t, listenerNamed(t, doc, "ingress")), "openai")
				delete(obj(t, r["route"]), "timeout")
			},
			wantPath: ingressHCM + routes + "[6](openai).route.timeout",
			wantMsg:  "LLM route prefix /v1/ must set timeout: 0s (got unset, i.e. Envoy's 15s default)",
		},
		{
			name: "per-route FULL_DUPLEX override without trailer SEND",
			edit: func(t *testing.T, doc map[string]any) {
				r := routeNamed(t, hcmOf(t, listenerNamed(t, doc, "ingress")), "anthropic")
				pr := obj(t, obj(t, r["typed_per_filter_config"])["envoy.filters.http.ext_proc"])
				obj(t, pr["overrides"])["processing_mode"] = map[string]any{
					"request_body_mode": "BUFFERED", "response_body_mode": "FULL_DUPLEX_STREAMED",
				}
			},
			wantPath: ingressHCM + routes + "[1](anthropic).typed_per_filter_config[envoy.filters.http.ext_proc]<ExtProcPerRoute>.overrides.processing_mode.response_trailer_mode",
			wantMsg:  "requires response_trailer_mode SEND (got DEFAULT)",
		},
		{
			name: "per-route config under a key that names no filter",
			edit: func(t *testing.T, doc map[string]any) {
				r := routeNamed(t, hcmOf(t, listenerNamed(t, doc, "ingress")), "anthropic")
				pf := obj(t, r["typed_per_filter_config"])
				pf["envoy.filters.http.extproc"] = pf["envoy.filters.http.ext_proc"]
				delete(pf, "envoy.filters.http.ext_proc")
			},
			wantPath: ingressHCM + routes + "[1](anthropic).typed_per_filter_config[envoy.filters.http.extproc]",
			wantMsg:  `ExtProcPerRoute under key "envoy.filters.http.extproc" does not name an ext_proc filter of this listener`,
		},
		{
			name: "buffer limit larger than toolproc's gRPC max receive size",
			old:  "per_connection_buffer_limit_bytes: 33554432", new: "per_connection_buffer_limit_bytes: 134217728",
			wantPath: ingressHCM + routes + "[1](anthropic)",
			wantMsg:  "effective buffer limit 134217728 bytes",
		},
		{
			name: "no replay listener",
			edit: func(t *testing.T, doc map[string]any) {
				sr := obj(t, doc["static_resources"])
				sr["listeners"] = list(t, sr["listeners"])[:1]
			},
			wantPath: "static_resources.listeners",
			wantMsg:  "no replay listener",
		},
		{
			name: "replay listener runs ext_proc",
			edit: func(t *testing.T, doc map[string]any) {
				ep := deepCopy(t, httpFilterNamed(t, hcmOf(t, listenerNamed(t, doc, "ingress")), "envoy.filters.http.ext_proc"))
				replay := hcmOf(t, listenerNamed(t, doc, "replay"))
				replay["http_filters"] = append([]any{ep}, list(t, replay["http_filters"])...)
			},
			wantPath: replayHCM + routes + "[6](openai)",
			wantMsg:  `ext_proc filter "envoy.filters.http.ext_proc" is enabled on replay listener "replay"`,
		},
		{
			// The pitfall envoy.yaml avoids: disabled at virtual-host level, but the Anthropic
			// route's own ExtProcPerRoute (profile metadata only) is more specific and wins.
			name: "replay ext_proc disabled per virtual host but re-enabled by a route",
			edit: func(t *testing.T, doc map[string]any) {
				ep := deepCopy(t, httpFilterNamed(t, hcmOf(t, listenerNamed(t, doc, "ingress")), "envoy.filters.http.ext_proc"))
				replay := hcmOf(t, listenerNamed(t, doc, "replay"))
				replay["http_filters"] = append([]any{ep}, list(t, replay["http_filters"])...)
				vh := obj(t, list(t, obj(t, replay["route_config"])["virtual_hosts"])[0])
				vh["typed_per_filter_config"] = map[string]any{"envoy.filters.http.ext_proc": map[string]any{
					"@type":    "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute",
					"disabled": true,
				}}
			},
			wantPath: replayHCM + routes + "[1](anthropic)",
			wantMsg:  "is enabled on replay listener",
			notPath:  replayHCM + routes + "[6](openai)",
		},
		{
			name: "replay listener lacks a route",
			edit: func(t *testing.T, doc map[string]any) {
				vh := obj(t, list(t, obj(t, hcmOf(t, listenerNamed(t, doc, "replay"))["route_config"])["virtual_hosts"])[0])
				rs := list(t, vh["routes"])
				vh["routes"] = []any{rs[0], rs[2]}
			},
			wantPath: "static_resources.listeners[1](replay)",
			wantMsg:  "replay listener does not route prefix /v1/messages (→ cluster anthropic)",
		},
		{
			name: "replay listener routes a prefix elsewhere",
			edit: func(t *testing.T, doc map[string]any) {
				r := routeNamed(t, hcmOf(t, listenerNamed(t, doc, "replay")), "anthropic")
				obj(t, r["route"])["cluster"] = "openai"
			},
			wantPath: "static_resources.listeners[1](replay)",
			wantMsg:  "replay listener routes prefix /v1/messages to cluster openai, but ingress routes it to cluster anthropic",
		},
		{
			name: "Istio: FULL_DUPLEX without trailer SEND",
			file: "istio-envoyfilter.yaml",
			old:  "response_trailer_mode: SEND", new: "response_trailer_mode: SKIP",
			wantPath: "spec.configPatches[0].patch.value.typed_config<ExternalProcessor>.processing_mode.response_trailer_mode",
			wantMsg:  "requires response_trailer_mode SEND",
		},
		{
			name: "Istio: misspelt field",
			file: "istio-envoyfilter.yaml",
			old:  "failure_mode_allow: true", new: "failure_mode_alow: true",
			wantPath: "spec.configPatches[0].patch.value.typed_config<ExternalProcessor>.failure_mode_alow",
			wantMsg:  `unknown field "failure_mode_alow"`,
		},
		{
			name: "Istio: inserted after the router",
			file: "istio-envoyfilter.yaml",
			old:  "operation: INSERT_BEFORE", new: "operation: INSERT_AFTER",
			wantPath: "spec.configPatches[0]",
			wantMsg:  "ext_proc must be inserted before the router",
		},
		{
			name: "Istio: per-route profile under a key that names no filter",
			file: "istio-envoyfilter.yaml",
			old:  "envoy.filters.http.ext_proc:\n", new: "envoy.filters.http.extproc:\n",
			wantPath: "spec.configPatches[2].patch.value.typed_per_filter_config[envoy.filters.http.extproc]<ExtProcPerRoute>",
			wantMsg:  "does not name an ext_proc filter",
		},
		{
			name: "compose: ingress port not published",
			file: "docker-compose.yaml",
			edit: func(t *testing.T, doc map[string]any) {
				delete(obj(t, obj(t, doc["services"])["toolproc"]), "ports")
			},
			wantPath: "services.toolproc.ports",
			wantMsg:  "ingress port 10000 is not published",
		},
		{
			name: "compose: wrong Dockerfile",
			file: "docker-compose.yaml",
			edit: func(t *testing.T, doc map[string]any) {
				obj(t, obj(t, obj(t, doc["services"])["toolproc"])["build"])["dockerfile"] = "Dockerfile"
			},
			wantPath: "services.toolproc.build.dockerfile",
			wantMsg:  "want envoy/Dockerfile",
		},
		{
			name: "compose: envoy in its own network namespace",
			file: "docker-compose.yaml",
			edit: func(t *testing.T, doc map[string]any) {
				delete(obj(t, obj(t, doc["services"])["envoy"]), "network_mode")
			},
			wantPath: "services.envoy.network_mode",
			wantMsg:  `want "service:toolproc"`,
		},
		{
			name: "compose: envoy.yaml not mounted",
			file: "docker-compose.yaml",
			edit: func(t *testing.T, doc map[string]any) {
				delete(obj(t, obj(t, doc["services"])["envoy"]), "volumes")
			},
			wantPath: "services.envoy.volumes",
			wantMsg:  "envoy.yaml from this folder is not mounted",
		},
		{
			name: "provider route bypasses toolproc",
			edit: func(t *testing.T, doc map[string]any) {
				routeNamed(t, hcmOf(t, listenerNamed(t, doc, "ingress")), "openrouter")["typed_per_filter_config"] = map[string]any{
					"envoy.filters.http.ext_proc": map[string]any{"@type": "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute", "disabled": true},
				}
			},
			wantPath: ingressHCM + routes + "[5](openrouter)",
			wantMsg:  "LLM route prefix /api/v1/ bypasses toolproc",
		},
		{
			name: "provider route without the response body",
			edit: func(t *testing.T, doc map[string]any) {
				routeNamed(t, hcmOf(t, listenerNamed(t, doc, "ingress")), "gemini")["typed_per_filter_config"] = map[string]any{
					"envoy.filters.http.ext_proc": map[string]any{"@type": "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute",
						"overrides": map[string]any{"processing_mode": map[string]any{"request_body_mode": "BUFFERED", "response_body_mode": "NONE"}}},
				}
			},
			wantPath: ingressHCM + routes + "[2](gemini)",
			wantMsg:  "with response_body_mode NONE",
		},
		{
			name: "Dockerfile: runs as root",
			file: "Dockerfile",
			old:  "static-debian12:nonroot", new: "static-debian12:latest",
			drop:     "USER ",
			wantPath: "FROM gcr.io/distroless/static-debian12:latest",
			wantMsg:  "runs as root",
		},
		{
			name: "Dockerfile: floating base image",
			file: "Dockerfile",
			old:  "static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab", new: "static-debian12:nonroot",
			wantPath: "FROM gcr.io/distroless/static-debian12:nonroot",
			wantMsg:  "not pinned by digest",
		},
		{
			name: "compose: floating Envoy tag",
			file: "docker-compose.yaml",
			old:  "envoyproxy/envoy:v1.39.1@sha256:57e14a549d7bd43c8d3f6d03e8cfa653e037d4b38e133acd9b54f38c524401b4", new: "envoyproxy/envoy:v1.40-latest",
			wantPath: "services.envoy.image",
			wantMsg:  "not pinned by digest",
		},
		{
			name: "Dockerfile: builds a subpackage",
			file: "Dockerfile",
			old:  " -o /out/toolproc .", new: " -o /out/toolproc ./extproc",
			wantPath: "RUN go build",
			wantMsg:  "does not build the root package",
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "envoy.yaml"
			}
			orig, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			data := string(orig)
			if tc.old != "" {
				if n := strings.Count(data, tc.old); n != 1 {
					t.Fatalf("%s: %q occurs %d times, want exactly once; update the mutation", file, tc.old, n)
				}
				data = strings.Replace(data, tc.old, tc.new, 1)
			}
			if tc.drop != "" {
				data = dropLines(data, tc.drop)
			}
			if tc.edit != nil {
				js, err := yaml.YAMLToJSON([]byte(data))
				if err != nil {
					t.Fatal(err)
				}
				var doc map[string]any
				if err := json.Unmarshal(js, &doc); err != nil {
					t.Fatal(err)
				}
				tc.edit(t, doc)
				out, err := json.Marshal(doc)
				if err != nil {
					t.Fatal(err)
				}
				data = string(out) // JSON is YAML
			}

			_, probs := checkFile(t, file, []byte(data))
			if len(probs) == 0 {
				t.Fatalf("%s: mutation %q was not detected", file, tc.name)
			}
			found := false
			for _, p := range probs {
				t.Log(p)
				if strings.HasPrefix(p, file+": ") && strings.Contains(p, tc.wantPath) && strings.Contains(p, tc.wantMsg) {
					found = true
				}
				if tc.notPath != "" && strings.Contains(p, tc.notPath+":") {
					t.Errorf("unexpected problem at %s: %s", tc.notPath, p)
				}
			}
			if !found {
				t.Errorf("no problem names %s, path %q and message %q", file, tc.wantPath, tc.wantMsg)
			}
		})
	}
}

func dropLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// --- helpers for editing a parsed document ---------------------------------------------------

func obj(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("expected a mapping, got %T; update the mutation", v)
	}
	return m
}

func list(t *testing.T, v any) []any {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("expected a list, got %T; update the mutation", v)
	}
	return l
}

func named(t *testing.T, items []any, name string) map[string]any {
	t.Helper()
	for _, it := range items {
		if m := obj(t, it); m["name"] == name {
			return m
		}
	}
	t.Fatalf("no element named %q; update the mutation", name)
	return nil
}

func listenerNamed(t *testing.T, doc map[string]any, name string) map[string]any {
	t.Helper()
	return named(t, list(t, obj(t, doc["static_resources"])["listeners"]), name)
}

func clusterNamed(t *testing.T, doc map[string]any, name string) map[string]any {
	t.Helper()
	return named(t, list(t, obj(t, doc["static_resources"])["clusters"]), name)
}

// hcmOf returns the HttpConnectionManager typed_config of a listener's first filter.
func hcmOf(t *testing.T, l map[string]any) map[string]any {
	t.Helper()
	fc := obj(t, list(t, l["filter_chains"])[0])
	return obj(t, obj(t, list(t, fc["filters"])[0])["typed_config"])
}

func httpFilterNamed(t *testing.T, hcm map[string]any, name string) map[string]any {
	t.Helper()
	return named(t, list(t, hcm["http_filters"]), name)
}

func routeNamed(t *testing.T, hcm map[string]any, name string) map[string]any {
	t.Helper()
	vh := obj(t, list(t, obj(t, hcm["route_config"])["virtual_hosts"])[0])
	return named(t, list(t, vh["routes"]), name)
}

func deepCopy(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestProfilesExist: every x-toolproc-profile an Envoy config sends names a
// profile in toolproc.yaml, the config docker-compose.yaml mounts. An unknown
// name is not an error at run time (toolproc falls back to default and warns),
// which is exactly why it has to be caught here.
func TestProfilesExist(t *testing.T) {
	cfg, err := extproc.LoadConfig("toolproc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range []string{"envoy.yaml", "istio-envoyfilter.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(js, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				if v["key"] == extproc.ProfileMetadataKey {
					found++
					name, _ := v["value"].(string)
					if _, ok := cfg.Profiles[name]; !ok {
						t.Errorf("%s sends %s: %q, but toolproc.yaml has no such profile (have %v)", f, extproc.ProfileMetadataKey, name, cfg.ProfileNames())
					}
				}
				for _, x := range v {
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(doc)
	}
	if found == 0 {
		t.Fatal("no x-toolproc-profile found in the Envoy configs; the check checked nothing")
	}
}
