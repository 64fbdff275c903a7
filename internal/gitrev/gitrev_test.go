package gitrev

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/testutil"
)

// history makes a repo with commits c0..c3 on main and a merge of a side
// branch as c4; it returns the repo and the hashes of main's first parents.
func history(t *testing.T) (*Repo, []string) {
	g := testutil.NewGitRepo(t)
	var hashes []string
	for _, m := range []string{"c0", "c1", "c2", "c3"} {
		hashes = append(hashes, g.Commit(m, map[string]string{"f": m}))
	}
	g.Git("checkout", "-qb", "side", "HEAD~1")
	g.Commit("side work", map[string]string{"g": "side"})
	g.Git("checkout", "-q", "main")
	g.Git("merge", "-q", "--no-ff", "-m", "merge side", "side")
	r, err := Open(context.Background(), g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, append(hashes, g.Git("rev-parse", "HEAD"))
}

func TestResolveAndPath(t *testing.T) {
	ctx := context.Background()
	r, h := history(t)
	c, err := r.Resolve(ctx, "main~1")
	if err != nil || c.Hash != h[3] || c.Subject != "c3" {
		t.Fatalf("Resolve(main~1) = %+v, %v; want c3 %s", c, err, h[3])
	}
	for _, bad := range []string{"nope", "", "--all", h[0][:7] + "zz"} {
		if _, err := r.Resolve(ctx, bad); !errors.Is(err, ErrUnknownRevision) {
			t.Errorf("Resolve(%q): %v, want ErrUnknownRevision", bad, err)
		}
	}
	path, err := r.FirstParentPath(ctx, h[0], h[4])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range path {
		got = append(got, c.Subject)
	}
	// The side branch's commit is not on the first-parent path.
	if want := []string{"c1", "c2", "c3", "merge side"}; len(got) != len(want) || got[0] != want[0] || got[3] != want[3] {
		t.Errorf("first-parent path %v, want %v", got, want)
	}
	if _, err := r.FirstParentPath(ctx, h[3], h[1]); err == nil {
		t.Errorf("swapped good and bad: no error")
	}
	p, err := r.Parent(ctx, h[2])
	if err != nil || p.Hash != h[1] {
		t.Errorf("Parent = %v, %v", p, err)
	}
}

// TestMergeGraph: the parents of a merge, its merge base, and the merged
// side's own first-parent path from that base.
func TestMergeGraph(t *testing.T) {
	ctx := context.Background()
	r, h := history(t)
	ps, err := r.Parents(ctx, h[4])
	if err != nil || len(ps) != 2 || ps[0].Hash != h[3] || ps[1].Subject != "side work" {
		t.Fatalf("Parents(merge) = %+v, %v; want c3 and side work", ps, err)
	}
	if ps, err := r.Parents(ctx, h[1]); err != nil || len(ps) != 1 || ps[0].Hash != h[0] || ps[0].Subject != "c0" {
		t.Errorf("Parents(c1) = %+v, %v", ps, err)
	}
	if ps, err := r.Parents(ctx, h[0]); err != nil || len(ps) != 0 {
		t.Errorf("Parents(root) = %+v, %v", ps, err)
	}
	if _, err := r.Parents(ctx, "nope"); err == nil {
		t.Error("Parents of an unknown revision: no error")
	}
	base, err := r.MergeBase(ctx, ps[0].Hash, ps[1].Hash)
	if err != nil || base.Hash != h[2] || base.Subject != "c2" {
		t.Fatalf("MergeBase = %+v, %v; want c2 (the side branch forked at main~1 before the merge)", base, err)
	}
	side, err := r.FirstParentPath(ctx, base.Hash, ps[1].Hash)
	if err != nil || len(side) != 1 || side[0].Subject != "side work" {
		t.Errorf("side path = %+v, %v", side, err)
	}
	g := testutil.NewGitRepo(t)
	a := g.Commit("a", map[string]string{"f": "a"})
	g.Git("checkout", "-q", "--orphan", "other")
	b := g.Commit("b", map[string]string{"f": "b"})
	r2, _ := Open(ctx, g.Dir)
	if _, err := r2.MergeBase(ctx, a, b); err == nil {
		t.Error("MergeBase of unrelated histories: no error")
	}
}

func TestWorktree(t *testing.T) {
	ctx := context.Background()
	r, h := history(t)
	wt := filepath.Join(t.TempDir(), "wt", "x")
	if err := r.AddWorktree(ctx, wt, h[1]); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(wt, "f")); string(data) != "c1" {
		t.Errorf("worktree holds %q, want c1", data)
	}
	// A worktree whose folder vanished (a killed perfbot) does not block a new one.
	os.RemoveAll(wt)
	if err := r.AddWorktree(ctx, wt, h[2]); err != nil {
		t.Fatalf("re-adding a vanished worktree: %v", err)
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("worktree still there: %v", err)
	}
	if _, err := Open(ctx, t.TempDir()); err == nil {
		t.Errorf("Open of a non-repository: no error")
	}
}

// TestEnvIgnoresHookVariables: a GIT_DIR in perfbot's environment (a git
// hook's) does not redirect perfbot's git commands to that repository.
func TestEnvIgnoresHookVariables(t *testing.T) {
	mine, other := testutil.NewGitRepo(t), testutil.NewGitRepo(t)
	want := mine.Commit("mine", map[string]string{"a.txt": "mine\n"})
	other.Commit("other", map[string]string{"b.txt": "other\n"})
	t.Setenv("GIT_DIR", filepath.Join(other.Dir, ".git"))
	t.Setenv("GIT_WORK_TREE", other.Dir)
	ctx := context.Background()
	r, err := Open(ctx, mine.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Resolve(ctx, "HEAD")
	if err != nil || c.Hash != want {
		t.Fatalf("HEAD with a hook's GIT_DIR set = %s, %v; want this repository's %s", c.Hash, err, want)
	}
}
