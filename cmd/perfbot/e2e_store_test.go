package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// TestCompareRelativeStore: a relative --store is taken from the current
// directory, not from the repository (issue 12, defect 3: the worktrees
// landed in the user's tree and the build failed).
func TestCompareRelativeStore(t *testing.T) {
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	next := r.Commit("no-op", map[string]string{"README": "x\n"})
	job := writeJob(t, jobYAML(r.Dir, 3, "./bench 1000"))
	cwd := t.TempDir()
	t.Chdir(cwd)
	code, _, errOut := perfbot(t, "compare", "--cpu", "none", "--store", "st", job, base, next)
	if code == exitError {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(cwd, "st", "perfbot.db")); err != nil {
		t.Errorf("the store is not under the current directory: %v", err)
	}
	if st := r.Git("status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Errorf("the repository is dirty after compare: %s", st)
	}
}
