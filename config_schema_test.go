package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/toolproc/toolproc/extproc"
)

const schemaFile = "docs/toolproc.schema.json"

// TestSchemaUpToDate: the checked-in schema is what the generator makes
// from the config types and docs/config.md today.
func TestSchemaUpToDate(t *testing.T) {
	md, err := os.ReadFile("docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := extproc.ConfigSchema(md)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date with the config types or docs/config.md: run `go generate ./extproc/`", schemaFile)
	}
}

// shippedConfigs are every toolproc config the repository ships or
// documents: the embedded defaults, the compose file's config, the Helm
// chart's config value, and the yaml blocks of docs/config.md and the
// README whose top-level keys are toolproc's.
func shippedConfigs(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range []string{"extproc/default_config.yaml", "envoy/toolproc.yaml", "testenv/testdata/e2e-external.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	values, err := os.ReadFile("deploy/helm/toolproc/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Config json.RawMessage `json:"config"`
	}
	if err := yaml.Unmarshal(values, &v); err != nil || len(v.Config) == 0 {
		t.Fatalf("chart values: no config: %v", err)
	}
	out["deploy/helm/toolproc/values.yaml config"] = v.Config
	for _, doc := range []string{"docs/config.md", "README.md"} {
		blocks := toolprocBlocks(t, doc)
		if len(blocks) == 0 {
			t.Fatalf("%s: no toolproc yaml block found; the block filter is broken", doc)
		}
		for name, b := range blocks {
			out[name] = b
		}
	}
	return out
}

var topLevelKeys = []string{"server", "log", "store", "audit", "tracing", "profiles"}

// toolprocBlocks are a Markdown file's ```yaml blocks whose top-level keys
// are all toolproc's (Envoy and Kubernetes snippets are left out).
func toolprocBlocks(t *testing.T, path string) map[string][]byte {
	t.Helper()
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	lines := strings.Split(string(md), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```yaml" {
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		block := []byte(strings.Join(lines[start:i], "\n"))
		var top map[string]any
		if err := yaml.Unmarshal(block, &top); err != nil || len(top) == 0 {
			continue
		}
		ours := true
		for k := range top {
			ours = ours && slices.Contains(topLevelKeys, k)
		}
		if ours {
			out[fmt.Sprintf("%s:%d", path, start)] = block
		}
	}
	return out
}

// TestShippedConfigsMatchSchema: every shipped and documented config
// validates against the checked-in schema (what an editor will tell its
// user) and loads (what toolproc will tell them).
func TestShippedConfigsMatchSchema(t *testing.T) {
	schema := loadSchema(t)
	for name, b := range shippedConfigs(t) {
		t.Run(name, func(t *testing.T) {
			inst := yamlInstance(t, b)
			if errs := validate(schema, inst, ""); len(errs) > 0 {
				t.Errorf("does not match %s:\n%s", schemaFile, strings.Join(errs, "\n"))
			}
			if _, err := extproc.ParseConfig(b); err != nil {
				t.Errorf("does not load: %v", err)
			}
		})
	}
}

// TestSchemaRejects: the validator (and the schema) catch what ParseConfig
// catches by type: an unknown key, a wrong type, a value outside a closed set.
func TestSchemaRejects(t *testing.T) {
	schema := loadSchema(t)
	for _, tc := range []struct{ yaml, want string }{
		{"profiles: {default: {clamp: {max_byte: 1}}}", "profiles.default.clamp.max_byte: not allowed"},
		{"profiles: {default: {clamp: {max_bytes: lots}}}", "profiles.default.clamp.max_bytes: want integer"},
		{"profiles: {default: {clamp: {max_bytes: 1.5}}}", "profiles.default.clamp.max_bytes: want integer"},
		{"profiles: {x: {failure_mode: maybe}}", "profiles.x.failure_mode: not one of"},
		{"profiles: {x: {dialects: [gemini, cohere]}}", "profiles.x.dialects[1]: not one of"},
		{"profiles: {x: {tiers: {flatten: sometimes}}}", "profiles.x.tiers.flatten: not one of"},
		{"server: {shutdown_grace: soon}", "server.shutdown_grace: matches no alternative"},
		{"server: []", "server: want object|null"},
		{"log: {level: info, colour: true}", "log.colour: not allowed"},
	} {
		errs := validate(schema, yamlInstance(t, []byte(tc.yaml)), "")
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, tc.want) }) {
			t.Errorf("%s: errors %q, want one starting %q", tc.yaml, errs, tc.want)
		}
	}
	for _, ok := range []string{
		"profiles: {default: {tiers: {flatten: off}, shape: {mode: off}}}",
		"server: {shutdown_grace: 30, replay_timeout: 1m30s}",
		"profiles: {default: , x: {recovery: {windows: {my-model: 32000}}}}",
	} {
		if errs := validate(schema, yamlInstance(t, []byte(ok)), ""); len(errs) > 0 {
			t.Errorf("%s: %q", ok, errs)
		}
	}
}

// TestConfigDocOverview: the overview block at the top of docs/config.md
// is the defaults toolproc config prints: the same values, every key.
func TestConfigDocOverview(t *testing.T) {
	md, err := os.ReadFile("docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(md), "```yaml\n")
	overview, _, _ := strings.Cut(rest, "```")
	got, err := extproc.ParseConfig([]byte(overview))
	if err != nil {
		t.Fatalf("the overview does not load: %v", err)
	}
	want := extproc.DefaultConfig()
	if !reflect.DeepEqual(got, want) {
		g, _ := yaml.Marshal(got)
		w, _ := yaml.Marshal(want)
		t.Errorf("the overview's values differ from the defaults (toolproc config):\n%s", lineDiff(string(g), string(w)))
	}
	// Every key the defaults have (the built-in xml profile is described
	// in prose) is in the overview.
	var wantMap, gotMap map[string]any
	wb, _ := json.Marshal(want)
	_ = json.Unmarshal(wb, &wantMap)
	delete(wantMap["profiles"].(map[string]any), "xml")
	ob, err := yaml.YAMLToJSON([]byte(overview))
	if err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(ob, &gotMap)
	var missing []string
	for _, k := range keyPaths(wantMap, "") {
		if !slices.Contains(keyPaths(gotMap, ""), k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/config.md's overview leaves out %s", strings.Join(missing, ", "))
	}
}

func keyPaths(m map[string]any, prefix string) []string {
	var out []string
	for k, v := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		out = append(out, p)
		if sub, ok := v.(map[string]any); ok && k != "windows" {
			out = append(out, keyPaths(sub, p)...)
		}
	}
	sort.Strings(out)
	return out
}

func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "default:  %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "overview: %s\n", l)
		}
	}
	return b.String()
}

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// yamlInstance is a YAML file as the decoder reads it (YAML 1.1: off is
// false), in JSON's value model.
func yamlInstance(t *testing.T, b []byte) any {
	t.Helper()
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		v = map[string]any{}
	}
	return v
}

// validate checks v against the subset of JSON Schema the generator
// emits: type, properties, additionalProperties, items, enum, anyOf,
// pattern. It returns one "path: problem" per problem.
func validate(s map[string]any, v any, path string) []string {
	var errs []string
	fail := func(format string, args ...any) {
		p := path
		if p == "" {
			p = "(top level)"
		}
		errs = append(errs, p+": "+fmt.Sprintf(format, args...))
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			if len(validate(a.(map[string]any), v, path)) == 0 {
				return nil
			}
		}
		fail("matches no alternative: %v", v)
		return errs
	}
	if enum, ok := s["enum"].([]any); ok {
		if !slices.ContainsFunc(enum, func(e any) bool { return reflect.DeepEqual(e, v) }) {
			fail("not one of %v: %v", enum, v)
		}
		return errs
	}
	if ty, ok := s["type"]; ok {
		var types []string
		switch ty := ty.(type) {
		case string:
			types = []string{ty}
		case []any:
			for _, x := range ty {
				types = append(types, x.(string))
			}
		}
		if !slices.ContainsFunc(types, func(ty string) bool { return hasType(v, ty) }) {
			fail("want %s, got %v", strings.Join(types, "|"), v)
			return errs
		}
	}
	if pat, ok := s["pattern"].(string); ok {
		if str, ok := v.(string); ok && !regexp.MustCompile(pat).MatchString(str) {
			fail("does not match %s: %q", pat, str)
		}
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for k, x := range v {
			sub := path + "." + k
			if path == "" {
				sub = k
			}
			if ps, ok := props[k].(map[string]any); ok {
				errs = append(errs, validate(ps, x, sub)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					errs = append(errs, sub+": not allowed")
				}
			case map[string]any:
				errs = append(errs, validate(ap, x, sub)...)
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range v {
				errs = append(errs, validate(items, x, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return errs
}

func hasType(v any, ty string) bool {
	switch v := v.(type) {
	case nil:
		return ty == "null"
	case map[string]any:
		return ty == "object"
	case []any:
		return ty == "array"
	case string:
		return ty == "string"
	case bool:
		return ty == "boolean"
	case float64:
		return ty == "number" || ty == "integer" && v == math.Trunc(v)
	}
	return false
}
