package extproc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestConfigErrorsReadLikeYAML: a mistake is named by its full key path,
// its line and column in the file and, for a typo, the nearest valid key;
// a wrong type by the type expected in YAML's words. Never the decoder's
// Go vocabulary, never twice for a profile that only inherited it.
func TestConfigErrorsReadLikeYAML(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want string // the whole error
	}{
		{
			name: "typo names the path, line, column and the nearest key",
			yaml: "profiles:\n  default:\n    clamp:\n      max_byte: 1000\n",
			want: "line 4, column 7: profiles.default.clamp.max_byte: unknown key; did you mean max_bytes?",
		},
		{
			name: "typo in a user profile",
			yaml: "profiles:\n  strict:\n    compress:\n      stratgy: simple\n",
			want: "line 4, column 7: profiles.strict.compress.stratgy: unknown key; did you mean strategy?",
		},
		{
			name: "typo at the top level",
			yaml: "sever:\n  grpc_addr: 127.0.0.1:1\n",
			want: "line 1, column 1: sever: unknown key; did you mean server?",
		},
		{
			name: "nothing near: the valid keys are listed",
			yaml: "log:\n  colour: true\n",
			want: "line 2, column 3: log.colour: unknown key; valid keys here: level, format",
		},
		{
			name: "every problem at once, in file order",
			yaml: "server:\n  grpc_adr: x\nstore:\n  max_bytes: lots\n",
			want: "line 2, column 3: server.grpc_adr: unknown key; did you mean grpc_addr?\n" +
				`line 4, column 14: store.max_bytes: expected an integer; got the string "lots"`,
		},
		{
			name: "a string where a number goes",
			yaml: "profiles: {default: {clamp: {max_bytes: 50k}}}\n",
			want: `line 1, column 41: profiles.default.clamp.max_bytes: expected an integer; got the string "50k"`,
		},
		{
			name: "a fraction where an integer goes",
			yaml: "profiles: {default: {expand: {max_loops: 2.5}}}\n",
			want: "line 1, column 42: profiles.default.expand.max_loops: expected an integer; got the number 2.5",
		},
		{
			name: "a word where a boolean goes",
			yaml: "profiles:\n  default:\n    enabled: sometimes\n",
			want: `line 3, column 14: profiles.default.enabled: expected true or false; got the string "sometimes"`,
		},
		{
			name: "YAML 1.1 booleans in a string setting",
			yaml: "profiles:\n  default:\n    failure_mode: yes\n",
			want: `line 3, column 19: profiles.default.failure_mode: expected a string; YAML reads yes as true: quote it ("yes")`,
		},
		{
			name: "a scalar where a list goes",
			yaml: "profiles:\n  default:\n    dialects: anthropic\n",
			want: `line 3, column 15: profiles.default.dialects: expected a list of strings; got the string "anthropic"`,
		},
		{
			name: "a list item of the wrong type",
			yaml: "profiles:\n  default:\n    compress:\n      skip_tools: [read, 7]\n",
			want: `line 4, column 26: profiles.default.compress.skip_tools[1]: expected a string; got the number 7: quote it ("7")`,
		},
		{
			name: "a bad duration",
			yaml: "server:\n  shutdown_grace: soon\n",
			want: `line 2, column 19: server.shutdown_grace: expected a duration such as 15s, 1m30s or 5h (or a number of seconds); got the string "soon"`,
		},
		{
			name: "a map of the wrong values",
			yaml: "profiles:\n  default:\n    recovery:\n      windows: {gpt-9: big}\n",
			want: `line 4, column 24: profiles.default.recovery.windows.gpt-9: expected an integer; got the string "big"`,
		},
		{
			name: "a profile that is not a mapping",
			yaml: "profiles:\n  x: 3\n",
			want: "line 2, column 6: profiles.x: expected a mapping; got the number 3",
		},
		{
			name: "a key written twice",
			yaml: "log:\n  level: info\n  level: debug\n",
			want: "line 3, column 3: log.level: written twice (first at line 2); the second would silently win",
		},
		{
			name: "a top level that is not a mapping",
			yaml: "- server\n",
			want: "line 1, column 1: (top level): must be a mapping of server, log, store, audit, tracing and profiles; got a list",
		},
		{
			name: "a value error on default is reported once, not again for the built-in xml profile",
			yaml: "profiles:\n  default:\n    compress:\n      target_bytes: 10\n",
			want: "line 4, column 7: profiles.default.compress.target_bytes: must be at least 256, got 10",
		},
		{
			name: "a value error on a profile the user wrote is still reported there",
			yaml: "profiles:\n  default:\n    compress:\n      target_bytes: 10\n  xml:\n    compress:\n      target_bytes: 10\n",
			want: "line 4, column 7: profiles.default.compress.target_bytes: must be at least 256, got 10\n" +
				"line 7, column 7: profiles.xml.compress.target_bytes: must be at least 256, got 10",
		},
		{
			name: "clamp limits name their key",
			yaml: "profiles:\n  default:\n    clamp: {max_bytes: 10, keep: middle}\n",
			want: "line 3, column 13: profiles.default.clamp.max_bytes: must be at least 256 (default 51200), got 10\n" +
				`line 3, column 28: profiles.default.clamp.keep: must be head, tail or head_tail; got "middle"`,
		},
		{
			name: "a value error on a key not in the file has no position",
			yaml: "store:\n  max_bytes: 2097152\n",
			want: "store.tenant_max_bytes: must be between 1048576 and store.max_bytes (2097152), got 67108864",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("no error, want:\n%s", tc.want)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error:\n%s\nwant:\n%s", got, tc.want)
			}
			if strings.Contains(err.Error(), "Go struct") || strings.Contains(err.Error(), "JSON") {
				t.Errorf("error speaks Go or JSON: %s", err)
			}
		})
	}
}

// TestConfigAcceptsWhatTheDecoderReads: the check is no stricter than the
// decoder where the docs promise a reading: off for flatten and mode,
// numbers of seconds for durations, anchors and merge keys, nulls.
func TestConfigAcceptsWhatTheDecoderReads(t *testing.T) {
	for _, in := range []string{
		"profiles: {default: {tiers: {flatten: off}, shape: {mode: off}}}",
		"profiles: {default: {tiers: {flatten: \"off\"}}}",
		"server: {shutdown_grace: 30, replay_timeout: 1.5}",
		"store: {original_ttl: 1h30m}",
		"profiles:\n  default: &d\n    clamp: {keep: tail}\n  other:\n    <<: *d\n    enabled: false\n",
		"profiles:\n  default:\n  x: {}\n",
		"audit:\n",
		"# only a comment\n",
		"profiles: {default: {recovery: {windows: {my-model: 32000}}, compress: {target_ratio: 4}}}",
	} {
		if _, err := ParseConfig([]byte(in)); err != nil {
			t.Errorf("ParseConfig(%q): %v", in, err)
		}
	}
}

// A merge key inside the mapping it merges crashed the check with a stack
// overflow (found by FuzzParseConfig); aliases that name a huge tree in a
// few lines are not walked without end. Both end in an error, at once.
func TestConfigCheckEndsOnLoopsAndAliasFloods(t *testing.T) {
	var flood strings.Builder
	flood.WriteString("x: &k {")
	for i := range 300 {
		fmt.Fprintf(&flood, "k%d: 1, ", i)
	}
	flood.WriteString("}\nprofiles:\n")
	for i := range 300 {
		fmt.Fprintf(&flood, "  p%d: *k\n", i)
	}
	for _, tc := range []struct{ in, want string }{
		{"profiles:\n  default: &d\n    c taither:other:\n    <<: *d\n", "merges a mapping that contains this merge key"},
		{"profiles:\n  default: &d\n    <<: [*d]\n", "merges a mapping that contains this merge key"},
		{flood.String(), "keys once its aliases are expanded"},
	} {
		_, err := ParseConfig([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%.60q): %v, want an error saying %q", tc.in, err, tc.want)
		}
	}
}

func TestLoadConfigNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolproc.yaml")
	if err := os.WriteFile(path, []byte("log:\n  levl: debug\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path)
	want := path + ":2:3: log.levl: unknown key; did you mean level?"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

// TestEnumTagsAgreeWithValidate: the closed value sets the schema offers
// (the enum struct tags) are the ones Validate accepts, and a value outside
// them is refused at its own key.
func TestEnumTagsAgreeWithValidate(t *testing.T) {
	var visit func(rt reflect.Type, path string)
	n := 0
	visit = func(rt reflect.Type, path string) {
		for f := range rt.Fields() {
			key := join(path, yamlKey(f))
			ft := f.Type
			if enum := f.Tag.Get("enum"); enum != "" {
				n++
				for _, v := range append(strings.Split(enum, ","), "bogus") {
					val := fmt.Sprintf("%q", v)
					if ft.Kind() == reflect.Slice {
						val = "[" + val + "]"
					}
					_, err := ParseConfig([]byte(nest(key, val)))
					refused := err != nil && hasKeyError(err, key)
					if refused != (v == "bogus") {
						t.Errorf("%s: %s: refused=%v (%v)", key, val, refused, err)
					}
				}
			}
			if ft.Kind() == reflect.Struct && ft != durationType {
				visit(ft, key)
			}
		}
	}
	visit(reflect.TypeFor[Config](), "")
	visit(reflect.TypeFor[Profile](), "profiles.xml") // xml: text_only is valid there
	if n < 17 {
		t.Errorf("only %d enum tags found", n)
	}
}

// nest writes a.b.c: v as flow YAML.
func nest(key, v string) string {
	parts := strings.Split(key, ".")
	s := v
	for i := len(parts) - 1; i >= 0; i-- {
		s = "{" + parts[i] + ": " + s + "}"
	}
	return strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
}

func hasKeyError(err error, key string) bool {
	var ces *ConfigErrors
	if !errors.As(err, &ces) {
		return false
	}
	for _, ce := range ces.List {
		if ce.Key == key || strings.HasPrefix(ce.Key, key+"[") {
			return true
		}
	}
	return false
}

// FuzzParseConfig: any file gives a config or errors, never a panic, and
// an error with a position points inside the file.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"profiles:\n  default:\n    clamp:\n      max_byte: 1000\n",
		"profiles:\n  default: &d\n    clamp: {keep: tail}\n  other:\n    <<: *d\n",
		"server: {shutdown_grace: soon, grpc_addr: [1]}\nlog: {level: yes}\n",
		"profiles: {default: {recovery: {windows: {m: big}}, dialects: anthropic}}",
		"- a\n- b\n",
		"a: &a [*a]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := ParseConfig(b)
		var ces *ConfigErrors
		if errors.As(err, &ces) {
			// YAML breaks lines at \r\n, \n and a lone \r (YAML 1.2, 5.4).
			lines := strings.Count(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") +
				strings.Count(strings.ReplaceAll(string(b), "\r\n", "\n"), "\r") + 1
			for _, ce := range ces.List {
				if ce.Line > lines {
					t.Fatalf("error at line %d of a %d-line file: %v", ce.Line, lines, ce)
				}
			}
		}
	})
}
