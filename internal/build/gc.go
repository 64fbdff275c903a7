package build

import (
	"context"
	"os"
	"path/filepath"
)

// RemoveWorktrees removes every build worktree of the builder's folder
// (Dir/worktrees), which for a kernel-sized repository are big, and keeps
// the cached artifacts (Dir/builds) and everything stored: the next build
// of a commit recreates its worktree from the cache without building. A
// worktree a build holds is left. It returns how many it removed and from
// where. CollectWorktrees removes them within a budget instead.
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
		ok, err := removeUnused(ctx, filepath.Join(dir, e.Name()))
		if err != nil {
			return removed, dir, err
		}
		if ok {
			removed++
		}
	}
	return removed, dir, nil
}
