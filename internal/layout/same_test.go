package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// TestSameLayout: gcc -g does not move a symbol (the check triage makes
// before it trusts a -g build's DWARF for a source patch); a removed
// global is named.
func TestSameLayout(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	src, out := t.TempDir(), t.TempDir()
	build := func(name string, data string, flags ...string) *Binary {
		for n, c := range map[string]string{"main.c": srcMain, "other.c": srcOther, "data.c": data} {
			if err := os.WriteFile(filepath.Join(src, n), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(out, name)
		runCmd(t, src, "gcc", append(flags, "-O2", "-o", p, "main.c", "data.c", "other.c")...)
		return mustOpen(t, p)
	}
	root := "mds_user_clear"
	plain := build("plain", version(bssData, false, root))
	debug := build("debug", version(bssData, false, root), "-g")
	if err := SameLayout(plain, debug); err != nil {
		t.Errorf("plain and -g builds: %v", err)
	}
	removed := build("removed", version(bssData, true, root))
	err := SameLayout(plain, removed)
	if err == nil || !strings.Contains(err.Error(), root+" only in the first") {
		t.Errorf("a removed global: %v; want an error naming %s", err, root)
	}
	t.Log(err)
}
