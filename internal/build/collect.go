package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/internal/gitrev"
)

// Budget bounds the build worktrees of a store folder (Dir/worktrees):
// their disk use and the time since each was last used. Zero means no
// bound of that kind.
type Budget struct {
	MaxBytes int64
	MaxAge   time.Duration
}

// Off reports whether the budget bounds nothing.
func (b Budget) Off() bool { return b.MaxBytes <= 0 && b.MaxAge <= 0 }

func (b Budget) String() string {
	size, age := "no size bound", "no age bound"
	if b.MaxBytes > 0 {
		size = "max_size " + FormatBytes(b.MaxBytes)
	}
	if b.MaxAge > 0 {
		age = "max_age " + b.MaxAge.String()
	}
	return size + ", " + age
}

// Collected says what CollectWorktrees did.
type Collected struct {
	Dir            string
	Removed, Kept  int
	Freed, KeptUse int64 // bytes on disk
	Busy           int   // over budget but in use by a build: left
}

func (c Collected) String() string {
	s := fmt.Sprintf("removed %d worktrees of %s (%s), kept %d (%s); results and cached artifacts kept",
		c.Removed, c.Dir, FormatBytes(c.Freed), c.Kept, FormatBytes(c.KeptUse))
	if c.Busy > 0 {
		s += fmt.Sprintf("; %d in use by a build left for later", c.Busy)
	}
	return s
}

// CollectWorktrees removes build worktrees of the store folder dir until
// the rest use at most budget.MaxBytes and none was last used longer than
// budget.MaxAge before now, least recently used first. Cached artifacts
// (dir/builds), build logs, run logs and the database are never touched:
// every result stays, and the next build of a removed worktree's commit
// recreates it from the commit and its cached artifacts without building
// (Builder.Build). A worktree a build holds (its in-use lock) is left; a
// caller that also runs benchmarks in the worktrees holds the folder's
// measuring lock (store.Lock) while it collects.
func CollectWorktrees(ctx context.Context, dir string, budget Budget, now time.Time) (Collected, error) {
	got := Collected{Dir: filepath.Join(dir, "worktrees")}
	if budget.Off() {
		return got, nil
	}
	trees, err := listWorktrees(got.Dir)
	if err != nil {
		return got, err
	}
	var total int64
	for _, t := range trees {
		total += t.bytes
	}
	// Oldest use first.
	sort.Slice(trees, func(i, k int) bool { return trees[i].used.Before(trees[k].used) })
	for _, t := range trees {
		if ctx.Err() != nil {
			return got, ctx.Err()
		}
		over := budget.MaxBytes > 0 && total > budget.MaxBytes
		old := budget.MaxAge > 0 && now.Sub(t.used) > budget.MaxAge
		if !over && !old {
			got.Kept++
			got.KeptUse += t.bytes
			continue
		}
		removed, err := removeUnused(ctx, t.path)
		if err != nil {
			return got, err
		}
		if !removed {
			got.Busy++
			got.Kept++
			got.KeptUse += t.bytes
			continue
		}
		got.Removed++
		got.Freed += t.bytes
		total -= t.bytes
	}
	return got, nil
}

type worktree struct {
	path  string
	used  time.Time
	bytes int64
}

// listWorktrees returns the worktrees of dir with their last use (the
// mtime of their in-use file, touched by every build and restore; the
// folder's own for a worktree made before) and their disk use.
func listWorktrees(dir string) ([]worktree, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []worktree
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t := worktree{path: filepath.Join(dir, e.Name())}
		if fi, err := os.Stat(usePath(t.path)); err == nil {
			t.used = fi.ModTime()
		} else if fi, err := e.Info(); err == nil {
			t.used = fi.ModTime()
		}
		t.bytes = diskUse(t.path)
		out = append(out, t)
	}
	return out, nil
}

// diskUse is the space the files under dir take on disk.
func diskUse(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			} else {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// removeUnused removes the worktree at wt unless a build holds it; it
// reports whether it did.
func removeUnused(ctx context.Context, wt string) (bool, error) {
	f, err := os.OpenFile(usePath(wt), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return false, nil
		}
		return false, err
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	if repo := worktreeRepo(ctx, wt); repo != nil {
		if err := repo.RemoveWorktree(ctx, wt); err != nil {
			return false, err
		}
	} else if err := os.RemoveAll(wt); err != nil {
		return false, err
	}
	// The in-use file goes too: a later build makes it again.
	_ = os.Remove(usePath(wt))
	return true, nil
}

// worktreeRepo opens the repository a worktree belongs to (from its .git
// file), so that git forgets the worktree as it is removed; nil when it
// cannot tell.
func worktreeRepo(ctx context.Context, wt string) *gitrev.Repo {
	data, err := os.ReadFile(filepath.Join(wt, ".git"))
	if err != nil {
		return nil
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok {
		return nil
	}
	common := filepath.Dir(filepath.Dir(gitdir)) // <repo>/.git/worktrees/<name> -> <repo>/.git
	if filepath.Base(common) == ".git" {
		common = filepath.Dir(common)
	}
	repo, err := gitrev.Open(ctx, common)
	if err != nil {
		return nil
	}
	return repo
}

// FormatBytes writes a size in binary units (KiB, MiB, GiB).
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
