package deploy_test

// `helm lint --strict` in Go (Helm's lint package): Chart.yaml, values, every template
// rendered and parsed as YAML, deprecated APIs for the target Kubernetes version, for every
// documented values combination.

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

func TestHelmLint(t *testing.T) {
	// The oldest Kubernetes the chart supports (Chart.yaml kubeVersion): gRPC probes are GA
	// from 1.27.
	kv := &chartutil.KubeVersion{Version: "v1.27.0", Major: "1", Minor: "27"}
	if !chartutil.IsCompatibleRange(loadChart(t).Metadata.KubeVersion, kv.Version) {
		t.Fatalf("Chart.yaml kubeVersion %q does not admit %s", loadChart(t).Metadata.KubeVersion, kv.Version)
	}
	if chartutil.IsCompatibleRange(loadChart(t).Metadata.KubeVersion, "v1.26.9") {
		t.Errorf("Chart.yaml kubeVersion admits 1.26, which has no GA gRPC probes")
	}
	for _, tc := range valuesCases {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(tc.values))
			if err != nil {
				t.Fatal(err)
			}
			linter := lint.AllWithKubeVersion(chartDir, vals, releaseNS, kv)
			for _, m := range linter.Messages {
				t.Logf("helm lint: %s", m)
				// Info messages are suggestions (e.g. "icon is recommended").
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				}
			}
		})
	}
}

// TestReadmeListsValuesCases: deploy/README.md's table of validated combinations names
// exactly the cases the tests render.
func TestReadmeListsValuesCases(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	row := regexp.MustCompile(`(?m)^  \| ([a-z-]+) \| .* \|$`)
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		if m[1] != "case" {
			documented = append(documented, m[1])
		}
	}
	var tested []string
	for _, tc := range valuesCases {
		tested = append(tested, tc.name)
	}
	if strings.Join(documented, ",") != strings.Join(tested, ",") {
		t.Errorf("README lists\n  %v\ntests render\n  %v", documented, tested)
	}
}
