package main

// Offline checks of the release tooling: .goreleaser.yaml builds what the README promises
// from files that exist, stamps variables that exist, and publishes the image the Helm chart
// pulls; the GitHub workflows run what they claim, with actions pinned by commit SHA. The
// real `goreleaser check` needs GoReleaser and the network, which make test has neither of.

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// goreleaserConfig is the part of GoReleaser's v2 schema this repository uses. Decoding is
// strict, so a misspelt or unknown key fails here as it would in `goreleaser check`.
type goreleaserConfig struct {
	Version     int    `json:"version"`
	ProjectName string `json:"project_name"`
	Before      struct {
		Hooks []string `json:"hooks"`
	} `json:"before"`
	Builds []struct {
		ID           string   `json:"id"`
		Main         string   `json:"main"`
		Binary       string   `json:"binary"`
		Env          []string `json:"env"`
		Goos         []string `json:"goos"`
		Goarch       []string `json:"goarch"`
		Flags        []string `json:"flags"`
		Ldflags      []string `json:"ldflags"`
		ModTimestamp string   `json:"mod_timestamp"`
	} `json:"builds"`
	Archives []struct {
		ID           string   `json:"id"`
		IDs          []string `json:"ids"`
		Formats      []string `json:"formats"`
		NameTemplate string   `json:"name_template"`
		Files        []string `json:"files"`
	} `json:"archives"`
	Checksum struct {
		NameTemplate string `json:"name_template"`
		Algorithm    string `json:"algorithm"`
	} `json:"checksum"`
	SBOMs []struct {
		ID        string `json:"id"`
		Artifacts string `json:"artifacts"`
	} `json:"sboms"`
	DockersV2 []struct {
		ID         string            `json:"id"`
		IDs        []string          `json:"ids"`
		Dockerfile string            `json:"dockerfile"`
		Images     []string          `json:"images"`
		Tags       []string          `json:"tags"`
		Platforms  []string          `json:"platforms"`
		BuildArgs  map[string]string `json:"build_args"`
		Labels     map[string]string `json:"labels"`
		SBOM       bool              `json:"sbom"`
	} `json:"dockers_v2"`
	Changelog struct {
		Use  string `json:"use"`
		Sort string `json:"sort"`
	} `json:"changelog"`
	Release struct {
		GitHub struct {
			Owner string `json:"owner"`
			Name  string `json:"name"`
		} `json:"github"`
		Prerelease string `json:"prerelease"`
	} `json:"release"`
}

func loadGoreleaser(t *testing.T) goreleaserConfig {
	t.Helper()
	b, err := os.ReadFile(".goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c goreleaserConfig
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	return c
}

func TestGoreleaserTargets(t *testing.T) {
	c := loadGoreleaser(t)
	if c.Version != 2 {
		t.Fatalf("version %d: the workflow runs GoReleaser v2", c.Version)
	}
	if len(c.Builds) != 1 {
		t.Fatalf("%d builds, want 1", len(c.Builds))
	}
	b := c.Builds[0]
	var targets []string
	for _, goos := range b.Goos {
		for _, arch := range b.Goarch {
			targets = append(targets, goos+"/"+arch)
		}
	}
	slices.Sort(targets)
	if want := []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"}; !slices.Equal(targets, want) {
		t.Errorf("builds %v, want %v", targets, want)
	}
	if b.Main != "." || b.Binary != "toolproc" || !slices.Contains(b.Env, "CGO_ENABLED=0") || !slices.Contains(b.Flags, "-trimpath") {
		t.Errorf("build: main %q binary %q env %v flags %v; want the root package as a static, trimmed toolproc", b.Main, b.Binary, b.Env, b.Flags)
	}
	if c.Checksum.NameTemplate == "" || c.Checksum.Algorithm != "sha256" {
		t.Error("no sha256 checksums file")
	}
	if len(c.SBOMs) == 0 || c.SBOMs[0].Artifacts != "archive" {
		t.Error("no SBOM of the archives")
	}
	for _, a := range c.Archives {
		for _, f := range a.Files {
			if m, _ := filepath.Glob(f); len(m) == 0 && !strings.ContainsAny(f, "*?[") {
				t.Errorf("archive file %s does not exist", f)
			}
		}
	}
}

// TestGoreleaserLdflags: every -X the release sets names a package-level string variable
// of a package of this module, or the stamp silently does nothing; and the version is one
// of them.
func TestGoreleaserLdflags(t *testing.T) {
	c := loadGoreleaser(t)
	re := regexp.MustCompile(`-X\s+([\w./-]+)\.(\w+)=`)
	var targets [][]string
	for _, l := range c.Builds[0].Ldflags {
		for _, m := range re.FindAllStringSubmatch(l, -1) {
			targets = append(targets, m[1:])
		}
	}
	if len(targets) == 0 {
		t.Fatal("no -X version stamp in ldflags")
	}
	const module = "github.com/toolproc/toolproc"
	stamped := map[string]bool{}
	for _, tg := range targets {
		dir := "."
		switch {
		case tg[0] == "main":
		case strings.HasPrefix(tg[0], module+"/"):
			dir = strings.TrimPrefix(tg[0], module+"/")
		default:
			t.Errorf("-X %s.%s: not a package of %s", tg[0], tg[1], module)
			continue
		}
		if !stringVars(t, dir)[tg[1]] {
			t.Errorf("ldflags -X %s.%s: no such package-level string variable", tg[0], tg[1])
		}
		stamped[tg[0]+"."+tg[1]] = true
	}
	if !stamped[module+"/extproc.version"] {
		t.Errorf("the release does not stamp %s/extproc.version (toolproc version, toolproc_build_info)", module)
	}
}

// stringVars are the package-level variables of the package in dir that -X can set:
// declared with type string or a string literal.
func stringVars(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				isString := false
				if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "string" {
					isString = true
				}
				for i, n := range vs.Names {
					if vs.Type == nil && i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							out[n.Name] = true
						}
					}
					if isString {
						out[n.Name] = true
					}
				}
			}
		}
	}
	return out
}

// TestGoreleaserImage: the image is built for linux/amd64 and arm64 from envoy/Dockerfile's
// prebuilt stage (the release's own binaries), under the name the Helm chart pulls.
func TestGoreleaserImage(t *testing.T) {
	c := loadGoreleaser(t)
	if len(c.DockersV2) != 1 {
		t.Fatalf("%d images, want 1", len(c.DockersV2))
	}
	d := c.DockersV2[0]
	df, err := os.ReadFile(d.Dockerfile)
	if err != nil {
		t.Fatalf("dockerfile: %v", err)
	}
	slices.Sort(d.Platforms)
	if !slices.Equal(d.Platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v", d.Platforms)
	}
	for _, p := range d.Platforms {
		goos, arch, _ := strings.Cut(p, "/")
		if !slices.Contains(c.Builds[0].Goos, goos) || !slices.Contains(c.Builds[0].Goarch, arch) {
			t.Errorf("image platform %s has no binary", p)
		}
	}
	// GoReleaser puts each platform's binary at <os>/<arch>/<binary> in the build context.
	stage := d.BuildArgs["BINARY"]
	if stage == "" || !regexp.MustCompile(`(?m)^FROM\s+\S+\s+AS\s+`+regexp.QuoteMeta(stage)+`\s*$`).Match(df) {
		t.Errorf("build arg BINARY=%q names no stage of %s", stage, d.Dockerfile)
	}
	if !regexp.MustCompile(`(?m)^COPY\s+\$\{?TARGETPLATFORM\}?/` + c.Builds[0].Binary + `\s`).Match(df) {
		t.Errorf("%s does not copy $TARGETPLATFORM/%s from GoReleaser's context", d.Dockerfile, c.Builds[0].Binary)
	}
	if !d.SBOM {
		t.Error("the image has no SBOM attestation")
	}
	values, err := os.ReadFile("deploy/helm/toolproc/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Image struct {
			Repository string `json:"repository"`
		} `json:"image"`
	}
	if err := yaml.Unmarshal(values, &v); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(d.Images, v.Image.Repository) {
		t.Errorf("images %v do not include the chart's image.repository %s", d.Images, v.Image.Repository)
	}
	if !slices.Contains(d.Tags, "{{ .Version }}") {
		t.Errorf("tags %v: the chart pulls the image tagged with its appVersion, which the release sets to the version", d.Tags)
	}
}

// workflow is the part of a GitHub Actions workflow these checks read.
type workflow struct {
	On   map[string]any `json:"on"`
	Jobs map[string]struct {
		Steps []struct {
			Uses string         `json:"uses"`
			Run  string         `json:"run"`
			With map[string]any `json:"with"`
		} `json:"steps"`
	} `json:"jobs"`
}

func loadWorkflow(t *testing.T, name string) (workflow, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(".github/workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	// YAML 1.1 (this parser) reads the key `on` as the boolean true; GitHub reads a string.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if _, ok := raw["on"]; !ok {
		raw["on"] = raw["true"]
	}
	js, _ = json.Marshal(raw)
	var w workflow
	if err := json.Unmarshal(js, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var runs []string
	for _, j := range w.Jobs {
		for _, s := range j.Steps {
			runs = append(runs, s.Run)
		}
	}
	return w, strings.Join(runs, "\n")
}

// TestWorkflows: what each workflow runs, and every action pinned by a full commit SHA.
func TestWorkflows(t *testing.T) {
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	files, err := filepath.Glob(".github/workflows/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Errorf("workflows %v, want ci, release, envoy-e2e and fuzz", files)
	}
	for _, f := range files {
		w, _ := loadWorkflow(t, filepath.Base(f))
		for name, j := range w.Jobs {
			for _, s := range j.Steps {
				if s.Uses != "" && !pinned.MatchString(s.Uses) {
					t.Errorf("%s job %s: %s is not pinned by commit SHA", f, name, s.Uses)
				}
			}
		}
	}

	if _, runs := loadWorkflow(t, "ci.yaml"); !strings.Contains(runs, "bash .ci/run") {
		t.Error("ci.yaml does not run bash .ci/run")
	}

	rel, runs := loadWorkflow(t, "release.yaml")
	push, _ := rel.On["push"].(map[string]any)
	if tags, _ := push["tags"].([]any); len(tags) != 1 || tags[0] != "v*" {
		t.Errorf("release.yaml runs on %v, want tags v*", rel.On)
	}
	goreleaser := false
	for _, j := range rel.Jobs {
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "goreleaser/goreleaser-action@") && strings.Contains(fmt.Sprint(s.With["args"]), "release") {
				goreleaser = true
			}
		}
	}
	if !goreleaser {
		t.Error("release.yaml does not run goreleaser release")
	}
	if _, err := os.Stat("deploy/helm/toolproc/Chart.yaml"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"helm package deploy/helm/toolproc", "helm push", "oci://ghcr.io/"} {
		if !strings.Contains(runs, want) {
			t.Errorf("release.yaml does not run %q", want)
		}
	}

	_, runs = loadWorkflow(t, "envoy-e2e.yaml")
	for _, want := range []string{"docker compose -f envoy/e2e/docker-compose.yaml up", "--wait", "make e2e-external PROXY="} {
		if !strings.Contains(runs, want) {
			t.Errorf("envoy-e2e.yaml does not run %q", want)
		}
	}
	if _, err := os.Stat("envoy/e2e/docker-compose.yaml"); err != nil {
		t.Fatal(err)
	}

	fz, runs := loadWorkflow(t, "fuzz.yaml")
	if _, ok := fz.On["schedule"]; !ok {
		t.Errorf("fuzz.yaml runs on %v, want a schedule", fz.On)
	}
	for _, want := range []string{"make -s fuzz-targets", "make fuzz-one", "FUZZTIME=10m"} {
		if !strings.Contains(runs, want) {
			t.Errorf("fuzz.yaml does not run %q", want)
		}
	}
}
