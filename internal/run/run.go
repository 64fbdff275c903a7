// Package run executes one benchmark run: a fresh process in its own process
// group, optionally pinned to a CPU, killed as a group at its timeout, with
// stdout and stderr written to files and its resource usage measured. It also
// plans the interleaved order of runs across commits and finds the quietest
// CPU.
package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
	// PID is the process ID of the run's sh, which is also the ID of its
	// process group; 0 when it did not start.
	PID int
}

// Exec runs s.Command with sh -c and waits for it.
//
// The process starts in s.Dir with s.Env (nil: perfbot's own environment, to
// which os/exec adds PWD=s.Dir), stdin from /dev/null, stdout and stderr to
// the files named by the spec, in a process group of its own. When s.CPU >= 0
// it is pinned to that CPU: Exec narrows the affinity of its own OS thread
// to the CPU just while forking, so the child and everything it starts
// inherit the mask; perfbot's other threads are not affected.
//
// At s.Timeout (zero: no timeout) the whole process group is killed and
// TimedOut is set; when ctx ends first the group is killed the same way,
// Canceled is set and the returned error wraps ctx.Err(). See
// Spec.KillGrace for SIGTERM before SIGKILL. When sh exits, any member of its
// group still alive (a background child) is killed with SIGKILL, so nothing
// started by the run outlives it. A process that left the group (setsid,
// setpgid) escapes this.
//
// Usage.Wall is the monotonic time from just before the fork to the exit of
// sh. User, Sys and MaxRSSKiB come from the rusage of sh when it is reaped,
// which covers sh and every descendant that was waited for (directly or
// through its waited-for parents). They do not cover background processes
// that were still running when sh exited (those were killed, not waited
// for). MaxRSSKiB is the largest resident set of any single process in that
// tree, not the sum of processes that ran at the same time.
//
// A command that runs and fails (non-zero exit, killed by a signal, timed
// out) is not an error: see the Result. The error is for perfbot's side: a
// bad spec, a log file that cannot be created, sh that cannot be started, a
// CPU that cannot be pinned to, or cancellation.
func Exec(ctx context.Context, s Spec) (Result, error) {
	res := Result{ExitCode: -1}
	if err := s.check(); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		res.Canceled = true
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

	cmd := exec.Command("sh", "-c", s.Command)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	// Pdeathsig: if perfbot itself dies (SIGKILL), the kernel kills the
	// shell too, so a benchmark does not run on, pinned, beside the resumed
	// measurement. (It is tied to the OS thread that started the child;
	// Go keeps such threads alive, see pin.go.) Grandchildren that outlive
	// the shell are left to the process-group kill of a live perfbot.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	res.Started = time.Now()
	if err := startPinned(cmd, s.CPU); err != nil {
		return res, fmt.Errorf("%s: cannot start sh: %w", s.what(), err)
	}
	pid := cmd.Process.Pid
	res.PID = pid

	// Wait for the exit without reaping, so that the process group ID
	// cannot be reused before the leftovers of the group are killed.
	exited := make(chan error, 1)
	go func() { exited <- waitExited(pid) }()

	var timeout <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout - time.Since(res.Started))
		defer t.Stop()
		timeout = t.C
	}
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-timeout:
		res.TimedOut, waitErr = stopGroup(pid, s.KillGrace, exited)
	case <-ctx.Done():
		res.Canceled, waitErr = stopGroup(pid, s.KillGrace, exited)
	}
	res.Usage.Wall = time.Since(res.Started)
	// Background children must not outlive the run. ESRCH (nobody left)
	// is the common case. If waitid failed (it does not on Linux >= 2.6.9)
	// sh may still run: the whole group goes, and the run is an error.
	_ = unix.Kill(-pid, unix.SIGKILL)

	err = cmd.Wait()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return res, fmt.Errorf("%s: waiting for sh: %w", s.what(), err)
	}
	if waitErr != nil {
		return res, fmt.Errorf("%s: waiting for sh: %w", s.what(), waitErr)
	}
	ps := cmd.ProcessState
	res.ExitCode = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		res.Usage.User = time.Duration(ru.Utime.Nano())
		res.Usage.Sys = time.Duration(ru.Stime.Nano())
		res.Usage.MaxRSSKiB = ru.Maxrss // kilobytes on Linux
	}
	if res.Canceled {
		return res, fmt.Errorf("%s: canceled: %w", s.what(), ctx.Err())
	}
	return res, nil
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
// waits for its leader to exit. It reports whether it had to: a leader that
// exited just as the timeout or cancellation came was not stopped.
func stopGroup(pgid int, grace time.Duration, exited <-chan error) (bool, error) {
	select {
	case err := <-exited:
		return false, err
	default:
	}
	if grace > 0 {
		_ = unix.Kill(-pgid, unix.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case err := <-exited:
			return true, err
		case <-t.C:
		}
	}
	_ = unix.Kill(-pgid, unix.SIGKILL)
	err := <-exited
	return true, err
}
