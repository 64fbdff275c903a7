package run

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A wrapped run (Spec.Wrap: a profiler such as perf record that runs the
// benchmark as its child) puts a timer between the wrapper and sh, so that
// the run's figures are those of sh alone, not the wrapper's start (perf
// record's takes over 0.1 s), end and CPU time. The supervisor starts
//
//	Wrap... /proc/SUPERVISOR/exe perfbot-timer REPORT SH -c COMMAND    env: the run's and PERFBOT_TIMER=1
//
// The timer is perfbot itself (the supervisor's binary, through
// /proc/PID/exe, which stays valid while the supervisor lives, even if the
// file was replaced); [Main] recognizes it. It
// forks sh exactly as the supervisor would: same process group, CPU mask,
// directory, argv ("sh", "-c", COMMAND) and environment, the run's own,
// which the supervisor wrote into REPORT (as timerInput) because wrappers
// change theirs (perf record puts /usr/lib/perf-core first on PATH and
// adds PERF_BUILDID_DIR, ...), and the environment's size moves the
// benchmark's stack. With Spec.WrapControl it has the wrapper enable its
// events just before the fork and disable them after sh's exit, so that
// the wrapper does not measure the timer (perfbot's start takes a few ms
// of CPU, 3 % of the samples of a 0.1 s benchmark). It measures sh's wall
// time from just before the fork to its exit, reaps it, writes a
// timerReport as JSON over REPORT and exits
// with sh's exit status (128+N when sh died of signal N). The supervisor
// takes sh's figures and wait status from the report.
const (
	timerArg = "perfbot-timer"
	timerEnv = "PERFBOT_TIMER"
)

// timerInput is what the supervisor tells the timer.
type timerInput struct {
	Env     []string // sh's environment
	Control []string // the wrapper's control FIFOs (Spec.WrapControl)
}

// timerReport is what the timer tells the supervisor of sh.
type timerReport struct {
	PID       int
	Started   int64 // Unix nanoseconds, just before the fork of sh
	Wall      time.Duration
	Status    uint32 // sh's wait status
	User, Sys time.Duration
	MaxRSSKiB int64
}

// timerMain runs sh (args: SH -c COMMAND) with the environment read from
// path, writes the report over it and returns sh's exit status (or
// 128+signal; 127 when sh could not start).
func timerMain(path string, args []string) int {
	var in timerInput
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &in) != nil || in.Env == nil {
		// No input: the timer's own environment is the next best.
		in.Env = nil
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, timerEnv+"=") {
				in.Env = append(in.Env, kv)
			}
		}
	}
	argv := append([]string{"sh"}, args[1:]...)
	attr := &syscall.ProcAttr{Env: in.Env, Files: []uintptr{0, 1, 2}}
	control(in.Control, "enable")
	t0 := time.Now()
	pid, err := syscall.ForkExec(args[0], argv, attr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "perfbot: cannot start %s: %v\n", argv[0], err)
		return 127
	}
	var ws unix.WaitStatus
	var ru unix.Rusage
	for {
		_, err = unix.Wait4(pid, &ws, 0, &ru)
		if err != unix.EINTR {
			break
		}
	}
	wall := time.Since(t0)
	control(in.Control, "disable")
	if err != nil {
		fmt.Fprintf(os.Stderr, "perfbot: waiting for %s: %v\n", argv[0], err)
		return 127
	}
	rep := timerReport{
		PID: pid, Started: t0.UnixNano(), Wall: wall, Status: uint32(ws),
		User:      time.Duration(unix.TimevalToNsec(ru.Utime)),
		Sys:       time.Duration(unix.TimevalToNsec(ru.Stime)),
		MaxRSSKiB: int64(ru.Maxrss),
	}
	if b, err := json.Marshal(rep); err == nil {
		_ = os.WriteFile(path, b, 0o600)
	}
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		return 128 + int(ws.Signal())
	}
	return 127
}

// controlTimeout bounds the wait for a wrapper's acknowledgement.
const controlTimeout = 10 * time.Second

// control sends cmd to each command FIFO of pairs (command, ack) and waits
// for its "ack"; a wrapper that does not answer gets a warning on stderr.
func control(pairs []string, cmd string) {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := controlOne(pairs[i], pairs[i+1], cmd); err != nil {
			fmt.Fprintf(os.Stderr, "perfbot: %s the wrapper's events: %v\n", cmd, err)
		}
	}
}

func controlOne(ctl, ack, cmd string) error {
	// Nonblocking opens: the wrapper holds both FIFOs open (perf opens
	// them read-write), and the poller gives reads a deadline.
	a, err := os.OpenFile(ack, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer a.Close()
	c, err := os.OpenFile(ctl, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	_, err = c.WriteString(cmd + "\n")
	c.Close()
	if err != nil {
		return err
	}
	_ = a.SetReadDeadline(time.Now().Add(controlTimeout))
	var b [16]byte
	n, err := a.Read(b[:])
	if err != nil {
		return fmt.Errorf("no acknowledgement: %w", err)
	}
	// perf sends "ack\n\x00".
	if got := strings.Trim(string(b[:n]), " \n\x00"); got != "ack" {
		return fmt.Errorf("acknowledged %q", got)
	}
	return nil
}

// timerArgv writes the timer's input to its report file and returns the
// wrapped command line the supervisor starts, and the environment to start
// it with.
func timerArgv(spec *reaperSpec, report string) ([]string, []string, error) {
	b, err := json.Marshal(timerInput{Env: spec.Env, Control: spec.WrapControl})
	if err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(report, b, 0o600); err != nil {
		return nil, nil, fmt.Errorf("writing the timer's input: %w", err)
	}
	argv := append([]string{}, spec.Wrap...)
	argv = append(argv, fmt.Sprintf("/proc/%d/exe", os.Getpid()), timerArg, report, spec.Sh, "-c", spec.Command)
	env := append(append([]string{}, spec.Env...), timerEnv+"=1")
	return argv, env, nil
}

// timerFile creates the file through which the supervisor and the timer
// of a wrapped run talk; "" for a run without a wrapper.
func timerFile(spec *reaperSpec) (string, error) {
	if len(spec.Wrap) == 0 {
		return "", nil
	}
	f, err := os.CreateTemp("", "perfbot-timer-*.json")
	if err != nil {
		return "", fmt.Errorf("creating the timer's report: %w", err)
	}
	f.Close()
	return f.Name(), nil
}

func removeTimer(path string) {
	if path != "" {
		_ = os.Remove(path)
	}
}

// useTimer puts the timer's figures of sh into the report of a wrapped run
// (path: the timer's report; "" for a run without a wrapper), and the
// wrapper's wall time into WrapperWall. Without the timer's report (the
// wrapper failed before it started the timer, or was killed) the figures
// stay the wrapper's.
func useTimer(rep *reaperReport, path string) {
	if path == "" {
		return
	}
	rep.WrapperWall = rep.Wall
	b, err := os.ReadFile(path)
	var tr timerReport
	if err != nil || json.Unmarshal(b, &tr) != nil || tr.PID <= 0 {
		return
	}
	rep.Wrapped = true
	rep.Started, rep.Wall, rep.Status = tr.Started, tr.Wall, tr.Status
	rep.User, rep.Sys, rep.MaxRSSKiB = tr.User, tr.Sys, tr.MaxRSSKiB
}
