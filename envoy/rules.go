package envoy

// Hand-written checks for rules that only Envoy's C++ enforces (at config load or, worse, at
// request time), plus toolproc's own deployment invariants. protoc-gen-validate cannot see
// any of these: they span several messages or live inside Anys. References (§n) are to
// docs/envoy-notes.md.

import (
	"fmt"
	"sort"
	"strings"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	upstreamhttpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

const (
	// httpProtocolOptionsKey is the typed_extension_protocol_options key Envoy reads.
	httpProtocolOptionsKey = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"
	// defaultBufferLimit is Envoy's default per_connection_buffer_limit_bytes (1 MiB).
	defaultBufferLimit = 1 << 20
	// toolprocMaxRecvBytes is toolproc's default gRPC max receive message size
	// (server.max_recv_msg_bytes, docs/config.md). A BUFFERED
	// body travels to toolproc in one gRPC message, so Envoy's buffer limit must stay below it
	// (with headroom for the headers and protobuf framing in the same message).
	toolprocMaxRecvBytes = 64 << 20
	grpcHeadroomBytes    = 1 << 20
	// defaultMessageTimeout is ext_proc's message_timeout when unset.
	defaultMessageTimeout = 200 * time.Millisecond
)

// checkBootstrap validates one Envoy bootstrap given as JSON and returns every problem found,
// each prefixed with file and path.
func checkBootstrap(file string, js []byte) []string {
	rep := &report{file: file}
	bs := &bootstrapv3.Bootstrap{}
	if !unmarshalStrict(rep, "", js, bs) {
		return rep.probs
	}
	validateTree(rep, bs.ProtoReflect(), "")
	checkEnvoyRules(rep, bs)
	return rep.probs
}

// hcmRef is one HttpConnectionManager found in a listener's filter chains.
type hcmRef struct {
	path     string // path of the HCM message itself
	hcm      *hcmv3.HttpConnectionManager
	extProcs []extProcRef
}

// extProcRef is one ext_proc HTTP filter of an HCM.
type extProcRef struct {
	name     string // HttpFilter.name: the key per-route configs must use
	disabled bool   // HttpFilter.disabled: off unless a route enables it
	path     string
	cfg      *extprocfilterv3.ExternalProcessor
}

// listenerInfo summarises a listener for the cross-listener (replay) check.
type listenerInfo struct {
	name, path string
	hcms       []*hcmRef
	routes     map[string]string // route match key → target, routes with a route action only
	extProc    bool              // some HCM has an ext_proc filter that is on by default
}

func checkEnvoyRules(rep *report, bs *bootstrapv3.Bootstrap) {
	clusters := map[string]*clusterv3.Cluster{}
	for i, c := range bs.GetStaticResources().GetClusters() {
		path := elem("static_resources.clusters", i, c.GetName())
		if _, dup := clusters[c.GetName()]; dup {
			rep.add(path, "duplicate cluster name %q", c.GetName())
		}
		clusters[c.GetName()] = c
		checkCluster(rep, path, c)
	}

	var mains, replays []*listenerInfo
	for i, l := range bs.GetStaticResources().GetListeners() {
		li := &listenerInfo{name: l.GetName(), path: elem("static_resources.listeners", i, l.GetName()), routes: map[string]string{}}
		li.hcms = listenerHCMs(rep, li.path, l)
		for _, h := range li.hcms {
			checkHCM(rep, l, h, clusters)
			for _, ep := range h.extProcs {
				if !ep.disabled {
					li.extProc = true
				}
			}
			forEachRoute(h, func(path string, _ *routev3.RouteConfiguration, _ *routev3.VirtualHost, r *routev3.Route) {
				if r.GetRoute() != nil {
					li.routes[matchKey(r.GetMatch())] = routeTarget(r)
				}
			})
		}
		if strings.Contains(strings.ToLower(l.GetName()), "replay") {
			replays = append(replays, li)
		} else if li.extProc {
			mains = append(mains, li)
		}
	}
	checkReplay(rep, mains, replays)
}

// listenerHCMs unpacks every HttpConnectionManager in the listener's filter chains.
func listenerHCMs(rep *report, lpath string, l *listenerv3.Listener) []*hcmRef {
	type chain struct {
		path string
		fc   *listenerv3.FilterChain
	}
	var chains []chain
	for j, fc := range l.GetFilterChains() {
		chains = append(chains, chain{elem(lpath+".filter_chains", j, fc.GetName()), fc})
	}
	if dfc := l.GetDefaultFilterChain(); dfc != nil {
		chains = append(chains, chain{lpath + ".default_filter_chain", dfc})
	}
	var out []*hcmRef
	for _, c := range chains {
		for k, f := range c.fc.GetFilters() {
			tc := f.GetTypedConfig()
			if tc == nil || !tc.MessageIs(&hcmv3.HttpConnectionManager{}) {
				continue
			}
			h := &hcmv3.HttpConnectionManager{}
			if err := tc.UnmarshalTo(h); err != nil {
				continue // already reported by validateTree
			}
			ref := &hcmRef{path: elem(c.path+".filters", k, f.GetName()) + ".typed_config<HttpConnectionManager>", hcm: h}
			for m, hf := range h.GetHttpFilters() {
				htc := hf.GetTypedConfig()
				if htc == nil || !htc.MessageIs(&extprocfilterv3.ExternalProcessor{}) {
					continue
				}
				ep := &extprocfilterv3.ExternalProcessor{}
				if err := htc.UnmarshalTo(ep); err != nil {
					continue
				}
				ref.extProcs = append(ref.extProcs, extProcRef{
					name:     hf.GetName(),
					disabled: hf.GetDisabled(),
					path:     elem(ref.path+".http_filters", m, hf.GetName()) + ".typed_config<ExternalProcessor>",
					cfg:      ep,
				})
			}
			out = append(out, ref)
		}
	}
	return out
}

func checkHCM(rep *report, l *listenerv3.Listener, h *hcmRef, clusters map[string]*clusterv3.Cluster) {
	checkRouterLast(rep, h)
	for _, ep := range h.extProcs {
		checkExtProc(rep, ep.path, ep.cfg, clusters)
		// FULL_DUPLEX_STREAMED runs without a message timer; only the HCM stream idle timeout
		// (default 5 min) bounds a processor that stops answering (§3.2, §9).
		pm := ep.cfg.GetProcessingMode()
		fullDuplex := pm.GetRequestBodyMode() == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED ||
			pm.GetResponseBodyMode() == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
		if sit := h.hcm.GetStreamIdleTimeout(); fullDuplex && sit != nil && sit.AsDuration() == 0 {
			rep.add(h.path+".stream_idle_timeout", "0s disables the stream idle timeout, the only bound on a stalled processor in FULL_DUPLEX_STREAMED (%s); use a generous finite value", ep.name)
		}
	}
	if h.hcm.GetRouteConfig() == nil {
		return // RDS or scoped routes: nothing local to cross-check
	}

	extProcNames := map[string]bool{}
	buffered := false
	for _, ep := range h.extProcs {
		extProcNames[ep.name] = true
		pm := ep.cfg.GetProcessingMode()
		buffered = buffered || isBuffered(pm.GetRequestBodyMode()) || isBuffered(pm.GetResponseBodyMode())
	}
	listenerLimit := uint64(defaultBufferLimit)
	if v := l.GetPerConnectionBufferLimitBytes(); v != nil {
		listenerLimit = uint64(v.GetValue())
	}

	rc := h.hcm.GetRouteConfig()
	rcPath := h.path + ".route_config"
	checkPerFilterConfigs(rep, rcPath, rc.GetTypedPerFilterConfig(), extProcNames, clusters)
	for i, vh := range rc.GetVirtualHosts() {
		checkPerFilterConfigs(rep, elem(rcPath+".virtual_hosts", i, vh.GetName()), vh.GetTypedPerFilterConfig(), extProcNames, clusters)
	}
	forEachRoute(h, func(path string, rc *routev3.RouteConfiguration, vh *routev3.VirtualHost, r *routev3.Route) {
		checkPerFilterConfigs(rep, path, r.GetTypedPerFilterConfig(), extProcNames, clusters)
		ra := r.GetRoute()
		if ra == nil {
			return
		}
		// (d) every referenced cluster exists.
		for _, ref := range routeClusters(ra) {
			if _, ok := clusters[ref.name]; !ok {
				rep.add(path+".route."+ref.field, "route references cluster %q, which does not exist (clusters: %s); Envoy rejects the config",
					ref.name, strings.Join(sortedKeys(clusters), ", "))
			}
		}
		if !isLLMRoute(r.GetMatch()) {
			return
		}
		checkRouteProcessed(rep, path, l, h, rc, vh, r)
		// (f) LLM routes: no route timeout. Envoy's default is 15s, which cuts off long
		// generations and streams (§10).
		if t := ra.GetTimeout(); t == nil || t.AsDuration() != 0 {
			got := "unset, i.e. Envoy's 15s default"
			if t != nil {
				got = t.AsDuration().String()
			}
			rep.add(path+".route.timeout", "LLM route %s must set timeout: 0s (got %s); the HCM stream_idle_timeout bounds stalls instead", matchKey(r.GetMatch()), got)
		}
		// (j) whole-body buffering: the effective buffer limit must fit in one toolproc gRPC
		// message. request_body_buffer_limit can only raise the listener limit (§5).
		if buffered {
			limit := listenerLimit
			if v := vh.GetRequestBodyBufferLimit(); v != nil {
				limit = max(limit, v.GetValue())
			}
			if v := r.GetRequestBodyBufferLimit(); v != nil {
				limit = max(limit, v.GetValue())
			}
			if limit > toolprocMaxRecvBytes-grpcHeadroomBytes {
				rep.add(path, "effective buffer limit %d bytes (max of listener per_connection_buffer_limit_bytes and request_body_buffer_limit) "+
					"does not fit in toolproc's default 64 MiB gRPC max receive size with 1 MiB headroom; a body that large would fail with RESOURCE_EXHAUSTED. "+
					"Lower the limit, or raise toolproc's server.max_recv_msg_bytes and toolprocMaxRecvBytes in envoy/rules.go together", limit)
			}
		}
	})
}

// checkRouteProcessed: (k) on a listener with an ext_proc filter, every LLM route runs it,
// with a processing mode toolproc can work in: request headers and body sent (the body is
// what it rewrites), response headers and body sent (overflow recovery and expand_context
// answer from the response). A provider route added without this silently bypasses toolproc.
// Listeners without ext_proc (the replay listener) are checked by (h) instead.
func checkRouteProcessed(rep *report, path string, l *listenerv3.Listener, h *hcmRef, rc *routev3.RouteConfiguration, vh *routev3.VirtualHost, r *routev3.Route) {
	if len(h.extProcs) == 0 || strings.Contains(strings.ToLower(l.GetName()), "replay") {
		return
	}
	for _, f := range h.extProcs {
		levels := []map[string]*anypb.Any{r.GetTypedPerFilterConfig(), vh.GetTypedPerFilterConfig(), rc.GetTypedPerFilterConfig()}
		if !extProcActive(f, levels...) {
			continue
		}
		pm := f.cfg.GetProcessingMode()
		for _, lvl := range levels {
			if pr, ok := parsePerRoute(lvl[f.name]); ok && pr.ep.GetOverrides().GetProcessingMode() != nil {
				pm = pr.ep.GetOverrides().GetProcessingMode()
				break
			}
		}
		const skip, none = extprocfilterv3.ProcessingMode_SKIP, extprocfilterv3.ProcessingMode_NONE
		var wrong []string
		if pm.GetRequestHeaderMode() == skip {
			wrong = append(wrong, "request_header_mode SKIP")
		}
		if pm.GetRequestBodyMode() == none {
			wrong = append(wrong, "request_body_mode NONE")
		}
		if pm.GetResponseHeaderMode() == skip {
			wrong = append(wrong, "response_header_mode SKIP")
		}
		if pm.GetResponseBodyMode() == none {
			wrong = append(wrong, "response_body_mode NONE")
		}
		if len(wrong) > 0 {
			rep.add(path, "LLM route %s reaches toolproc (%s) with %s: toolproc needs both bodies and headers (request BUFFERED and response FULL_DUPLEX_STREAMED recommended)",
				matchKey(r.GetMatch()), f.name, strings.Join(wrong, ", "))
		}
		return
	}
	rep.add(path, "LLM route %s bypasses toolproc: no ext_proc filter of this listener runs on it", matchKey(r.GetMatch()))
}

// checkRouterLast: (e) the router must be the last HTTP filter; anything after it never runs,
// and Envoy rejects a chain whose last filter is not terminal.
func checkRouterLast(rep *report, h *hcmRef) {
	filters := h.hcm.GetHttpFilters()
	fp := h.path + ".http_filters"
	if len(filters) == 0 {
		rep.add(fp, "no HTTP filters; envoy.filters.http.router must be the last one")
		return
	}
	last := len(filters) - 1
	for i, f := range filters {
		if isRouter(f) && i != last {
			rep.add(elem(fp, i, f.GetName()), "router filter at position %d of %d; it must be the last HTTP filter (filters after it never run)", i, len(filters))
		}
	}
	if !isRouter(filters[last]) {
		rep.add(elem(fp, last, filters[last].GetName()), "last HTTP filter is %q; it must be the router (envoy.filters.http.router)", filters[last].GetName())
	}
}

func isRouter(f *hcmv3.HttpFilter) bool {
	if tc := f.GetTypedConfig(); tc != nil {
		return tc.MessageIs(&routerv3.Router{})
	}
	return f.GetName() == "envoy.filters.http.router"
}

// checkExtProc applies the filter-level rules of ext_proc's C++ config check (§2) and the
// gRPC-cluster cross-reference. clusters == nil skips the cluster lookup (Istio patches).
func checkExtProc(rep *report, path string, ep *extprocfilterv3.ExternalProcessor, clusters map[string]*clusterv3.Cluster) {
	// (b) exactly one transport.
	switch gs, hs := ep.GetGrpcService(), ep.GetHttpService(); {
	case gs == nil && hs == nil:
		rep.add(path, "neither grpc_service nor http_service is set; Envoy requires exactly one")
	case gs != nil && hs != nil:
		rep.add(path, "both grpc_service and http_service are set; Envoy requires exactly one of them")
	case hs != nil:
		pm := ep.GetProcessingMode()
		if pm.GetRequestBodyMode() != extprocfilterv3.ProcessingMode_NONE || pm.GetResponseBodyMode() != extprocfilterv3.ProcessingMode_NONE ||
			pm.GetRequestTrailerMode() == extprocfilterv3.ProcessingMode_SEND || pm.GetResponseTrailerMode() == extprocfilterv3.ProcessingMode_SEND {
			rep.add(path+".processing_mode", "http_service supports header processing only; body modes must be NONE and trailer modes not SEND")
		}
	}
	// (a) FULL_DUPLEX_STREAMED needs trailer SEND in the same direction.
	checkProcessingMode(rep, path+".processing_mode", ep.GetProcessingMode())
	// (c) the gRPC cluster exists and speaks HTTP/2.
	if gs := ep.GetGrpcService(); gs != nil {
		checkGrpcCluster(rep, path+".grpc_service", gs, clusters)
	}
	// (g) message_timeout ≤ max_message_timeout, when the latter enables overrides.
	if mm := ep.GetMaxMessageTimeout(); mm != nil && mm.AsDuration() > 0 {
		mt := defaultMessageTimeout
		if ep.GetMessageTimeout() != nil {
			mt = ep.GetMessageTimeout().AsDuration()
		}
		if mt > mm.AsDuration() {
			rep.add(path+".message_timeout", "message_timeout %s exceeds max_message_timeout %s; toolproc could only ever shorten its deadline (override_message_timeout above the max is ignored)", mt, mm.AsDuration())
		}
	}
	if ep.GetDisableClearRouteCache() && ep.GetRouteCacheAction() != extprocfilterv3.ExternalProcessor_DEFAULT {
		rep.add(path, "disable_clear_route_cache and route_cache_action %s are mutually exclusive; Envoy rejects the config", ep.GetRouteCacheAction())
	}
}

func checkProcessingMode(rep *report, path string, pm *extprocfilterv3.ProcessingMode) {
	if pm == nil {
		return
	}
	const fd = extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
	if pm.GetRequestBodyMode() == fd && pm.GetRequestTrailerMode() != extprocfilterv3.ProcessingMode_SEND {
		rep.add(path+".request_trailer_mode", "request_body_mode FULL_DUPLEX_STREAMED requires request_trailer_mode SEND (got %s); only Envoy's C++ checks this, at config load", pm.GetRequestTrailerMode())
	}
	if pm.GetResponseBodyMode() == fd && pm.GetResponseTrailerMode() != extprocfilterv3.ProcessingMode_SEND {
		rep.add(path+".response_trailer_mode", "response_body_mode FULL_DUPLEX_STREAMED requires response_trailer_mode SEND (got %s); only Envoy's C++ checks this, at config load", pm.GetResponseTrailerMode())
	}
}

func isBuffered(m extprocfilterv3.ProcessingMode_BodySendMode) bool {
	return m == extprocfilterv3.ProcessingMode_BUFFERED || m == extprocfilterv3.ProcessingMode_BUFFERED_PARTIAL
}

func checkGrpcCluster(rep *report, path string, gs *corev3.GrpcService, clusters map[string]*clusterv3.Cluster) {
	eg := gs.GetEnvoyGrpc()
	if eg == nil || clusters == nil {
		return // google_grpc dials target_uri itself; no cluster involved
	}
	c, ok := clusters[eg.GetClusterName()]
	if !ok {
		rep.add(path+".envoy_grpc.cluster_name", "ext_proc gRPC cluster %q does not exist (clusters: %s)", eg.GetClusterName(), strings.Join(sortedKeys(clusters), ", "))
		return
	}
	if ok, why := clusterSpeaksHTTP2(c); !ok {
		rep.add(path+".envoy_grpc.cluster_name", "cluster %q carries gRPC but is not HTTP/2: %s. Envoy accepts this, then every Process call fails (silently, with failure_mode_allow)", c.GetName(), why)
	}
}

// clusterSpeaksHTTP2 reports whether Envoy will use HTTP/2 to the cluster's hosts.
func clusterSpeaksHTTP2(c *clusterv3.Cluster) (bool, string) {
	//lint:ignore SA1019 the deprecated cluster-level field is still honoured by Envoy, so a config using it is HTTP/2
	if c.GetHttp2ProtocolOptions() != nil {
		return true, ""
	}
	a, ok := c.GetTypedExtensionProtocolOptions()[httpProtocolOptionsKey]
	if !ok {
		return false, "no " + httpProtocolOptionsKey + " in typed_extension_protocol_options, so Envoy defaults to HTTP/1.1"
	}
	opts := &upstreamhttpv3.HttpProtocolOptions{}
	if err := a.UnmarshalTo(opts); err != nil {
		return false, fmt.Sprintf("cannot read %s: %v", httpProtocolOptionsKey, err)
	}
	switch p := opts.GetUpstreamProtocolOptions().(type) {
	case *upstreamhttpv3.HttpProtocolOptions_ExplicitHttpConfig_:
		if p.ExplicitHttpConfig.GetHttp2ProtocolOptions() != nil {
			return true, ""
		}
		return false, "explicit_http_config selects HTTP/1.1 (or HTTP/3); use http2_protocol_options"
	case *upstreamhttpv3.HttpProtocolOptions_AutoConfig:
		if hasTLS(c) {
			return true, ""
		}
		return false, "auto_config negotiates by TLS ALPN and this cluster has no TLS transport socket"
	case *upstreamhttpv3.HttpProtocolOptions_UseDownstreamProtocolConfig:
		return false, "use_downstream_protocol_config follows the client's protocol, which may be HTTP/1.1"
	default:
		return false, "HttpProtocolOptions selects no protocol, so Envoy defaults to HTTP/1.1"
	}
}

func hasTLS(c *clusterv3.Cluster) bool {
	ts := c.GetTransportSocket()
	if ts == nil {
		return false
	}
	if tc := ts.GetTypedConfig(); tc != nil {
		return tc.MessageIs(&tlsv3.UpstreamTlsContext{})
	}
	return ts.GetName() == "envoy.transport_sockets.tls"
}

// checkCluster holds per-cluster rules Envoy enforces at load that PGV does not.
func checkCluster(rep *report, path string, c *clusterv3.Cluster) {
	a, ok := c.GetTypedExtensionProtocolOptions()[httpProtocolOptionsKey]
	if !ok {
		return
	}
	opts := &upstreamhttpv3.HttpProtocolOptions{}
	if a.UnmarshalTo(opts) != nil {
		return
	}
	if opts.GetAutoConfig() != nil && !hasTLS(c) {
		rep.add(path+".typed_extension_protocol_options["+httpProtocolOptionsKey+"].auto_config",
			"auto_config needs a transport socket with ALPN (TLS); on plain TCP Envoy rejects the cluster. Use explicit_http_config")
	}
}

// checkPerFilterConfigs checks the ExtProcPerRoute entries at one level (route configuration,
// virtual host or route): (a) and (c) for their overrides, and (i) that the key names an
// ext_proc filter of this HCM - Envoy looks per-route configs up by filter name, so a
// mismatched key is silently ignored.
func checkPerFilterConfigs(rep *report, path string, cfgs map[string]*anypb.Any, extProcNames map[string]bool, clusters map[string]*clusterv3.Cluster) {
	for _, key := range sortedKeys(cfgs) {
		pr, ok := parsePerRoute(cfgs[key])
		if !ok || pr.ep == nil {
			continue
		}
		kp := path + ".typed_per_filter_config[" + key + "]<" + shortType(cfgs[key].GetTypeUrl()) + ">"
		if len(extProcNames) > 0 && !extProcNames[key] {
			rep.add(kp, "ExtProcPerRoute under key %q does not name an ext_proc filter of this listener (%s); Envoy would ignore it",
				key, strings.Join(sortedKeys(extProcNames), ", "))
		}
		ov := pr.ep.GetOverrides()
		checkProcessingMode(rep, kp+".overrides.processing_mode", ov.GetProcessingMode())
		if gs := ov.GetGrpcService(); gs != nil {
			checkGrpcCluster(rep, kp+".overrides.grpc_service", gs, clusters)
		}
	}
}

// perRoute is one typed_per_filter_config value as it concerns ext_proc.
type perRoute struct {
	ep       *extprocfilterv3.ExtProcPerRoute // nil unless it is (or wraps) one
	generic  bool                             // envoy.config.route.v3.FilterConfig
	disabled bool
}

func parsePerRoute(a *anypb.Any) (perRoute, bool) {
	switch {
	case a.MessageIs(&extprocfilterv3.ExtProcPerRoute{}):
		ep := &extprocfilterv3.ExtProcPerRoute{}
		if a.UnmarshalTo(ep) != nil {
			return perRoute{}, false
		}
		return perRoute{ep: ep, disabled: ep.GetDisabled()}, true
	case a.MessageIs(&routev3.FilterConfig{}):
		fc := &routev3.FilterConfig{}
		if a.UnmarshalTo(fc) != nil {
			return perRoute{}, false
		}
		pr := perRoute{generic: true, disabled: fc.GetDisabled()}
		if inner := fc.GetConfig(); inner != nil && inner.MessageIs(&extprocfilterv3.ExtProcPerRoute{}) {
			ep := &extprocfilterv3.ExtProcPerRoute{}
			if inner.UnmarshalTo(ep) == nil {
				pr.ep = ep
				pr.disabled = pr.disabled || ep.GetDisabled()
			}
		}
		return pr, true
	}
	return perRoute{}, false
}

// extProcActive reports whether ext_proc filter f runs for a route, given the
// typed_per_filter_config maps from most to least specific (route, virtual host, route
// configuration). The most specific config for the filter decides: ExtProcPerRoute configs
// merge with the more specific `disabled` winning (§6), so a route-level ExtProcPerRoute
// without `disabled` re-enables a filter its virtual host disabled. A filter disabled in the
// HCM itself is only turned on by a generic FilterConfig{disabled: false}. This models the
// common cases, not every corner of Envoy's merge logic.
func extProcActive(f extProcRef, levels ...map[string]*anypb.Any) bool {
	for _, lvl := range levels {
		a, ok := lvl[f.name]
		if !ok {
			continue
		}
		pr, ok := parsePerRoute(a)
		if !ok {
			continue
		}
		if f.disabled {
			if pr.generic {
				return !pr.disabled
			}
			continue
		}
		return !pr.disabled
	}
	return !f.disabled
}

// checkReplay: (h) toolproc replays through a listener with the same routes and no ext_proc.
func checkReplay(rep *report, mains, replays []*listenerInfo) {
	if len(mains) == 0 {
		return // no ext_proc listener, nothing to replay for
	}
	if len(replays) == 0 {
		var names []string
		for _, m := range mains {
			names = append(names, m.name)
		}
		rep.add("static_resources.listeners", "no replay listener: toolproc sends compress-and-retry and expand_context replays to a listener "+
			"(named *replay*) with the same routes as %s and ext_proc disabled", strings.Join(names, ", "))
		return
	}
	want := map[string]string{}
	var wantFrom []string
	for _, m := range mains {
		wantFrom = append(wantFrom, m.name)
		for k, v := range m.routes {
			want[k] = v
		}
	}
	from := strings.Join(wantFrom, ", ")
	for _, r := range replays {
		for _, h := range r.hcms {
			forEachRoute(h, func(path string, rc *routev3.RouteConfiguration, vh *routev3.VirtualHost, rt *routev3.Route) {
				for _, f := range h.extProcs {
					if extProcActive(f, rt.GetTypedPerFilterConfig(), vh.GetTypedPerFilterConfig(), rc.GetTypedPerFilterConfig()) {
						rep.add(path, "ext_proc filter %q is enabled on replay listener %q: toolproc's own replays would be processed again. "+
							"Remove the filter from this listener, or disable it with ExtProcPerRoute{disabled: true} on this route", f.name, r.name)
					}
				}
			})
		}
		for _, k := range sortedKeys(want) {
			got, ok := r.routes[k]
			switch {
			case !ok:
				rep.add(r.path, "replay listener does not route %s (→ %s) like %s does; toolproc's replays of such requests would get 404", k, want[k], from)
			case got != want[k]:
				rep.add(r.path, "replay listener routes %s to %s, but %s routes it to %s", k, got, from, want[k])
			}
		}
		for _, k := range sortedKeys(r.routes) {
			if _, ok := want[k]; !ok {
				rep.add(r.path, "replay listener routes %s (→ %s), which %s does not; keep the route sets identical", k, r.routes[k], from)
			}
		}
	}
}

// forEachRoute calls fn for every route of an HCM's inline route configuration.
func forEachRoute(h *hcmRef, fn func(path string, rc *routev3.RouteConfiguration, vh *routev3.VirtualHost, r *routev3.Route)) {
	rc := h.hcm.GetRouteConfig()
	if rc == nil {
		return
	}
	for i, vh := range rc.GetVirtualHosts() {
		vp := elem(h.path+".route_config.virtual_hosts", i, vh.GetName())
		for j, r := range vh.GetRoutes() {
			fn(elem(vp+".routes", j, r.GetName()), rc, vh, r)
		}
	}
}

type clusterRef struct{ field, name string }

func routeClusters(ra *routev3.RouteAction) []clusterRef {
	var refs []clusterRef
	switch cs := ra.GetClusterSpecifier().(type) {
	case *routev3.RouteAction_Cluster:
		refs = append(refs, clusterRef{"cluster", cs.Cluster})
	case *routev3.RouteAction_WeightedClusters:
		for i, wc := range cs.WeightedClusters.GetClusters() {
			refs = append(refs, clusterRef{fmt.Sprintf("weighted_clusters.clusters[%d].name", i), wc.GetName()})
		}
	}
	for i, mp := range ra.GetRequestMirrorPolicies() {
		if mp.GetCluster() != "" {
			refs = append(refs, clusterRef{fmt.Sprintf("request_mirror_policies[%d].cluster", i), mp.GetCluster()})
		}
	}
	return refs
}

func routeTarget(r *routev3.Route) string {
	ra := r.GetRoute()
	switch cs := ra.GetClusterSpecifier().(type) {
	case *routev3.RouteAction_Cluster:
		return "cluster " + cs.Cluster
	case *routev3.RouteAction_ClusterHeader:
		return "cluster_header " + cs.ClusterHeader
	case *routev3.RouteAction_WeightedClusters:
		var names []string
		for _, wc := range cs.WeightedClusters.GetClusters() {
			names = append(names, wc.GetName())
		}
		sort.Strings(names)
		return "weighted_clusters " + strings.Join(names, ",")
	}
	return "route action"
}

// matchKey identifies a route's path match, e.g. "prefix /v1/messages".
func matchKey(m *routev3.RouteMatch) string {
	switch p := m.GetPathSpecifier().(type) {
	case *routev3.RouteMatch_Prefix:
		return "prefix " + p.Prefix
	case *routev3.RouteMatch_Path:
		return "path " + p.Path
	case *routev3.RouteMatch_PathSeparatedPrefix:
		return "path_separated_prefix " + p.PathSeparatedPrefix
	case *routev3.RouteMatch_SafeRegex:
		return "safe_regex " + p.SafeRegex.GetRegex()
	case *routev3.RouteMatch_ConnectMatcher_:
		return "connect_matcher"
	case *routev3.RouteMatch_PathMatchPolicy:
		return "path_match_policy " + p.PathMatchPolicy.GetName()
	}
	return "?"
}

// llmPathRoots are the path prefixes under which the providers envoy.yaml routes take their
// API calls: OpenAI and Anthropic (/v1/), Gemini (/v1beta/, /v1alpha/), Bedrock Runtime
// (/model/), Azure OpenAI (/openai/) and OpenRouter (/api/v1/).
var llmPathRoots = []string{"/v1/", "/v1beta/", "/v1alpha/", "/model/", "/openai/", "/api/v1/"}

// isLLMRoute: routes under one of llmPathRoots carry provider API calls.
func isLLMRoute(m *routev3.RouteMatch) bool {
	var v string
	switch p := m.GetPathSpecifier().(type) {
	case *routev3.RouteMatch_Prefix:
		v = p.Prefix
	case *routev3.RouteMatch_Path:
		v = p.Path
	case *routev3.RouteMatch_PathSeparatedPrefix:
		v = p.PathSeparatedPrefix
	}
	for _, root := range llmPathRoots {
		if v == strings.TrimSuffix(root, "/") || strings.HasPrefix(v, root) {
			return true
		}
	}
	return false
}
