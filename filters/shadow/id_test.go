package shadow

import (
	"strings"
	"testing"
)

func TestID(t *testing.T) {
	a := Tenant(map[string]string{"authorization": "Bearer sk-a"}, "")
	b := Tenant(map[string]string{"authorization": "Bearer sk-b"}, "")
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
	// SHA-256("t\x00hello") truncated to 128 bits.
	if got, want := ID("t", []byte("hello")), "sh_8006e11e17461ee1cb950a51dc7a8f2b"; got != want {
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
		{name: "authorization first", headers: h("authorization", "Bearer a", "x-api-key", "b"), sameAs: h("authorization", "Bearer a")},
		{name: "x-api-key before api-key", headers: h("x-api-key", "k1", "api-key", "k2", "x-goog-api-key", "k3"), sameAs: h("x-api-key", "k1")},
		{name: "api-key before goog", headers: h("api-key", "k2", "x-goog-api-key", "k3"), sameAs: h("api-key", "k2")},
		{name: "goog", headers: h("x-goog-api-key", "k3", "content-type", "x"), sameAs: h("x-goog-api-key", "k3")},
		{name: "gemini query key", headers: h(":path", "/v1beta/models/g:generateContent?alt=sse&key=AIzaX"), sameAs: h(":path", "/other?key=AIzaX")},
		{name: "header beats query key", headers: h("x-goog-api-key", "k3", ":path", "/x?key=k4"), sameAs: h("x-goog-api-key", "k3")},
		{name: "configured header wins", headers: h("authorization", "Bearer a", "x-tenant", "acme"), configured: "X-Tenant", sameAs: h("x-tenant", "acme", "authorization", "Bearer zzz"), sameConf: "x-tenant"},
		{name: "configured header absent falls back", headers: h("authorization", "Bearer a"), configured: "x-tenant", sameAs: h("authorization", "Bearer a")},
		{name: "whitespace trimmed", headers: h("authorization", " Bearer a "), sameAs: h("authorization", "Bearer a")},
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
		{"authorization": "Bearer a"},
		{"authorization": "Bearer b"},
		{"x-api-key": "Bearer a"},     // same value, other header
		{"x-tenant": "Bearer a"},      // configured header below
		{"authorization": "bearer a"}, // credentials are case-sensitive
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
