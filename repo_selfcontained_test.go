package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A clone of this repository must stand alone: nothing in it may point at
// documents that exist only on the developers' machines. Envoy behaviour
// is cited from docs/envoy-notes.md, which cites Envoy's public source.
func TestRepositoryStandsAlone(t *testing.T) {
	// The team's working documents: cite the public source instead.
	banned := []string{"envoy-extproc" + ".md", "/work/" + "shared", "wire-formats" + ".md", "peers" + ".md",
		"seed-requirements" + ".md", "compression-quality" + ".md", "review-findings" + ".md"}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 4<<20 {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range banned {
			if strings.Contains(string(b), s) {
				t.Errorf("%s refers to %q, which is not in the repository", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
