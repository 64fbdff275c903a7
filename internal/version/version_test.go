package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-12-02T10:11:12Z"}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "b09d9139552737a27d24cec86d863b050996c6de"
	for _, tt := range []struct {
		name    string
		main    string
		set     []debug.BuildSetting
		want    string
		revLine string
	}{
		{"release", "v1.2.0", vcs(rev, "false"), "v1.2.0 b09d91395527", "revision: " + rev},
		{"go build", "v0.0.0-20261202101112-b09d91395527", vcs(rev, "false"), "devel b09d91395527", "revision: " + rev},
		{"go build dirty", "v0.0.0-20261202101112-b09d91395527+dirty", vcs(rev, "true"), "devel b09d91395527+modified", "modified: true"},
		{"after a tag", "v1.2.1-0.20261202101112-b09d91395527", vcs(rev, "false"), "devel b09d91395527", "revision: " + rev},
		{"go run", "(devel)", nil, "devel", "revision: none stamped"},
		{"go test", "", nil, "devel", "revision: none stamped"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			info := parse(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/perfbot/perfbot", Version: tt.main}, Settings: tt.set})
			if got := info.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if long := info.Long(); !strings.Contains(long, tt.revLine) || !strings.Contains(long, "go: go1.26.8") {
				t.Errorf("Long() = %q, want a line %q", long, tt.revLine)
			}
		})
	}
}

// TestGet: a test binary is built without a VCS stamp.
func TestGet(t *testing.T) {
	if got := Get(); got.Module != Devel || got.Revision != "" {
		t.Errorf("Get() in a test binary = %+v, want devel without a revision", got)
	}
}
