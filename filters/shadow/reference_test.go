package shadow

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestReference(t *testing.T) {
	id := ID("tenant", []byte("a large tool result"))
	tests := []struct {
		name     string
		size     int
		tool     string
		wantTool string
		wantSize int
	}{
		{"default tool", 48213, "", "expand_context", 48213},
		{"named tool", 10, "expand_context", "expand_context", 10},
		{"custom tool", 0, "toolproc.expand-v2", "toolproc.expand-v2", 0},
		{"unsafe tool", 7, "exp\nand ctx\u00e9", "exp_and_ctx__", 7},
		{"negative size", -5, "", "expand_context", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := Reference(id, tt.size, tt.tool)
			if strings.Count(ref, "\n") != 2 || !strings.HasSuffix(ref, "\n") {
				t.Fatalf("Reference is not two lines:\n%s", ref)
			}
			for i := 0; i < len(ref); i++ {
				if c := ref[i]; c >= 0x80 || c < 0x20 && c != '\n' {
					t.Fatalf("Reference has non-printable-ASCII byte %#x at %d", c, i)
				}
			}
			lines := strings.SplitN(ref, "\n", 3)
			if !strings.Contains(lines[1], tt.wantTool) {
				t.Fatalf("hint %q does not name %q", lines[1], tt.wantTool)
			}
			body := "compressed body\nline 2"
			gotID, gotSize, rest, ok := ParseReference(ref + body)
			if !ok || gotID != id || gotSize != tt.wantSize || rest != body {
				t.Fatalf("ParseReference = %q %d %q %v", gotID, gotSize, rest, ok)
			}
			if got := FindIDs(ref + body); !slices.Equal(got, []string{id}) {
				t.Fatalf("FindIDs = %v, want [%s]", got, id)
			}
		})
	}
}

func TestReferenceFormat(t *testing.T) {
	id := "sh_0123456789abcdef0123456789abcdef"
	want := "[toolproc shadow_id=sh_0123456789abcdef0123456789abcdef original=48213 bytes; compressed below]\n" +
		`[call expand_context with {"id":"sh_0123456789abcdef0123456789abcdef"} to read the full original]` + "\n"
	if got := Reference(id, 48213, ""); got != want {
		t.Fatalf("Reference =\n%s\nwant\n%s", got, want)
	}
	// The hint's argument is the exact JSON the model should send.
	hint := strings.Split(want, "\n")[1]
	arg := hint[strings.Index(hint, "{") : strings.Index(hint, "}")+1]
	var v struct{ ID string }
	if err := json.Unmarshal([]byte(arg), &v); err != nil || v.ID != id {
		t.Fatalf("hint argument %q: %v %q", arg, err, v.ID)
	}
}

func TestParseReferenceRejects(t *testing.T) {
	id := "sh_0123456789abcdef0123456789abcdef"
	good := Reference(id, 12, "")
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"plain text", "hello world"},
		{"not at start", "x" + good},
		{"bad id", strings.Replace(good, id, "sh_0123456789ABCDEF0123456789abcdef", 1)},
		{"short id", strings.Replace(good, id, id[:34], 1)},
		{"no size", strings.Replace(good, "original=12 ", "original= ", 1)},
		{"leading zero", strings.Replace(good, "original=12 ", "original=012 ", 1)},
		{"huge size", strings.Replace(good, "original=12 ", "original=99999999999999999999 ", 1)},
		{"first line only", strings.SplitAfter(good, "\n")[0]},
		{"hint names other id", strings.SplitAfter(good, "\n")[0] + `[call expand_context with {"id":"sh_ffffffffffffffffffffffffffffffff"} to read the full original]` + "\n"},
		{"hint missing", strings.SplitAfter(good, "\n")[0] + "body\n"},
		{"crlf", strings.ReplaceAll(good, "\n", "\r\n")},
	}
	for _, tt := range tests {
		if gotID, n, rest, ok := ParseReference(tt.in); ok {
			t.Errorf("%s: ParseReference accepted: %q %d %q", tt.name, gotID, n, rest)
		}
	}
}

func TestFindIDs(t *testing.T) {
	a := "sh_0123456789abcdef0123456789abcdef"
	b := "sh_ffffffffffffffffffffffffffffffff"
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"none", "no reference here", nil},
		{"bare", a, []string{a}},
		{"reference line", Reference(a, 1, "") + "body", []string{a}},
		{"json escaped", `{"content":"[toolproc shadow_id=` + a + ` ...]\n[call expand_context with {\"id\":\"` + a + `\"}"}`, []string{a}},
		{"expand arguments", `{"id":"` + b + `"}`, []string{b}},
		{"order and dedupe", b + " " + a + " " + b, []string{b, a}},
		{"uppercase hex", "sh_0123456789ABCDEF0123456789abcdef", nil},
		{"too short", a[:34] + " x", nil},
		{"too long", a + "0", nil},
		{"glued before", "x" + a, nil},
		{"glued underscore", "_" + a, nil},
		{"glued after", a + "g", nil},
		{"punctuation ok", "(" + a + "), '" + b + "'.", []string{a, b}},
		{"overlapping prefix", "sh_sh_0123456789abcdef0123456789abcdef", nil},
		{"prefix at end", "text sh_", nil},
		{"old CG format", "[REF:shadow_0123456789abcdef0123456789abcdef]", nil},
		{"newline separated", a + "\n" + b + "\n", []string{a, b}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FindIDs(tt.in); !slices.Equal(got, tt.want) {
				t.Fatalf("FindIDs = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFindIDsMany(t *testing.T) {
	// Past the linear-dedupe threshold the map takes over; order and
	// uniqueness must not change.
	var b strings.Builder
	var want []string
	for i := range 100 {
		id := ID("t", []byte{byte(i)})
		want = append(want, id)
		b.WriteString(id + " " + id + "\n")
	}
	for _, id := range want {
		b.WriteString(id + ",")
	}
	if got := FindIDs(b.String()); !slices.Equal(got, want) {
		t.Fatalf("FindIDs found %d ids, want %d in order", len(got), len(want))
	}
}
