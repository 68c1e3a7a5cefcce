package testenv_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"

	"github.com/toolproc/toolproc/testenv"
)

// TestNodeTextOnly runs the npm openai and ai clients' tool loops (JSON and
// streaming) through the stand-in and toolproc (shape: text_only) against
// the text-only upstream. Like TestNodeClients it fails under CI=true when
// the Node clients are not installed, and skips otherwise.
func TestNodeTextOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns node; skipped with -short")
	}
	node, dir := nodeClients(t)
	up := testenv.NewFakeUpstream()
	up.SetScript(testenv.TextOnlyModel{}.Script())
	r := harness{config: textOnlyConfig, respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, seed: 91, upstream: up}.start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "textonly.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TOOLPROC_TEXTONLY_URL="+r.proxyURL, "NO_COLOR=1")
	cmd.WaitDelay = 10 * time.Second
	if err := runLogged(t, cmd); err != nil {
		t.Fatalf("node text-only clients: %v", err)
	}
}
