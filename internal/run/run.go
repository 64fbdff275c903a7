// Package run executes one benchmark run (or build): a fresh process in its
// own process group, optionally pinned to a CPU, killed as a group at its
// timeout, with stdout and stderr written to files and its resource usage
// measured, under a supervisor process that kills everything the run
// started, setsid'd descendants included, when the run ends or perfbot dies
// (even of kill -9). It also plans the interleaved order of runs across
// commits and finds the quietest CPU.
//
// The supervisor is the program itself executed again: [Main], called first
// thing by perfbot's main and by the TestMain of every test binary that
// runs commands, turns the process into one when it was started as such
// (see reaper.go).
package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/internal/metric"
)

// Spec is one process to run.
type Spec struct {
	Command    string   // run as: sh -c Command
	Dir        string   // working directory
	Env        []string // full environment ("K=V"); nil means os.Environ()
	Timeout    time.Duration
	CPU        int    // pin to this CPU; -1 for no pinning
	StdoutPath string // created (truncated); required
	StderrPath string // created (truncated); required; may equal StdoutPath

	// KillGrace is how long the process group gets between SIGTERM and
	// SIGKILL when the run is stopped (timeout or cancellation). Zero, the
	// default, sends SIGKILL at once: a stopped run is a failed run, and
	// SIGKILL cannot be caught or ignored.
	KillGrace time.Duration

	// Wrap, when not empty, runs sh under a wrapper: a command line
	// (looked up in perfbot's PATH when Wrap[0] has no slash) that ends
	// where the wrapped command's argv goes, such as
	// ["perf", "record", "-o", "perf.data", "--"]. Between the wrapper and
	// sh runs a timer (perfbot again, see timer.go) that measures sh as the
	// supervisor otherwise does: Usage, Started, ExitCode and Signal are
	// sh's, not the wrapper's, and Result.WrapperWall is the wrapper's wall
	// time. The wrapper is what starts in the run's process group, pinned
	// to CPU, under the timeout; it must run its command as its child, in
	// the same process group, with the environment and open files it got.
	Wrap []string
	// WrapControl are control FIFOs of the wrapper, in pairs of a command
	// and an acknowledgement FIFO (perf's --control fifo:CTL,ACK, with -D
	// -1: events start disabled). The timer sends "enable" to each just
	// before it starts sh and "disable" once sh has exited, and waits for
	// each "ack", so that the wrapper measures sh alone, not the timer.
	WrapControl []string
}

// Result is what happened to one run.
type Result struct {
	Started  time.Time
	ExitCode int    // -1 when killed by a signal or not started
	Signal   string // e.g. "killed", when the process died of a signal
	TimedOut bool
	Usage    metric.Usage // wall time; user, sys and max RSS of the whole process tree

	// Canceled is set when the caller's context ended the run; Exec then
	// also returns an error wrapping the context's error.
	Canceled bool
	// PID is the process ID of the run's sh (or wrapper), which is also
	// the ID of its process group; 0 when it did not start.
	PID int
	// WrapperWall is, for a run with Spec.Wrap, the wrapper's wall time
	// (sh's included); 0 otherwise. WrapperFailed is set when the wrapper
	// ended without the timer's report on sh (it failed before it started
	// the command, or it was killed): the figures are then the wrapper's.
	WrapperWall   time.Duration
	WrapperFailed bool
}

// Exec runs s.Command with sh -c and waits for it.
//
// The process starts in s.Dir with s.Env (nil: perfbot's own environment, to
// which os/exec adds PWD=s.Dir), stdin from /dev/null, stdout and stderr to
// the files named by the spec, in a process group of its own. When s.CPU >= 0
// it is pinned to that CPU: the supervisor (below) narrows the affinity of
// its forking thread to the CPU just while forking sh, so sh and everything
// it starts inherit the mask; perfbot's threads are not affected.
//
// sh is not perfbot's child but that of a supervisor: perfbot executed again
// as "perfbot-reaper", a child subreaper (PR_SET_CHILD_SUBREAPER), so that
// every descendant of the run stays its descendant, even one that calls
// setsid or whose parent exits. When sh exits, the supervisor kills every
// descendant left (its process group at once, then all the others with
// SIGKILL, found through /proc) and reaps them before Exec returns: nothing
// started by the run outlives it. When perfbot dies, even of SIGKILL, the
// supervisor sees its end of a socket pair close and does the same before it
// exits; and the first Exec of a perfbot waits (up to a minute, then fails)
// while the supervisor of a killed perfbot is still at it, so a resumed
// perfbot never measures beside what a killed one left.
//
// At s.Timeout (zero: no timeout; counted from the start of sh) the whole
// process group is killed and TimedOut is set; when ctx ends first the group
// is killed the same way, Canceled is set and the returned error wraps
// ctx.Err(). See Spec.KillGrace for SIGTERM before SIGKILL. Either way every
// other descendant is killed when sh has exited.
//
// Usage.Wall is the monotonic time, taken by the supervisor, from just
// before the fork of sh to the exit of sh: the supervisor's own start (an
// exec of perfbot, 2-3 ms, see docs/benchmarks.md) is not in it. User, Sys and
// MaxRSSKiB come from the rusage of sh when it is reaped, which covers sh and
// every descendant that was waited for (directly or through its waited-for
// parents). They do not cover background processes that were still running
// when sh exited (those were killed, not waited for by sh), nor the
// supervisor. MaxRSSKiB is the largest resident set of any single process in
// that tree, not the sum of processes that ran at the same time.
//
// A command that runs and fails (non-zero exit, killed by a signal, timed
// out) is not an error: see the Result. The error is for perfbot's side: a
// bad spec, a log file that cannot be created, sh or its supervisor that
// cannot be started, a CPU that cannot be pinned to, leftover processes that
// cannot be killed, or cancellation.
func Exec(ctx context.Context, s Spec) (Result, error) {
	res := Result{ExitCode: -1}
	if err := s.check(); err != nil {
		return res, err
	}
	if !mainCalled.Load() {
		return res, fmt.Errorf("%s: not started: %w", s.what(), ErrNoMain)
	}
	if err := ctx.Err(); err != nil {
		res.Canceled = true
		return res, fmt.Errorf("%s: not started: %w", s.what(), err)
	}
	if err := awaitOrphans(ctx); err != nil {
		res.Canceled = ctx.Err() != nil
		return res, fmt.Errorf("%s: not started: %w", s.what(), err)
	}

	stdout, err := os.Create(s.StdoutPath)
	if err != nil {
		return res, fmt.Errorf("%s: creating stdout log: %w", s.what(), err)
	}
	defer stdout.Close()
	stderr := stdout
	if s.StderrPath != s.StdoutPath {
		stderr, err = os.Create(s.StderrPath)
		if err != nil {
			return res, fmt.Errorf("%s: creating stderr log: %w", s.what(), err)
		}
		defer stderr.Close()
	}

	// sh is looked up in perfbot's PATH, and gets the environment os/exec
	// would give it.
	sh := exec.Command("sh")
	if sh.Err != nil {
		return res, fmt.Errorf("%s: cannot start sh: %w", s.what(), sh.Err)
	}
	sh.Dir, sh.Env = s.Dir, s.Env
	spec := &reaperSpec{
		Sh: sh.Path, Command: s.Command, Dir: s.Dir, Env: sh.Environ(),
		CPU: s.CPU, Timeout: s.Timeout, KillGrace: s.KillGrace,
	}
	if len(s.Wrap) > 0 {
		w, err := exec.LookPath(s.Wrap[0])
		if err != nil {
			return res, fmt.Errorf("%s: cannot start its wrapper: %w", s.what(), err)
		}
		spec.Wrap = append([]string{w}, s.Wrap[1:]...)
		if len(s.WrapControl)%2 != 0 {
			return res, fmt.Errorf("%s: wrapper control FIFOs come in pairs, got %d", s.what(), len(s.WrapControl))
		}
		spec.WrapControl = s.WrapControl
	}

	res.Started = time.Now()
	rep, err := supervised(ctx, spec, stdout, stderr)
	if err != nil {
		return res, fmt.Errorf("%s: %w", s.what(), err)
	}
	if rep.StartErr != "" {
		return res, fmt.Errorf("%s: cannot start sh: %s", s.what(), rep.StartErr)
	}
	res.PID = rep.PID
	res.Started = time.Unix(0, rep.Started)
	res.TimedOut, res.Canceled = rep.TimedOut, rep.Canceled
	res.Usage.Wall = rep.Wall
	res.Usage.User, res.Usage.Sys, res.Usage.MaxRSSKiB = rep.User, rep.Sys, rep.MaxRSSKiB
	if len(s.Wrap) > 0 {
		res.WrapperWall, res.WrapperFailed = rep.WrapperWall, !rep.Wrapped
	}
	ws := syscall.WaitStatus(rep.Status)
	switch {
	case ws.Exited():
		res.ExitCode = ws.ExitStatus()
	case ws.Signaled():
		res.Signal = ws.Signal().String()
	}
	if rep.Err != "" {
		return res, fmt.Errorf("%s: %s", s.what(), rep.Err)
	}
	if res.Canceled {
		return res, fmt.Errorf("%s: canceled: %w", s.what(), ctx.Err())
	}
	return res, nil
}

// supervised starts the supervisor of a run (see Exec and reaper.go), hands
// it the run, tells it when ctx ends, and returns its report once it has
// exited, which it does when everything of the run is gone.
func supervised(ctx context.Context, spec *reaperSpec, stdout, stderr *os.File) (*reaperReport, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot start sh: socket pair for its supervisor: %w", err)
	}
	_ = unix.SetNonblock(fds[0], true)
	ours, theirs := os.NewFile(uintptr(fds[0]), "perfbot-reaper"), os.NewFile(uintptr(fds[1]), "perfbot")
	defer ours.Close()
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{reaperArg0, strconv.Itoa(os.Getpid())},
		Env:        append(os.Environ(), reaperEnv+"=1"),
		Stdout:     stdout,
		Stderr:     stderr,
		ExtraFiles: []*os.File{theirs},
		// Its own group: a ^C on perfbot's terminal goes to perfbot only,
		// which stops the run through ctx. No Pdeathsig: the supervisor
		// must outlive perfbot to kill what the run left; it learns of
		// perfbot's death from the socket.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		return nil, fmt.Errorf("cannot start sh: starting its supervisor: %w", err)
	}
	// Errors here show as a missing report: the supervisor exits at EOF.
	if err := writeSpec(ours, spec); err != nil {
		ours.Close()
	}
	reply := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(ours)
		reply <- b
	}()
	var b []byte
	select {
	case b = <-reply:
	case <-ctx.Done():
		_, _ = ours.Write([]byte{ctlCancel})
		b = <-reply
	}
	werr := cmd.Wait()
	var rep reaperReport
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("the run's supervisor failed (%v) without a report", werr)
	}
	return &rep, nil
}

// check reports what is wrong with a spec.
func (s *Spec) check() error {
	switch {
	case s.Command == "":
		return fmt.Errorf("run in %s: empty command", s.dir())
	case s.StdoutPath == "":
		return fmt.Errorf("%s: no stdout log path", s.what())
	case s.StderrPath == "":
		return fmt.Errorf("%s: no stderr log path", s.what())
	case s.Timeout < 0:
		return fmt.Errorf("%s: negative timeout %v", s.what(), s.Timeout)
	case s.KillGrace < 0:
		return fmt.Errorf("%s: negative kill grace %v", s.what(), s.KillGrace)
	case s.CPU < -1:
		return fmt.Errorf("%s: invalid CPU %d (use -1 for no pinning)", s.what(), s.CPU)
	}
	if s.Dir != "" {
		if fi, err := os.Stat(s.Dir); err != nil {
			return fmt.Errorf("%s: working directory: %w", s.what(), err)
		} else if !fi.IsDir() {
			return fmt.Errorf("%s: working directory is not a directory", s.what())
		}
	}
	if s.CPU >= 0 {
		if err := checkCPU(s.CPU); err != nil {
			return fmt.Errorf("%s: %w", s.what(), err)
		}
	}
	return nil
}

func (s *Spec) dir() string {
	if s.Dir == "" {
		return "the current directory"
	}
	return s.Dir
}

// what names the run in errors.
func (s *Spec) what() string {
	return fmt.Sprintf("run %q in %s", s.Command, s.dir())
}
