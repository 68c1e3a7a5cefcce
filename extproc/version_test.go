package extproc

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestBuildInfo(t *testing.T) {
	defer func(v, r string) { version, revision = v, r }(version, revision)

	version, revision = "", ""
	if b := Build(); b.Version == "" || b.Revision == "" || !strings.HasPrefix(b.GoVersion, "go") {
		t.Errorf("unset: %+v, want dev or the module version, a revision or unknown, a Go version", b)
	}
	version, revision = "v1.2.3", "0123456789abcdef0123"
	b := Build()
	if b.Version != "v1.2.3" {
		t.Errorf("Version = %q, want the -X value", b.Version)
	}
	if got := b.String(); !strings.Contains(got, "v1.2.3") || !strings.Contains(got, b.GoVersion) {
		t.Errorf("String() = %q", got)
	}

	reg := prometheus.NewRegistry()
	newMetrics(reg)
	want := `# HELP toolproc_build_info Always 1; the labels say what the process runs: its version, VCS revision and Go version (toolproc version).
# TYPE toolproc_build_info gauge
toolproc_build_info{goversion="` + b.GoVersion + `",revision="` + b.ShortRevision() + `",version="v1.2.3"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "toolproc_build_info"); err != nil {
		t.Error(err)
	}
}
