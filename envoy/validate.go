package envoy

// Generic, schema-level validation of Envoy configs against go-control-plane's protos:
// strict protojson parsing (with a locator that turns "unknown field" / bad enum errors into a
// path), and a protoreflect walk that unpacks every Any and runs protoc-gen-validate's
// ValidateAll on every message (ValidateAll never looks inside an Any by itself).

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"

	// Every typed_config type used by the configs in this folder must be linked in, or
	// protojson cannot resolve its "@type" (the locator below names the missing type).
	_ "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"

	"github.com/toolproc/toolproc/internal/editdist"
)

// report collects problems, each rendered as "file: path: message".
type report struct {
	file  string
	probs []string
}

func (r *report) add(path, format string, args ...any) {
	if path == "" {
		path = "(root)"
	}
	r.probs = append(r.probs, fmt.Sprintf("%s: %s: %s", r.file, path, fmt.Sprintf(format, args...)))
}

// joinPath appends a field name to a dotted path.
func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// elem renders a list element, adding its name when it has one: "listeners[0](ingress)".
func elem(path string, i int, name string) string {
	s := path + "[" + strconv.Itoa(i) + "]"
	if name != "" {
		s += "(" + name + ")"
	}
	return s
}

// shortType turns "type.googleapis.com/a.b.v3.Foo" into "Foo".
func shortType(typeURL string) string {
	if i := strings.LastIndexAny(typeURL, "./"); i >= 0 {
		return typeURL[i+1:]
	}
	return typeURL
}

// unmarshalStrict parses JSON into msg with protojson's defaults: unknown fields, unknown
// enum names and unresolvable "@type"s are errors. On failure it re-walks the JSON against
// the message descriptor to say *where* the problem is, because protojson only reports a
// line:column of the single-line JSON that YAMLToJSON produced.
func unmarshalStrict(rep *report, rootPath string, js []byte, msg proto.Message) bool {
	err := protojson.Unmarshal(js, msg)
	if err == nil {
		return true
	}
	var doc any
	if jerr := json.Unmarshal(js, &doc); jerr == nil {
		if path, why := locateJSONProblem(msg.ProtoReflect().Descriptor(), doc, rootPath); why != "" {
			rep.add(path, "%s (protojson: %v)", why, err)
			return false
		}
	}
	rep.add(rootPath, "%v", err)
	return false
}

// locateJSONProblem walks a decoded JSON value alongside a message descriptor and returns the
// path and description of the first unknown field, bad enum name or unresolvable "@type".
func locateJSONProblem(md protoreflect.MessageDescriptor, v any, path string) (string, string) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "", ""
	}
	if md.FullName() == "google.protobuf.Any" {
		typeURL, _ := obj["@type"].(string)
		mt, err := protoregistry.GlobalTypes.FindMessageByURL(typeURL)
		if err != nil {
			return path, fmt.Sprintf("cannot resolve \"@type\": %q (a typo, or config_test is missing a blank import for it)", typeURL)
		}
		md = mt.Descriptor()
		path += "<" + string(md.Name()) + ">"
	}
	if isWellKnown(md) {
		return "", "" // Duration, Struct, wrappers, ...: special JSON forms, protojson's message is enough
	}
	keys := sortedKeys(obj)
	for _, k := range keys {
		if k == "@type" {
			continue
		}
		fd := md.Fields().ByJSONName(k)
		if fd == nil {
			fd = md.Fields().ByName(protoreflect.Name(k))
		}
		if fd == nil {
			msg := fmt.Sprintf("unknown field %q in %s", k, md.FullName())
			if s := closestField(md, k); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return joinPath(path, k), msg
		}
		fp := joinPath(path, k)
		switch val := obj[k]; {
		case fd.IsMap():
			m, _ := val.(map[string]any)
			for _, mk := range sortedKeys(m) {
				if p, why := locateInValue(fd.MapValue(), m[mk], fp+"["+mk+"]"); why != "" {
					return p, why
				}
			}
		case fd.IsList():
			l, _ := val.([]any)
			for i, item := range l {
				if p, why := locateInValue(fd, item, elem(fp, i, nameOf(item))); why != "" {
					return p, why
				}
			}
		default:
			if p, why := locateInValue(fd, val, fp); why != "" {
				return p, why
			}
		}
	}
	return "", ""
}

func locateInValue(fd protoreflect.FieldDescriptor, v any, path string) (string, string) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return locateJSONProblem(fd.Message(), v, path)
	case protoreflect.EnumKind:
		s, ok := v.(string)
		if !ok || fd.Enum().FullName() == "google.protobuf.NullValue" {
			return "", ""
		}
		if fd.Enum().Values().ByName(protoreflect.Name(s)) == nil {
			var names []string
			vals := fd.Enum().Values()
			for i := 0; i < vals.Len(); i++ {
				names = append(names, string(vals.Get(i).Name()))
			}
			return path, fmt.Sprintf("invalid value %q for enum %s (valid: %s)", s, fd.Enum().FullName(), strings.Join(names, ", "))
		}
	}
	return "", ""
}

func isWellKnown(md protoreflect.MessageDescriptor) bool {
	n := string(md.FullName())
	return strings.HasPrefix(n, "google.protobuf.") && n != "google.protobuf.Any"
}

func nameOf(v any) string {
	if m, ok := v.(map[string]any); ok {
		if s, ok := m["name"].(string); ok {
			return s
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// closestField suggests the field name nearest to a misspelt key (edit distance ≤ 3).
func closestField(md protoreflect.MessageDescriptor, key string) string {
	best, bestD := "", 4
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		for _, cand := range []string{string(fields.Get(i).Name()), fields.Get(i).JSONName()} {
			if d := editdist.Levenshtein(key, cand); d < bestD {
				best, bestD = string(fields.Get(i).Name()), d
			}
		}
	}
	return best
}

// validateTree walks every populated message below m (through lists, maps, oneofs and
// unpacked Anys) and reports each message's own protoc-gen-validate violations at its path.
func validateTree(rep *report, m protoreflect.Message, path string) {
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			rep.add(path, "cannot unpack %s: %v", a.GetTypeUrl(), err)
			return
		}
		validateTree(rep, inner.ProtoReflect(), path+"<"+shortType(a.GetTypeUrl())+">")
		return
	}
	if v, ok := m.Interface().(interface{ ValidateAll() error }); ok {
		for _, e := range ownViolations(v.ValidateAll()) {
			rep.add(path, "%v", e)
		}
	}
	validateChildren(rep, m, path)
}

// validateChildren is validateTree without the message's own ValidateAll: for partial
// messages (Istio MERGE patches) whose required fields come from elsewhere.
func validateChildren(rep *report, m protoreflect.Message, path string) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		fp := joinPath(path, string(fd.Name()))
		switch {
		case fd.IsList():
			if fd.Message() == nil {
				return true
			}
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				item := l.Get(i).Message()
				validateTree(rep, item, elem(fp, i, protoName(item)))
			}
		case fd.IsMap():
			if fd.MapValue().Message() == nil {
				return true
			}
			var keys []string
			vals := map[string]protoreflect.Message{}
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				keys = append(keys, k.String())
				vals[k.String()] = mv.Message()
				return true
			})
			sort.Strings(keys)
			for _, k := range keys {
				validateTree(rep, vals[k], fp+"["+k+"]")
			}
		case fd.Message() != nil:
			validateTree(rep, v.Message(), fp)
		}
		return true
	})
}

// ownViolations flattens a protoc-gen-validate error and drops the "embedded message failed
// validation" wrappers: the walk visits that embedded message too and reports the real
// violation at the deeper, more useful path, so each problem is reported exactly once.
func ownViolations(err error) []error {
	if err == nil {
		return nil
	}
	all := []error{err}
	var multi interface{ AllErrors() []error }
	if errors.As(err, &multi) {
		all = multi.AllErrors()
	}
	var own []error
	for _, e := range all {
		if r, ok := e.(interface{ Reason() string }); ok && r.Reason() == "embedded message failed validation" {
			continue
		}
		own = append(own, e)
	}
	return own
}

// protoName returns the message's string field "name", if it has one.
func protoName(m protoreflect.Message) string {
	fd := m.Descriptor().Fields().ByName("name")
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return ""
	}
	return m.Get(fd).String()
}
