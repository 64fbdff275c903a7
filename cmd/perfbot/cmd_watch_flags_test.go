package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// TestWatchFlags: watch's --cpu and --since reach the watcher: a bad
// --cpu is refused before any cycle, and --since backfills from the
// revision it names (one that does not exist is an error naming it, exit
// 2), the watch file's start: overridden.
func TestWatchFlags(t *testing.T) {
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	r.Commit("docs", map[string]string{"README": "bench\n"})
	dir := filepath.Dir(r.Dir)
	if err := os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(jobYAML(r.Dir, 3, "./bench 100000")), 0o644); err != nil {
		t.Fatal(err)
	}
	watchFile := filepath.Join(dir, "watch.yaml")
	if err := os.WriteFile(watchFile, []byte("jobs: [bench.yaml]\nbranches: [main]\nstart: no-such-tag\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := perfbot(t, "watch", watchFile, "--once", "--cpu", "fast"); code != 2 || !strings.Contains(errOut, `--cpu "fast": want auto, none or a CPU number`) {
		t.Errorf("--cpu fast: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := perfbot(t, "watch", watchFile, "--once", "--cpu", "none"); code != 2 || !strings.Contains(errOut, `start "no-such-tag"`) {
		t.Errorf("start: no-such-tag: exit %d\n%s", code, errOut)
	}
	code, _, errOut := perfbot(t, "watch", watchFile, "--once", "--cpu", "none", "--since", base[:9])
	if code != 0 || !strings.Contains(errOut, "backfill from "+base[:12]) || !strings.Contains(errOut, "testing 2 new commits") {
		t.Errorf("--since %s: exit %d\n%s", base[:9], code, errOut)
	}
}
