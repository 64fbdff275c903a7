package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// MachineLockEnv names the environment variable that overrides the path of
// the machine's measuring lock (default [DefaultMachineLock]).
const MachineLockEnv = "PERFBOT_MACHINE_LOCK"

// DefaultMachineLock is the machine's measuring lock: one file for every
// perfbot of every user and every store on the machine.
const DefaultMachineLock = "/tmp/perfbot-measure.lock"

// MachineLockPath is the lock file in use: $PERFBOT_MACHINE_LOCK, else
// [DefaultMachineLock].
func MachineLockPath() string {
	if p := os.Getenv(MachineLockEnv); p != "" {
		return p
	}
	return DefaultMachineLock
}

// LockMachine takes the machine's measuring lock (an exclusive flock), so
// that two perfbots never build or run at once on one machine, whatever
// store each uses: a second benchmark or a compiler beside a run is the
// noise perfbot exists to avoid. It waits while another process holds the
// lock, calling wait once with the holder's description, until ctx ends.
// The lock goes with the process: a killed perfbot never leaves it held.
func LockMachine(ctx context.Context, wait func(holder string)) (release func(), err error) {
	path := MachineLockPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("machine lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("machine lock %s: %w (set %s to a writable path)", path, err, MachineLockEnv)
	}
	// Every user's perfbot must be able to open it: undo the umask.
	_ = f.Chmod(0o666)
	told := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("machine lock %s: %w", path, err)
		}
		if !told && wait != nil {
			data, _ := os.ReadFile(path)
			holder := strings.TrimSpace(string(data))
			if holder == "" {
				holder = "another perfbot"
			}
			wait(fmt.Sprintf("%s (lock %s)", holder, path))
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the machine lock %s: %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	dir, _ := os.Getwd()
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte("perfbot pid "+strconv.Itoa(os.Getpid())+" in "+dir+"\n"), 0)
	return func() {
		_ = f.Truncate(0)
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
