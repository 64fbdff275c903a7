package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowWrapper is a wrapper that takes 0.3 s to start and 0.3 s to end and
// runs its command as its child, as perf record does.
var slowWrapper = []string{"sh", "-c", `sleep 0.3; "$@"; r=$?; sleep 0.3; exit $r`, "wrapper"}

// TestWrapTimesShAlone: a wrapped run's wall time, exit status and signal
// are sh's, not the wrapper's.
func TestWrapTimesShAlone(t *testing.T) {
	for _, tc := range []struct {
		command string
		code    int
		signal  string
	}{
		{"sleep 0.1", 0, ""},
		{"sleep 0.1; exit 3", 3, ""},
		{"sleep 0.1; kill -TERM $$", -1, "terminated"},
	} {
		s := spec(t, tc.command)
		s.Wrap = slowWrapper
		res, err := Exec(context.Background(), s)
		if err != nil {
			t.Fatalf("%s: %v", tc.command, err)
		}
		if res.ExitCode != tc.code || res.Signal != tc.signal {
			t.Errorf("%s: exit %d signal %q, want %d %q", tc.command, res.ExitCode, res.Signal, tc.code, tc.signal)
		}
		if w := res.Usage.Wall; w < 100*time.Millisecond || w > 400*time.Millisecond {
			t.Errorf("%s: wall %v, want sh's 0.1 s (less than the wrapper's 0.6 s of its own)", tc.command, w)
		}
		if res.WrapperWall < 700*time.Millisecond || res.WrapperFailed {
			t.Errorf("%s: wrapper wall %v (failed %v), want at least 0.7 s", tc.command, res.WrapperWall, res.WrapperFailed)
		}
	}
}

// TestWrapEnvironment: sh gets exactly what it gets unwrapped (the run's
// environment, not the wrapper's, its directory, argv and CPU), without
// the timer's variable.
func TestWrapEnvironment(t *testing.T) {
	cpu := Allowed()[len(Allowed())-1]
	dir := t.TempDir()
	out := func(wrap []string) string {
		s := spec(t, `env | sort; pwd; echo "$0"; grep Cpus_allowed_list /proc/self/status`)
		s.Dir = dir // the same for both runs
		s.Wrap = wrap
		s.Env = []string{"PATH=" + os.Getenv("PATH"), "RUN_VAR=1"}
		s.CPU = cpu
		res, err := Exec(context.Background(), s)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("exit %d, %v: %s", res.ExitCode, err, readFile(t, s.StderrPath))
		}
		return readFile(t, s.StdoutPath)
	}
	plain := out(nil)
	// A wrapper that changes its own environment, as perf record does.
	wrapped := out([]string{"env", "WRAPPER_VAR=1", "PATH=/wrapper/bin:" + os.Getenv("PATH"), "sh", "-c", `"$@"`, "wrapper"})
	if wrapped != plain {
		t.Errorf("wrapped, the run sees\n%s\nunwrapped\n%s", wrapped, plain)
	}
	for _, want := range []string{"RUN_VAR=1\n", "\nsh\n", fmt.Sprintf("Cpus_allowed_list:\t%d\n", cpu)} {
		if !strings.Contains(wrapped, want) {
			t.Errorf("output lacks %q:\n%s", want, wrapped)
		}
	}
	if strings.Contains(wrapped, timerEnv) {
		t.Errorf("the run sees %s:\n%s", timerEnv, wrapped)
	}
}

// TestWrapFails: a wrapper that fails before it runs the command is the
// run's result, and says so.
func TestWrapFails(t *testing.T) {
	s := spec(t, "touch ran")
	s.Wrap = []string{"sh", "-c", "echo wrapper refuses >&2; exit 9", "wrapper"}
	res, err := Exec(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 9 || !res.WrapperFailed {
		t.Errorf("exit %d, wrapper failed %v; want 9, true", res.ExitCode, res.WrapperFailed)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "ran")); err == nil {
		t.Error("the command ran")
	}
	if got := readFile(t, s.StderrPath); got != "wrapper refuses\n" {
		t.Errorf("stderr %q", got)
	}
	s.Wrap = []string{"no-such-wrapper-perfbot"}
	if _, err := Exec(context.Background(), s); err == nil || !strings.Contains(err.Error(), "no-such-wrapper-perfbot") {
		t.Errorf("missing wrapper: error %v", err)
	}
}

// TestWrapTimeout: the timeout applies to the wrapper and everything under
// it.
func TestWrapTimeout(t *testing.T) {
	s := spec(t, "sleep 30")
	s.Wrap = slowWrapper
	s.Timeout = time.Second
	start := time.Now()
	res, err := Exec(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || time.Since(start) > 10*time.Second {
		t.Errorf("timed out %v after %v", res.TimedOut, time.Since(start))
	}
}
