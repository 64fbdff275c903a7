package measure

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLockWait: under WithLockWait, LockMachine gives up once the wait is
// over while another holds the lock, naming the holder; a holder that
// lets go within the wait hands the lock over as without a limit.
func TestLockWait(t *testing.T) {
	path := t.TempDir() + "/machine.lock"
	t.Setenv(MachineLockEnv, path)
	// The other holder: its own open file description and flock, as
	// another perfbot has, with its description in the file.
	other, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	const holder = "perfbot pid 4242 in /srv/bench"
	if _, err := other.WriteString(holder + "\n"); err != nil {
		t.Fatal(err)
	}

	const wait = 300 * time.Millisecond
	told := ""
	t0 := time.Now()
	release, err := LockMachine(WithLockWait(context.Background(), wait), func(h string) { told = h })
	took := time.Since(t0)
	if err == nil {
		release()
		t.Fatal("LockMachine took a lock another holds")
	}
	if !errors.Is(err, ErrMachineBusy) || !strings.Contains(err.Error(), holder) || !strings.Contains(err.Error(), "300ms") {
		t.Errorf("error = %v; want ErrMachineBusy naming %q and the wait", err, holder)
	}
	if !strings.Contains(told, holder) {
		t.Errorf("wait was told %q; want the holder %q", told, holder)
	}
	if took < wait || took > wait+5*time.Second {
		t.Errorf("gave up after %s; want about %s", took, wait)
	}

	// Released within the wait: the lock is taken.
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = unix.Flock(int(other.Fd()), unix.LOCK_UN)
	}()
	release, err = LockMachine(WithLockWait(context.Background(), time.Minute), nil)
	if err != nil {
		t.Fatalf("holder released within the wait: %v", err)
	}
	release()

	// Zero is no limit.
	if d := lockWait(WithLockWait(context.Background(), 0)); d != 0 {
		t.Errorf("WithLockWait(0) = a limit of %s", d)
	}
}
