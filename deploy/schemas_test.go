package deploy_test

// Validation of rendered Kubernetes objects the way an API server would validate them, with
// no cluster and no network:
//
//   - built-in kinds: strict decoding into the k8s.io/api types (an unknown or duplicate
//     field, or a value of the wrong type, is an error, as with kubectl's
//     --validate=strict), then the checks in chart_test.go;
//   - custom resources: the CRD's openAPIV3Schema, run through the API server's own CRD
//     validation code (k8s.io/apiextensions-apiserver): pruning with unknown-field tracking
//     (strict field validation), the OpenAPI schema validator, and the CRD's
//     x-kubernetes-validations CEL rules.
//
// The CRDs come from the module cache (Gateway API and Istio publish theirs in their Go
// modules) or from testdata/crds (Envoy Gateway, Prometheus operator; see SOURCES.md there).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// object is one rendered Kubernetes object.
type object struct {
	source string         // template (or file) it came from
	doc    map[string]any // as decoded from YAML
	raw    []byte         // JSON
}

func (o object) gvk() schema.GroupVersionKind {
	api, _ := o.doc["apiVersion"].(string)
	kind, _ := o.doc["kind"].(string)
	return schema.FromAPIVersionAndKind(api, kind)
}

func (o object) name() string {
	md, _ := o.doc["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}

func (o object) String() string { return fmt.Sprintf("%s %s (%s)", o.gvk().Kind, o.name(), o.source) }

// splitDocs parses a multi-document YAML stream into objects, expanding `kind: List`.
func splitDocs(source, text string) ([]object, error) {
	var out []object
	for _, part := range splitYAML(text) {
		js, err := yaml.YAMLToJSON([]byte(part))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal(js, &doc); err != nil {
			return nil, fmt.Errorf("%s: not a mapping: %w", source, err)
		}
		if doc["kind"] == "List" {
			items, _ := doc["items"].([]any)
			for _, it := range items {
				m, _ := it.(map[string]any)
				b, _ := json.Marshal(m)
				out = append(out, object{source: source, doc: m, raw: b})
			}
			continue
		}
		out = append(out, object{source: source, doc: doc, raw: js})
	}
	return out, nil
}

// splitYAML splits on document separators ("---" lines).
func splitYAML(text string) []string {
	var parts []string
	var cur strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.TrimRight(line, " \r\n") == "---" {
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(line)
	}
	return append(parts, cur.String())
}

// builtinScheme knows the built-in kinds the chart renders; anything else must have a CRD.
var builtinScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme, networkingv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

var strictDecoder = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, builtinScheme, builtinScheme,
	kjson.SerializerOptions{Strict: true})

// decodeBuiltin strictly decodes a built-in kind into its typed struct.
func decodeBuiltin(o object) (runtime.Object, error) {
	obj, _, err := strictDecoder.Decode(o.raw, nil, nil)
	return obj, err
}

// crdValidator is the API server's validation for one CRD version.
type crdValidator struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
	source     string
}

type crdSet struct {
	byGVK map[schema.GroupVersionKind]*crdValidator
}

var (
	crdsOnce sync.Once
	crds     *crdSet
	crdsErr  error
)

// loadCRDs reads every CRD the tests know, once per test binary.
func loadCRDs(t *testing.T) *crdSet {
	t.Helper()
	crdsOnce.Do(func() { crds, crdsErr = readCRDs() })
	if crdsErr != nil {
		t.Fatal(crdsErr)
	}
	return crds
}

// moduleDir is a dependency's directory in the module cache (no network: `go mod download`
// has fetched it, and go.sum pins it).
func moduleDir(path string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w: %s(run `go mod download` in deploy/)", path, err, stderr.String())
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("module %s is not in the module cache; run `go mod download` in deploy/", path)
	}
	return dir, nil
}

func readCRDs() (*crdSet, error) {
	var files []string
	for _, pat := range []string{"testdata/crds/*/*.yaml"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	gw, err := moduleDir("sigs.k8s.io/gateway-api")
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"gateways", "httproutes", "referencegrants"} {
		files = append(files, filepath.Join(gw, "config/crd/standard/gateway.networking.k8s.io_"+f+".yaml"))
	}
	istio, err := moduleDir("istio.io/api")
	if err != nil {
		return nil, err
	}
	files = append(files, filepath.Join(istio, "kubernetes/customresourcedefinitions.gen.yaml"))

	set := &crdSet{byGVK: map[schema.GroupVersionKind]*crdValidator{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, part := range splitYAML(string(data)) {
			js, err := yaml.YAMLToJSON([]byte(part))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
				continue
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := json.Unmarshal(js, &crd); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if crd.Kind != "CustomResourceDefinition" {
				continue
			}
			for _, v := range crd.Spec.Versions {
				if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
					continue
				}
				cv, err := newCRDValidator(v.Schema.OpenAPIV3Schema)
				if err != nil {
					return nil, fmt.Errorf("%s: %s/%s: %w", f, crd.Name, v.Name, err)
				}
				cv.source = filepath.Base(f)
				set.byGVK[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = cv
			}
		}
	}
	return set, nil
}

func newCRDValidator(v1 *apiextensionsv1.JSONSchemaProps) (*crdValidator, error) {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, &internal, nil); err != nil {
		return nil, err
	}
	st, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, err
	}
	sv, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, err
	}
	return &crdValidator{structural: st, schema: sv, cel: cel.NewValidator(st, true, celconfig.PerCallLimit)}, nil
}

// validateCustom runs an object through its CRD as the API server does on create with
// strict field validation. ok is false when no CRD is known for the kind.
func (s *crdSet) validateCustom(o object) (problems []string, ok bool) {
	cv := s.byGVK[o.gvk()]
	if cv == nil {
		return nil, false
	}
	// As the API server decodes: whole numbers become int64, which the CEL rules rely on.
	var obj map[string]any
	if err := utiljson.Unmarshal(o.raw, &obj); err != nil {
		return []string{err.Error()}, true
	}
	// Unknown fields: the API server prunes them, and with strict field validation
	// (kubectl's default since 1.27) rejects the request instead.
	unknown := pruning.PruneWithOptions(obj, cv.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, p := range unknown {
		problems = append(problems, fmt.Sprintf("unknown field %q", p))
	}
	// Defaults are applied before validation, as on create; some CEL rules read them.
	defaulting.Default(obj, cv.structural)
	var errs field.ErrorList
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, cv.schema)...)
	celErrs, _ := cv.cel.Validate(context.Background(), nil, cv.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	errs = append(errs, celErrs...)
	for _, e := range errs {
		problems = append(problems, e.Error())
	}
	sort.Strings(problems)
	return problems, true
}

// validateObject checks one object against the Kubernetes types or its CRD.
func validateObject(t *testing.T, o object) []string {
	t.Helper()
	gvk := o.gvk()
	if builtinScheme.Recognizes(gvk) {
		if _, err := decodeBuiltin(o); err != nil {
			return []string{err.Error()}
		}
		return nil
	}
	probs, ok := loadCRDs(t).validateCustom(o)
	if !ok {
		return []string{fmt.Sprintf("no schema known for %s: add its CRD to testdata/crds (or the built-in kind to builtinScheme)", gvk)}
	}
	return probs
}
