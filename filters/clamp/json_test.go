package clamp

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

func bigJSONArray(n int) string {
	var b strings.Builder
	b.WriteString(`{"results":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"path":"src/file_%d.go","line":%d,"text":"héllo wörld 中文 🙂 match"}`, i, i, i*7)
	}
	b.WriteString(`],"total":` + fmt.Sprint(n) + `}`)
	return b.String()
}

// checkJSON asserts the invariants every JSON clamp result must hold.
func checkJSON(t *testing.T, in, out string, rep Report, lim Limits) {
	t.Helper()
	// A value under the limits comes back byte-identical, invalid bytes
	// included (the wire layer never re-encodes untouched values); anything
	// the clamp rewrote, or any valid input, must be valid UTF-8.
	if !gjson.Valid(out) || ((rep.Changed || utf8.ValidString(in)) && !utf8.ValidString(out)) {
		t.Fatalf("output is not valid JSON/UTF-8: %.200q", out)
	}
	inV, outV := gjson.Parse(in), gjson.Parse(out)
	if inV.IsObject() != outV.IsObject() || inV.IsArray() != outV.IsArray() || inV.Type != outV.Type {
		t.Fatalf("kind changed: %v → %v", inV.Type, outV.Type)
	}
	if rep.Changed {
		if len(out) > lim.MaxBytes || maxStringLines(outV) > lim.MaxLines {
			t.Fatalf("over the limits: %d bytes, %d lines", len(out), maxStringLines(outV))
		}
		again, rep2 := JSON(out, lim)
		if rep2.Changed || again != out {
			t.Fatal("not idempotent")
		}
	} else if out != in {
		t.Fatal("unchanged report but different bytes")
	}
}

func TestJSONClamp(t *testing.T) {
	lim := Limits{MaxBytes: 4096, MaxLines: 50}
	long := strings.Repeat("line of log output é\n", 500)
	cases := []struct {
		name    string
		in      string
		changed bool
		has     []string // substrings the output must contain
	}{
		{"small object untouched", `{"a": 1, "b": "x"}`, false, nil},
		{"small array untouched", `[1, 2, 3]`, false, nil},
		{"long array elided with a count", bigJSONArray(1000), true, []string{`more items omitted`, `"total":1000`}},
		{"long string clamped as text", `{"output":` + string(quoteForTest(long)) + `,"exit_code":1}`, true, []string{`"exit_code":1`, `tool output truncated`}},
		{"many keys elided with a count", manyKeys(3000), true, []string{`"_toolproc_omitted_keys":`}},
		{"top-level array", `[` + strings.Repeat(`"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",`, 500) + `"end"]`, true, []string{`more items omitted`}},
		{"lines alone trigger", `{"log":` + string(quoteForTest(strings.Repeat("a\n", 80))) + `}`, true, []string{`[toolproc: tool output truncated`}},
		{"pretty-printed fits once compacted: no note", "{\n" + strings.Repeat("      \"k\": 1,\n", 400) + "  \"z\": 2\n}", true, nil},
		{"deep nesting falls back to text inside an object", strings.Repeat(`{"a":`, 1000) + `"x"` + strings.Repeat(`}`, 1000), true, []string{`"output":`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, rep := JSON(tc.in, lim)
			if rep.Changed != tc.changed {
				t.Fatalf("changed = %v, want %v", rep.Changed, tc.changed)
			}
			checkJSON(t, tc.in, out, rep, lim)
			for _, h := range tc.has {
				if !strings.Contains(out, h) {
					t.Errorf("output lacks %q: %.300s", h, out)
				}
			}
			if strings.HasPrefix(tc.name, "pretty") && strings.Contains(out, noteKey) {
				t.Error("nothing was cut, so no note is due")
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"key_%d":"value %d"`, i, i)
	}
	b.WriteByte('}')
	return b.String()
}

func quoteForTest(s string) []byte {
	return []byte(`"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`)
}

func TestJSONInvalidUnchanged(t *testing.T) {
	for _, in := range []string{`{"a":`, `nope`, ``} {
		if out, rep := JSON(in, Limits{MaxBytes: 256, MaxLines: 4}); rep.Changed || out != in {
			t.Errorf("JSON(%q) changed invalid input", in)
		}
	}
}

// A key with bytes that are not UTF-8, in a value the clamp rewrites, is
// written with U+FFFD as the strings are (found by FuzzJSON): the output
// is valid UTF-8 and within the limits.
func TestJSONKeyNotUTF8(t *testing.T) {
	in := `{"results":[{"pat` + "\xc9\xc9" + `h":"` + strings.Repeat("x", 300) + `"}],"more":"` + strings.Repeat("y", 600) + `"}`
	lim := Limits{MaxBytes: 256, MaxLines: 4}
	out, rep := JSON(in, lim)
	checkJSON(t, in, out, rep, lim)
	if !rep.Changed || !strings.Contains(out, `"pat\ufffd\ufffdh"`) && !strings.Contains(out, "\"pat\uFFFD\uFFFDh\"") {
		t.Errorf("changed %v, key not written with U+FFFD: %q", rep.Changed, out)
	}
}

func FuzzJSON(f *testing.F) {
	f.Add(bigJSONArray(50), 512, 4)
	f.Add(`{"output":"a\nb\nc\nd\ne\nf"}`, 300, 3)
	f.Add(manyKeys(100), 700, 10)
	f.Add(`[[[[[["deep"]]]]]]`, 256, 4)
	f.Fuzz(func(t *testing.T, in string, maxBytes, maxLines int) {
		if !gjson.Valid(in) {
			return
		}
		lim := Limits{MaxBytes: 256 + abs(maxBytes)%4096, MaxLines: 4 + abs(maxLines)%64}
		out, rep := JSON(in, lim)
		checkJSON(t, in, out, rep, lim)
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Review finding 1: the renderer and the line counter recurse per level, so
// a value nested millions deep must never reach them.
func TestJSONTooDeepIsNeverWalked(t *testing.T) {
	lim := Limits{MaxBytes: 4096, MaxLines: 100}
	deep := strings.Repeat("[", 2_000_000) + strings.Repeat("]", 2_000_000)
	out, rep := JSON(deep, lim)
	if !rep.Changed || len(out) > lim.MaxBytes || !strings.HasPrefix(out, `["`) || !gjson.Valid(out) {
		t.Fatalf("deep array: changed=%v, %d bytes, %.60q", rep.Changed, len(out), out)
	}
	// Past the limit validity is not checked further (that needs the
	// stack): the output is still valid JSON within the limits.
	if out, _ := JSON(strings.Repeat("[", 2_000_000), lim); len(out) > lim.MaxBytes || !gjson.Valid(out) {
		t.Fatalf("unclosed deep input: %.60q", out)
	}
}

// From the issue ("the JSON clamp notes twice and uses half the budget"):
// a 538 KB string in a Gemini functionResponse.response came back as 25 KB
// of the 51,200 allowed, with a note in the string and an added
// _toolproc_note key. One note, the whole budget, no added key.
func TestJSONClampOneNoteWholeBudget(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 538_000; i++ {
		fmt.Fprintf(&b, "row %06d status=ok value=\"%d\"\n", i, i*7)
	}
	raw := `{"exit":0,"output":` + string(quoteForTest(b.String())) + `}`
	lim := Limits{MaxBytes: 51200, MaxLines: 100_000}
	out, rep := JSON(raw, lim)
	if !rep.Changed || len(out) > lim.MaxBytes || len(out) < lim.MaxBytes*9/10 {
		t.Fatalf("%d bytes of %d used", len(out), lim.MaxBytes)
	}
	if strings.Contains(out, noteKey) || strings.Count(out, "[toolproc:") != 1 {
		t.Fatalf("want exactly one in-band note and no added key: %.200q…", out[len(out)-300:])
	}
	if !gjson.Valid(out) || gjson.Get(out, "exit").Int() != 0 {
		t.Fatal("not the same object")
	}
}
