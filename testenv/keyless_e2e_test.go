package testenv_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/testenv"
)

var shadowIDRE = regexp.MustCompile(`sh_[0-9a-f]{32}`)

// recordingUpstream answers every request with a plain assistant message,
// or, when asked (x-test-expand), with an expand_context call for that id,
// and keeps every body it got.
type recordingUpstream struct {
	mu   sync.Mutex
	reqs [][]byte
}

func (u *recordingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.reqs = append(u.reqs, b)
	u.mu.Unlock()
	w.Header().Set("content-type", "application/json")
	msg, finish := `{"role":"assistant","content":"done"}`, "stop"
	if id := r.Header.Get("x-test-expand"); id != "" && !bytes.Contains(b, []byte(`"tool_call_id":"call_x"`)) {
		args := wire.QuoteString(`{"id":"` + id + `"}`)
		msg = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_x","type":"function","function":{"name":"expand_context","arguments":` + string(args) + `}}]}`
		finish = "tool_calls"
	}
	fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":%s,"finish_reason":%q}]}`, msg, finish)
}

func (u *recordingUpstream) last() []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.reqs[len(u.reqs)-1]
}

// manyResultsBody is repro B7's request: n read_file results of `lines`
// lines, each line a fact of its own.
func manyResultsBody(n, lines int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-4o","messages":[{"role":"user","content":"fix the build"}`)
	for i := range n {
		var r strings.Builder
		for j := range lines {
			fmt.Fprintf(&r, "src/pkg%02d/file_%04d.go:%d: value_%d = compute(%d) // unique-fact-%d-%d\n", i, j, j+1, j, j, i, j)
		}
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"f%d.go\"}"}}]}`, i, i)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%d","content":%s}`, i, wire.QuoteString(r.String()))
	}
	b.WriteString(`],"tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]}`)
	return []byte(b.String())
}

func postChat(t *testing.T, url, path string, body []byte, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+path, bytes.NewReader(body))
	req.Header.Set("content-type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

// Review round 3, N1 (repro B7): 14 results of ~30 KB (60 % of a 128k
// window) from a caller with no credential or a placeholder one: 8 were
// summarised with no reference, for good. Now every summary of every
// caller carries a reference that expands, and the receipt counts no
// irrecoverable cut.
func TestReviewR3TiersWithoutWayBack(t *testing.T) {
	up := &recordingUpstream{}
	r := harness{respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, upstream: up}.start(t)
	body := manyResultsBody(14, 450)
	for _, cred := range []string{"Bearer sk-tenant-a-0123456789abcdef", "", "Bearer sk-dummy"} {
		var h []string
		if cred != "" {
			h = []string{"authorization", cred}
		}
		resp, _ := postChat(t, r.proxyURL, "/v1/chat/completions", body, h...)
		got := string(up.last())
		earlier := strings.Count(got, "[Earlier:")
		ids := shadowIDRE.FindAllString(got, -1)
		t.Logf("cred %q: %d -> %d bytes, %d summaries, %d ids", cred, len(body), len(got), earlier, len(ids))
		if earlier == 0 {
			t.Fatalf("cred %q: the tiers did not act (the repro needs them to)", cred)
		}
		if len(ids) < earlier {
			t.Errorf("cred %q: %d results summarised, %d references", cred, earlier, len(ids))
		}
		rc, err := extproc.ParseReceipt(resp.Header.Get(extproc.ReceiptHeader))
		if err != nil || rc.Irrecoverable != 0 || rc.Tiered == 0 {
			t.Errorf("cred %q: receipt %+v, %v", cred, rc, err)
		}
		// The first summarised result reads back, in the same conversation.
		_, _ = postChat(t, r.proxyURL, "/v1/chat/completions", body, append(h, "x-test-expand", ids[0])...)
		if cont := up.last(); !bytes.Contains(cont, []byte("unique-fact-0-200")) {
			t.Errorf("cred %q: expand_context did not bring the original back", cred)
		}
	}
}

// Review round 2 finding 2 (repro B6, A2), as it stands after N1: keyless
// callers get references, but each conversation its own; the original one
// conversation kept is "no longer available" to another.
func TestReviewR3AnonymousTenantsShareOriginals(t *testing.T) {
	up := &recordingUpstream{}
	r := harness{respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, upstream: up}.start(t)
	secret := "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	body := openAIToolRequest(false, bigResult(secret, 3000))
	postChat(t, r.proxyURL, "/v1/chat/completions", body)
	ids := shadowIDRE.FindAllString(string(up.last()), -1)
	if len(ids) == 0 {
		t.Fatal("keyless caller got no reference")
	}
	other := bytes.Replace(body, []byte("Run the tests"), []byte("Run all tests"), 1)
	for _, cred := range []string{"", "Bearer sk-dummy", "Bearer EMPTY"} {
		h := []string{"x-test-expand", ids[0]}
		if cred != "" {
			h = append(h, "authorization", cred)
		}
		postChat(t, r.proxyURL, "/v1/chat/completions", other, h...)
		cont := string(up.last())
		if strings.Contains(cont, secret) || !strings.Contains(cont, "is no longer available") {
			t.Fatalf("credential %q, another conversation: expansion answered %.300s", cred, cont)
		}
	}
}

// bigResult is a pytest log of n lines with marker in the middle.
func bigResult(marker string, n int) string {
	var b strings.Builder
	for i := range n {
		if i == n/2 {
			b.WriteString(marker + "\n")
		}
		fmt.Fprintf(&b, "tests/test_%04d.py::test_case PASSED  [%3d%%]\n", i, i*100/n)
	}
	return b.String()
}

// N1 on a text-only profile (the embedded xml one), which cannot offer
// expand_context: the same request at 60 % of the window is sent whole
// (nothing summarised, nothing irrecoverable); it is cut only when it
// would not fit, and then the receipt counts every cut.
func TestTextOnlyKeepsResultsUnlessTheWindowForces(t *testing.T) {
	up := &recordingUpstream{}
	r := harness{respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, upstream: up, routes: []testenv.RouteOverride{xmlRoute}}.start(t)
	body := manyResultsBody(14, 450)
	resp, _ := postChat(t, r.proxyURL, testenv.XMLPrefix+"/v1/chat/completions", body)
	got := string(up.last())
	if strings.Contains(got, "[Earlier:") {
		t.Fatal("a text-only request that fits the window was summarised")
	}
	for i := range 14 {
		if !strings.Contains(got, fmt.Sprintf("unique-fact-%d-200", i)) {
			t.Fatalf("result %d lost its middle", i)
		}
	}
	rc, err := extproc.ParseReceipt(resp.Header.Get(extproc.ReceiptHeader))
	if err != nil || rc.Irrecoverable != 0 {
		t.Fatalf("receipt %+v, %v", rc, err)
	}
	// 30 results: 900 KB, over the 128k-token window. The cut is forced,
	// every summary says it cannot be expanded, and the receipt counts them.
	resp, _ = postChat(t, r.proxyURL, testenv.XMLPrefix+"/v1/chat/completions", manyResultsBody(30, 450))
	got = string(up.last())
	summaries := strings.Count(got, "[Earlier:")
	rc, _ = extproc.ParseReceipt(resp.Header.Get(extproc.ReceiptHeader))
	if summaries == 0 || rc.Irrecoverable < summaries || strings.Count(got, "cannot be expanded") < summaries {
		t.Fatalf("%d summaries, %d marked, receipt %+v", summaries, strings.Count(got, "cannot be expanded"), rc)
	}
}

// rejectingUpstream answers 401 to made-up keys, as a provider does, and
// passes the rest to next.
type rejectingUpstream struct{ next http.Handler }

func (u rejectingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.Header.Get("authorization"), "Bearer made-up-") {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
		return
	}
	u.next.ServeHTTP(w, r)
}

// Review round 3, N5 end to end: a tenant becomes verified when its answer
// comes back 2xx; made-up keys the provider refuses stay unverified, keep a
// small share and are evicted first, so forty of them writing originals
// into a small store do not evict the real tenant's.
func TestMadeUpKeysDoNotEvictAVerifiedTenant(t *testing.T) {
	up := &recordingUpstream{}
	r := harness{
		config: "store: {max_bytes: 8388608, tenant_max_bytes: 4194304, unverified_tenant_max_bytes: 1048576}\n" +
			"profiles: {default: {compress: {max_bytes: 2097152}}}",
		respMode: extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED, upstream: rejectingUpstream{up}}.start(t)
	victim := []string{"authorization", "Bearer sk-real-victim-key-000000"}
	body := openAIToolRequest(false, bigResult("victim-needle", 6000))
	if resp, _ := postChat(t, r.proxyURL, "/v1/chat/completions", body, victim...); resp.StatusCode != 200 {
		t.Fatalf("victim: %d", resp.StatusCode)
	}
	ids := shadowIDRE.FindAllString(string(up.last()), -1)
	if len(ids) == 0 {
		t.Fatal("no reference for the victim")
	}
	for k := range 40 {
		fake := openAIToolRequest(false, bigResult(fmt.Sprintf("fake-%d", k), 6000))
		if resp, _ := postChat(t, r.proxyURL, "/v1/chat/completions", fake, "authorization", fmt.Sprintf("Bearer made-up-key-%04d", k)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("made-up key %d: %d", k, resp.StatusCode)
		}
	}
	// The victim's conversation, compacted (its original is not sent
	// again), asks for the old id.
	compacted := openAIToolRequest(false, "tests: 6000 passed")
	postChat(t, r.proxyURL, "/v1/chat/completions", compacted, append(victim, "x-test-expand", ids[0])...)
	if cont := string(up.last()); !strings.Contains(cont, "victim-needle") {
		t.Fatalf("the victim's original was evicted by made-up keys: %s", firstMatch(cont, "expand_context: "))
	}
}
