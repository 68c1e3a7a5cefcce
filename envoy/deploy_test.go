package envoy

// Checks for the files around envoy.yaml: docker-compose.yaml and the Dockerfile (the Istio
// EnvoyFilter's are in istio.go). These are cheap structural checks; nothing here runs Docker.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	if img, _ := envoy["image"].(string); !strings.Contains(img, "@sha256:") {
		rep.add("services.envoy.image", "image %q is not pinned by digest (tag@sha256:...)", img)
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
	reFromAs      = regexp.MustCompile(`(?im)^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?`)
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

	// Every image pulled from a registry is pinned by digest (stage names, scratch and
	// build-arg references are not images).
	stages := map[string]bool{"scratch": true}
	for _, m := range reFromAs.FindAllStringSubmatch(flat, -1) {
		if img := m[1]; !stages[img] && !strings.HasPrefix(img, "$") && !strings.Contains(img, "@sha256:") {
			rep.add("FROM "+img, "not pinned by digest (tag@sha256:...): a tag can move under a rebuild")
		}
		if m[2] != "" {
			stages[m[2]] = true
		}
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
