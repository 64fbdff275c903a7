package build

import (
	"context"
	"os"
	"path/filepath"
)

// RemoveWorktrees removes every build worktree of the builder's folder
// (Dir/worktrees), which for a kernel-sized repository are big, and keeps
// the cached artifacts (Dir/builds) and everything stored: the next build
// of a commit recreates its worktree from the cache without building. It
// returns how many it removed and from where.
func (b *Builder) RemoveWorktrees(ctx context.Context) (int, string, error) {
	dir := filepath.Join(b.Dir, "worktrees")
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return 0, dir, err
	}
	removed := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if err := b.Repo.RemoveWorktree(ctx, filepath.Join(dir, e.Name())); err != nil {
			return removed, dir, err
		}
		removed++
	}
	return removed, dir, nil
}
