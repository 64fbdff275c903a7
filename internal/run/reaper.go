package run

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A run's supervisor ("reaper") is perfbot itself, executed again through
// /proc/self/exe (the very binary that runs, even if it was replaced on
// disk since) as
//
//	argv: perfbot-reaper PERFBOT_PID    env: PERFBOT_REAPER=1 and perfbot's own
//
// with the run's logs as stdout and stderr and one end of a socket pair as
// file descriptor 3. [Main], which the program calls first thing, recognizes
// the pair and runs the supervisor instead of the program; Exec refuses to
// start one in a program that did not call it.
//
// Over the socket perfbot sends the run (a big-endian uint32 length, then
// reaperSpec as JSON), then possibly ctlCancel; the supervisor answers with
// a reaperReport as JSON and exits. EOF on the socket means perfbot died.
const (
	reaperEnv  = "PERFBOT_REAPER"
	reaperArg0 = "perfbot-reaper"
	ctlCancel  = 'c'
)

// reaperSpec is the run, as the supervisor gets it.
type reaperSpec struct {
	Sh        string   // absolute path of sh
	Command   string   // sh -c Command
	Dir       string   // working directory
	Env       []string // sh's whole environment
	CPU       int      // -1: no pinning
	Timeout   time.Duration
	KillGrace time.Duration
	Wrap      []string // a wrapper's command line (Spec.Wrap); see timer.go
	// WrapControl are the wrapper's control FIFOs (Spec.WrapControl).
	WrapControl []string
}

// reaperReport is what happened, as the supervisor tells it.
type reaperReport struct {
	PID       int    // of sh; 0 if it did not start
	StartErr  string // why sh did not start
	Started   int64  // Unix nanoseconds, just before the fork of sh
	Wall      time.Duration
	Status    uint32 // sh's wait status
	User, Sys time.Duration
	MaxRSSKiB int64
	TimedOut  bool
	Canceled  bool
	Err       string // a failure after the start: waiting for sh, leftovers
	// With a wrapper (timer.go): the timer reported on sh, whose figures
	// are above, and the wrapper's own wall time.
	Wrapped     bool
	WrapperWall time.Duration
}

// reaperMain is the supervisor process; it returns its exit status: 0
// after a report, 1 when perfbot died, 2 when it got no run to supervise.
func reaperMain() int {
	// sh is forked from this thread, the main one, which lives as long as
	// the process: sh's parent-death signal is tied to it, and pinning
	// narrows its affinity just while forking.
	runtime.LockOSThread()
	name := []byte(reaperArg0 + "\x00")
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0)
	_ = os.Unsetenv(reaperEnv)
	syscall.CloseOnExec(3)
	ctl := os.NewFile(3, "perfbot")
	spec, err := readSpec(ctl)
	if err != nil {
		return 2 // perfbot died before sending it: nothing was started
	}
	rep, orphaned := supervise(ctl, spec)
	if orphaned {
		return 1
	}
	_ = json.NewEncoder(ctl).Encode(rep)
	return 0
}

func readSpec(r io.Reader) (*reaperSpec, error) {
	var n uint32
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	var spec reaperSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return nil, err
	}
	if spec.Env == nil {
		spec.Env = []string{}
	}
	return &spec, nil
}

// writeSpec is readSpec's other end.
func writeSpec(w io.Writer, spec *reaperSpec) error {
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	msg := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	_, err = w.Write(append(msg, b...))
	return err
}

// supervise runs sh -c spec.Command as a child subreaper and kills every
// descendant when sh exits, when perfbot dies (orphaned is then true) or
// when the supervisor is told to stop by a signal.
func supervise(ctl *os.File, spec *reaperSpec) (rep reaperReport, orphaned bool) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		rep.StartErr = fmt.Sprintf("becoming a child subreaper: %v", err)
		return rep, false
	}
	timer, err := timerFile(spec) // "" unless the run is wrapped
	if err != nil {
		rep.StartErr = err.Error()
		return rep, false
	}
	defer removeTimer(timer)
	// Handled signals go back to their defaults in sh (ignored ones would
	// not): the run sees the signal dispositions perfbot's children do.
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, unix.SIGCHLD)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)
	cancel, gone := make(chan struct{}, 1), make(chan struct{})
	go readCtl(ctl, cancel, gone)

	// A watcher stops sh when it must; it is set up before sh starts, so
	// that nothing of the supervisor runs beside sh until something
	// happens. This thread waits for sh's exit, so that Wall ends as it
	// does; the exit is left unreaped, so that the process group ID cannot
	// be reused before the leftovers of the group are killed.
	var (
		pid     int
		t0      time.Time
		forked  = make(chan struct{}) // pid and t0 are set
		exited  = make(chan struct{})
		watched = make(chan struct{})
	)
	stopSh := func(grace time.Duration) bool {
		<-forked
		return pid > 0 && stopGroup(pid, grace, exited)
	}
	go func() {
		defer close(watched)
		var timeout <-chan time.Time
		if spec.Timeout > 0 {
			t := time.NewTimer(spec.Timeout)
			defer t.Stop()
			timeout = t.C
		}
		for {
			select {
			case <-exited:
			case <-timeout:
				// The timer started a moment before sh.
				<-forked
				if d := spec.Timeout - time.Since(t0); d > 0 {
					time.Sleep(d)
				}
				rep.TimedOut = stopSh(spec.KillGrace)
			case <-cancel:
				rep.Canceled = stopSh(spec.KillGrace)
			case <-gone:
				orphaned = true
				stopSh(0)
			case <-stop:
				stopSh(0)
			case <-chld:
				<-forked
				reapOrphans(pid)
				continue
			}
			return
		}
	}()
	pid, t0, err = startSh(spec, timer)
	close(forked)
	if err != nil {
		close(exited)
		<-watched
		rep.StartErr = err.Error()
		return rep, orphaned
	}
	rep.PID, rep.Started = pid, t0.UnixNano()
	waitErr := waitExited(pid)
	rep.Wall = time.Since(t0)
	close(exited)
	<-watched

	// The rest of sh's group, then everything else below the supervisor:
	// a process that left the group (setsid) is still its descendant.
	_ = unix.Kill(-pid, unix.SIGKILL)
	var ws unix.WaitStatus
	var ru unix.Rusage
	for {
		_, err = unix.Wait4(pid, &ws, unix.WALL, &ru)
		if err != unix.EINTR {
			break
		}
	}
	if waitErr == nil && err != nil {
		waitErr = err
	}
	leftErr := killAll()
	rep.Status = uint32(ws)
	rep.User = time.Duration(unix.TimevalToNsec(ru.Utime))
	rep.Sys = time.Duration(unix.TimevalToNsec(ru.Stime))
	rep.MaxRSSKiB = int64(ru.Maxrss) // kilobytes on Linux
	useTimer(&rep, timer)
	switch {
	case waitErr != nil:
		rep.Err = fmt.Sprintf("waiting for sh: %v", waitErr)
	case leftErr != nil:
		rep.Err = leftErr.Error()
	}
	return rep, orphaned
}

// startSh forks sh -c spec.Command in a process group of its own, pinned
// to spec.CPU when it is not -1; with a wrapper, the wrapper's command line
// that runs sh under the timer (timer: its report's path; see timer.go).
// It returns the pid of sh (or of the wrapper) and the time just before
// the fork. (syscall.ForkExec, not os.StartProcess: the first
// os.StartProcess of a process probes pidfd support with a test clone, which
// would fall inside Wall.)
func startSh(spec *reaperSpec, timer string) (int, time.Time, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, time.Time{}, err
	}
	defer devnull.Close()
	path, argv, env := spec.Sh, []string{"sh", "-c", spec.Command}, spec.Env
	if len(spec.Wrap) > 0 {
		if argv, env, err = timerArgv(spec, timer); err != nil {
			return 0, time.Time{}, err
		}
		path = argv[0]
	}
	attr := &syscall.ProcAttr{
		Dir:   spec.Dir,
		Env:   env,
		Files: []uintptr{devnull.Fd(), 1, 2},
		// Pdeathsig: should the supervisor itself be killed, sh dies too.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
	if spec.CPU >= 0 {
		// Only this thread is narrowed: sh inherits its mask, and
		// everything sh starts inherits sh's.
		var old, one unix.CPUSet
		if err := unix.SchedGetaffinity(0, &old); err != nil {
			return 0, time.Time{}, fmt.Errorf("reading CPU affinity: %w", err)
		}
		one.Set(spec.CPU)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			return 0, time.Time{}, fmt.Errorf("pinning to CPU %d: %w", spec.CPU, err)
		}
		defer unix.SchedSetaffinity(0, &old)
	}
	t0 := time.Now()
	pid, err := syscall.ForkExec(path, argv, attr)
	if err != nil {
		err = &os.PathError{Op: "fork/exec", Path: path, Err: err}
	}
	return pid, t0, err
}

// readCtl reads perfbot's side of the socket: a ctlCancel byte signals
// cancel, EOF (perfbot died) or an error closes gone.
func readCtl(ctl *os.File, cancel chan<- struct{}, gone chan<- struct{}) {
	var b [64]byte
	for {
		n, err := ctl.Read(b[:])
		for _, c := range b[:n] {
			if c == ctlCancel {
				select {
				case cancel <- struct{}{}:
				default:
				}
			}
		}
		if err != nil {
			close(gone)
			return
		}
	}
}

// waitExited blocks until process pid has exited, leaving it unreaped.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

// stopGroup kills the process group pgid (SIGTERM first when grace > 0) and
// waits until its leader has exited (exited is closed). It reports whether
// it had to: a leader that exited just as the timeout or cancellation came
// was not stopped.
func stopGroup(pgid int, grace time.Duration, exited <-chan struct{}) bool {
	select {
	case <-exited:
		return false
	default:
	}
	if grace > 0 {
		_ = unix.Kill(-pgid, unix.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-exited:
			return true
		case <-t.C:
		}
	}
	_ = unix.Kill(-pgid, unix.SIGKILL)
	<-exited
	return true
}
