package build

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
)

// TestEnvChangeRebuildsCachedFailure: the build runs with the process
// environment (CC, CFLAGS, PATH...), so a build that failed under a bad
// CFLAGS is built again once the user fixes CFLAGS, not answered with the
// cached failure. (A review found that Key did not hash the inherited
// environment, so the failure was returned until .perfbot was deleted.)
func TestEnvChangeRebuildsCachedFailure(t *testing.T) {
	b, c := setup(t, map[string]string{"main.c": "int main(void){return 0;}\n"})
	ctx := context.Background()
	j := testJob("gcc -O2 $CFLAGS -o prog main.c", "prog")

	t.Setenv("CFLAGS", "-fno-such-flag-review")
	if _, err := b.builder.Build(ctx, j, c, job.Variant{}); err == nil {
		t.Fatal("build with a bad CFLAGS succeeded")
	}
	t.Setenv("CFLAGS", "")
	if _, err := b.builder.Build(ctx, j, c, job.Variant{}); err != nil {
		t.Errorf("after fixing CFLAGS the build still fails from the cache:\n%v", err)
	}
}

// TestCachedBuildRestoresDirtiedWorktree: runs happen in the build's
// worktree, which is kept; a cached build hands back that worktree with
// its artifacts equal to the cached ones and without what an earlier run
// wrote there (a changed binary, a data file, a cache). (A review found
// that Build handed back the dirty worktree as it was.)
func TestCachedBuildRestoresDirtiedWorktree(t *testing.T) {
	b, c := setup(t, map[string]string{"main.c": "int main(void){return 0;}\n"})
	ctx := context.Background()
	j := testJob("gcc -O2 -o prog main.c", "prog")
	r1, err := b.builder.Build(ctx, j, c, job.Variant{})
	if err != nil {
		t.Fatal(err)
	}
	// A "benchmark" that rewrites its own binary, as e.g. `make bench &&
	// ./bench` or a self-updating tool would, and leaves state behind.
	cmd := exec.Command("sh", "-c", "echo garbage > prog; echo 1 >> state.db")
	cmd.Dir = r1.Worktree
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r2, err := b.builder.Build(ctx, j, c, job.Variant{})
	if err != nil || !r2.Cached {
		t.Fatalf("second build: err=%v", err)
	}
	got, _ := os.ReadFile(filepath.Join(r2.Worktree, "prog"))
	want, _ := os.ReadFile(filepath.Join(r2.Record.ArtifactDir, "prog"))
	if !bytes.Equal(got, want) {
		t.Errorf("cached build's worktree binary (%d bytes) differs from the cached artifact (%d bytes): runs measure a different binary than the one layout diff/triage inspect", len(got), len(want))
	}
	if _, err := os.Stat(filepath.Join(r2.Worktree, "state.db")); err == nil {
		t.Errorf("state written by an earlier run (state.db) is still in the worktree the next runs use")
	}
}
