package extproc

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// version is the release version, set at link time:
//
//	go build -ldflags "-X github.com/toolproc/toolproc/extproc.version=v0.1.0"
//
// (the Makefile passes `git describe`). Unset, the module version from the
// build info is used (what `go install ...@v0.1.0` records), else "dev".
var version string

// revision is the commit, set at link time like version for builds without
// VCS stamping (-buildvcs=false, a Docker context without .git); the build
// info's vcs.revision wins when present.
var revision string

// BuildInfo says what a binary is: the answer to "what does this pod run".
type BuildInfo struct {
	Version   string // v0.1.0, v0.1.0-3-gabc1234, or dev
	Revision  string // the VCS commit, "unknown" when not built from a checkout
	Modified  bool   // the checkout had uncommitted changes
	GoVersion string // the Go toolchain that built it
}

// Build reads the version from the linker flag and the rest from the Go
// build info (runtime/debug), which `go build` fills from the checkout.
func Build() BuildInfo {
	b := BuildInfo{Version: version, Revision: revision, GoVersion: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
		if info.GoVersion != "" {
			b.GoVersion = info.GoVersion
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Revision == "" {
		b.Revision = "unknown"
	}
	return b
}

// ShortRevision is the first 12 hex digits of the commit, with "-dirty"
// when the checkout was modified.
func (b BuildInfo) ShortRevision() string {
	r := b.Revision
	if len(r) > 12 && !strings.Contains(r, " ") {
		r = r[:12]
	}
	if b.Modified {
		r += "-dirty"
	}
	return r
}

// String is the one line `toolproc version` prints.
func (b BuildInfo) String() string {
	return "toolproc " + b.Version + " (commit " + b.ShortRevision() + ", " + b.GoVersion + ")"
}
