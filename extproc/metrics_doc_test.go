package extproc

import (
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestMetricLabelsDocumented: every series of a closed label set exists
// from startup, and every value of an outcome-like label is named in its
// family's help and in the README's Observability section, where the
// others are.
func TestMetricLabelsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, obs, _ := strings.Cut(string(readme), "\n## Observability\n")
	obs, _, _ = strings.Cut(obs, "\n## ")
	if obs == "" {
		t.Fatal("README has no Observability section")
	}
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	m.initSeries([]string{DefaultProfile})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{"outcome": true, "reason": true, "action": true, "op": true, "result": true,
		"class": true, "phase": true, "stage": true, "purpose": true, "kind": true, "direction": true}
	for _, f := range families {
		name := f.GetName()
		if !strings.Contains(obs, "`"+name) {
			t.Errorf("%s is not in the README's Observability section", name)
		}
		if len(f.GetMetric()) == 0 {
			t.Errorf("%s has no series at startup", name)
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				v := l.GetValue()
				if !documented[l.GetName()] {
					continue
				}
				if l.GetName() == "purpose" && strings.HasPrefix(v, "overflow_") {
					v = "overflow_<rung>"
				}
				if l.GetName() == "kind" || l.GetName() == "direction" {
					// usage kinds are listed with the bill; request is the only direction.
					if !strings.Contains(f.GetHelp()+string(readme), v) {
						t.Errorf("%s{%s=%q}: not documented", name, l.GetName(), v)
					}
					continue
				}
				if !strings.Contains(f.GetHelp(), v) {
					t.Errorf("%s{%s=%q}: not in the family's help: %s", name, l.GetName(), v, f.GetHelp())
				}
				if !strings.Contains(obs, v) {
					t.Errorf("%s{%s=%q}: not in the README's Observability section", name, l.GetName(), v)
				}
			}
		}
	}
}
