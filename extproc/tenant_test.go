package extproc

import (
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/shadow"
)

// Review finding 2 / issue item 6: callers with no credential, or a
// placeholder key, were all one tenant, so any of them could expand the
// originals of the others (secrets included). With
// store.keyless_references off they get no references: the result is
// clamped, nothing is stored, expand_context is not offered, and an id
// they quote is "no longer available".
func TestAnonymousCallersGetNoReferences(t *testing.T) {
	for _, cred := range [][]string{
		nil,
		{"authorization", "Bearer EMPTY"},
		{"authorization", "Bearer sk-dummy"},
		{"x-api-key", "ollama"},
		{"authorization", "Bearer sk-no-key-required"},
	} {
		s := testServer(t, "store: {keyless_references: false}")
		x := newTestExchange(s)
		x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex, cred...))
		body := openAIBody(pytestRun())
		out := x.handle(reqBody(body, true))[0].GetRequestBody().GetResponse().GetBodyMutation().GetBody()
		if strings.Contains(string(out), "shadow_id=") || strings.Contains(string(out), "expand_context") {
			t.Fatalf("%v: references written for an anonymous caller", cred)
		}
		if x.expansion.expandable || x.rewrite.refs {
			t.Fatalf("%v: exchange offers expansions", cred)
		}
		// Whatever id such a caller quotes, nothing is read back.
		id := shadow.NewKeyring(nil).ID(shadow.Anonymous, []byte(pytestRun()))
		if got, found := x.lookup(id); found || !strings.Contains(got, "is no longer available") {
			t.Fatalf("%v: lookup answered %q", cred, got)
		}
	}
	// The same request with a real key is compressed with a reference.
	s := testServer(t, "")
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex, "authorization", "Bearer sk-real-key-0123456789"))
	out := x.handle(reqBody(openAIBody(pytestRun()), true))[0].GetRequestBody().GetResponse().GetBodyMutation().GetBody()
	if !strings.Contains(string(out), "shadow_id=sh_") {
		t.Fatal("an identified caller got no reference")
	}
	// With store.tenant_header the gateway names callers whatever key
	// they send.
	s = testServer(t, "store: {tenant_header: x-user}")
	x = newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex, "authorization", "Bearer EMPTY", "x-user", "alice@example.com"))
	out = x.handle(reqBody(openAIBody(pytestRun()), true))[0].GetRequestBody().GetResponse().GetBodyMutation().GetBody()
	if !strings.Contains(string(out), "shadow_id=sh_") {
		t.Fatal("tenant_header did not identify the caller")
	}
}

// Ids are keyed by the deployment secret: two deployments (or an attacker
// with the content and the tenant's key) compute different ids.
func TestShadowIDsDependOnTheDeploymentSecret(t *testing.T) {
	t.Setenv("TOOLPROC_TEST_SECRET_A", "first deployment secret, long enough")
	t.Setenv("TOOLPROC_TEST_SECRET_B", "second deployment secret, long enough")
	var ids []string
	for _, env := range []string{"TOOLPROC_TEST_SECRET_A", "TOOLPROC_TEST_SECRET_B", "TOOLPROC_TEST_SECRET_A"} {
		s := testServer(t, "store: {secret_env: "+env+"}")
		x := newTestExchange(s)
		x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex, "authorization", "Bearer sk-real-key-0123456789"))
		out := x.handle(reqBody(openAIBody(pytestRun()), true))[0].GetRequestBody().GetResponse().GetBodyMutation().GetBody()
		i := strings.Index(string(out), "shadow_id=sh_")
		if i < 0 {
			t.Fatal("no reference")
		}
		ids = append(ids, string(out[i+10:i+10+shadow.IDLen]))
	}
	if ids[0] == ids[1] || ids[0] != ids[2] {
		t.Fatalf("ids %v: want them to follow the secret", ids)
	}
	// A secret too short to be one is refused: no references until fixed.
	t.Setenv("TOOLPROC_TEST_SECRET_C", "short")
	s := testServer(t, "store: {secret_env: TOOLPROC_TEST_SECRET_C}")
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex, "authorization", "Bearer sk-real-key-0123456789"))
	if out := x.handle(reqBody(openAIBody(pytestRun()), true))[0].GetRequestBody().GetResponse().GetBodyMutation().GetBody(); strings.Contains(string(out), "shadow_id=") {
		t.Fatal("references written without a usable secret")
	}
}

// Review round 3, N1: keyless callers lost their old results for good
// (summaries without a reference). They now get references under a tenant
// of their conversation: the same conversation reads them back whatever
// placeholder it sends, another conversation (another first user message)
// or the shared anonymous tenant reads nothing.
func TestKeylessCallersGetConversationTenants(t *testing.T) {
	s := testServer(t, "")
	convA := openAIBody(pytestRun())
	convB := []byte(strings.Replace(string(convA), `"content":"go"`, `"content":"go on"`, 1))
	run := func(body []byte, cred ...string) (*exchange, string) {
		x := newTestExchange(s)
		x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex, cred...))
		out := x.handle(reqBody(body, true))[0].GetRequestBody().GetResponse().GetBodyMutation().GetBody()
		i := strings.Index(string(out), "shadow_id=sh_")
		if i < 0 {
			t.Fatalf("%v: keyless caller got no reference", cred)
		}
		if !x.rewrite.refs || !strings.HasPrefix(x.rewrite.tenant, shadow.ConversationTenantPrefix) {
			t.Fatalf("%v: tenant %q, refs %v", cred, x.rewrite.tenant, x.rewrite.refs)
		}
		return x, string(out[i+10 : i+10+shadow.IDLen])
	}
	xa, id := run(convA)
	if _, found := xa.lookup(id); !found {
		t.Fatal("the conversation cannot read its own original")
	}
	xa2, id2 := run(convA, "authorization", "Bearer sk-dummy")
	if id2 != id || xa2.rewrite.tenant != xa.rewrite.tenant {
		t.Fatal("the same conversation got another tenant")
	}
	if got, found := xa2.lookup(id); !found {
		t.Fatalf("the next turn cannot read the original: %q", got)
	}
	xb, _ := run(convB)
	if xb.rewrite.tenant == xa.rewrite.tenant {
		t.Fatal("two conversations share a tenant")
	}
	if got, found := xb.lookup(id); found || !strings.Contains(got, "is no longer available") {
		t.Fatalf("another conversation read the original: %q", got)
	}
	// A keyed caller with the same conversation is another tenant too.
	xk := newTestExchange(s)
	xk.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex, "authorization", "Bearer sk-real-key-0123456789"))
	xk.handle(reqBody(convA, true))
	if _, found := xk.lookup(id); found {
		t.Fatal("a keyed caller read a keyless conversation's original")
	}
}
