package extproc

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	yamlnode "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/toolproc/toolproc/internal/editdist"
)

// ConfigError is one problem in a config file, named the way the user
// wrote it: the full key path and, when the key is in the file, its line
// and column.
type ConfigError struct {
	Key          string // profiles.default.clamp.max_bytes
	Line, Column int    // 1-based; 0 when the key is not in the file (a default, an inherited value)
	Msg          string
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s: %s", e.Line, e.Column, e.Key, e.Msg)
	}
	return e.Key + ": " + e.Msg
}

// ConfigErrors are every problem found, in file order; File, when set,
// leads each line as compilers do (file:line:column), so editors can jump
// to it.
type ConfigErrors struct {
	File string
	List []*ConfigError
}

func (e *ConfigErrors) Error() string {
	var b strings.Builder
	for i, ce := range e.List {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch {
		case e.File != "" && ce.Line > 0:
			fmt.Fprintf(&b, "%s:%d:%d: %s: %s", e.File, ce.Line, ce.Column, ce.Key, ce.Msg)
		case e.File != "":
			fmt.Fprintf(&b, "%s: %s", e.File, ce)
		default:
			b.WriteString(ce.Error())
		}
	}
	return b.String()
}

func (e *ConfigErrors) sort() {
	slices.SortStableFunc(e.List, func(a, b *ConfigError) int {
		// Errors with a position first, in file order; the rest by key.
		if (a.Line == 0) != (b.Line == 0) {
			if a.Line == 0 {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), strings.Compare(a.Key, b.Key))
	})
}

// position is where a key was written.
type position struct{ line, column int }

// configCheck walks the user's YAML against the Config types before the
// merge, so a problem is reported where the user wrote it: the full key
// path, the line and column, the nearest valid key for a typo, the
// expected type in YAML's words. Only the user's file is walked: a built-in
// profile the user never wrote cannot repeat a problem of theirs.
type configCheck struct {
	errs ConfigErrors
	pos  map[string]position // key path -> where the user wrote it
	// merging holds the mappings whose merge keys are being followed: a
	// merge that reaches one of them again is a loop (<<: *d inside &d),
	// which the decoder refuses and which would otherwise recurse forever.
	merging []*yamlnode.Node
	// keys counts the keys visited. Aliases are followed where they are
	// used, so a small file can name a huge tree (each level an alias of
	// many aliases of the level below); past maxCheckedKeys the walk stops.
	keys int
}

// maxCheckedKeys bounds the keys one check visits, aliases expanded: far
// above any real configuration (a few hundred keys), far below a tree a
// few lines of aliases can name.
const maxCheckedKeys = 1 << 16

func (c *configCheck) add(n *yamlnode.Node, key, format string, args ...any) {
	c.errs.List = append(c.errs.List, &ConfigError{Key: key, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)})
}

// checkConfigYAML returns where each key of the user's file is, or the
// file's problems.
func checkConfigYAML(b []byte) (map[string]position, error) {
	var doc yamlnode.Node
	if err := yamlnode.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("config is not valid YAML: %w", err)
	}
	c := &configCheck{pos: map[string]position{}}
	if len(doc.Content) == 0 {
		return c.pos, nil
	}
	root := resolve(doc.Content[0])
	if root.Kind != yamlnode.MappingNode && !isNull(root) {
		c.add(root, "(top level)", "must be a mapping of server, log, store, audit, tracing and profiles; got %s", describe(root))
	} else {
		c.walk(root, reflect.TypeFor[Config](), "")
	}
	if len(c.errs.List) > 0 {
		c.errs.sort()
		return nil, &c.errs
	}
	return c.pos, nil
}

var durationType = reflect.TypeFor[Duration]()

func (c *configCheck) walk(n *yamlnode.Node, t reflect.Type, path string) {
	n = resolve(n)
	if isNull(n) {
		return // as the decoder does: null leaves the value as it was
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		c.duration(n, path)
	case t.Kind() == reflect.Struct:
		if n.Kind != yamlnode.MappingNode {
			c.add(n, path, "expected a mapping; got %s", describe(n))
			return
		}
		fields := fieldNames(t)
		c.mapping(n, path, func(keyNode *yamlnode.Node, key string, v *yamlnode.Node) {
			f, ok := fieldByKey(t, key)
			if !ok {
				c.add(keyNode, join(path, key), "unknown key%s", suggest(key, fields))
				return
			}
			c.walk(v, f.Type, join(path, key))
		})
	case t.Kind() == reflect.Map:
		if n.Kind != yamlnode.MappingNode {
			c.add(n, path, "expected %s; got %s", typeName(t), describe(n))
			return
		}
		c.mapping(n, path, func(_ *yamlnode.Node, key string, v *yamlnode.Node) {
			c.walk(v, t.Elem(), join(path, key))
		})
	case t.Kind() == reflect.Slice:
		if n.Kind != yamlnode.SequenceNode {
			c.add(n, path, "expected %s; got %s", typeName(t), describe(n))
			return
		}
		for i, item := range n.Content {
			c.walk(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		c.scalar(n, t, path)
	}
}

// mapping visits a mapping's keys once each, following YAML merge keys
// (<<: *anchor) and reporting keys written twice.
func (c *configCheck) mapping(n *yamlnode.Node, path string, visit func(keyNode *yamlnode.Node, key string, v *yamlnode.Node)) {
	seen := map[string]*yamlnode.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if c.keys++; c.keys == maxCheckedKeys {
			c.add(k, path, "the file names over %d keys once its aliases are expanded; not checked further", maxCheckedKeys)
		}
		if c.keys >= maxCheckedKeys {
			return
		}
		if k.Kind != yamlnode.ScalarNode {
			c.add(k, path, "keys must be plain words; got %s", describe(k))
			continue
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			v = resolve(v)
			srcs := []*yamlnode.Node{v}
			if v.Kind == yamlnode.SequenceNode {
				srcs = v.Content
			}
			for _, s := range srcs {
				if s = resolve(s); s.Kind != yamlnode.MappingNode {
					continue
				}
				if s == n || slices.Contains(c.merging, s) {
					c.add(k, path, "merges a mapping that contains this merge key: the merge never ends")
					continue
				}
				c.merging = append(c.merging, n)
				c.mapping(s, path, visit)
				c.merging = c.merging[:len(c.merging)-1]
			}
			continue
		}
		key := join(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			c.add(k, key, "written twice (first at line %d); the second would silently win", first.Line)
			continue
		}
		seen[k.Value] = k
		c.pos[key] = position{k.Line, k.Column}
		visit(k, k.Value, v)
	}
}

// scalar checks a leaf the way the decoder will read it: the YAML 1.1
// reading sigs.k8s.io/yaml applies (yes, on and off are booleans there).
func (c *configCheck) scalar(n *yamlnode.Node, t reflect.Type, path string) {
	if n.Kind != yamlnode.ScalarNode {
		c.add(n, path, "expected %s; got %s", typeName(t), describe(n))
		return
	}
	j := scalarJSON(n)
	switch t.Kind() {
	case reflect.String:
		if j[0] == '"' {
			return
		}
		if j == "false" && offWordKey(path) {
			return // offWords reads it as the word off
		}
		if j == "true" || j == "false" {
			c.add(n, path, "expected a string; YAML reads %s as %s: quote it (%q)", n.Value, j, n.Value)
			return
		}
		c.add(n, path, "expected a string; got %s: quote it (%q)", describe(n), n.Value)
	case reflect.Bool:
		if j != "true" && j != "false" {
			c.add(n, path, "expected true or false; got %s", describe(n))
		}
	case reflect.Int, reflect.Int64:
		if _, err := strconv.ParseInt(j, 10, 64); err != nil {
			c.add(n, path, "expected an integer; got %s", describe(n))
		}
	case reflect.Float64:
		if _, err := strconv.ParseFloat(j, 64); err != nil || j[0] == '"' {
			c.add(n, path, "expected a number; got %s", describe(n))
		}
	default:
		c.add(n, path, "expected %s; got %s", typeName(t), describe(n))
	}
}

func (c *configCheck) duration(n *yamlnode.Node, path string) {
	if n.Kind == yamlnode.ScalarNode {
		j := scalarJSON(n)
		if _, err := strconv.ParseFloat(j, 64); err == nil {
			return // seconds
		}
		if s, err := strconv.Unquote(j); err == nil {
			if _, err := time.ParseDuration(s); err == nil {
				return
			}
		}
	}
	c.add(n, path, "expected %s; got %s", typeName(durationType), describe(n))
}

// scalarJSON is the JSON the decoder sees for a scalar: a quoted string,
// a number, true, false or null.
func scalarJSON(n *yamlnode.Node) string {
	if n.Style&(yamlnode.DoubleQuotedStyle|yamlnode.SingleQuotedStyle|yamlnode.LiteralStyle|yamlnode.FoldedStyle) != 0 ||
		n.Style&yamlnode.TaggedStyle != 0 && n.Tag == "!!str" {
		return strconv.Quote(n.Value)
	}
	j, err := yaml.YAMLToJSON([]byte(n.Value))
	if err != nil || len(j) == 0 {
		return strconv.Quote(n.Value)
	}
	return strings.TrimSpace(string(j))
}

// offWordKey: the settings whose documented values include the word off.
func offWordKey(path string) bool {
	return strings.HasSuffix(path, ".tiers.flatten") || strings.HasSuffix(path, ".shape.mode")
}

func resolve(n *yamlnode.Node) *yamlnode.Node {
	for n.Kind == yamlnode.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yamlnode.Node) bool {
	return n.Kind == yamlnode.ScalarNode && n.Tag == "!!null"
}

// describe names what the user wrote in YAML's terms.
func describe(n *yamlnode.Node) string {
	switch n.Kind {
	case yamlnode.MappingNode:
		return "a mapping"
	case yamlnode.SequenceNode:
		return "a list"
	}
	j := scalarJSON(n)
	switch {
	case j[0] == '"':
		return fmt.Sprintf("the string %q", n.Value)
	case j == "true" || j == "false":
		return n.Value + " (a boolean)"
	case j == "null":
		return "nothing (null)"
	}
	return "the number " + n.Value
}

// typeName is the expected type in YAML's terms.
func typeName(t reflect.Type) string {
	if t == durationType {
		return "a duration such as 15s, 1m30s or 5h (or a number of seconds)"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.Struct:
		return "a mapping"
	case reflect.Map:
		return "a mapping of names to " + strings.TrimPrefix(strings.TrimPrefix(typeName(t.Elem()), "an "), "a ") + "s"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(typeName(t.Elem()), "an "), "a ") + "s"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	}
	return t.String()
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldNames are a config struct's YAML keys in declaration order.
func fieldNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		if name := yamlKey(f); name != "" {
			names = append(names, name)
		}
	}
	return names
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if yamlKey(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func yamlKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// suggest names the valid key nearest to a typo ("; did you mean
// max_bytes?") or, when none is near, every valid key at that level.
func suggest(key string, valid []string) string {
	best, bestD := "", -1
	for _, v := range valid {
		if d := editdist.Levenshtein(strings.ToLower(key), v); bestD < 0 || d < bestD {
			best, bestD = v, d
		}
	}
	if best != "" && bestD <= max(2, len(key)/4) {
		return "; did you mean " + best + "?"
	}
	return "; valid keys here: " + strings.Join(valid, ", ")
}
