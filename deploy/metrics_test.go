package deploy_test

// The dashboard's queries and the PrometheusRule's alerts may only name metrics toolproc
// exports, with labels those metrics have. The names come from a real toolproc server: its
// ext_proc service and admin handler (the same ones `toolproc serve` runs) get one LLM request,
// /metrics is scraped, and the full set of families, including labelled ones that have no
// series yet, is read from the collectors the server registers.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql/parser"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/toolproc/toolproc/extproc"
)

// family is one exported metric family.
type family struct {
	histogram bool
	labels    map[string]bool
}

// recorder passes registrations through and remembers the collectors.
type recorder struct {
	prometheus.Registerer
	collectors []prometheus.Collector
}

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return r.Registerer.Register(c)
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

var descRE = regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)

// exportedMetrics starts toolproc, drives one request and returns its metric families and
// the families /metrics actually showed.
func exportedMetrics(t *testing.T) (all map[string]family, scraped map[string]string) {
	t.Helper()
	cfg, err := extproc.ParseConfig([]byte("server: {replay_url: \"http://127.0.0.1:1\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	rec := &recorder{Registerer: reg}
	srv := extproc.NewServer(cfg, nil, rec)
	t.Cleanup(func() { _ = srv.Close() })

	all = map[string]family{}
	for _, c := range rec.collectors {
		_, isHist := c.(*prometheus.HistogramVec)
		if _, ok := c.(prometheus.Histogram); ok {
			isHist = true
		}
		ch := make(chan *prometheus.Desc, 8)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			m := descRE.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("cannot read %s", d)
			}
			f := family{histogram: isHist, labels: map[string]bool{}}
			for _, l := range strings.Split(m[2], ",") {
				if l != "" {
					f.labels[l] = true
				}
			}
			all[m[1]] = f
		}
	}

	g := grpc.NewServer(extproc.GRPCServerOptions(cfg)...)
	srv.Register(g)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	var ready atomic.Bool
	ready.Store(true)
	admin := httptest.NewServer(extproc.AdminHandler(reg, &ready))
	t.Cleanup(admin.Close)

	driveRequest(t, lis.Addr().String())

	resp, err := http.Get(admin.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	scraped = map[string]string{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			scraped[f[2]] = f[3]
		}
	}
	return all, scraped
}

// driveRequest sends one chat completion with a large tool result through the ext_proc
// service, as Envoy would (request headers, then the BUFFERED body).
func driveRequest(t *testing.T, addr string) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := extprocv3.NewExternalProcessorClient(conn).Process(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := range 4000 {
		lines = append(lines, fmt.Sprintf("line %d: ok", i))
	}
	body, _ := json.Marshal(map[string]any{
		"model": "gpt-4o",
		"messages": []any{
			map[string]any{"role": "user", "content": "run the tests"},
			map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "bash", "arguments": "{}"}}}},
			map[string]any{"role": "tool", "tool_call_id": "c1", "content": strings.Join(lines, "\n")},
		},
	})
	hm := &corev3.HeaderMap{}
	for _, kv := range [][2]string{{":authority", "api.openai.com"}, {":path", "/v1/chat/completions"}, {":method", "POST"}, {"content-type", "application/json"}, {"content-length", fmt.Sprint(len(body))}} {
		hm.Headers = append(hm.Headers, &corev3.HeaderValue{Key: kv[0], RawValue: []byte(kv[1])})
	}
	for _, req := range []*extprocv3.ProcessingRequest{
		{Request: &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: &extprocv3.HttpHeaders{Headers: hm}}},
		{Request: &extprocv3.ProcessingRequest_RequestBody{RequestBody: &extprocv3.HttpBody{Body: body, EndOfStream: true}}},
	} {
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	_ = stream.CloseSend()
}

// TestQueriesNameExportedMetrics checks every dashboard query and every alert expression.
func TestQueriesNameExportedMetrics(t *testing.T) {
	all, scraped := exportedMetrics(t)

	// The registry view and the scrape agree, and the request produced series.
	for name := range scraped {
		if strings.HasPrefix(name, "toolproc_") {
			if _, ok := all[name]; !ok {
				t.Errorf("/metrics has %s, which no registered collector describes", name)
			}
		}
	}
	for _, name := range []string{"toolproc_requests_total", "toolproc_processing_seconds", "toolproc_body_bytes_total", "toolproc_active_streams"} {
		if _, ok := scraped[name]; !ok {
			t.Errorf("/metrics after one request lacks %s; scraped: %v", name, sortedKeys(scraped))
		}
	}
	if scraped["toolproc_processing_seconds"] != "histogram" {
		t.Errorf("toolproc_processing_seconds is a %q, want histogram", scraped["toolproc_processing_seconds"])
	}

	queries := map[string]string{}
	data, err := os.ReadFile(chartDir + "/files/toolproc-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	for _, p := range dash.Panels {
		for i, tg := range p.Targets {
			queries[fmt.Sprintf("dashboard panel %q target %d", p.Title, i)] = tg.Expr
		}
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(map[string]any); ok {
			if s, _ := q["query"].(string); s != "" {
				queries["dashboard variable "+v.Name] = s
			}
		}
	}
	objs, err := render(t, loadChart(t), gatewayMode+"metrics: {prometheusRule: {enabled: true}}\n")
	if err != nil {
		t.Fatal(err)
	}
	alerts := 0
	for _, o := range objs {
		if o.gvk().Kind != "PrometheusRule" {
			continue
		}
		for _, g := range asList(dig(o.doc, "spec", "groups")) {
			for _, r := range asList(dig(g, "rules")) {
				queries["alert "+digString(r, "alert")] = digString(r, "expr")
				alerts++
			}
		}
	}
	if alerts < 4 {
		t.Errorf("%d alerts rendered, want the 4 documented ones", alerts)
	}
	panels := 0
	for name, q := range queries {
		if strings.HasPrefix(name, "dashboard panel") {
			panels++
		}
		for _, p := range checkQuery(q, all) {
			t.Errorf("%s: %s\n  %s", name, p, q)
		}
	}
	t.Logf("%d dashboard queries and %d alert expressions checked against %d exported families (%d with series after one request)",
		panels, alerts, len(all), len(scraped))
}

// Labels Prometheus adds at scrape time (the ServiceMonitor's target labels).
var targetLabels = map[string]bool{"namespace": true, "pod": true, "service": true, "job": true, "instance": true, "container": true, "endpoint": true}

// grafanaVars stand in for the dashboard's variables so the query parses as Prometheus
// would receive it.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$namespace", ".*")

// checkQuery parses a PromQL expression with Prometheus' own parser and checks every metric
// it selects and every label it matches, groups or joins on against toolproc's families.
func checkQuery(q string, all map[string]family) []string {
	var probs []string
	// Grafana's label_values(metric, label) variable query is not PromQL.
	if inner, ok := strings.CutPrefix(q, "label_values("); ok {
		parts := strings.Split(strings.TrimSuffix(inner, ")"), ",")
		if len(parts) != 2 {
			return []string{"label_values needs a metric and a label"}
		}
		metric, label := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
		if _, f, ok := resolveMetric(metric, all); !ok {
			probs = append(probs, fmt.Sprintf("%q is not a metric toolproc exports", metric))
		} else if !f.labels[label] && !targetLabels[label] {
			probs = append(probs, fmt.Sprintf("label %q is not a label of %s", label, metric))
		}
		return probs
	}
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(grafanaVars.Replace(q))
	if err != nil {
		return []string{"PromQL: " + err.Error()}
	}
	used := map[string]bool{} // labels grouped or joined on
	metricLabels := map[string]bool{}
	metrics := 0
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		switch x := n.(type) {
		case *parser.VectorSelector:
			name, f, ok := resolveMetric(x.Name, all)
			if !ok {
				probs = append(probs, fmt.Sprintf("%q is not a metric toolproc exports", x.Name))
				return nil
			}
			metrics++
			own := map[string]bool{"__name__": true}
			if name != x.Name && strings.HasSuffix(x.Name, "_bucket") {
				own["le"] = true
			}
			for l := range f.labels {
				own[l] = true
			}
			for l := range own {
				metricLabels[l] = true
			}
			for _, m := range x.LabelMatchers {
				if !own[m.Name] && !targetLabels[m.Name] {
					probs = append(probs, fmt.Sprintf("label %q is not a label of %s", m.Name, x.Name))
				}
			}
		case *parser.Call:
			// Buckets summed without their le label leave histogram_quantile nothing to
			// interpolate: the panel or alert would be silently empty.
			if x.Func.Name == "histogram_quantile" && len(x.Args) == 2 {
				arg := x.Args[1]
				for {
					p, ok := arg.(*parser.ParenExpr)
					if !ok {
						break
					}
					arg = p.Expr
				}
				if agg, ok := arg.(*parser.AggregateExpr); ok && !agg.Without && !slices.Contains(agg.Grouping, "le") {
					probs = append(probs, "histogram_quantile over an aggregation that drops le")
				}
			}
		case *parser.AggregateExpr:
			for _, l := range x.Grouping {
				used[l] = true
			}
		case *parser.BinaryExpr:
			if x.VectorMatching != nil {
				for _, l := range append(append([]string{}, x.VectorMatching.MatchingLabels...), x.VectorMatching.Include...) {
					used[l] = true
				}
			}
		}
		return nil
	})
	if metrics == 0 && len(probs) == 0 {
		probs = append(probs, "names no toolproc metric")
	}
	for l := range used {
		if !metricLabels[l] && !targetLabels[l] {
			probs = append(probs, fmt.Sprintf("label %q is not a label of the metrics in the query", l))
		}
	}
	sort.Strings(probs)
	return probs
}

// resolveMetric maps a series name to its family: the name itself, or a histogram's
// _bucket/_sum/_count series.
func resolveMetric(id string, all map[string]family) (string, family, bool) {
	if f, ok := all[id]; ok && !f.histogram {
		return id, f, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(id, suffix); ok {
			if f, ok := all[base]; ok && f.histogram {
				return base, f, true
			}
		}
	}
	return "", family{}, false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestQueryCheckCatchesMistakes: the checker must reject realistic query mistakes.
func TestQueryCheckCatchesMistakes(t *testing.T) {
	all, _ := exportedMetrics(t)
	for _, tc := range []struct{ q, want string }{
		{`sum(rate(toolproc_request_total[5m]))`, `"toolproc_request_total" is not a metric`},
		{`histogram_quantile(0.99, sum by (le) (rate(toolproc_processing_seconds[5m])))`, `"toolproc_processing_seconds" is not a metric`},
		{`sum(rate(toolproc_requests_total_bucket[5m]))`, `"toolproc_requests_total_bucket" is not a metric`},
		{`sum by (reasons) (rate(toolproc_passthrough_total[5m]))`, `label "reasons"`},
		{`sum(rate(toolproc_replays_total{outcom="5xx"}[5m]))`, `label "outcom"`},
		{`sum(rate(toolproc_store_errors_total[5m])`, `PromQL: `},
		{`sum(rat(toolproc_store_errors_total[5m]))`, `unknown function`},
		{`histogram_quantile(0.99, sum by (phase) (rate(toolproc_processing_seconds_bucket[5m])))`, `drops le`},
		{`sum(rate(envoy_cluster_upstream_rq_total[5m]))`, `"envoy_cluster_upstream_rq_total" is not a metric`},
	} {
		probs := checkQuery(tc.q, all)
		if !strings.Contains(strings.Join(probs, "\n"), tc.want) {
			t.Errorf("%s: want a problem mentioning %q, got %v", tc.q, tc.want, probs)
		}
	}
}
