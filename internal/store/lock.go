package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrBusy is wrapped by Lock when another process holds the folder's lock.
var ErrBusy = errors.New("results store is busy")

// Lock takes the store folder's measuring lock (an exclusive flock on
// Dir()/measure.lock), for a process that builds in its worktrees or takes
// runs: two perfbots measuring in one folder would remove each other's
// worktrees, take the same runs and pin to the same CPU. For a PostgreSQL
// store it guards the folder of [Options].Dir, not the database: machines
// with folders of their own measure into one database at once. It does
// not wait:
// when another process holds the lock, the error names its pid. The lock
// goes with the process, so a killed perfbot never leaves it held.
func (s *Store) Lock() (release func(), err error) {
	path := filepath.Join(s.dir, "measure.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			holder := strings.TrimSpace(string(data))
			if _, convErr := strconv.Atoi(holder); convErr != nil {
				holder = "?"
			}
			return nil, fmt.Errorf("%w: perfbot (pid %s) is measuring in %s; wait for it, or use another --store", ErrBusy, holder, s.dir)
		}
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		_ = f.Truncate(0)
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
