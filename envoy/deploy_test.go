package envoy_test

// Checks for the files around envoy.yaml: docker-compose.yaml, the Dockerfile and the Istio
// EnvoyFilter. These are cheap structural checks; nothing here runs Docker or Istio.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// ---------------------------------------------------------------------------------------------
// docker-compose.yaml
// ---------------------------------------------------------------------------------------------

// checkCompose checks the compose file found in dir (the envoy/ folder).
func checkCompose(file, dir string, doc map[string]any) []string {
	rep := &report{file: file}
	services, _ := doc["services"].(map[string]any)
	toolproc, _ := services["toolproc"].(map[string]any)
	envoy, _ := services["envoy"].(map[string]any)
	if toolproc == nil {
		rep.add("services", "no service \"toolproc\"")
	}
	if envoy == nil {
		rep.add("services", "no service \"envoy\"")
	}
	if toolproc == nil || envoy == nil {
		return rep.probs
	}

	// toolproc is built from envoy/Dockerfile with the repository root as context.
	ctx, dockerfile := "", "Dockerfile"
	switch b := toolproc["build"].(type) {
	case string:
		ctx = b
	case map[string]any:
		ctx, _ = b["context"].(string)
		if s, ok := b["dockerfile"].(string); ok {
			dockerfile = s
		}
	}
	if ctx == "" {
		rep.add("services.toolproc.build", "toolproc must be built (build.context: .., build.dockerfile: envoy/Dockerfile)")
	} else {
		ctxDir := filepath.Join(dir, ctx)
		if _, err := os.Stat(filepath.Join(ctxDir, "go.mod")); err != nil {
			rep.add("services.toolproc.build.context", "context %q is not the repository root (no go.mod there); the Dockerfile builds the module from the root", ctx)
		}
		df := dockerfile
		if !filepath.IsAbs(df) {
			df = filepath.Join(ctxDir, df) // compose resolves dockerfile relative to the context
		}
		if want := filepath.Join(dir, "Dockerfile"); filepath.Clean(df) != filepath.Clean(want) {
			rel, _ := filepath.Rel(dir, df)
			rep.add("services.toolproc.build.dockerfile", "resolves to %s (relative to envoy/), want envoy/Dockerfile", rel)
		}
	}

	// envoy mounts envoy.yaml where it loads its config from.
	if img, _ := envoy["image"].(string); !strings.HasPrefix(img, "envoyproxy/envoy") && !strings.Contains(img, "/envoyproxy/envoy") {
		rep.add("services.envoy.image", "image %q is not an envoyproxy/envoy image", img)
	}
	cfgPath := "/etc/envoy/envoy.yaml" // the image's default CMD
	if cmd := stringList(envoy["command"]); len(cmd) > 0 {
		if i := slices.Index(cmd, "-c"); i >= 0 && i+1 < len(cmd) {
			cfgPath = cmd[i+1]
		}
	}
	mounted := false
	for i, v := range listOf(envoy["volumes"]) {
		src, dst := volumeParts(v)
		if src == "" || filepath.Clean(filepath.Join(dir, src)) != filepath.Join(dir, "envoy.yaml") {
			continue
		}
		mounted = true
		if dst != cfgPath {
			rep.add(fmt.Sprintf("services.envoy.volumes[%d]", i), "envoy.yaml is mounted at %q but Envoy loads %q", dst, cfgPath)
		}
	}
	if !mounted {
		rep.add("services.envoy.volumes", "envoy.yaml from this folder is not mounted into the envoy service")
	}

	// envoy.yaml reaches toolproc at 127.0.0.1:50051 and toolproc reaches the replay listener at
	// 127.0.0.1:10001: both only work in a shared network namespace.
	netMode, _ := envoy["network_mode"].(string)
	if netMode != "service:toolproc" {
		rep.add("services.envoy.network_mode", "got %q, want \"service:toolproc\": envoy.yaml dials toolproc on 127.0.0.1:50051 and toolproc replays via 127.0.0.1:10001, "+
			"which needs one shared network namespace", netMode)
	}
	if _, ok := envoy["ports"]; ok && strings.HasPrefix(netMode, "service:") {
		rep.add("services.envoy.ports", "a service with network_mode %q cannot publish ports; publish them on the namespace owner", netMode)
	}

	// The ingress port is published (on the namespace owner when the namespace is shared).
	owner := "envoy"
	if strings.HasPrefix(netMode, "service:") {
		owner = strings.TrimPrefix(netMode, "service:")
	}
	published := false
	if svc, _ := services[owner].(map[string]any); svc != nil {
		for _, p := range listOf(svc["ports"]) {
			if pub, target := portParts(p); target == "10000" && pub != "" {
				published = true
			}
		}
	}
	if !published {
		rep.add("services."+owner+".ports", "Envoy's ingress port 10000 is not published (it must be on service %q, which owns the network namespace)", owner)
	}
	return rep.probs
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

func stringList(v any) []string {
	switch c := v.(type) {
	case string:
		return strings.Fields(c)
	case []any:
		var out []string
		for _, x := range c {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

// volumeParts splits a compose volume ("SRC:DST[:MODE]" or the long form) into source and target.
func volumeParts(v any) (src, dst string) {
	switch m := v.(type) {
	case string:
		parts := strings.Split(m, ":")
		if len(parts) >= 2 {
			return parts[0], parts[1]
		}
	case map[string]any:
		src, _ = m["source"].(string)
		dst, _ = m["target"].(string)
	}
	return src, dst
}

// portParts splits a compose port ("[HOST:]PUBLISHED:TARGET[/PROTO]", a bare target, or the
// long form) into published and target port; published is "" when Docker picks one.
func portParts(v any) (published, target string) {
	switch p := v.(type) {
	case float64:
		return "", strconv.Itoa(int(p))
	case string:
		p, _, _ = strings.Cut(p, "/")
		parts := strings.Split(p, ":")
		target = parts[len(parts)-1]
		if len(parts) >= 2 {
			published = parts[len(parts)-2]
		}
		return published, target
	case map[string]any:
		return fmt.Sprint(p["published"]), fmt.Sprint(p["target"])
	}
	return "", ""
}

// ---------------------------------------------------------------------------------------------
// Dockerfile
// ---------------------------------------------------------------------------------------------

var (
	reGolangStage = regexp.MustCompile(`(?im)^FROM\s+(?:--platform=\S+\s+)?golang:1\.26\b`)
	reGoBuildDot  = regexp.MustCompile(`go build\b[^\n]*\s\.(?:\s|$)`)
	reFrom        = regexp.MustCompile(`(?im)^FROM\s+(?:--platform=\S+\s+)?(\S+)`)
	reUser        = regexp.MustCompile(`(?im)^USER\s+(\S+)`)
	reExpose      = regexp.MustCompile(`(?im)^EXPOSE\s+(.+)$`)
	reEntrypoint  = regexp.MustCompile(`(?im)^ENTRYPOINT\s+(.+)$`)
)

func checkDockerfile(file, text string) []string {
	rep := &report{file: file}
	// Join continuation lines so RUN commands read as one line.
	flat := strings.ReplaceAll(text, "\\\n", " ")
	if !reGolangStage.MatchString(flat) {
		rep.add("FROM", "no build stage FROM golang:1.26 (go.mod says go 1.26)")
	}
	if !strings.Contains(flat, "CGO_ENABLED=0") {
		rep.add("RUN go build", "CGO_ENABLED=0 missing: the runtime image has no libc")
	}
	if !strings.Contains(flat, "-trimpath") {
		rep.add("RUN go build", "-trimpath missing")
	}
	if !reGoBuildDot.MatchString(flat) {
		rep.add("RUN go build", "does not build the root package `.` (package main lives at the repository root)")
	}

	// Everything after the last FROM describes the runtime image.
	froms := reFrom.FindAllStringSubmatchIndex(flat, -1)
	if len(froms) == 0 {
		rep.add("FROM", "no FROM line")
		return rep.probs
	}
	last := froms[len(froms)-1]
	base := flat[last[2]:last[3]]
	final := flat[last[0]:]
	nonRoot := strings.HasSuffix(base, ":nonroot") || strings.Contains(base, ":nonroot@") || strings.Contains(base, "-nonroot")
	if m := reUser.FindAllStringSubmatch(final, -1); len(m) > 0 {
		u := m[len(m)-1][1]
		nonRoot = u != "root" && u != "0" && !strings.HasPrefix(u, "0:") && !strings.HasPrefix(u, "root:")
	}
	if !nonRoot {
		rep.add("FROM "+base, "the runtime stage runs as root: add USER nonroot (or use a :nonroot base image)")
	}
	var exposed []string
	for _, m := range reExpose.FindAllStringSubmatch(final, -1) {
		for _, f := range strings.Fields(m[1]) {
			p, _, _ := strings.Cut(f, "/")
			exposed = append(exposed, p)
		}
	}
	for _, p := range []string{"50051", "9000"} {
		if !slices.Contains(exposed, p) {
			rep.add("EXPOSE", "port %s not exposed", p)
		}
	}
	ep := reEntrypoint.FindStringSubmatch(final)
	if ep == nil {
		rep.add("ENTRYPOINT", "missing")
	} else {
		for _, want := range []string{"toolproc", "serve", "127.0.0.1:50051", "0.0.0.0:9000"} {
			if !strings.Contains(ep[1], want) {
				rep.add("ENTRYPOINT", "does not contain %q (want toolproc serve --grpc-addr 127.0.0.1:50051 --admin-addr 0.0.0.0:9000: the gRPC port is a trust boundary, loopback unless a policy guards it)", want)
			}
		}
	}
	return rep.probs
}

// ---------------------------------------------------------------------------------------------
// Istio EnvoyFilter
// ---------------------------------------------------------------------------------------------

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
