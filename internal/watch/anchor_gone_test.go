package watch

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestAnchorGone: an anchor that left the repository (the branch was
// rewritten and git gc pruned it) is replaced, and the cycles go on,
// instead of every cycle failing to build it.
func TestAnchorGone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C benchmark over two watch cycles")
	}
	bw := newBenchWatch(t, 3, "100000", "", "jobs:\n  - {file: bench.yaml, anchor: true}\nbranches: [main]\n")
	r, dir, cfg, base := bw.repo, bw.dir, bw.cfg, bw.base
	ctx := context.Background()
	w := &Watcher{Config: cfg, CPUMode: "none", Logf: t.Logf}
	if rep, err := w.Cycle(ctx); err != nil || len(rep.Errors) > 0 {
		t.Fatalf("cycle 1: %v %v", err, rep.Errors)
	}
	jobs, err := job.Load(filepath.Join(dir, "bench.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	anchor := func() string {
		t.Helper()
		st, err := store.Open(filepath.Join(dir, ".perfbot"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		a, err := history.Anchor(ctx, st, jobs[0].Key(), "")
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := anchor(); a != base {
		t.Fatalf("anchor %q, want the base %s", a, base[:12])
	}
	// The branch is rewritten from scratch, and the old commits pruned
	// (with the build worktrees that held them, as in a fresh clone).
	for _, wt := range strings.Split(r.Git("worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(wt, "worktree "); ok && p != r.Dir {
			r.Git("worktree", "remove", "--force", p)
		}
	}
	r.Git("checkout", "-q", "--orphan", "rewritten")
	head := r.Commit("rewritten base", map[string]string{"bench.c": testutil.BenchC(1, "rewritten"), "Makefile": testutil.BenchMakefile})
	r.Git("branch", "-q", "-f", "main", head)
	r.Git("checkout", "-q", "main")
	r.Git("branch", "-q", "-D", "rewritten")
	r.Git("reflog", "expire", "--expire=now", "--all")
	r.Git("gc", "-q", "--prune=now")
	if exec.Command("git", "-C", r.Dir, "cat-file", "-e", base).Run() == nil {
		t.Fatal("the base is still in the repository")
	}
	rep, err := w.Cycle(ctx)
	if err != nil || len(rep.Errors) > 0 || len(rep.Tested) != 1 {
		t.Fatalf("cycle 2, after the anchor left the repository: %v %v, tested %d", err, rep.Errors, len(rep.Tested))
	}
	if a := anchor(); a != head {
		t.Errorf("anchor %q after it left the repository, want the new head %s", a, head[:12])
	}
}
