// Package version says which perfbot this is: the module version and the
// VCS revision the go command stamped into the binary (runtime/debug's
// build info), for perfbot version and for the runs the store records.
package version

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Devel is the module version of a perfbot built from a work tree rather
// than installed at a released version.
const Devel = "devel"

// Info is what the build info says about this binary.
type Info struct {
	// Module is the module version: a release ("v1.2.0"), or Devel for a
	// build of a work tree (go build and go install in a checkout stamp a
	// pseudo-version, whose revision is in Revision).
	Module string
	// Revision is the VCS revision (a git commit hash) the binary was
	// built from; "" when the go command stamped none (go run, go test,
	// -buildvcs=false, a build outside a git checkout or in a linked git
	// worktree).
	Revision string
	// Modified is set when the work tree had uncommitted changes.
	Modified bool
	// Time is the revision's commit time; zero when not stamped.
	Time time.Time
	// Go is the Go version that built the binary.
	Go string
}

// Get returns this binary's build info, read once.
func Get() Info { return get() }

var get = sync.OnceValue(func() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Module: Devel}
	}
	return parse(bi)
})

// parse reads an Info from the go command's build info.
func parse(bi *debug.BuildInfo) Info {
	info := Info{Module: Devel, Go: bi.GoVersion}
	if v := bi.Main.Version; v != "" && v != "(devel)" && !isPseudo(v) {
		info.Module = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		case "vcs.time":
			info.Time, _ = time.Parse(time.RFC3339, s.Value)
		}
	}
	return info
}

// isPseudo reports whether v is a pseudo-version (v0.0.0-20261202101010-
// 0123456789ab, maybe +dirty): what go build stamps for a commit that no
// release tag names, i.e. a development build.
func isPseudo(v string) bool {
	v, _, _ = strings.Cut(v, "+")
	parts := strings.Split(v, "-")
	if len(parts) < 3 {
		return false
	}
	stamp, rev := parts[len(parts)-2], parts[len(parts)-1]
	if i := strings.LastIndexByte(stamp, '.'); i >= 0 {
		stamp = stamp[i+1:] // v1.2.4-0.20261202101010-0123456789ab
	}
	return len(stamp) == 14 && isDigits(stamp) && len(rev) == 12
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// String is the version as runs record it and reports compare it: the
// release ("v1.2.0"), or "devel" with the revision's first 12 digits and
// "+modified" for uncommitted changes ("devel 0123456789ab+modified"), or
// "devel" alone when the build has no revision.
func (i Info) String() string {
	s := i.Module
	if i.Revision != "" {
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += " " + rev
		if i.Modified {
			s += "+modified"
		}
	}
	return s
}

// Long is perfbot version's output: every field on its own line, and a
// line saying so when the build has no revision.
func (i Info) Long() string {
	var b strings.Builder
	fmt.Fprintf(&b, "perfbot %s\n", i.Module)
	if i.Revision == "" {
		b.WriteString("revision: none stamped (go run, go test and go build -buildvcs=false stamp none, nor does a build outside a git checkout or in a linked git worktree)\n")
	} else {
		fmt.Fprintf(&b, "revision: %s\n", i.Revision)
		fmt.Fprintf(&b, "modified: %t\n", i.Modified)
	}
	if !i.Time.IsZero() {
		fmt.Fprintf(&b, "commit time: %s\n", i.Time.UTC().Format(time.RFC3339))
	}
	if i.Go != "" {
		fmt.Fprintf(&b, "go: %s\n", i.Go)
	}
	return b.String()
}
