package deploy_test

// The YAML files shipped outside the chart get the same object validation as rendered ones:
// deploy/envoy-gateway/*.yaml, and envoy/'s Istio EnvoyFilter and lock-down policies (whose
// Envoy parts envoy/'s own tests already check).

import (
	"fmt"
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

// TestGatewayExampleMatchesChart: the example has the Gateways and listener the chart's
// defaults name, and its HTTPRoute serves the same routes on the agents' listener and the
// replay Gateway.
func TestGatewayExampleMatchesChart(t *testing.T) {
	objs := gatewayExample(t)
	vals := loadChart(t).Values["envoyGateway"].(map[string]any)["gateway"].(map[string]any)
	ns := vals["namespace"].(string)
	listeners := map[string]bool{} // gateway/listener
	var parents []string
	for _, o := range objs {
		if got := digString(o.doc, "metadata", "namespace"); got != ns {
			t.Errorf("%s in namespace %q, the chart's policies live in %q", o, got, ns)
		}
		switch o.gvk().Kind {
		case "Gateway":
			for _, l := range asList(dig(o.doc, "spec", "listeners")) {
				listeners[o.name()+"/"+digString(l, "name")] = true
			}
		case "HTTPRoute":
			for _, p := range asList(dig(o.doc, "spec", "parentRefs")) {
				parents = append(parents, digString(p, "name")+"/"+digString(p, "sectionName"))
			}
			for _, r := range asList(dig(o.doc, "spec", "rules")) {
				if digString(r, "timeouts", "request") != "0s" {
					t.Errorf("HTTPRoute %s rule %s: LLM routes need timeouts.request 0s", o.name(), digString(r, "name"))
				}
			}
		}
	}
	agents := vals["name"].(string) + "/" + vals["listener"].(string)
	if !listeners[agents] {
		t.Errorf("no Gateway listener %s, which the chart's policies name (have %v)", agents, listeners)
	}
	var replay []string
	for _, p := range parents {
		if strings.HasPrefix(p, vals["replayGateway"].(string)+"/") {
			replay = append(replay, p)
		}
	}
	if len(parents) != 2 || parents[0] != agents || len(replay) != 1 || !listeners[replay[0]] {
		t.Errorf("HTTPRoute parents %v: want the same routes on %s and on a listener of Gateway %s", parents, agents, vals["replayGateway"])
	}
}

// TestGatewayReplayNotPublic: Envoy Gateway publishes every listener of a Gateway on that
// Gateway's one Service, a LoadBalancer unless the Gateway's EnvoyProxy says otherwise
// (https://gateway.envoyproxy.io/docs/tasks/operations/customize-envoyproxy/). A listener
// the chart's EnvoyExtensionPolicy does not cover skips toolproc, so it must sit behind a
// ClusterIP Service and admit only toolproc's pods, and replayURL must name that Service.
// The former layout (the replay listener on the agents' Gateway) fails the same check.
func TestGatewayReplayNotPublic(t *testing.T) {
	objs, err := render(t, loadChart(t), gatewayMode+"envoyGateway: {enabled: true}\n")
	if err != nil {
		t.Fatal(err)
	}
	var policies []object
	for _, o := range objs {
		if o.gvk().Kind == "EnvoyExtensionPolicy" {
			policies = append(policies, o)
		}
	}
	example := gatewayExample(t)
	bypasses, probs := replayExposure(example, policies)
	for _, p := range probs {
		t.Error(p)
	}
	if len(bypasses) != 1 {
		t.Fatalf("listeners without toolproc: %v, want exactly the replay Gateway's", bypasses)
	}
	b := bypasses[0]
	url := fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", b.service, b.namespace, b.port)
	data, _ := os.ReadFile("envoy-gateway/gateway.yaml")
	if !strings.Contains(string(data), "replayURL: "+url+"\n") {
		t.Errorf("gateway.yaml's install note should give replayURL: %s", url)
	}
	if !strings.Contains(gatewayMode, "replayURL: "+url+"\n") {
		t.Errorf("the chart tests' gateway values should use replayURL %s", url)
	}

	// The round-3 review's finding: one Gateway, two listeners, the extension on one.
	former := strings.Replace(string(data), "  listeners:\n  - name: llm\n", "  listeners:\n  - name: replay\n    protocol: HTTP\n    port: 8081\n  - name: llm\n", 1)
	formerObjs, err := splitDocs("former", former)
	if err != nil {
		t.Fatal(err)
	}
	_, probs = replayExposure(formerObjs, policies)
	if len(probs) == 0 || !strings.Contains(strings.Join(probs, "\n"), "listener llm-gateway/replay skips toolproc and is published on a LoadBalancer Service") {
		t.Errorf("the replay listener on the agents' Gateway was not reported: %v", probs)
	}
}

func gatewayExample(t *testing.T) []object {
	t.Helper()
	data, err := os.ReadFile("envoy-gateway/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := splitDocs("gateway.yaml", string(data))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// bypass is a Gateway listener without toolproc's extension.
type bypass struct {
	namespace, gateway, listener, service string
	port                                  int
}

// replayExposure lists the listeners of the Gateways in objs that the EnvoyExtensionPolicies
// do not cover, and what is wrong with how each is exposed.
func replayExposure(objs, policies []object) (bypasses []bypass, probs []string) {
	covered := map[string]bool{} // gateway/listener, or gateway/ for all its listeners
	for _, p := range policies {
		for _, ref := range asList(dig(p.doc, "spec", "targetRefs")) {
			if digString(ref, "kind") == "Gateway" {
				covered[digString(ref, "name")+"/"+digString(ref, "sectionName")] = true
			}
		}
	}
	proxies := map[string]any{}
	for _, o := range objs {
		if o.gvk().Kind == "EnvoyProxy" {
			proxies[o.name()] = dig(o.doc, "spec", "provider", "kubernetes", "envoyService")
		}
	}
	for _, gw := range objs {
		if gw.gvk().Kind != "Gateway" {
			continue
		}
		// Envoy Gateway's defaults: a LoadBalancer Service with a generated name.
		svcType, svcName := "LoadBalancer", ""
		if ref := dig(gw.doc, "spec", "infrastructure", "parametersRef"); digString(ref, "kind") == "EnvoyProxy" {
			svc, ok := proxies[digString(ref, "name")]
			if !ok {
				probs = append(probs, fmt.Sprintf("%s: EnvoyProxy %q is not in the example", gw, digString(ref, "name")))
			}
			if t := digString(svc, "type"); t != "" {
				svcType = t
			}
			svcName = digString(svc, "name")
		}
		for _, l := range asList(dig(gw.doc, "spec", "listeners")) {
			name := digString(l, "name")
			if covered[gw.name()+"/"] || covered[gw.name()+"/"+name] {
				continue
			}
			port, _ := dig(l, "port").(float64)
			b := bypass{namespace: digString(gw.doc, "metadata", "namespace"), gateway: gw.name(), listener: name, service: svcName, port: int(port)}
			bypasses = append(bypasses, b)
			if svcType != "ClusterIP" {
				probs = append(probs, fmt.Sprintf("listener %s/%s skips toolproc and is published on a %s Service", gw.name(), name, svcType))
			}
			if svcName == "" {
				probs = append(probs, fmt.Sprintf("listener %s/%s: its Service has a generated name, which replayURL cannot name (EnvoyProxy envoyService.name)", gw.name(), name))
			}
			if !onlyToolprocReaches(objs, b) {
				probs = append(probs, fmt.Sprintf("listener %s/%s: no NetworkPolicy on its pods admits only toolproc to port %d", gw.name(), name, b.port))
			}
		}
	}
	return bypasses, probs
}

// onlyToolprocReaches: a NetworkPolicy selects the Gateway's Envoy pods (Envoy Gateway labels
// them with the owning Gateway) and every ingress rule that opens b's port names toolproc's pods.
func onlyToolprocReaches(objs []object, b bypass) bool {
	for _, o := range objs {
		if o.gvk().Kind != "NetworkPolicy" {
			continue
		}
		sel := toStringMap(dig(o.doc, "spec", "podSelector", "matchLabels"))
		if sel["gateway.envoyproxy.io/owning-gateway-name"] != b.gateway || sel["gateway.envoyproxy.io/owning-gateway-namespace"] != b.namespace {
			continue
		}
		opens, onlyToolproc := false, true
		for _, rule := range asList(dig(o.doc, "spec", "ingress")) {
			ports := asList(dig(rule, "ports"))
			match := len(ports) == 0
			for _, p := range ports {
				if n, _ := dig(p, "port").(float64); int(n) == b.port {
					match = true
				}
			}
			if !match {
				continue
			}
			opens = true
			from := asList(dig(rule, "from"))
			if len(from) == 0 {
				onlyToolproc = false
			}
			for _, f := range from {
				if toStringMap(dig(f, "podSelector", "matchLabels"))["app.kubernetes.io/name"] != "toolproc" {
					onlyToolproc = false
				}
			}
		}
		if opens && onlyToolproc {
			return true
		}
	}
	return false
}
