package extproc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// pytestRun is a long test run with one failure (compressible).
func pytestRun() string {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "tests/test_mod.py::test_case_%04d PASSED [%d%%]\n", i, i/30)
	}
	b.WriteString("tests/test_api.py::test_login FAILED\nE   assert 401 == 200\n=== 1 failed, 3000 passed in 9.1s ===\n")
	return b.String()
}

// TestCompressionMetricsMetadataAndAudit: one compressed request shows up
// in the counters, in Envoy's dynamic metadata (bytes saved) and as one
// audit line that carries sizes and a reference but never content,
// credentials or the shadow id itself.
func TestCompressionMetricsMetadataAndAudit(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	s := testServer(t, "audit: {path: "+audit+"}")
	x := newTestExchange(s)
	body := openAIBody(pytestRun())
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex, "authorization", "Bearer sk-secret-123"))
	r := x.handle(reqBody(body, true))
	out := r[0].GetRequestBody().GetResponse().GetBodyMutation().GetBody()
	if !strings.Contains(string(out), "[toolproc shadow_id=sh_") || !strings.Contains(string(out), `"expand_context"`) {
		t.Fatal("request not compressed with a reference")
	}
	if got := testutil.ToFloat64(s.metrics.Compress.WithLabelValues("openai_chat", "compressed")); got != 1 {
		t.Fatalf("compressed counter = %v", got)
	}
	if got := testutil.ToFloat64(s.metrics.CompressCache.WithLabelValues("miss")); got != 1 {
		t.Fatalf("cache miss counter = %v", got)
	}
	md := x.dynamicMetadata().GetFields()["toolproc"].GetStructValue().GetFields()
	if saved := md["bytes_saved"].GetNumberValue(); saved < float64(len(body)/2) {
		t.Fatalf("bytes_saved = %v for a %d-byte body", saved, len(body))
	}
	if md["results_compressed"].GetNumberValue() != 1 {
		t.Fatal("results_compressed missing from dynamic metadata")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`sh_[0-9a-f]{32}`).Find(out)
	if raw, _ := os.ReadFile(audit); bytes.Contains(raw, id) {
		t.Fatalf("the audit log carries the shadow id %s, a bearer capability (review finding 2)", id)
	}
	f, err := os.Open(audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "PASSED") || strings.Contains(sc.Text(), "sk-secret") {
			t.Fatalf("audit line leaks content or credentials: %s", sc.Text())
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 1 || lines[0]["outcome"] != "compressed" || lines[0]["tool"] != "bash" ||
		lines[0]["shadow_id"] != nil || len(fmt.Sprint(lines[0]["ref"])) != 12 || lines[0]["cache"] != "miss" {
		t.Fatalf("audit = %v", lines)
	}
}

// TestClientsOwnExpandToolDisablesCompression: a client that defines its
// own expand_context tool keeps it, and its results are clamped only:
// toolproc will not answer calls to the client's tool, so a reference
// would be a promise nobody keeps.
func TestClientsOwnExpandToolDisablesCompression(t *testing.T) {
	s := testServer(t, "")
	x := newTestExchange(s)
	body := []byte(strings.Replace(string(openAIBody(pytestRun())), `"stream":true}`,
		`"stream":true,"tools":[{"type":"function","function":{"name":"expand_context","parameters":{"type":"object"}}}]}`, 1))
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex))
	r := x.handle(reqBody(body, true))
	out := string(r[0].GetRequestBody().GetResponse().GetBodyMutation().GetBody())
	if out == "" {
		out = string(body) // unchanged
	}
	if strings.Contains(out, "toolproc shadow_id") || strings.Count(out, `"expand_context"`) != 1 || x.expansion.expandable {
		t.Fatal("compressed with references although the client owns expand_context")
	}
}
