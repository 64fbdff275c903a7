package build

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestCollectWorktrees: with real gcc builds of four commits of a real
// repository, a size budget keeps the most recently used worktrees (a
// cached build counts as a use), an age budget removes the rest, a
// worktree a build holds is left, git forgets the removed ones, and every
// cached artifact and build record stays: a later build of a removed
// commit builds nothing and hands back a worktree with its artifact.
func TestCollectWorktrees(t *testing.T) {
	testutil.NeedTool(t, "gcc")
	ctx := context.Background()
	g := testutil.NewGitRepo(t)
	pad := strings.Repeat("x", 256<<10) // each worktree holds 256 KiB of source
	var hashes []string
	for i := range 4 {
		hashes = append(hashes, g.Commit(fmt.Sprintf("c%d", i), map[string]string{
			"main.c": fmt.Sprintf("int main(void){return %d;}\n", i), "pad.txt": pad}))
	}
	dir := filepath.Join(filepath.Dir(g.Dir), ".perfbot")
	repo, err := gitrev.Open(ctx, g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	builder := &Builder{Repo: repo, Store: st, Dir: dir}
	j := testJob("gcc -O2 -o prog main.c", "prog")
	commits := make([]gitrev.Commit, 4)
	wts := make([]string, 4)
	for i, h := range hashes {
		if commits[i], err = repo.Resolve(ctx, h); err != nil {
			t.Fatal(err)
		}
		r, err := builder.Build(ctx, j, commits[i], job.Variant{})
		if err != nil || r.Cached {
			t.Fatalf("build %d: cached %v, %v", i, r != nil && r.Cached, err)
		}
		wts[i] = r.Worktree
		// Used an hour apart, c0 first.
		at := time.Now().Add(time.Duration(i-5) * time.Hour)
		if err := os.Chtimes(usePath(r.Worktree), at, at); err != nil {
			t.Fatal(err)
		}
	}
	// A cached build of c1 is its newest use: LRU order is now c0, c2, c3, c1.
	if r, err := builder.Build(ctx, j, commits[1], job.Variant{}); err != nil || !r.Cached {
		t.Fatalf("cached build of c1: %v", err)
	}
	one := diskUse(wts[0])
	if one < 256<<10 {
		t.Fatalf("a worktree uses %d bytes, want at least the 256 KiB of its source", one)
	}
	got, err := CollectWorktrees(ctx, dir, Budget{MaxBytes: one * 5 / 2}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", got)
	if got.Removed != 2 || got.Kept != 2 || got.KeptUse > one*5/2 {
		t.Fatalf("size budget of 2.5 worktrees: %s; want 2 removed, 2 kept within it", got)
	}
	for i, wantKept := range []bool{false, true, false, true} {
		_, err := os.Stat(wts[i])
		if kept := err == nil; kept != wantKept {
			t.Errorf("c%d worktree kept = %v, want %v (least recently used go first)", i, kept, wantKept)
		}
	}
	if list := g.Git("worktree", "list"); strings.Contains(list, filepath.Base(wts[0])) || strings.Contains(list, filepath.Base(wts[2])) {
		t.Errorf("git still lists a removed worktree:\n%s", list)
	}

	// An age budget: c3 is held by a build (its in-use lock), c1 is not.
	release := use(wts[3])
	got, err = CollectWorktrees(ctx, dir, Budget{MaxAge: time.Nanosecond}, time.Now().Add(time.Second))
	release()
	if err != nil {
		t.Fatal(err)
	}
	if got.Removed != 1 || got.Busy != 1 {
		t.Errorf("age budget with c3 in use: %s; want c1 removed and c3 left", got)
	}
	if _, err := os.Stat(wts[3]); err != nil {
		t.Errorf("the worktree in use was removed: %v", err)
	}

	// Everything stored stays: each commit is a cached build whose worktree
	// comes back with its artifact, built by nobody.
	for i, c := range commits {
		r, err := builder.Build(ctx, j, c, job.Variant{})
		if err != nil || !r.Cached {
			t.Fatalf("build of c%d after collecting: cached %v, %v", i, r != nil && r.Cached, err)
		}
		got, err1 := os.ReadFile(filepath.Join(r.Worktree, "prog"))
		want, err2 := os.ReadFile(filepath.Join(r.Record.ArtifactDir, "prog"))
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("c%d: worktree binary %v, cached artifact %v: not the cached build", i, err1, err2)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 20 << 30: "20.0 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
