package envoy

import (
	"fmt"
	"slices"
)

// checkLockdown checks the policies that close toolproc's gRPC port to
// everything but the gateway (issue: "the gRPC port is a trust boundary"):
// an Istio ALLOW policy on toolproc's pods admitting only the gateway's
// principal on 50051, a DENY policy keeping everyone but toolproc off the
// gateway's replay port, and a NetworkPolicy admitting 50051 only from the
// gateway's pods. Field names follow security.istio.io/v1 AuthorizationPolicy
// and networking.k8s.io/v1 NetworkPolicy; a misspelt one is an error.
func checkLockdown(name string, doc map[string]any) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, name+": "+fmt.Sprintf(format, args...)) }
	items, _ := doc["items"].([]any)
	var grpcAllow, replayDeny, netpol bool
	for i, it := range items {
		obj, _ := it.(map[string]any)
		api, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		spec, _ := obj["spec"].(map[string]any)
		meta, _ := obj["metadata"].(map[string]any)
		if meta["name"] == nil || meta["namespace"] == nil {
			bad("item %d: metadata needs name and namespace", i)
		}
		switch {
		case api == "security.istio.io/v1" && kind == "AuthorizationPolicy":
			for k := range spec {
				if !slices.Contains([]string{"selector", "action", "rules", "provider", "targetRef", "targetRefs"}, k) {
					bad("item %d: AuthorizationPolicy has no field spec.%s", i, k)
				}
			}
			labels := nested(spec, "selector", "matchLabels")
			switch spec["action"] {
			case "ALLOW":
				if labels["app"] != "toolproc" {
					bad("item %d: the ALLOW policy must select toolproc's pods", i)
				}
				if ruleAdmits(spec, "50051", "principals", "cluster.local/ns/llm-gateway/sa/llm-gateway") {
					grpcAllow = true
				}
			case "DENY":
				if labels["istio"] == "llm-gateway" && ruleAdmits(spec, "8081", "notPrincipals", "cluster.local/ns/toolproc/sa/toolproc") {
					replayDeny = true
				}
			default:
				bad("item %d: action %v", i, spec["action"])
			}
		case api == "networking.k8s.io/v1" && kind == "NetworkPolicy":
			if nested(spec, "podSelector", "matchLabels")["app"] != "toolproc" {
				bad("item %d: the NetworkPolicy must select toolproc's pods", i)
			}
			ingress, _ := spec["ingress"].([]any)
			for _, r := range ingress {
				rule, _ := r.(map[string]any)
				ports, _ := rule["ports"].([]any)
				for _, p := range ports {
					if pm, _ := p.(map[string]any); fmt.Sprint(pm["port"]) == "50051" {
						from, _ := rule["from"].([]any)
						if len(from) == 0 {
							bad("item %d: port 50051 open to every pod", i)
							continue
						}
						for _, f := range from {
							fm, _ := f.(map[string]any)
							if nested(fm, "podSelector", "matchLabels")["istio"] == "llm-gateway" {
								netpol = true
							}
						}
					}
				}
			}
		default:
			bad("item %d: unexpected %s %s", i, api, kind)
		}
	}
	if !grpcAllow {
		bad("no ALLOW policy admits only the gateway's principal to port 50051")
	}
	if !replayDeny {
		bad("no DENY policy keeps all but toolproc off the replay port 8081")
	}
	if !netpol {
		bad("no NetworkPolicy admits port 50051 from the gateway's pods only")
	}
	return probs
}

func nested(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	return m
}

// ruleAdmits reports whether one rule names port and the principal under
// field (principals or notPrincipals) of its source.
func ruleAdmits(spec map[string]any, port, field, principal string) bool {
	rules, _ := spec["rules"].([]any)
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		var hasPort, hasPrincipal bool
		to, _ := rule["to"].([]any)
		for _, t := range to {
			ports, _ := nested(t.(map[string]any), "operation")["ports"].([]any)
			hasPort = hasPort || slices.Contains(ports, any(port))
		}
		from, _ := rule["from"].([]any)
		for _, f := range from {
			ps, _ := nested(f.(map[string]any), "source")[field].([]any)
			hasPrincipal = hasPrincipal || (len(ps) == 1 && ps[0] == principal)
		}
		if hasPort && hasPrincipal {
			return true
		}
	}
	return false
}
