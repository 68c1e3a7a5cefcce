package extproc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

//go:generate go run ../internal/schemagen -doc ../docs/config.md -o ../docs/toolproc.schema.json

// schemaID is where the schema is published; editors also find it through
// a `# yaml-language-server: $schema=...` comment in the file.
const schemaID = "https://raw.githubusercontent.com/toolproc/toolproc/main/docs/toolproc.schema.json"

// ConfigSchema is the JSON Schema (draft 2020-12) of toolproc.yaml, made
// from the Config types themselves: every key with its type, the closed
// value sets of the `enum` struct tags, the embedded default, and the
// meaning column of docs/config.md's tables (configDoc) as description.
// `go generate` writes it to docs/toolproc.schema.json; a test holds the
// checked-in file to this output.
func ConfigSchema(configDoc []byte) ([]byte, error) {
	var defaults map[string]any
	b, err := json.Marshal(DefaultConfig())
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &defaults); err != nil {
		return nil, err
	}
	g := schemaGen{docs: configDocs(configDoc)}
	root := g.schema(reflect.TypeFor[Config](), "", defaults)
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = schemaID
	root["title"] = "toolproc configuration (toolproc.yaml)"
	root["description"] = "Merged over the embedded defaults; every profile inherits from `default`. Keys: docs/config.md. Generated from the config types (go generate ./...); do not edit."
	delete(root, "default")
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

type schemaGen struct {
	docs map[string]string // profiles.*.clamp.max_bytes -> meaning
}

// schema describes type t at key path (profile names as *), with def the
// embedded default's value there (nil if none).
func (g schemaGen) schema(t reflect.Type, path string, def any) map[string]any {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := map[string]any{}
	switch {
	case t == durationType:
		// Go durations (time.ParseDuration) or a number of seconds.
		s["anyOf"] = []any{
			map[string]any{"type": "string", "pattern": `^[-+]?(0|([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+)$`},
			map[string]any{"type": "number"},
		}
	case t.Kind() == reflect.Struct:
		// null: a key written with nothing under it keeps the defaults.
		s["type"] = []any{"object", "null"}
		s["additionalProperties"] = false
		props := map[string]any{}
		defs, _ := def.(map[string]any)
		for f := range t.Fields() {
			key := yamlKey(f)
			if key == "" {
				continue
			}
			p := g.schema(f.Type, join(path, key), defs[key])
			if enum := f.Tag.Get("enum"); enum != "" {
				values := enumValues(enum, offWordKey(join(path, key)))
				if f.Type.Kind() == reflect.Slice {
					p["items"] = map[string]any{"enum": values}
				} else {
					delete(p, "type")
					p["enum"] = values
				}
			}
			props[key] = p
		}
		s["properties"] = props
	case t.Kind() == reflect.Map:
		s["type"] = []any{"object", "null"}
		var elemDef any
		if t.Elem() == reflect.TypeFor[*Profile]() {
			if defs, ok := def.(map[string]any); ok {
				elemDef = defs[DefaultProfile]
			}
			def = nil // the defaults of the profiles are given per key
		}
		s["additionalProperties"] = g.schema(t.Elem(), join(path, "*"), elemDef)
	case t.Kind() == reflect.Slice:
		s["type"] = "array"
		s["items"] = g.schema(t.Elem(), path+"[]", nil)
	case t.Kind() == reflect.String:
		s["type"] = "string"
	case t.Kind() == reflect.Bool:
		s["type"] = "boolean"
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		s["type"] = "integer"
	case t.Kind() == reflect.Float64:
		s["type"] = "number"
	default:
		panic(fmt.Sprintf("config schema: no rule for %s at %s", t, path))
	}
	if d := g.docs[path]; d != "" {
		s["description"] = d
	}
	if def != nil && t.Kind() != reflect.Struct {
		s["default"] = def
	}
	return s
}

// enumValues lists a closed value set; offWords also accepts the boolean
// false a YAML 1.1 reader makes of the word off.
func enumValues(tag string, offWord bool) []any {
	var values []any
	for v := range strings.SplitSeq(tag, ",") {
		values = append(values, v)
	}
	if offWord {
		values = append(values, false)
	}
	return values
}

// configDocs reads docs/config.md's key tables: a heading names the
// section (## `server`, ### `profiles.*.clamp`; ## `profiles` holds the
// profile's own keys), each row | `key` | default | meaning |.
func configDocs(md []byte) map[string]string {
	docs := map[string]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			section = ""
			if _, rest, ok := strings.Cut(line, "`"); ok {
				if name, _, ok := strings.Cut(rest, "`"); ok && !strings.Contains(name, " ") {
					section = name
					if section == "profiles" {
						section = "profiles.*"
					}
				}
			}
			continue
		}
		if section == "" || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := splitRow(line)
		if len(cells) < 3 {
			continue
		}
		key := strings.Trim(cells[0], "` ")
		if key == "" || strings.ContainsAny(key, " /") {
			continue
		}
		docs[section+"."+key] = strings.TrimSpace(cells[len(cells)-1])
	}
	return docs
}

// splitRow splits a Markdown table row on its unescaped pipes.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}
