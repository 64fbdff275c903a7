package build

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// usePath is the in-use file of the worktree at wt: a build or restore
// holds a shared lock on it while it works in the worktree and touches
// it (its mtime is the worktree's last use, which CollectWorktrees
// orders by); CollectWorktrees takes it exclusively before it removes
// the worktree.
func usePath(wt string) string { return wt + ".use" }

// use marks the worktree at wt in use until release is called (a
// worktree whose in-use file cannot be made is used unmarked: a
// collection cannot open the file either and stops with its error).
func use(wt string) (release func()) {
	path := usePath(wt)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return func() {}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return func() {}
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		f.Close()
		return func() {}
	}
	now := time.Now()
	_ = os.Chtimes(path, now, now)
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}
}
