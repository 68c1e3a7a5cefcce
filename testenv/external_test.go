package testenv_test

// External mode: the end-to-end tests of e2e_test.go run against a proxy
// that is already running (a real Envoy in docker compose, or the stand-in
// started as its own process) instead of starting their own. Set
//
//	TOOLPROC_E2E_PROXY            the proxy's listener, e.g. http://127.0.0.1:10000
//	TOOLPROC_E2E_UPSTREAM_ADMIN   the fake upstream's admin listener (testenv/cmd/fakeupstream)
//	TOOLPROC_E2E_ADMIN            toolproc's admin listener (/metrics); optional
//	TOOLPROC_E2E_RESPONSE_BODY_MODE / TOOLPROC_E2E_REQUEST_BODY_MODE
//	                              the proxy's ext_proc body modes (FULL_DUPLEX_STREAMED, BUFFERED)
//
// `make e2e-external PROXY=...` sets them. toolproc must run
// testenv/testdata/e2e-external.yaml. Every test sends its requests tagged
// (testenv.TagHeader) and reads back only its own from the shared upstream.
// Tests that need what only an in-process run has (a Go upstream script,
// their own toolproc config or route, a processing mode the proxy does not
// run, toolproc's hooks) skip, saying why.

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"reflect"
	"testing"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/testenv"
)

// externalTarget is the running proxy of external mode.
type externalTarget struct {
	proxy, upstreamAdmin, admin string
	reqMode, respMode           extprocfilterv3.ProcessingMode_BodySendMode
}

// external returns the target, nil when the tests start their own.
func external(t *testing.T) *externalTarget {
	t.Helper()
	proxy := os.Getenv("TOOLPROC_E2E_PROXY")
	if proxy == "" {
		return nil
	}
	x := &externalTarget{proxy: proxy, upstreamAdmin: os.Getenv("TOOLPROC_E2E_UPSTREAM_ADMIN"), admin: os.Getenv("TOOLPROC_E2E_ADMIN"),
		reqMode: extprocfilterv3.ProcessingMode_BUFFERED, respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED}
	if x.upstreamAdmin == "" {
		t.Fatal("TOOLPROC_E2E_PROXY is set without TOOLPROC_E2E_UPSTREAM_ADMIN (the fake upstream's admin address)")
	}
	for env, mode := range map[string]*extprocfilterv3.ProcessingMode_BodySendMode{
		"TOOLPROC_E2E_REQUEST_BODY_MODE": &x.reqMode, "TOOLPROC_E2E_RESPONSE_BODY_MODE": &x.respMode,
	} {
		if v := os.Getenv(env); v != "" {
			m, err := testenv.ParseBodyMode(v)
			if err != nil {
				t.Fatalf("%s: %v", env, err)
			}
			*mode = m
		}
	}
	return x
}

// externalConfigs are the toolproc configs a test may ask for and still run
// externally: the one testenv/testdata/e2e-external.yaml holds, and the
// defaults where a test relies on nothing the two differ in (TestE2EPassThroughByteIdentical).
var externalConfigs = map[string]bool{clampOnly: true, "": true}

// newTag names one test's requests.
func newTag() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// externalEnv is newEnv in external mode.
func externalEnv(t *testing.T, x *externalTarget, o envOpts) *env {
	t.Helper()
	reqMode := o.reqMode
	if reqMode == extprocfilterv3.ProcessingMode_NONE {
		reqMode = extprocfilterv3.ProcessingMode_BUFFERED
	}
	switch {
	case !externalConfigs[o.config]:
		t.Skip("external mode: this test needs its own toolproc config")
	case len(o.routes) > 0:
		t.Skip("external mode: this test needs its own route")
	case reqMode != x.reqMode || o.respMode != x.respMode:
		t.Skipf("external mode: the proxy runs request %s / response %s, this test wants %s / %s", x.reqMode, x.respMode, reqMode, o.respMode)
	}
	return &env{proxy: x.proxy, admin: x.admin, remote: &testenv.RemoteUpstream{Admin: x.upstreamAdmin, Tag: newTag()}}
}

// TestExternalConfigIsClampOnly: the config external runs give toolproc is
// the one the in-process e2e tests use.
func TestExternalConfigIsClampOnly(t *testing.T) {
	b, err := os.ReadFile("testdata/e2e-external.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := extproc.ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	want, err := extproc.ParseConfig([]byte(clampOnly))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("testdata/e2e-external.yaml and clampOnly differ")
	}
}

// TestE2EExternalMode proves the external chain itself: a tagged request sent to the proxy
// reaches the fake upstream with its tag, and the admin listener returns it. make
// e2e-external fails unless this test passed, so a run that silently fell back to the
// in-process stand-in cannot pass for an external one.
func TestE2EExternalMode(t *testing.T) {
	x := external(t)
	if x == nil {
		t.Skip("not in external mode (TOOLPROC_E2E_PROXY unset)")
	}
	e := &env{proxy: x.proxy, admin: x.admin, remote: &testenv.RemoteUpstream{Admin: x.upstreamAdmin, Tag: newTag()}}
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"external"}]}`)
	if a := e.post(t, "/v1/chat/completions", body); a.status != 200 {
		t.Fatalf("through %s: status %d: %s", x.proxy, a.status, a.body)
	}
	if up := e.lastUpstream(t); string(up.Body) != string(body) {
		t.Fatalf("the upstream got %q", up.Body)
	}
	t.Logf("external mode: proxy %s, fake upstream admin %s, toolproc admin %q", x.proxy, x.upstreamAdmin, x.admin)
}
