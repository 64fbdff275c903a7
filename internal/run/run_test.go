package run

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/testutil"
)

// The test binary doubles as a child process for the usage tests.
func TestMain(m *testing.M) {
	Main()
	switch os.Getenv("PERFBOT_RUN_HELPER") {
	case "":
		os.Exit(m.Run())
	case "busy":
		// Burn 100 ms of CPU time (not wall time).
		for {
			var ru syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
				os.Exit(2)
			}
			if time.Duration(ru.Utime.Nano()) >= 100*time.Millisecond {
				os.Exit(0)
			}
			sink.Add(spin(1 << 16))
		}
	case "alloc":
		b := make([]byte, 64<<20)
		for i := range b {
			if i%4096 == 0 {
				b[i] = 1
			}
		}
		fmt.Println(len(b))
		os.Exit(0)
	case "perfbot":
		helperPerfbot()
	}
	os.Exit(3)
}

// spec returns a spec for command with logs in a fresh temporary directory.
func spec(t testing.TB, command string) Spec {
	dir := t.TempDir()
	return Spec{
		Command:    command,
		Dir:        dir,
		CPU:        -1,
		StdoutPath: filepath.Join(dir, "stdout"),
		StderrPath: filepath.Join(dir, "stderr"),
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExecExitStatus(t *testing.T) {
	for _, tc := range []struct {
		command string
		code    int
		signal  string
	}{
		{"true", 0, ""},
		{"exit 3", 3, ""},
		{"false", 1, ""},
		{"kill -KILL $$", -1, "killed"},
		{"kill -TERM $$", -1, "terminated"},
		{"kill -SEGV $$", -1, "segmentation fault"},
	} {
		res, err := Exec(context.Background(), spec(t, tc.command))
		if err != nil {
			t.Errorf("%q: unexpected error %v", tc.command, err)
			continue
		}
		if res.ExitCode != tc.code || res.Signal != tc.signal || res.TimedOut || res.Canceled {
			t.Errorf("%q: got exit %d signal %q timedout %v canceled %v, want exit %d signal %q",
				tc.command, res.ExitCode, res.Signal, res.TimedOut, res.Canceled, tc.code, tc.signal)
		}
		if res.PID <= 0 || res.Started.IsZero() || res.Usage.Wall <= 0 {
			t.Errorf("%q: PID %d, Started %v, Wall %v not set", tc.command, res.PID, res.Started, res.Usage.Wall)
		}
	}
}

func TestExecOutputEnvDir(t *testing.T) {
	s := spec(t, `echo out; echo err >&2; echo "foo=$FOO bar=$BAR"; pwd; echo x > created`)
	s.Env = []string{"FOO=1", "PATH=" + os.Getenv("PATH")}
	// Logs are truncated, not appended to.
	if err := os.WriteFile(s.StdoutPath, []byte(strings.Repeat("old\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Exec(context.Background(), s)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Exec: %+v, %v", res, err)
	}
	wantOut := "out\nfoo=1 bar=\n" + s.Dir + "\n"
	if got := readFile(t, s.StdoutPath); got != wantOut {
		t.Errorf("stdout = %q, want %q", got, wantOut)
	}
	if got := readFile(t, s.StderrPath); got != "err\n" {
		t.Errorf("stderr = %q, want %q", got, "err\n")
	}
	if got := readFile(t, filepath.Join(s.Dir, "created")); got != "x\n" {
		t.Errorf("file written in Dir = %q", got)
	}
}

func TestExecInheritsEnvWhenNil(t *testing.T) {
	t.Setenv("PERFBOT_RUN_TEST_VAR", "inherited")
	s := spec(t, `echo "$PERFBOT_RUN_TEST_VAR"`)
	if _, err := Exec(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, s.StdoutPath); got != "inherited\n" {
		t.Errorf("stdout = %q, want %q", got, "inherited\n")
	}
}

func TestExecSharedLog(t *testing.T) {
	s := spec(t, `echo one; echo two >&2; echo three`)
	s.StderrPath = s.StdoutPath
	if _, err := Exec(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, s.StdoutPath); got != "one\ntwo\nthree\n" {
		t.Errorf("log = %q", got)
	}
}

func TestExecErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want []string
	}{
		{"no command", func(s *Spec) { s.Command = "" }, []string{"empty command", dir}},
		{"no stdout", func(s *Spec) { s.StdoutPath = "" }, []string{"no stdout log", `"echo hi"`}},
		{"no stderr", func(s *Spec) { s.StderrPath = "" }, []string{"no stderr log"}},
		{"missing dir", func(s *Spec) { s.Dir = filepath.Join(dir, "nope") }, []string{`"echo hi"`, filepath.Join(dir, "nope"), "working directory"}},
		{"dir is a file", func(s *Spec) { s.Dir = s.StdoutPath + ".file" }, []string{"not a directory"}},
		{"log in missing dir", func(s *Spec) { s.StdoutPath = filepath.Join(dir, "nope", "out") }, []string{"creating stdout log", `"echo hi"`, dir}},
		{"stderr log in missing dir", func(s *Spec) { s.StderrPath = filepath.Join(dir, "nope", "err") }, []string{"creating stderr log"}},
		{"negative timeout", func(s *Spec) { s.Timeout = -time.Second }, []string{"negative timeout"}},
		{"bad cpu", func(s *Spec) { s.CPU = -2 }, []string{"invalid CPU -2"}},
		{"cpu not allowed", func(s *Spec) { s.CPU = 100000 }, []string{"CPU 100000 is not in", "allowed: "}},
	} {
		s := spec(t, "echo hi")
		s.Dir = dir
		if err := os.WriteFile(s.StdoutPath+".file", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		tc.edit(&s)
		res, err := Exec(context.Background(), s)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", tc.name, err, w)
			}
		}
		if res.PID != 0 || res.ExitCode != -1 {
			t.Errorf("%s: started anyway: %+v", tc.name, res)
		}
	}
}

func TestExecNoShell(t *testing.T) {
	s := spec(t, "true")
	t.Setenv("PATH", t.TempDir())
	_, err := Exec(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "cannot start sh") || !strings.Contains(err.Error(), s.Dir) {
		t.Fatalf("got error %v, want one about starting sh in %s", err, s.Dir)
	}
}

// marker returns a sleep duration unique to this test, to find its
// processes in /proc by their arguments.
func marker() string {
	return fmt.Sprintf("300.%09d", rand.IntN(1e9))
}

// alive lists the live (not zombie) processes in process group pgid or with
// marker in their command line.
func alive(pgid int, marker string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		i := strings.LastIndexByte(string(stat), ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if f[2] == strconv.Itoa(pgid) || strings.Contains(string(cmdline), marker) {
			found = append(found, fmt.Sprintf("pid %d state %s pgrp %s: %q", pid, f[0], f[2], cmdline))
		}
	}
	return found
}

// checkGone fails unless every process of the run is gone. A SIGKILLed
// process that is not our child is not waited for, so give it a moment to
// die.
func checkGone(t *testing.T, pgid int, marker string) {
	t.Helper()
	if pgid <= 0 {
		t.Fatalf("no PID in result")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := alive(pgid, marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the run are still alive:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitStarted waits until a process with marker in its arguments runs.
func waitStarted(marker string) error {
	deadline := time.Now().Add(10 * time.Second)
	for len(alive(-1, marker)) == 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("no process with %s started", marker)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

func TestExecTimeoutKillsGroup(t *testing.T) {
	m := marker()
	s := spec(t, "sleep "+m+" & sleep "+m+"; echo not reached")
	s.Timeout = 300 * time.Millisecond
	res, err := Exec(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Canceled || res.ExitCode != -1 || res.Signal != "killed" {
		t.Errorf("got %+v, want a timed-out run killed by SIGKILL", res)
	}
	if res.Usage.Wall < s.Timeout {
		t.Errorf("wall %v shorter than the timeout %v", res.Usage.Wall, s.Timeout)
	}
	if out := readFile(t, s.StdoutPath); out != "" {
		t.Errorf("stdout = %q", out)
	}
	checkGone(t, res.PID, m)
}

func TestExecKillGrace(t *testing.T) {
	m := marker()
	// sh catches SIGTERM and exits 7; its background sleep dies of it.
	s := spec(t, "trap 'echo caught; exit 7' TERM; sleep "+m+" & wait")
	s.Timeout = 300 * time.Millisecond
	s.KillGrace = 10 * time.Second
	res, err := Exec(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != 7 || res.Signal != "" {
		t.Errorf("got %+v, want a timed-out run that exited 7 on SIGTERM", res)
	}
	if out := readFile(t, s.StdoutPath); out != "caught\n" {
		t.Errorf("stdout = %q, want %q", out, "caught\n")
	}
	checkGone(t, res.PID, m)

	// A group that ignores SIGTERM still dies of SIGKILL after the grace.
	m = marker()
	s = spec(t, "trap '' TERM; sleep "+m+" & sleep "+m)
	s.Timeout = 200 * time.Millisecond
	s.KillGrace = 200 * time.Millisecond
	res, err = Exec(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Signal != "killed" {
		t.Errorf("got %+v, want a timed-out run killed by SIGKILL", res)
	}
	checkGone(t, res.PID, m)
}

func TestExecKillsLeftoverChild(t *testing.T) {
	m := marker()
	s := spec(t, "sleep "+m+" & echo started")
	res, err := Exec(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.TimedOut || res.Signal != "" {
		t.Errorf("got %+v, want a clean exit", res)
	}
	if out := readFile(t, s.StdoutPath); out != "started\n" {
		t.Errorf("stdout = %q", out)
	}
	checkGone(t, res.PID, m)
}

func TestExecCancel(t *testing.T) {
	m := marker()
	s := spec(t, "sleep "+m+" & sleep "+m)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if err := waitStarted(m); err != nil {
			t.Error(err)
		}
		cancel()
	}()
	res, err := Exec(ctx, s)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping context.Canceled", err)
	}
	if !strings.Contains(err.Error(), m) {
		t.Errorf("error %q does not name the command", err)
	}
	if !res.Canceled || res.TimedOut || res.Signal != "killed" {
		t.Errorf("got %+v, want a canceled run killed by SIGKILL", res)
	}
	checkGone(t, res.PID, m)

	// A context that is already done starts nothing.
	res, err = Exec(ctx, spec(t, "true"))
	if !errors.Is(err, context.Canceled) || res.PID != 0 || !res.Canceled {
		t.Errorf("done context: got %+v, %v", res, err)
	}
}

func TestExecUsage(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The work runs in a grandchild (sh does not exec a command that is
	// not its last), so this checks that waited-for descendants count.
	s := spec(t, fmt.Sprintf("PERFBOT_RUN_HELPER=busy %q; true", exe))
	res, err := Exec(context.Background(), s)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("busy: %+v, %v\n%s", res, err, readFile(t, s.StderrPath))
	}
	if res.Usage.User < 100*time.Millisecond {
		t.Errorf("busy child: user time %v, want at least 100ms", res.Usage.User)
	}
	if res.Usage.Sys < 0 {
		t.Errorf("sys time %v", res.Usage.Sys)
	}

	s = spec(t, fmt.Sprintf("PERFBOT_RUN_HELPER=alloc %q; true", exe))
	res, err = Exec(context.Background(), s)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("alloc: %+v, %v\n%s", res, err, readFile(t, s.StderrPath))
	}
	if res.Usage.MaxRSSKiB < 50*1024 {
		t.Errorf("child touching 64 MiB: max RSS %d KiB, want over 50 MiB", res.Usage.MaxRSSKiB)
	}

	res, err = Exec(context.Background(), spec(t, "true"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.MaxRSSKiB <= 0 || res.Usage.MaxRSSKiB > 50*1024 {
		t.Errorf("true: max RSS %d KiB", res.Usage.MaxRSSKiB)
	}
}

// threadMasks returns the Cpus_allowed_list of every thread of this process.
func threadMasks(t *testing.T) map[string]string {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		t.Fatal(err)
	}
	masks := make(map[string]string)
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread exited
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				masks[p] = strings.TrimSpace(v)
			}
		}
	}
	return masks
}

func TestExecPinning(t *testing.T) {
	allowed := Allowed()
	if len(allowed) == 0 {
		t.Fatal("Allowed returned no CPUs")
	}
	all := formatCPUs(allowed)
	// The child, a grandchild in a nested sh, and a background grandchild.
	const cmd = `grep Cpus_allowed_list /proc/self/status; ` +
		`sh -c 'grep Cpus_allowed_list /proc/self/status; true'; ` +
		`grep Cpus_allowed_list /proc/self/status & wait`
	check := func(cpu int, want string) {
		s := spec(t, cmd)
		s.CPU = cpu
		res, err := Exec(context.Background(), s)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("CPU %d: %+v, %v", cpu, res, err)
		}
		lines := strings.Split(strings.TrimSpace(readFile(t, s.StdoutPath)), "\n")
		if len(lines) != 3 {
			t.Fatalf("CPU %d: output %q, want 3 lines", cpu, lines)
		}
		for _, l := range lines {
			if got := strings.TrimSpace(strings.TrimPrefix(l, "Cpus_allowed_list:")); got != want {
				t.Errorf("CPU %d: a descendant has Cpus_allowed_list %q, want %q", cpu, got, want)
			}
		}
		// perfbot's own threads keep their full mask.
		for task, mask := range threadMasks(t) {
			if mask != all {
				t.Errorf("after pinning to CPU %d, thread %s has mask %q, want %q", cpu, task, mask, all)
			}
		}
	}
	check(-1, all)
	if len(allowed) < 2 {
		testutil.SkipIncapable(t, "only CPU %s is allowed: pinning cannot be told from no pinning", all)
	}
	for _, cpu := range allowed {
		check(cpu, strconv.Itoa(cpu))
	}
}

func TestFormatCPUs(t *testing.T) {
	for _, tc := range []struct {
		cpus []int
		want string
	}{
		{nil, "none"},
		{[]int{0}, "0"},
		{[]int{0, 1}, "0-1"},
		{[]int{0, 1, 2, 5, 7, 8}, "0-2,5,7-8"},
	} {
		if got := formatCPUs(tc.cpus); got != tc.want {
			t.Errorf("formatCPUs(%v) = %q, want %q", tc.cpus, got, tc.want)
		}
	}
}

// BenchmarkExecTrue measures the runner's cost per run: Exec of "true"
// (sh -c true, where true is a dash builtin) with logs to files, unpinned.
// ns/op is the whole cost of a run to perfbot; wall-ns/run is the mean
// Usage.Wall that Exec records for the run (fork to exit), the figure to
// compare with hyperfine -N 'sh -c true'.
func BenchmarkExecTrue(b *testing.B) { benchExecTrue(b, -1) }

// BenchmarkExecTruePinned is BenchmarkExecTrue pinned to the last allowed
// CPU, to show the cost of pinning.
func BenchmarkExecTruePinned(b *testing.B) {
	allowed := Allowed()
	benchExecTrue(b, allowed[len(allowed)-1])
}

func benchExecTrue(b *testing.B, cpu int) {
	s := spec(b, "true")
	s.CPU = cpu
	var wall time.Duration
	for b.Loop() {
		res, err := Exec(context.Background(), s)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v, %v", res, err)
		}
		wall += res.Usage.Wall
	}
	b.ReportMetric(float64(wall.Nanoseconds())/float64(b.N), "wall-ns/run")
}
