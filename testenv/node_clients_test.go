package testenv_test

// Stream conformance with the real npm clients (issue 4): node/conformance.test.mjs
// drives openai-node and the Vercel AI SDK through the Envoy stand-in and
// toolproc, against a fake upstream that plays testdata/streams scenarios.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"

	"github.com/toolproc/toolproc/testenv"
)

// nodeClientsConfig routes testenv.XMLPrefix to a profile that turns <invoke>
// text into tool calls; everything else uses the default profile.
const nodeClientsConfig = `profiles: {xml: {stream: {xml_tool_calls: true}}}`

// newClientEnv starts toolproc in-process, a fake upstream playing scenarios,
// and the stand-in (XMLPrefix → profile "xml") with the given response body
// mode. It returns the stand-in's URL.
func newClientEnv(t *testing.T, respMode extprocfilterv3.ProcessingMode_BodySendMode, seed int64, scenarios []testenv.Scenario) string {
	t.Helper()
	up := testenv.NewFakeUpstream()
	up.SetScript(testenv.ScenarioScript(scenarios))
	h := harness{config: nodeClientsConfig, respMode: respMode, routes: []testenv.RouteOverride{xmlRoute}, seed: seed, upstream: up}
	return h.start(t).proxyURL
}

// nodeScenarios loads what the fake upstream plays. $TOOLPROC_SCENARIOS
// (files separated by the OS path list separator, relative to testenv/)
// replaces testdata/streams; the absolute paths are passed on to node.
func nodeScenarios(t *testing.T) (scenarios []testenv.Scenario, nodeEnv string) {
	t.Helper()
	override := os.Getenv("TOOLPROC_SCENARIOS")
	if override == "" {
		if _, err := os.Stat(filepath.Join("testdata", "streams", "openai_chat.json")); err != nil {
			t.Fatalf("the node clients need testdata/streams/openai_chat.json: %v", err)
		}
		s, err := testenv.LoadScenarios(filepath.Join("testdata", "streams"))
		if err != nil {
			t.Fatal(err)
		}
		return s, ""
	}
	var abs []string
	for _, f := range filepath.SplitList(override) {
		if f == "" {
			continue
		}
		a, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(a)
		if err != nil {
			t.Fatal(err)
		}
		var list []testenv.Scenario
		if err := json.Unmarshal(b, &list); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		scenarios = append(scenarios, list...)
		abs = append(abs, a)
	}
	return scenarios, strings.Join(abs, string(os.PathListSeparator))
}

// TestNodeClients runs node/conformance.test.mjs (node --test) against a
// fresh environment in each response body mode. It needs node on PATH and
// `npm ci --prefix testenv/node`; without them it skips, except under CI=true.
// nodeClients finds node and the installed npm clients in testenv/node. It
// fails under CI=true when they are missing, and skips the test otherwise.
func nodeClients(t *testing.T) (node, dir string) {
	t.Helper()
	dir, err := filepath.Abs("node")
	if err != nil {
		t.Fatal(err)
	}
	missing := ""
	node, err = exec.LookPath("node")
	if err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		missing = "testenv/node/node_modules is missing"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: install Node.js 20+ and run `npm ci --prefix testenv/node --no-audit --no-fund`", missing)
		}
		t.Skipf("%s; run `npm ci --prefix testenv/node --no-audit --no-fund` to enable", missing)
	}
	return node, dir
}

func TestNodeClients(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns node; skipped with -short")
	}
	node, dir := nodeClients(t)
	scenarios, scenarioFiles := nodeScenarios(t)

	for i, mode := range []extprocfilterv3.ProcessingMode_BodySendMode{
		extprocfilterv3.ProcessingMode_STREAMED,
		extprocfilterv3.ProcessingMode_BUFFERED,
		extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED,
	} {
		t.Run(mode.String(), func(t *testing.T) {
			base := newClientEnv(t, mode, int64(50+10*i), scenarios)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "conformance.test.mjs")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "TOOLPROC_BASE_URL="+base, "NO_COLOR=1")
			if scenarioFiles != "" {
				cmd.Env = append(cmd.Env, "TOOLPROC_SCENARIOS="+scenarioFiles)
			}
			cmd.WaitDelay = 10 * time.Second
			if err := runLogged(t, cmd); err != nil {
				if ctx.Err() != nil {
					t.Fatalf("node clients in %s: timed out after 5m: %v", mode, err)
				}
				t.Fatalf("node clients in %s: %v (failures above)", mode, err)
			}
		})
	}
}

// runLogged runs cmd with its stdout and stderr sent line by line to t.Log.
func runLogged(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			t.Log(sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr) // a line over 4 MiB: drain so node never blocks
	}()
	err := cmd.Run()
	pw.Close()
	<-done
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("node exited with status %d", exit.ExitCode())
	}
	return err
}
