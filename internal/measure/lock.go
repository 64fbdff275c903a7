package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// held is this process's hold of the machine lock: the lock is taken once
// per process and counted, so that a measurement inside a session that
// holds it (or a triage inside a bisection) does not wait for itself.
var held struct {
	sync.Mutex
	f     *os.File
	count int
}

// ErrMachineBusy is wrapped by LockMachine's error when it gave up waiting
// for another process's hold of the machine lock (see [WithLockWait]).
var ErrMachineBusy = errors.New("another perfbot is measuring on this machine")

type lockWaitKey struct{}

// WithLockWait returns ctx under which LockMachine gives up after waiting
// d for another process to release the machine lock (perfbot --wait). A
// d of zero or less waits as long as ctx lasts, as without it. The limit
// travels in the context because every pipeline takes the lock deep
// inside (a session's open, a measurement, a watch cycle, a fleet
// worker's round) and passes its context there, not its options.
func WithLockWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, lockWaitKey{}, d)
}

// lockWait is the limit of WithLockWait in ctx; 0 for none.
func lockWait(ctx context.Context) time.Duration {
	d, _ := ctx.Value(lockWaitKey{}).(time.Duration)
	return max(d, 0)
}

// LockMachine takes the machine's measuring lock (an exclusive flock), so
// that two perfbots never calibrate, build or run at once on one machine,
// whatever store each uses: a second benchmark or a compiler beside a run
// is the noise perfbot exists to avoid. It waits while another process
// holds the lock, calling wait once with the holder's description, until
// ctx ends or, under [WithLockWait], the wait is over: then the error
// wraps ErrMachineBusy and names the holder. Within one process it is
// re-entrant: every release undoes one LockMachine. The lock goes with
// the process: a killed perfbot never leaves it held.
func LockMachine(ctx context.Context, wait func(holder string)) (release func(), err error) {
	held.Lock()
	defer held.Unlock()
	if held.count == 0 {
		f, err := lockFile(ctx, wait)
		if err != nil {
			return nil, err
		}
		held.f = f
	}
	held.count++
	var once sync.Once
	return func() {
		once.Do(func() {
			held.Lock()
			defer held.Unlock()
			if held.count--; held.count == 0 {
				_ = held.f.Truncate(0)
				_ = unix.Flock(int(held.f.Fd()), unix.LOCK_UN)
				held.f.Close()
				held.f = nil
			}
		})
	}, nil
}

// openLock opens the lock file, creating it for every user when missing.
// An existing file is opened without O_CREAT: in a sticky /tmp with
// fs.protected_regular, O_CREAT on another user's file fails.
func openLock(path string) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if !errors.Is(err, os.ErrNotExist) {
			return f, err
		}
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) {
			continue // another perfbot created it just now
		}
		if err == nil {
			_ = f.Chmod(0o666) // every user's perfbot must open it: undo the umask
		}
		return f, err
	}
}

// lockFile takes the flock of the machine's lock file, waiting for it.
func lockFile(ctx context.Context, wait func(holder string)) (*os.File, error) {
	path := MachineLockPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("machine lock %s: %w", path, err)
	}
	f, err := openLock(path)
	if err != nil {
		return nil, fmt.Errorf("machine lock %s: %w (set %s to a path every user of this machine can write)", path, err, MachineLockEnv)
	}
	told := false
	var giveUp <-chan time.Time
	if d := lockWait(ctx); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		giveUp = t.C
	}
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
			wait(fmt.Sprintf("%s (lock %s)", holderOf(path), path))
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the machine lock %s: %w", path, ctx.Err())
		case <-giveUp:
			f.Close()
			return nil, fmt.Errorf("%w: gave up after waiting %s for %s to release the machine lock %s",
				ErrMachineBusy, lockWait(ctx), holderOf(path), path)
		case <-time.After(200 * time.Millisecond):
		}
	}
	dir, _ := os.Getwd()
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte("perfbot pid "+strconv.Itoa(os.Getpid())+" in "+dir+"\n"), 0)
	return f, nil
}

// MachineHolder says which perfbot measures on this machine now: the
// holder's description ("perfbot pid 1234 in /srv/bench") and true, or
// false when the machine's lock is free. It only looks (a shared flock
// taken without waiting and dropped at once), for a dashboard.
func MachineHolder() (string, bool) {
	path := MachineLockPath()
	f, err := os.Open(path)
	if err != nil {
		return "", false // never taken
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return "", false
	}
	return holderOf(path), true
}

// holderOf is the description the holder of the lock at path wrote in it
// ("perfbot pid 1234 in /srv/bench"), or "another perfbot".
func holderOf(path string) string {
	data, _ := os.ReadFile(path)
	if holder := strings.TrimSpace(string(data)); holder != "" {
		return holder
	}
	return "another perfbot"
}
