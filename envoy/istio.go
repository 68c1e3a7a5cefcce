package envoy

// Checks for an Istio EnvoyFilter: every patch value is parsed as the Envoy message it patches
// and walked like a bootstrap (validate.go); the ext_proc filter gets the rules of rules.go.

import (
	"encoding/json"
	"fmt"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

const extProcTypeURL = "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor"

// istioPatchTypes maps an EnvoyFilter applyTo to the Envoy message its patch value holds.
var istioPatchTypes = map[string]func() proto.Message{
	"LISTENER":            func() proto.Message { return &listenerv3.Listener{} },
	"FILTER_CHAIN":        func() proto.Message { return &listenerv3.FilterChain{} },
	"NETWORK_FILTER":      func() proto.Message { return &listenerv3.Filter{} },
	"HTTP_FILTER":         func() proto.Message { return &hcmv3.HttpFilter{} },
	"ROUTE_CONFIGURATION": func() proto.Message { return &routev3.RouteConfiguration{} },
	"VIRTUAL_HOST":        func() proto.Message { return &routev3.VirtualHost{} },
	"HTTP_ROUTE":          func() proto.Message { return &routev3.Route{} },
	"CLUSTER":             func() proto.Message { return &clusterv3.Cluster{} },
}

// checkIstioEnvoyFilter validates every patch value of an EnvoyFilter against the Envoy message
// it patches: strict parse, then the ValidateAll walk (for MERGE patches, which are partial,
// only below the top level). Inserted ext_proc filters get the same ext_proc rules as
// envoy.yaml, except the cluster lookup (Istio generates the clusters), and must be inserted
// before the router; per-route ExtProcPerRoute patches must use an inserted filter's name.
func checkIstioEnvoyFilter(file string, doc map[string]any) []string {
	rep := &report{file: file}
	spec, _ := doc["spec"].(map[string]any)
	patches := listOf(spec["configPatches"])
	extProcNames := map[string]bool{}
	type perRouteLevel struct {
		path string
		cfgs map[string]*anypb.Any
	}
	var perRouteLevels []perRouteLevel
	for i, p := range patches {
		pp := fmt.Sprintf("spec.configPatches[%d]", i)
		patch, _ := p.(map[string]any)
		body, _ := patch["patch"].(map[string]any)
		applyTo, _ := patch["applyTo"].(string)
		newMsg, ok := istioPatchTypes[applyTo]
		if !ok {
			rep.add(pp+".applyTo", "%q is not a patch target this test knows how to validate", applyTo)
			continue
		}
		value, ok := body["value"].(map[string]any)
		if !ok {
			rep.add(pp+".patch.value", "missing")
			continue
		}
		js, err := json.Marshal(value)
		if err != nil {
			rep.add(pp+".patch.value", "%v", err)
			continue
		}
		vp := pp + ".patch.value"
		// Note inserted ext_proc filters from the raw value, so a typo elsewhere in the
		// patch does not also produce a misleading "no ext_proc filter" complaint.
		if tc, _ := value["typed_config"].(map[string]any); applyTo == "HTTP_FILTER" && tc["@type"] == extProcTypeURL {
			name, _ := value["name"].(string)
			extProcNames[name] = true
		}
		msg := newMsg()
		if !unmarshalStrict(rep, vp, js, msg) {
			continue
		}
		if body["operation"] == "MERGE" {
			validateChildren(rep, msg.ProtoReflect(), vp)
		} else {
			validateTree(rep, msg.ProtoReflect(), vp)
		}

		switch m := msg.(type) {
		case *hcmv3.HttpFilter:
			tc := m.GetTypedConfig()
			if tc == nil || !tc.MessageIs(&extprocfilterv3.ExternalProcessor{}) {
				continue
			}
			match, _ := patch["match"].(map[string]any)
			subFilter := digString(match, "listener", "filterChain", "filter", "subFilter", "name")
			if body["operation"] != "INSERT_BEFORE" || subFilter != "envoy.filters.http.router" {
				rep.add(pp, "ext_proc must be inserted before the router (operation INSERT_BEFORE, match.listener.filterChain.filter.subFilter.name envoy.filters.http.router); got %v relative to %q", body["operation"], subFilter)
			}
			ep := &extprocfilterv3.ExternalProcessor{}
			if err := tc.UnmarshalTo(ep); err != nil {
				rep.add(vp+".typed_config", "%v", err)
				continue
			}
			checkExtProc(rep, vp+".typed_config<ExternalProcessor>", ep, nil)
		case *routev3.Route:
			perRouteLevels = append(perRouteLevels, perRouteLevel{vp, m.GetTypedPerFilterConfig()})
		case *routev3.VirtualHost:
			perRouteLevels = append(perRouteLevels, perRouteLevel{vp, m.GetTypedPerFilterConfig()})
		}
	}
	if len(extProcNames) == 0 {
		rep.add("spec.configPatches", "no patch inserts an ext_proc filter (HTTP_FILTER with typed_config @type ExternalProcessor)")
	}
	for _, l := range perRouteLevels {
		checkPerFilterConfigs(rep, l.path, l.cfgs, extProcNames, nil)
	}
	return rep.probs
}

func digString(m map[string]any, keys ...string) string {
	var cur any = m
	for _, k := range keys {
		mm, _ := cur.(map[string]any)
		cur = mm[k]
	}
	s, _ := cur.(string)
	return s
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}
