package deploy_test

// Renders the chart in helm/toolproc with Helm's own engine (the code `helm template` runs:
// values coalesced with values.yaml, checked against values.schema.json, templates rendered in
// strict mode) for the default values and every documented combination, then validates every
// object (schemas_test.go) and checks what the chart promises: hardened pods, gRPC health
// probes, selectors that pick exactly one workload, a toolproc config toolproc accepts, Envoy
// configs that pass the envoy/ validation, buffer limits below toolproc's gRPC message size.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/toolproc/toolproc/envoy"
	"github.com/toolproc/toolproc/extproc"
)

const (
	chartDir    = "helm/toolproc"
	releaseName = "toolproc"
	releaseNS   = "toolproc"
	// toolproc's gRPC max receive size (server.max_recv_msg_bytes) minus headroom for the
	// headers and framing that travel with a BUFFERED body: the same bound envoy/rules.go
	// puts on envoy.yaml.
	grpcHeadroom = 1 << 20
)

// valuesCase is a documented values combination (deploy/README.md lists them).
type valuesCase struct {
	name   string
	values string // YAML overrides, as with `helm template -f`
	kinds  []string
}

var gatewayMode = `
mode: gateway
replayURL: http://llm-gateway-replay.envoy-gateway-system.svc.cluster.local:8081
`

var valuesCases = []valuesCase{
	{name: "default", kinds: []string{"ConfigMap", "ConfigMap", "Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"}},
	{name: "gateway", values: gatewayMode,
		kinds: []string{"ConfigMap", "Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"}},
	{name: "gateway-minimal", values: gatewayMode + `
networkPolicy: {enabled: false}
podDisruptionBudget: {enabled: false}
serviceAccount: {create: false}
replicaCount: 1
`, kinds: []string{"ConfigMap", "Deployment", "Service"}},
	{name: "redis-bundled", values: gatewayMode + `
redis: {mode: bundled}
`, kinds: []string{"ConfigMap", "Deployment", "Deployment", "NetworkPolicy", "NetworkPolicy", "PodDisruptionBudget", "Service", "Service", "ServiceAccount"}},
	{name: "redis-external", values: gatewayMode + `
redis:
  mode: external
  external:
    addr: redis.cache.svc.cluster.local:6379
    tls: true
    passwordSecret: {name: toolproc-redis, key: password}
`, kinds: []string{"ConfigMap", "Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"}},
	{name: "redis-cluster", values: gatewayMode + `
redis:
  mode: external
  external:
    topology: cluster
    addrs: [redis-0.redis:6379, redis-1.redis:6379, redis-2.redis:6379]
`, kinds: []string{"ConfigMap", "Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"}},
	{name: "redis-sentinel", values: gatewayMode + `
redis:
  mode: external
  external:
    topology: sentinel
    addrs: [sentinel-0.redis:26379, sentinel-1.redis:26379, sentinel-2.redis:26379]
    masterName: toolproc
`, kinds: []string{"ConfigMap", "Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"}},
	{name: "sidecar-redis-external", values: `
mode: sidecar
redis: {mode: external, external: {addr: "redis:6379"}}
`, kinds: []string{"ConfigMap", "ConfigMap", "Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"}},
	{name: "monitoring", values: gatewayMode + `
metrics:
  serviceMonitor: {enabled: true, labels: {release: kube-prometheus-stack}}
  prometheusRule: {enabled: true}
  dashboard: {enabled: true}
`, kinds: []string{"ConfigMap", "ConfigMap", "Deployment", "NetworkPolicy", "PodDisruptionBudget", "PrometheusRule", "Service", "ServiceAccount", "ServiceMonitor"}},
	{name: "envoy-gateway", values: gatewayMode + `
envoyGateway: {enabled: true}
`, kinds: []string{"BackendTrafficPolicy", "ClientTrafficPolicy", "ConfigMap", "Deployment", "EnvoyExtensionPolicy", "NetworkPolicy", "PodDisruptionBudget", "ReferenceGrant", "Service", "ServiceAccount"}},
	{name: "envoy-gateway-streamed-failopen", values: gatewayMode + `
envoyGateway: {enabled: true, responseBodyMode: Streamed, failOpen: true, messageTimeout: 5s, bufferLimit: 16Mi}
`, kinds: []string{"BackendTrafficPolicy", "ClientTrafficPolicy", "ConfigMap", "Deployment", "EnvoyExtensionPolicy", "NetworkPolicy", "PodDisruptionBudget", "ReferenceGrant", "Service", "ServiceAccount"}},
	{name: "envoy-gateway-backend", values: gatewayMode + `
envoyGateway: {enabled: true, backendKind: Backend, backendHost: toolproc.example.internal}
`, kinds: []string{"Backend", "BackendTrafficPolicy", "ClientTrafficPolicy", "ConfigMap", "Deployment", "EnvoyExtensionPolicy", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"}},
	{name: "istio", values: `
mode: gateway
replayURL: http://llm-gateway.llm-gateway.svc.cluster.local:8081
istio: {enabled: true}
networkPolicy:
  gateway:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: llm-gateway}}
    podSelector: {matchLabels: {istio: llm-gateway}}
`, kinds: []string{"AuthorizationPolicy", "AuthorizationPolicy", "ConfigMap", "Deployment", "DestinationRule", "EnvoyFilter", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"}},
	{name: "everything", values: `
mode: gateway
replayURL: http://llm-gateway.llm-gateway.svc.cluster.local:8081
fullnameOverride: tp
redis: {mode: bundled}
envoyGateway: {enabled: true}
istio: {enabled: true, routeProfiles: {anthropic: anthropic, claude-code: anthropic}}
metrics:
  serviceMonitor: {enabled: true}
  prometheusRule: {enabled: true}
  dashboard: {enabled: true}
`, kinds: []string{"AuthorizationPolicy", "AuthorizationPolicy", "BackendTrafficPolicy", "ClientTrafficPolicy", "ConfigMap", "ConfigMap", "Deployment", "Deployment",
		"DestinationRule", "EnvoyExtensionPolicy", "EnvoyFilter", "NetworkPolicy", "NetworkPolicy", "PodDisruptionBudget", "PrometheusRule", "ReferenceGrant",
		"Service", "Service", "ServiceAccount", "ServiceMonitor"}},
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// render runs Helm's engine as `helm template` does and returns the objects, sorted by
// kind and name.
func render(t *testing.T, ch *chart.Chart, overrides string) ([]object, error) {
	t.Helper()
	vals, err := chartutil.ReadValues([]byte(overrides))
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: releaseName, Namespace: releaseNS, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Engine{Strict: true}.Render(ch, rv)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var objs []object
	for _, n := range names {
		if !strings.HasSuffix(n, ".yaml") || strings.HasPrefix(path.Base(n), "_") {
			continue
		}
		o, err := splitDocs(path.Base(n), files[n])
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	sort.SliceStable(objs, func(i, j int) bool {
		if objs[i].gvk().Kind != objs[j].gvk().Kind {
			return objs[i].gvk().Kind < objs[j].gvk().Kind
		}
		return objs[i].name() < objs[j].name()
	})
	return objs, nil
}

// TestChartRenders renders every values combination and validates each object.
func TestChartRenders(t *testing.T) {
	ch := loadChart(t)
	total := 0
	for _, tc := range valuesCases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := render(t, ch, tc.values)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, o.gvk().Kind)
				for _, p := range validateObject(t, o) {
					t.Errorf("%s: %s", o, p)
				}
			}
			if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") {
				t.Errorf("rendered kinds\n  %v\nwant\n  %v", kinds, tc.kinds)
			}
			for _, p := range checkRelease(t, objs) {
				t.Error(p)
			}
			total += len(objs)
			t.Logf("%d objects valid", len(objs))
		})
	}
	t.Logf("%d values combinations, %d objects validated", len(valuesCases), total)
}

// release is a rendered release, decoded, for the cross-object checks.
type release struct {
	objs        []object
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	configMaps  map[string]*corev1.ConfigMap
	custom      map[string][]object // by kind
	pdbs        []*policyv1.PodDisruptionBudget
	netpols     []*networkingv1.NetworkPolicy
}

func decodeRelease(t *testing.T, objs []object) *release {
	t.Helper()
	r := &release{objs: objs, configMaps: map[string]*corev1.ConfigMap{}, custom: map[string][]object{}}
	for _, o := range objs {
		if !builtinScheme.Recognizes(o.gvk()) {
			r.custom[o.gvk().Kind] = append(r.custom[o.gvk().Kind], o)
			continue
		}
		obj, err := decodeBuiltin(o)
		if err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		switch v := obj.(type) {
		case *appsv1.Deployment:
			r.deployments = append(r.deployments, v)
		case *corev1.Service:
			r.services = append(r.services, v)
		case *corev1.ConfigMap:
			r.configMaps[v.Name] = v
		case *policyv1.PodDisruptionBudget:
			r.pdbs = append(r.pdbs, v)
		case *networkingv1.NetworkPolicy:
			r.netpols = append(r.netpols, v)
		}
	}
	return r
}

// toolproc returns the toolproc Deployment and its toolproc container.
func (r *release) toolproc() (*appsv1.Deployment, *corev1.Container) {
	for _, d := range r.deployments {
		for i, c := range d.Spec.Template.Spec.Containers {
			if c.Name == "toolproc" {
				return d, &d.Spec.Template.Spec.Containers[i]
			}
		}
	}
	return nil, nil
}

// config parses the toolproc config the release mounts, with toolproc's own parser.
func (r *release) config() (*extproc.Config, error) {
	d, _ := r.toolproc()
	if d == nil {
		return nil, fmt.Errorf("no toolproc Deployment")
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "config" && v.ConfigMap != nil {
			cm := r.configMaps[v.ConfigMap.Name]
			if cm == nil {
				return nil, fmt.Errorf("config volume names ConfigMap %q, which the release does not have", v.ConfigMap.Name)
			}
			return extproc.ParseConfig([]byte(cm.Data["config.yaml"]))
		}
	}
	return nil, fmt.Errorf("toolproc Deployment mounts no config volume")
}

// checkRelease runs the cross-object checks on one rendered release.
func checkRelease(t *testing.T, objs []object) []string {
	t.Helper()
	r := decodeRelease(t, objs)
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }

	cfg, err := r.config()
	if err != nil {
		return []string{"toolproc config: " + err.Error()}
	}
	maxBody := int64(cfg.Server.MaxRecvMsgBytes) - grpcHeadroom
	dep, tp := r.toolproc()
	sidecar := len(dep.Spec.Template.Spec.Containers) > 1

	// Hardening, on every pod of the release.
	for _, d := range r.deployments {
		probs = append(probs, checkHardened(d)...)
	}

	// The addresses the config gives toolproc match the pod: a TCP port the probes and the
	// Service use, or the socket in the volume the Envoy shares.
	if sidecar {
		sock, ok := strings.CutPrefix(cfg.Server.GRPCAddr, "unix://")
		if !ok {
			bad("sidecar mode: server.grpc_addr %q is not a Unix socket", cfg.Server.GRPCAddr)
		}
		if !mountsDir(tp, path.Dir(sock)) || !mountsDir(container(dep, "envoy"), path.Dir(sock)) {
			bad("sidecar mode: the socket directory %s is not mounted in both containers", path.Dir(sock))
		}
		probs = append(probs, checkSidecarEnvoy(r, sock, cfg, maxBody)...)
	} else {
		_, port, err := net.SplitHostPort(cfg.Server.GRPCAddr)
		if err != nil || containerPort(tp, "grpc") == 0 || strconv.Itoa(int(containerPort(tp, "grpc"))) != port {
			bad("server.grpc_addr %q does not listen on the container's grpc port %d", cfg.Server.GRPCAddr, containerPort(tp, "grpc"))
		}
		for name, p := range map[string]*corev1.Probe{"startup": tp.StartupProbe, "readiness": tp.ReadinessProbe, "liveness": tp.LivenessProbe} {
			// Kubernetes' gRPC probe calls grpc.health.v1.Health/Check for the service name
			// given; toolproc registers the overall status under "".
			if p == nil || p.GRPC == nil || p.GRPC.Port != containerPort(tp, "grpc") || p.GRPC.Service == nil || *p.GRPC.Service != "" {
				bad("toolproc %s probe: want a grpc probe on the grpc port (service \"\"), got %+v", name, p)
			}
		}
		if u, err := url.Parse(cfg.Server.ReplayURL); err != nil || u.Host == "" {
			bad("server.replay_url %q is not a URL with a host", cfg.Server.ReplayURL)
		}
	}
	if _, port, err := net.SplitHostPort(cfg.Server.AdminAddr); err != nil || strconv.Itoa(int(containerPort(tp, "admin"))) != port {
		bad("server.admin_addr %q does not listen on the container's admin port", cfg.Server.AdminAddr)
	}

	// Selectors: each Service, PodDisruptionBudget and NetworkPolicy selects the pods of
	// exactly one Deployment, and names only ports those pods have.
	pods := map[string]labels.Set{}
	for _, d := range r.deployments {
		pods[d.Name] = d.Spec.Template.Labels
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			bad("Deployment %s: selector does not match its own pods", d.Name)
		}
	}
	selects := func(what string, sel labels.Selector) *appsv1.Deployment {
		var hits []*appsv1.Deployment
		for _, d := range r.deployments {
			if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				hits = append(hits, d)
			}
		}
		if len(hits) != 1 {
			bad("%s selects the pods of %d Deployments, want exactly 1", what, len(hits))
			return nil
		}
		return hits[0]
	}
	for _, s := range r.services {
		d := selects("Service "+s.Name, labels.SelectorFromSet(s.Spec.Selector))
		for _, p := range s.Spec.Ports {
			if d != nil && p.TargetPort.StrVal != "" && podPort(d, p.TargetPort.StrVal) == 0 {
				bad("Service %s port %s: targetPort %q is not a port of %s", s.Name, p.Name, p.TargetPort.StrVal, d.Name)
			}
		}
	}
	for _, p := range r.pdbs {
		sel, _ := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		selects("PodDisruptionBudget "+p.Name, sel)
	}
	for _, np := range r.netpols {
		sel, _ := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		d := selects("NetworkPolicy "+np.Name, sel)
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				if d != nil && p.Port != nil && p.Port.StrVal != "" && podPort(d, p.Port.StrVal) == 0 {
					bad("NetworkPolicy %s: port %q is not a port of %s", np.Name, p.Port.StrVal, d.Name)
				}
			}
		}
		// The gRPC port is a trust boundary: it must be open to the gateway only.
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				if p.Port != nil && p.Port.StrVal == "grpc" && (len(rule.From) == 0 || rule.From[0].PodSelector == nil) {
					bad("NetworkPolicy %s opens the grpc port without naming the gateway pods", np.Name)
				}
			}
		}
	}
	toolprocSvc := ""
	for _, s := range r.services {
		if labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(dep.Spec.Template.Labels)) {
			toolprocSvc = s.Name
		}
	}

	for _, o := range r.custom["EnvoyFilter"] {
		for _, p := range envoy.CheckIstioEnvoyFilter(o.String(), o.doc) {
			bad("%s", p)
		}
		probs = append(probs, checkEnvoyFilterTargets(o, toolprocSvc, cfg, maxBody)...)
	}
	for _, o := range r.custom["EnvoyExtensionPolicy"] {
		probs = append(probs, checkExtensionPolicy(o, toolprocSvc, r)...)
	}
	for _, kind := range []string{"ClientTrafficPolicy", "BackendTrafficPolicy"} {
		for _, o := range r.custom[kind] {
			s := digString(o.doc, "spec", "connection", "bufferLimit")
			q, err := resource.ParseQuantity(s)
			if err != nil || q.Value() < 1<<20 || q.Value() > maxBody {
				bad("%s: connection.bufferLimit %q must be between 1Mi and toolproc's gRPC max receive minus 1 MiB (%d bytes)", o, s, maxBody)
			}
		}
	}
	for _, o := range r.custom["ServiceMonitor"] {
		sel := labels.SelectorFromSet(toStringMap(dig(o.doc, "spec", "selector", "matchLabels")))
		found := false
		for _, s := range r.services {
			if sel.Matches(labels.Set(s.Labels)) && s.Name == toolprocSvc {
				found = true
				for _, ep := range asList(dig(o.doc, "spec", "endpoints")) {
					if !servicePortNamed(s, digString(ep, "port")) {
						bad("%s: endpoint port %q is not a port of Service %s", o, digString(ep, "port"), s.Name)
					}
				}
			}
		}
		if !found {
			bad("%s: selector matches no toolproc Service", o)
		}
	}
	return probs
}

// checkHardened requires the restricted Pod Security Standard settings on every container.
func checkHardened(d *appsv1.Deployment) []string {
	var probs []string
	ps := d.Spec.Template.Spec.SecurityContext
	if ps == nil || ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		probs = append(probs, fmt.Sprintf("Deployment %s: pod seccompProfile is not RuntimeDefault", d.Name))
	}
	if d.Spec.Template.Spec.AutomountServiceAccountToken == nil || *d.Spec.Template.Spec.AutomountServiceAccountToken {
		probs = append(probs, fmt.Sprintf("Deployment %s: the service account token is mounted (nothing here calls the API)", d.Name))
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		sc := c.SecurityContext
		where := fmt.Sprintf("Deployment %s container %s", d.Name, c.Name)
		switch {
		case sc == nil:
			probs = append(probs, where+": no securityContext")
			continue
		case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
			probs = append(probs, where+": runAsNonRoot is not true")
		case sc.RunAsUser == nil || *sc.RunAsUser != 65532 || sc.RunAsGroup == nil || *sc.RunAsGroup != 65532:
			probs = append(probs, where+": does not run as 65532:65532")
		case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
			probs = append(probs, where+": root filesystem is writable")
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			probs = append(probs, where+": allowPrivilegeEscalation is not false")
		case sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) > 0:
			probs = append(probs, where+": capabilities are not exactly drop [ALL]")
		}
		if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			probs = append(probs, where+": no memory request or limit")
		}
		if c.ReadinessProbe == nil || c.LivenessProbe == nil {
			probs = append(probs, where+": missing readiness or liveness probe")
		}
	}
	return probs
}

// checkSidecarEnvoy validates the sidecar Envoy's bootstrap with the envoy/ checks and ties
// it to the pod: toolproc's socket, the container port, the profiles, the buffer limits.
func checkSidecarEnvoy(r *release, sock string, cfg *extproc.Config, maxBody int64) []string {
	dep, _ := r.toolproc()
	var cmName string
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.Name == "envoy-config" && v.ConfigMap != nil {
			cmName = v.ConfigMap.Name
		}
	}
	cm := r.configMaps[cmName]
	if cm == nil {
		return []string{"sidecar mode: no Envoy bootstrap ConfigMap mounted"}
	}
	js, err := yaml.YAMLToJSON([]byte(cm.Data["envoy.yaml"]))
	if err != nil {
		return []string{"sidecar Envoy bootstrap: " + err.Error()}
	}
	probs := envoy.CheckBootstrap("ConfigMap "+cmName+" envoy.yaml", js)
	var bs map[string]any
	_ = json.Unmarshal(js, &bs)
	sawPipe := false
	for _, c := range asList(dig(bs, "static_resources", "clusters")) {
		if digString(c, "name") != "toolproc" {
			continue
		}
		for _, e := range asList(dig(c, "load_assignment", "endpoints")) {
			for _, lb := range asList(dig(e, "lb_endpoints")) {
				if p := digString(lb, "endpoint", "address", "pipe", "path"); p == sock {
					sawPipe = true
				}
			}
		}
	}
	if !sawPipe {
		probs = append(probs, fmt.Sprintf("sidecar Envoy: cluster toolproc does not dial toolproc's socket %s", sock))
	}
	for _, l := range asList(dig(bs, "static_resources", "listeners")) {
		if b, _ := dig(l, "per_connection_buffer_limit_bytes").(float64); int64(b) > maxBody {
			probs = append(probs, fmt.Sprintf("sidecar Envoy listener %s: buffer limit %d exceeds toolproc's gRPC max receive minus headroom (%d)", digString(l, "name"), int64(b), maxBody))
		}
		if digString(l, "name") == "ingress" {
			port, _ := dig(l, "address", "socket_address", "port_value").(float64)
			if int32(port) != containerPort(container(dep, "envoy"), "http") {
				probs = append(probs, "sidecar Envoy: the ingress listener is not on the container's http port")
			}
		}
	}
	if u, err := url.Parse(cfg.Server.ReplayURL); err != nil || !strings.HasPrefix(u.Host, "127.0.0.1:") {
		probs = append(probs, fmt.Sprintf("sidecar mode: replay_url %q is not the pod's loopback replay listener", cfg.Server.ReplayURL))
	}
	probs = append(probs, checkProfiles("sidecar Envoy", string(js), cfg)...)
	return probs
}

// checkProfiles requires every x-toolproc-profile value an Envoy config sends to name a
// profile of the config (toolproc would fall back to default and count it as unknown).
func checkProfiles(where, js string, cfg *extproc.Config) []string {
	var probs []string
	names := map[string]bool{}
	for _, n := range cfg.ProfileNames() {
		names[n] = true
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["key"] == extproc.ProfileMetadataKey {
				if p, _ := x["value"].(string); !names[p] {
					probs = append(probs, fmt.Sprintf("%s: profile %q is not in the toolproc config (profiles: %v)", where, p, cfg.ProfileNames()))
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	var doc any
	_ = json.Unmarshal([]byte(js), &doc)
	walk(doc)
	return probs
}

// checkEnvoyFilterTargets ties the Istio EnvoyFilter to the release: the ext_proc cluster is
// Istio's name for toolproc's Service and gRPC port, the listener buffer fits a gRPC
// message, and the per-route profiles exist.
func checkEnvoyFilterTargets(o object, svc string, cfg *extproc.Config, maxBody int64) []string {
	var probs []string
	_, port, _ := net.SplitHostPort(cfg.Server.GRPCAddr)
	want := fmt.Sprintf("outbound|%s||%s.%s.svc.cluster.local", port, svc, releaseNS)
	js, _ := json.Marshal(o.doc)
	if !strings.Contains(string(js), `"cluster_name":"`+want+`"`) {
		probs = append(probs, fmt.Sprintf("%s: ext_proc cluster is not %s", o, want))
	}
	for _, p := range asList(dig(o.doc, "spec", "configPatches")) {
		if b, ok := dig(p, "patch", "value", "per_connection_buffer_limit_bytes").(float64); ok && int64(b) > maxBody {
			probs = append(probs, fmt.Sprintf("%s: listener buffer limit %d exceeds %d", o, int64(b), maxBody))
		}
	}
	return append(probs, checkProfiles(o.String(), string(js), cfg)...)
}

// checkExtensionPolicy ties the Envoy Gateway EnvoyExtensionPolicy to the release.
func checkExtensionPolicy(o object, svc string, r *release) []string {
	var probs []string
	_, tp := r.toolproc()
	for _, ep := range asList(dig(o.doc, "spec", "extProc")) {
		for _, ref := range asList(dig(ep, "backendRefs")) {
			port, _ := dig(ref, "port").(float64)
			if int32(port) != containerPort(tp, "grpc") {
				probs = append(probs, fmt.Sprintf("%s: backendRef port %v is not toolproc's gRPC port", o, port))
			}
			if digString(ref, "kind") == "Service" && digString(ref, "name") != svc {
				probs = append(probs, fmt.Sprintf("%s: backendRef names Service %q, toolproc's is %q", o, digString(ref, "name"), svc))
			}
			if digString(ref, "kind") == "Service" && digString(ref, "namespace") != releaseNS {
				probs = append(probs, fmt.Sprintf("%s: backendRef must name the release namespace", o))
			}
		}
		if digString(ep, "processingMode", "request", "body") != "Buffered" {
			probs = append(probs, fmt.Sprintf("%s: request body mode must be Buffered (toolproc answers whole requests)", o))
		}
	}
	// The policy names the agents' listener: a listener added to that Gateway later does not
	// silently run toolproc, and the replay Gateway never does (files_test.go checks that it
	// is the only way round toolproc and is not public).
	for _, ref := range asList(dig(o.doc, "spec", "targetRefs")) {
		if digString(ref, "sectionName") == "" {
			probs = append(probs, fmt.Sprintf("%s: targets every listener of Gateway %s, not the agents' listener", o, digString(ref, "name")))
		}
	}
	return probs
}

func container(d *appsv1.Deployment, name string) *corev1.Container {
	for i, c := range d.Spec.Template.Spec.Containers {
		if c.Name == name {
			return &d.Spec.Template.Spec.Containers[i]
		}
	}
	return nil
}

func containerPort(c *corev1.Container, name string) int32 {
	if c == nil {
		return 0
	}
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

func podPort(d *appsv1.Deployment, name string) int32 {
	for i := range d.Spec.Template.Spec.Containers {
		if p := containerPort(&d.Spec.Template.Spec.Containers[i], name); p != 0 {
			return p
		}
	}
	return 0
}

func mountsDir(c *corev1.Container, dir string) bool {
	if c == nil {
		return false
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath == dir {
			return true
		}
	}
	return false
}

func servicePortNamed(s *corev1.Service, name string) bool {
	for _, p := range s.Spec.Ports {
		if p.Name == name {
			return true
		}
	}
	return false
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func digString(v any, keys ...string) string {
	s, _ := dig(v, keys...).(string)
	return s
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func toStringMap(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for k, x := range m {
		out[k], _ = x.(string)
	}
	return out
}

// TestChartRedisTopologies: the chart's Redis topologies reach toolproc's
// config as its store.redis mode, seed nodes and master set.
func TestChartRedisTopologies(t *testing.T) {
	ch := loadChart(t)
	for _, tc := range []struct {
		values           string
		mode, addr, name string
		addrs            int
	}{
		{`redis: {mode: external, external: {addr: "r:6379"}}`, "single", "r:6379", "", 0},
		{`redis: {mode: external, external: {topology: cluster, addrs: ["a:6379", "b:6379", "c:6379"]}}`, "cluster", "", "", 3},
		{`redis: {mode: external, external: {topology: sentinel, addrs: ["s0:26379", "s1:26379"], masterName: tp}}`, "sentinel", "", "tp", 2},
	} {
		objs, err := render(t, ch, gatewayMode+tc.values)
		if err != nil {
			t.Fatalf("%s: %v", tc.values, err)
		}
		cfg, err := decodeRelease(t, objs).config()
		if err != nil {
			t.Fatalf("%s: %v", tc.values, err)
		}
		r := cfg.Store.Redis
		if cfg.Store.Type != "redis" || r.Mode != tc.mode || r.Addr != tc.addr || len(r.Addrs) != tc.addrs || r.MasterName != tc.name {
			t.Errorf("%s: store %s, redis %+v", tc.values, cfg.Store.Type, r)
		}
	}
}
