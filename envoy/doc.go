// Package envoy validates Envoy configuration without an Envoy binary: strict protojson
// parsing against go-control-plane's protos, protoc-gen-validate's ValidateAll on every message
// (inside typed_config Anys too), and hand-written checks for what only Envoy's C++ enforces
// (rules.go). It serves the tests of this folder and the deploy module's chart tests, which
// run the Envoy configs embedded in Kubernetes objects through the same checks.
package envoy

// CheckBootstrap validates an Envoy bootstrap given as JSON. Every problem is returned as
// "file: path: message".
func CheckBootstrap(file string, js []byte) []string { return checkBootstrap(file, js) }

// CheckIstioEnvoyFilter validates an Istio EnvoyFilter (decoded from YAML/JSON): each patch
// value strictly as the Envoy message it patches, the ext_proc filter's processing mode and
// placement before the router, and per-route overrides naming that filter.
func CheckIstioEnvoyFilter(file string, doc map[string]any) []string {
	return checkIstioEnvoyFilter(file, doc)
}
