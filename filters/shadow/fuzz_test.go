package shadow

import (
	"strings"
	"testing"
)

func FuzzFindIDs(f *testing.F) {
	a := "sh_0123456789abcdef0123456789abcdef"
	f.Add("")
	f.Add(a)
	f.Add(Reference(a, 48213, "") + "compressed")
	f.Add(`{"id":"` + a + `"}`)
	f.Add("x" + a + "_")
	f.Add("sh_sh_sh_" + a[3:] + a)
	f.Add("sh_0123456789ABCDEF0123456789abcdef")
	f.Add(a + a + " " + a)
	f.Fuzz(func(t *testing.T, text string) {
		ids := FindIDs(text)
		seen := map[string]bool{}
		for _, id := range ids {
			if !ValidID(id) {
				t.Fatalf("invalid id %q", id)
			}
			if !strings.Contains(text, id) {
				t.Fatalf("id %q not in text", id)
			}
			if seen[id] {
				t.Fatalf("duplicate id %q", id)
			}
			seen[id] = true
		}
		// A reference in front of any text is always found and parsed back.
		id := ID("t", []byte(text))
		ref := Reference(id, len(text), "")
		gotID, n, rest, ok := ParseReference(ref + text)
		if !ok || gotID != id || n != len(text) || rest != text {
			t.Fatalf("ParseReference round trip: %q %d %v", gotID, n, ok)
		}
		if got := FindIDs(ref + text); len(got) == 0 || got[0] != id {
			t.Fatalf("FindIDs(reference + text) = %v, want %s first", got, id)
		}
		// ParseReference never panics on arbitrary input.
		ParseReference(text)
	})
}
