package shadow

import (
	"crypto/sha256"
	"strings"
	"testing"
)

func TestID(t *testing.T) {
	a := Tenant(map[string]string{"authorization": "Bearer sk-tenant-a-0123456789"}, "")
	b := Tenant(map[string]string{"authorization": "Bearer sk-tenant-b-0123456789"}, "")
	tests := []struct {
		name       string
		t1, t2     string
		c1, c2     string
		wantEquals bool
	}{
		{"same tenant same content (next turn)", a, a, "ls -la output", "ls -la output", true},
		{"other tenant same content", a, b, "ls -la output", "ls -la output", false},
		{"same tenant other content", a, a, "ls -la output", "ls -la output ", false},
		{"empty content", a, a, "", "", true},
		{"tenant/content boundary", "ab", "a", "c", "bc", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id1, id2 := ID(tt.t1, []byte(tt.c1)), ID(tt.t2, []byte(tt.c2))
			for _, id := range []string{id1, id2} {
				if !ValidID(id) || len(id) != 35 || !strings.HasPrefix(id, "sh_") {
					t.Fatalf("ID = %q, want sh_ + 32 lowercase hex", id)
				}
			}
			if (id1 == id2) != tt.wantEquals {
				t.Fatalf("ID equality = %v, want %v (%s, %s)", id1 == id2, tt.wantEquals, id1, id2)
			}
		})
	}
}

func TestIDStable(t *testing.T) {
	// Replicas and releases must agree on ids: pin one value,
	// HMAC-SHA-256 under the empty key of "toolproc/id/v3\x00t\x00" and
	// SHA-256("hello"), truncated to 128 bits (computed apart, with
	// Python's hmac and hashlib).
	if got, want := ID("t", []byte("hello")), "sh_a36712486ff027df7af1cd33e4345dbd"; got != want {
		t.Fatalf("ID(t, hello) = %s, want %s", got, want)
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"sh_0123456789abcdef0123456789abcdef", true},
		{"sh_0123456789ABCDEF0123456789abcdef", false},
		{"sh_0123456789abcdef0123456789abcde", false},
		{"sh_0123456789abcdef0123456789abcdef0", false},
		{"sx_0123456789abcdef0123456789abcdef", false},
		{"sh_0123456789abcdeg0123456789abcdef", false},
		{"shadow_0123456789abcdef0123456789ab", false},
		{"", false},
		{"sh_", false},
	}
	for _, tt := range tests {
		if got := ValidID(tt.in); got != tt.want {
			t.Errorf("ValidID(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestTenant(t *testing.T) {
	h := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name       string
		headers    map[string]string
		configured string
		sameAs     map[string]string // nil: compare with nothing
		sameConf   string
		want       string // exact result when set
	}{
		{name: "nil headers", headers: nil, want: Anonymous},
		{name: "no credential", headers: h("content-type", "application/json"), want: Anonymous},
		{name: "blank credential", headers: h("authorization", "  "), want: Anonymous},
		{name: "authorization first", headers: h("authorization", "Bearer key-a-0123456789abcdef", "x-api-key", "key-b-0123456789abcdef"), sameAs: h("authorization", "Bearer key-a-0123456789abcdef")},
		{name: "x-api-key before api-key", headers: h("x-api-key", "key-1-0123456789abcdef", "api-key", "key-2-0123456789abcdef", "x-goog-api-key", "key-3-0123456789abcdef"), sameAs: h("x-api-key", "key-1-0123456789abcdef")},
		{name: "api-key before goog", headers: h("api-key", "key-2-0123456789abcdef", "x-goog-api-key", "key-3-0123456789abcdef"), sameAs: h("api-key", "key-2-0123456789abcdef")},
		{name: "goog", headers: h("x-goog-api-key", "key-3-0123456789abcdef", "content-type", "x"), sameAs: h("x-goog-api-key", "key-3-0123456789abcdef")},
		{name: "gemini query key", headers: h(":path", "/v1beta/models/g:generateContent?alt=sse&key=AIzaSyX0123456789abcdef"), sameAs: h(":path", "/other?key=AIzaSyX0123456789abcdef")},
		{name: "header beats query key", headers: h("x-goog-api-key", "key-3-0123456789abcdef", ":path", "/x?key=k4"), sameAs: h("x-goog-api-key", "key-3-0123456789abcdef")},
		{name: "configured header wins", headers: h("authorization", "Bearer key-a-0123456789abcdef", "x-tenant", "acme-tenant-0001"), configured: "X-Tenant", sameAs: h("x-tenant", "acme-tenant-0001", "authorization", "Bearer key-z-0123456789abcdef"), sameConf: "x-tenant"},
		{name: "configured header absent falls back", headers: h("authorization", "Bearer key-a-0123456789abcdef"), configured: "x-tenant", sameAs: h("authorization", "Bearer key-a-0123456789abcdef")},
		{name: "whitespace trimmed", headers: h("authorization", " Bearer key-a-0123456789abcdef "), sameAs: h("authorization", "Bearer key-a-0123456789abcdef")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Tenant(tt.headers, tt.configured)
			if tt.want != "" && got != tt.want {
				t.Fatalf("Tenant = %q, want %q", got, tt.want)
			}
			if got != Anonymous && !isHex32(got) {
				t.Fatalf("Tenant = %q, want 32 lowercase hex", got)
			}
			for name, v := range tt.headers {
				if len(v) >= 4 && strings.Contains(got, strings.TrimSpace(v)) {
					t.Fatalf("Tenant %q contains the value of %s", got, name)
				}
			}
			if tt.sameAs != nil {
				if other := Tenant(tt.sameAs, tt.sameConf); other != got {
					t.Fatalf("Tenant = %q, want same as %v (%q)", got, tt.sameAs, other)
				}
			}
			if got := Tenant(tt.headers, tt.configured); got != Tenant(tt.headers, tt.configured) {
				t.Fatal("Tenant is not deterministic")
			}
		})
	}
}

func TestTenantSeparation(t *testing.T) {
	distinct := []map[string]string{
		{"authorization": "Bearer key-a-0123456789abcdef"},
		{"authorization": "Bearer key-b-0123456789abcdef"},
		{"x-api-key": "Bearer key-a-0123456789abcdef"},     // same value, other header
		{"x-tenant": "Bearer key-a-0123456789abcdef"},      // configured header below
		{"authorization": "bearer key-a-0123456789abcdef"}, // credentials are case-sensitive
	}
	seen := map[string]int{}
	for i, hdr := range distinct {
		got := Tenant(hdr, "x-tenant")
		if j, dup := seen[got]; dup {
			t.Fatalf("headers %v and %v share tenant %s", distinct[j], hdr, got)
		}
		seen[got] = i
	}
}

func isHex32(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerHex(s[i]) {
			return false
		}
	}
	return true
}

func TestCacheKey(t *testing.T) {
	base := CacheKey([]byte("content"), "local budget=4096")
	if len(base) != 64 || !isHex32(base[:32]) || !isHex32(base[32:]) {
		t.Fatalf("CacheKey = %q, want 64 lowercase hex", base)
	}
	tests := []struct {
		name     string
		content  string
		strategy string
		same     bool
	}{
		{"same inputs", "content", "local budget=4096", true},
		{"other content", "content2", "local budget=4096", false},
		{"other options", "content", "local budget=2048", false},
		{"other strategy", "content", "simple budget=4096", false},
		{"boundary shift", "4096content", "local budget=", false},
	}
	for _, tt := range tests {
		if got := CacheKey([]byte(tt.content), tt.strategy); (got == base) != tt.same {
			t.Errorf("%s: CacheKey equality = %v, want %v", tt.name, got == base, tt.same)
		}
	}
}

// Review finding 2: callers with no credential or a placeholder one are
// one tenant (Anonymous), which gets no references; a secret keys every
// tenant and id; SigV4 callers are their access key id (finding 6).
func TestTenantPlaceholdersAndSigV4(t *testing.T) {
	for _, v := range []string{"", "EMPTY", "Bearer EMPTY", "sk-dummy", "Bearer sk-dummy", "ollama", "Bearer ollama",
		"sk-no-key-required", "Bearer sk-no-key-required", "lm-studio", "none", "NULL", "x", "-", "Bearer ", "sk-1234", "abc1234"} {
		if got := Tenant(map[string]string{"authorization": v}, ""); got != Anonymous {
			t.Errorf("authorization %q: tenant %q, want Anonymous", v, got)
		}
		if got := Tenant(map[string]string{"x-api-key": v}, ""); got != Anonymous {
			t.Errorf("x-api-key %q: tenant %q, want Anonymous", v, got)
		}
	}
	if got := Tenant(map[string]string{":path": "/v1beta/models/g:generateContent?key=dummy"}, ""); got != Anonymous {
		t.Errorf("placeholder ?key=: %q", got)
	}
	// A configured tenant header identifies callers whatever their key.
	if got := Tenant(map[string]string{"authorization": "Bearer EMPTY", "x-user": "alice@example.com"}, "x-user"); got == Anonymous {
		t.Error("tenant_header ignored for a placeholder key")
	}
	sig := func(akid, date, signature string) map[string]string {
		return map[string]string{"authorization": "AWS4-HMAC-SHA256 Credential=" + akid + "/" + date +
			"/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=" + signature}
	}
	a1 := Tenant(sig("AKIAIOSFODNN7EXAMPLE", "20250101", "675f10a4"), "")
	a2 := Tenant(sig("AKIAIOSFODNN7EXAMPLE", "20250102", "f41b0fc2"), "")
	b := Tenant(sig("AKIAI44QH8DHBEXAMPLE", "20250101", "675f10a4"), "")
	if a1 != a2 || a1 == b || a1 == Anonymous {
		t.Fatalf("SigV4 tenants: same key %s/%s, other key %s", a1, a2, b)
	}
	if !IsSigV4(sig("AKIAIOSFODNN7EXAMPLE", "d", "s")["authorization"]) || IsSigV4("Bearer sk-x") {
		t.Fatal("IsSigV4")
	}
}

func TestKeyringSecretChangesEverything(t *testing.T) {
	h := map[string]string{"authorization": "Bearer sk-tenant-a-0123456789"}
	k1, k2 := NewKeyring([]byte("secret one")), NewKeyring([]byte("secret two"))
	t1, t2 := k1.Tenant(h, ""), k2.Tenant(h, "")
	if t1 == t2 {
		t.Fatal("tenant does not depend on the secret")
	}
	if k1.ID(t1, []byte("x")) == k2.ID(t1, []byte("x")) {
		t.Fatal("id does not depend on the secret")
	}
	if k1.ID(t1, []byte("x")) != NewKeyring([]byte("secret one")).ID(t1, []byte("x")) {
		t.Fatal("same secret, different id")
	}
	if ref := AuditRef(k1.ID(t1, []byte("x"))); strings.Contains(k1.ID(t1, []byte("x")), ref) || len(ref) != 12 {
		t.Fatalf("audit ref %q", ref)
	}
}

// TestDigestMemo: remembered ids and cache keys are exactly the computed
// ones, for contents above and below the memo's floor, and differ by
// secret, tenant and strategy.
func TestDigestMemo(t *testing.T) {
	a, b := NewKeyring([]byte("secret-a")), NewKeyring([]byte("secret-b"))
	for _, n := range []int{10, minMemoContent, 50_000} {
		content := []byte(strings.Repeat("x", n))
		for range 2 { // computed, then remembered
			sum := sha256.Sum256(content)
			if a.ID("t1", content) != a.id("t1", sum) || CacheKey(content, "s1") != cacheKey(sum, "s1") {
				t.Fatalf("size %d: a remembered digest differs from the computed one", n)
			}
		}
		if a.ID("t1", content) == a.ID("t2", content) || a.ID("t1", content) == b.ID("t1", content) ||
			CacheKey(content, "s1") == CacheKey(content, "s2") {
			t.Fatalf("size %d: digests of different tenants, secrets or strategies agree", n)
		}
	}
}
