package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// proc is what /proc/PID/stat says about one process.
type proc struct {
	pid, ppid int
	state     byte // R, S, D, Z, T, ...
}

// procs lists every process in /proc. Processes that exit during the scan
// may be missing.
func procs() []proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	list := make([]proc, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			list = append(list, p)
		}
	}
	return list
}

// readProc reads /proc/pid/stat: "pid (comm) state ppid ...".
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return proc{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return proc{}, false
	}
	return proc{pid: pid, ppid: ppid, state: f[0][0]}, true
}

func (p proc) dead() bool { return p.state == 'Z' || p.state == 'X' }

// descendants lists the live processes below root.
func descendants(root int) []int {
	kids := make(map[int][]proc)
	for _, p := range procs() {
		kids[p.ppid] = append(kids[p.ppid], p)
	}
	var live []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			queue = append(queue, k.pid)
			if !k.dead() {
				live = append(live, k.pid)
			}
		}
	}
	return live
}

// killAll kills every descendant of this process with SIGKILL and reaps
// its children until none is left. It is for the supervisor, a child
// subreaper: a descendant whose parent dies becomes its child, so waiting
// until it has no children left means every descendant is gone. The common
// case, nothing left, costs one wait4. It gives up, with an error, only when
// the descendants still alive all refuse SIGKILL (another user's process,
// such as a setuid program's).
func killAll() error {
	self := os.Getpid()
	pause := time.Millisecond
	for {
		for {
			pid, err := unix.Wait4(-1, nil, unix.WNOHANG|unix.WALL, nil)
			if err == unix.EINTR {
				continue
			}
			if err == unix.ECHILD {
				return nil
			}
			if err != nil {
				return fmt.Errorf("reaping leftovers: %w", err)
			}
			if pid <= 0 {
				break
			}
		}
		live := descendants(self)
		var refused []string
		for _, pid := range live {
			if err := unix.Kill(pid, unix.SIGKILL); err == unix.EPERM {
				refused = append(refused, strconv.Itoa(pid))
			}
		}
		if len(live) > 0 && len(refused) == len(live) {
			return fmt.Errorf("processes of the run cannot be killed (pid %s): %w", strings.Join(refused, ", "), unix.EPERM)
		}
		// Killed processes take a moment to die and be reparented.
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// siPid returns the si_pid field of a siginfo_t that waitid filled: it
// follows si_signo, si_errno and si_code, at the alignment of a pointer (the
// alignment of the union it is in).
func siPid(info *unix.Siginfo) int {
	a := unsafe.Alignof(uintptr(0))
	off := (3*unsafe.Sizeof(int32(0)) + a - 1) &^ (a - 1)
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), off)))
}

// reapOrphans reaps the children of the supervisor that have exited, other
// than sh: descendants orphaned during the run and adopted by it. It stops
// at sh's exit, which is left unreaped for the supervisor's main loop.
func reapOrphans(sh int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		pid := siPid(&info)
		if err != nil || pid <= 0 || pid == sh {
			return
		}
		_, _ = unix.Wait4(pid, nil, unix.WNOHANG|unix.WALL, nil)
	}
}

// orphans lists the supervisors of runs whose perfbot is gone (killed) and
// that are still killing what their run left: a supervisor records its
// perfbot's pid as its second argument, and is reparented when perfbot
// dies.
func orphans() []int {
	var found []int
	for _, p := range procs() {
		if p.dead() {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
		if err != nil {
			continue
		}
		rest, ok := bytes.CutPrefix(b, []byte(reaperArg0+"\x00"))
		if !ok {
			continue
		}
		owner, err := strconv.Atoi(string(bytes.TrimSuffix(rest, []byte{0})))
		if err == nil && owner != p.ppid {
			found = append(found, p.pid)
		}
	}
	return found
}

// waitOrphans waits until no supervisor of a killed perfbot is left (see
// orphans), for at most limit.
func waitOrphans(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		left := orphans()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the supervisor of a killed perfbot's run (pid %v) is still killing what the run left after %v; kill its processes by hand", left, limit)
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// orphansChecked is set once this process has seen no supervisor of a
// killed perfbot left: a perfbot resumed after a kill -9 checks it before
// its first run, so it never measures beside what the killed one left.
var orphansChecked struct {
	sync.Mutex
	done bool
}

// orphanLimit is how long Exec waits, at most, for the supervisors of a
// killed perfbot to finish.
const orphanLimit = time.Minute

// awaitOrphans is waitOrphans once per process.
func awaitOrphans(ctx context.Context) error {
	orphansChecked.Lock()
	defer orphansChecked.Unlock()
	if orphansChecked.done {
		return nil
	}
	if err := waitOrphans(ctx, orphanLimit); err != nil {
		return err
	}
	orphansChecked.done = true
	return nil
}
