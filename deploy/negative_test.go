package deploy_test

// Negative cases: values that values.schema.json (or a required value in a template) must
// reject, and realistic mistakes in rendered objects that the validation must catch, each
// with the message it must give. Without these, a validator that accepts everything would
// pass TestChartRenders.

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestChartRejectsBadValues: each values file must fail `helm template` with the message.
func TestChartRejectsBadValues(t *testing.T) {
	ch := loadChart(t)
	for _, tc := range []struct{ name, values, want string }{
		{"unknown mode", "mode: daemonset", "mode"},
		{"gateway mode without replayURL", "mode: gateway", "replayURL"},
		{"replayURL not a URL", "mode: gateway\nreplayURL: envoy:8081", "replayURL"},
		{"typo at the top level", "replicas: 3", "replicas"},
		{"root user", "securityContext: {runAsUser: 0}", "runAsUser"},
		{"writable root filesystem", "securityContext: {readOnlyRootFilesystem: false}", "readOnlyRootFilesystem"},
		{"privilege escalation", "securityContext: {allowPrivilegeEscalation: true}", "allowPrivilegeEscalation"},
		{"added capability", "securityContext: {capabilities: {drop: [ALL], add: [NET_ADMIN]}}", "add"},
		{"runAsNonRoot off", "podSecurityContext: {runAsNonRoot: false}", "runAsNonRoot"},
		{"Envoy Gateway fail-open with FullDuplexStreamed", gatewayMode + "envoyGateway: {enabled: true, failOpen: true}", "failOpen"},
		{"Envoy Gateway buffer above toolproc's gRPC limit", gatewayMode + "envoyGateway: {enabled: true, bufferLimit: 128Mi}", "bufferLimit"},
		{"Envoy Gateway buffer as a bare big number", gatewayMode + "envoyGateway: {enabled: true, bufferLimit: \"100000000\"}", "bufferLimit"},
		{"Envoy Gateway Backend without host", gatewayMode + "envoyGateway: {enabled: true, backendKind: Backend}", "backendHost"},
		{"Envoy Gateway unsupported body mode", gatewayMode + "envoyGateway: {enabled: true, responseBodyMode: Buffered}", "responseBodyMode"},
		{"sidecar buffer above toolproc's gRPC limit", "sidecar: {envoy: {bufferLimitBytes: 100000000}}", "bufferLimitBytes"},
		{"Istio buffer above toolproc's gRPC limit", gatewayMode + "istio: {enabled: true, bufferLimitBytes: 70000000}", "bufferLimitBytes"},
		{"Istio filter on every proxy", gatewayMode + "istio: {enabled: true, gateway: {selector: null}}", "selector"},
		{"Istio in sidecar mode", "istio: {enabled: true}", "enabled"},
		{"external Redis without address", gatewayMode + "redis: {mode: external}", "addr"},
		{"Redis Cluster without seed nodes", gatewayMode + "redis: {mode: external, external: {topology: cluster}}", "addrs"},
		{"Redis Sentinel without master set", gatewayMode + "redis: {mode: external, external: {topology: sentinel, addrs: [\"s:26379\"]}}", "masterName"},
		{"unknown Redis topology", gatewayMode + "redis: {mode: external, external: {topology: ring, addr: \"r:6379\"}}", "topology"},
		{"Redis address with a scheme", gatewayMode + "redis: {mode: external, external: {addr: \"redis://r:6379\"}}", "addr"},
		{"port out of range", "grpc: {port: 70000}", "port"},
		{"unknown redis mode", "redis: {mode: cluster}", "mode"},
		{"provider prefix not a path", "sidecar: {providers: [{name: x, host: api.x.com, prefix: v1}]}", "prefix"},
		{"alert threshold above 100%", "metrics: {prometheusRule: {enabled: true, passthroughRatio: 2}}", "passthroughRatio"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, ch, tc.values)
			if err == nil {
				t.Fatalf("values accepted, want an error mentioning %q:\n%s", tc.want, tc.values)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error does not mention %q:\n%v", tc.want, err)
			}
			t.Logf("rejected: %s", firstLines(err.Error(), 3))
		})
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

// objectMutation breaks one rendered object.
type objectMutation struct {
	name      string
	values    string // the values combination to render (gatewayMode or sidecar default)
	kind, obj string // the object to break (kind, and name unless empty)
	edit      func(doc map[string]any)
	replace   [2]string // text replacement in the object's JSON instead of edit
	want      string    // substring of a reported problem
}

var everything = valuesCases[len(valuesCases)-1].values

// TestValidationCatchesBrokenObjects applies each mutation to a rendered release and
// requires a problem naming the cause.
func TestValidationCatchesBrokenObjects(t *testing.T) {
	ch := loadChart(t)
	cases := []objectMutation{
		{name: "unknown field in a Deployment", values: everything, kind: "Deployment", obj: "tp",
			replace: [2]string{`"securityContext":{"allowPrivilegeEscalation"`, `"securityContxt":{"allowPrivilegeEscalation"`}, want: `unknown field "spec.template.spec.containers[0].securityContxt"`},
		{name: "wrong type in a Service", values: everything, kind: "Service", obj: "tp",
			replace: [2]string{`"port":50051`, `"port":"50051"`}, want: "cannot unmarshal"},
		{name: "root container", values: everything, kind: "Deployment", obj: "tp",
			replace: [2]string{`"runAsUser":65532`, `"runAsUser":0`}, want: "does not run as 65532"},
		{name: "HTTP probe instead of gRPC health", values: everything, kind: "Deployment", obj: "tp",
			replace: [2]string{`"readinessProbe":{"failureThreshold":2,"grpc":{"port":50051,"service":""}`, `"readinessProbe":{"failureThreshold":2,"tcpSocket":{"port":50051}`}, want: "readiness probe: want a grpc probe"},
		{name: "Service selecting nothing", values: everything, kind: "Service", obj: "tp",
			replace: [2]string{`"app.kubernetes.io/name":"toolproc"}`, `"app.kubernetes.io/name":"toolprocc"}`}, want: "Service tp selects the pods of 0 Deployments"},
		{name: "NetworkPolicy opening gRPC to everyone", values: everything, kind: "NetworkPolicy", obj: "tp",
			edit: func(d map[string]any) {
				ing := asList(dig(d, "spec", "ingress"))
				delete(ing[0].(map[string]any), "from")
			}, want: "opens the grpc port without naming the gateway pods"},
		{name: "config typo", values: everything, kind: "ConfigMap", obj: "tp",
			replace: [2]string{`keep: head_tail`, `kep: head_tail`}, want: "kep"},
		{name: "Envoy Gateway fail-open with FullDuplexStreamed (CEL)", values: everything, kind: "EnvoyExtensionPolicy",
			replace: [2]string{`"failOpen":false`, `"failOpen":true`}, want: "If FullDuplexStreamed body processing mode is used, FailOpen must be false"},
		{name: "Envoy Gateway body mode typo (enum)", values: everything, kind: "EnvoyExtensionPolicy",
			replace: [2]string{`"body":"Buffered"`, `"body":"Bufferred"`}, want: `Unsupported value: "Bufferred"`},
		{name: "Envoy Gateway unknown field", values: everything, kind: "EnvoyExtensionPolicy",
			replace: [2]string{`"messageTimeout"`, `"messageTimout"`}, want: `unknown field "spec.extProc[0].messageTimout"`},
		{name: "Envoy Gateway policy on the whole Gateway", values: everything, kind: "EnvoyExtensionPolicy",
			replace: [2]string{`,"sectionName":"llm"`, ``}, want: "not the agents' listener"},
		{name: "Envoy Gateway backendRef to another port", values: everything, kind: "EnvoyExtensionPolicy",
			replace: [2]string{`"port":50051`, `"port":9000`}, want: "is not toolproc's gRPC port"},
		{name: "Envoy Gateway buffer above the gRPC limit", values: everything, kind: "ClientTrafficPolicy",
			replace: [2]string{`"bufferLimit":"32Mi"`, `"bufferLimit":"96Mi"`}, want: "connection.bufferLimit \"96Mi\""},
		{name: "Envoy Gateway bad duration (pattern)", values: everything, kind: "EnvoyExtensionPolicy",
			replace: [2]string{`"messageTimeout":"30s"`, `"messageTimeout":"30 seconds"`}, want: "messageTimeout"},
		{name: "ReferenceGrant for the wrong kind", values: everything, kind: "ReferenceGrant",
			replace: [2]string{`"kind":"EnvoyExtensionPolicy"`, `"kind":"Envoy Extension Policy"`}, want: "spec.from[0].kind"},
		{name: "EnvoyFilter FULL_DUPLEX without trailers", values: everything, kind: "EnvoyFilter",
			replace: [2]string{`"response_trailer_mode":"SEND"`, `"response_trailer_mode":"SKIP"`}, want: "requires response_trailer_mode SEND"},
		{name: "EnvoyFilter after the router", values: everything, kind: "EnvoyFilter",
			replace: [2]string{`"operation":"INSERT_BEFORE"`, `"operation":"INSERT_AFTER"`}, want: "ext_proc must be inserted before the router"},
		{name: "EnvoyFilter typo in the Envoy config", values: everything, kind: "EnvoyFilter",
			replace: [2]string{`"allow_mode_override"`, `"allow_mode_overide"`}, want: "allow_mode_override"},
		{name: "EnvoyFilter typo in the Istio fields", values: everything, kind: "EnvoyFilter",
			replace: [2]string{`"workloadSelector"`, `"workloadSelecter"`}, want: `unknown field "spec.workloadSelecter"`},
		{name: "EnvoyFilter bad patch operation (enum)", values: everything, kind: "EnvoyFilter",
			replace: [2]string{`"operation":"MERGE"`, `"operation":"MERGER"`}, want: "MERGER"},
		{name: "EnvoyFilter to another Service", values: everything, kind: "EnvoyFilter",
			replace: [2]string{`||tp.toolproc.svc`, `||toolproc.toolproc.svc`}, want: "ext_proc cluster is not outbound|50051||tp.toolproc.svc.cluster.local"},
		{name: "EnvoyFilter profile missing from the config", values: everything, kind: "EnvoyFilter",
			replace: [2]string{`"value":"anthropic"`, `"value":"antropic"`}, want: `profile "antropic" is not in the toolproc config`},
		{name: "DestinationRule bad load balancer (enum)", values: everything, kind: "DestinationRule",
			replace: [2]string{`"LEAST_REQUEST"`, `"FASTEST"`}, want: "FASTEST"},
		{name: "AuthorizationPolicy bad action (enum)", values: everything, kind: "AuthorizationPolicy", obj: "tp",
			replace: [2]string{`"action":"ALLOW"`, `"action":"PERMIT"`}, want: "PERMIT"},
		{name: "ServiceMonitor unknown field", values: everything, kind: "ServiceMonitor",
			replace: [2]string{`"interval"`, `"scrapeInterval"`}, want: `unknown field "spec.endpoints[0].scrapeInterval"`},
		{name: "ServiceMonitor on a missing port", values: everything, kind: "ServiceMonitor",
			replace: [2]string{`"port":"admin"`, `"port":"metrics"`}, want: `endpoint port "metrics" is not a port of Service tp`},
		{name: "PrometheusRule without expr (required)", values: everything, kind: "PrometheusRule",
			edit: func(d map[string]any) {
				r := asList(dig(asList(dig(d, "spec", "groups"))[0], "rules"))[0].(map[string]any)
				delete(r, "expr")
			}, want: "expr"},
		{name: "sidecar Envoy dialing another socket", kind: "ConfigMap", obj: "toolproc-envoy",
			replace: [2]string{`/run/toolproc/grpc.sock`, `/tmp/grpc.sock`}, want: "does not dial toolproc's socket"},
		{name: "sidecar Envoy FULL_DUPLEX without trailers", kind: "ConfigMap", obj: "toolproc-envoy",
			replace: [2]string{`response_trailer_mode: SEND`, `response_trailer_mode: SKIP`}, want: "requires response_trailer_mode SEND"},
		{name: "sidecar Envoy without a replay listener", kind: "ConfigMap", obj: "toolproc-envoy",
			replace: [2]string{"- name: replay\n", "- name: loopback\n"}, want: "no replay listener"},
		{name: "sidecar socket not shared", kind: "Deployment", obj: "toolproc",
			replace: [2]string{`{"mountPath":"/run/toolproc","name":"socket"}]`, `{"mountPath":"/run/toolproc2","name":"socket"}]`}, want: "is not mounted in both containers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := render(t, ch, tc.values)
			if err != nil {
				t.Fatal(err)
			}
			hit := 0
			for i, o := range objs {
				if o.gvk().Kind != tc.kind || (tc.obj != "" && o.name() != tc.obj) {
					continue
				}
				hit++
				raw := string(o.raw)
				if tc.edit != nil {
					tc.edit(o.doc)
					b, _ := json.Marshal(o.doc)
					raw = string(b)
				} else {
					old, repl := tc.replace[0], tc.replace[1]
					if o.gvk().Kind == "ConfigMap" {
						// The data values are YAML inside a JSON string.
						old, repl = jsonInner(old), jsonInner(repl)
					}
					if strings.Count(raw, old) == 0 {
						t.Fatalf("%s: %q not found in\n%s", o, old, raw)
					}
					raw = strings.Replace(raw, old, repl, 1)
				}
				var doc map[string]any
				if err := yaml.Unmarshal([]byte(raw), &doc); err != nil {
					t.Fatal(err)
				}
				objs[i] = object{source: o.source, doc: doc, raw: []byte(raw)}
			}
			if hit != 1 {
				t.Fatalf("%d objects match %s %q, want 1", hit, tc.kind, tc.obj)
			}
			var probs []string
			for _, o := range objs {
				for _, p := range validateObject(t, o) {
					probs = append(probs, o.String()+": "+p)
				}
			}
			if len(probs) == 0 {
				probs = checkRelease(t, objs)
			}
			for _, p := range probs {
				if strings.Contains(p, tc.want) {
					t.Logf("caught: %s", p)
					return
				}
			}
			t.Fatalf("no problem mentions %q; got %d:\n%s", tc.want, len(probs), strings.Join(probs, "\n"))
		})
	}
}

// jsonInner is s as it appears inside a JSON string.
func jsonInner(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
