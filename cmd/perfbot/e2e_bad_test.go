package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/testutil"
)

// TestCompareBadInput checks that bad input gets a clear error (exit 2)
// naming what is wrong, and that failing runs are recorded, not dropped.
func TestCompareBadInput(t *testing.T) {
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	broken := r.Commit("break the build", map[string]string{"bench.c": "int main( {\n"})
	second := r.Commit("mend the build", map[string]string{"bench.c": testutil.BenchC(1, "base")})

	t.Run("malformed YAML", func(t *testing.T) {
		job := writeJob(t, "repo: "+r.Dir+"\nbuild:\n  command: make\n   artifacts: [x]\n")
		code, _, errOut := perfbot(t, "compare", job, base, base)
		if code != exitError || !strings.Contains(errOut, "job.yaml:") {
			t.Errorf("exit %d, stderr %q: want exit 2 and an error naming the file and line", code, errOut)
		}
	})
	t.Run("unknown field", func(t *testing.T) {
		job := writeJob(t, jobYAML(r.Dir, 3, "./bench 1000")+"iters: 5\n")
		code, _, errOut := perfbot(t, "compare", job, base, base)
		if code != exitError || !strings.Contains(errOut, "iters") || !strings.Contains(errOut, "job.yaml:13") {
			t.Errorf("exit %d, stderr %q: want exit 2 naming job.yaml:13 and the field", code, errOut)
		}
	})
	t.Run("unknown metric", func(t *testing.T) {
		job := writeJob(t, jobYAML(r.Dir, 3, "./bench 1000")+"  - builtin: cycles\n")
		code, _, errOut := perfbot(t, "compare", job, base, base)
		if code != exitError || !strings.Contains(errOut, "job.yaml:13: metrics[1].builtin") || !strings.Contains(errOut, "cycles") {
			t.Errorf("exit %d, stderr %q: want exit 2 naming job.yaml:13, the field and the unknown builtin", code, errOut)
		}
	})
	t.Run("same commit twice", func(t *testing.T) {
		job := writeJob(t, jobYAML(r.Dir, 3, "./bench 1000"))
		code, _, errOut := perfbot(t, "compare", "--cpu", "none", job, base, base+"^{commit}")
		if code != exitError || !strings.Contains(errOut, "given twice") {
			t.Errorf("exit %d, stderr %q: want exit 2: the same commit twice would share its runs", code, errOut)
		}
	})
	t.Run("unknown revision", func(t *testing.T) {
		job := writeJob(t, jobYAML(r.Dir, 3, "./bench 1000"))
		code, _, errOut := perfbot(t, "compare", job, base, "no-such-branch")
		if code != exitError || !strings.Contains(errOut, "no-such-branch") {
			t.Errorf("exit %d, stderr %q: want exit 2 naming the revision", code, errOut)
		}
	})
	t.Run("build fails", func(t *testing.T) {
		job := writeJob(t, jobYAML(r.Dir, 3, "./bench 1000"))
		code, _, errOut := perfbot(t, "compare", "--cpu", "none", job, base, broken)
		if code != exitError || !strings.Contains(errOut, broken[:12]) || !strings.Contains(errOut, "build failed") ||
			!strings.Contains(errOut, "error") {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 2 naming the commit with the log's last lines", code, errOut)
		}
	})
	t.Run("metric missing", func(t *testing.T) {
		job := writeJob(t, jobYAML(r.Dir, 3, "echo garbage; echo work_ms=notanumber"))
		code, _, errOut := perfbot(t, "compare", "--cpu", "none", job, base, second)
		if code != exitError || !strings.Contains(errOut, "3 of 3 runs failed") || !strings.Contains(errOut, "no run succeeded") {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 2 with every failed run reported", code, errOut)
		}
		if !strings.Contains(errOut, "no-metric") || !strings.Contains(errOut, "work_ms") {
			t.Errorf("stderr does not say the metric was missing:\n%s", errOut)
		}
	})
}

// TestCompareTimeoutLeavesNothing runs a benchmark that hangs with a
// background child past its timeout: the run is recorded as timed out and
// no process of it survives.
func TestCompareTimeoutLeavesNothing(t *testing.T) {
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	next := r.Commit("no-op", map[string]string{"README": "x\n"})
	marker := "perfbot-hang-" + filepath.Base(t.TempDir())
	// The marker rides as $0 of the inner shells, so /proc shows it.
	job := writeJob(t, strings.Replace(jobYAML(r.Dir, 3, `sh -c 'sleep 300; :' `+marker+` & sh -c 'sleep 301; :' `+marker+`; wait`), "timeout: 60s", "timeout: 1s", 1))
	start := time.Now()
	code, _, errOut := perfbot(t, "compare", "--cpu", "none", job, base, next)
	if time.Since(start) > 60*time.Second {
		t.Errorf("compare took %v: the timeout did not kill the runs", time.Since(start))
	}
	if !strings.Contains(errOut, "timeout") {
		t.Errorf("exit %d; stderr does not report the timeout:\n%s", code, errOut)
	}
	if pids := processesWith(marker); len(pids) > 0 {
		t.Errorf("processes left behind: %v", pids)
	}
}

// processesIn lists the processes whose working directory is under dir.
func processesIn(dir string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && strings.HasPrefix(cwd, dir) {
			pids = append(pids, e.Name()+" in "+cwd)
		}
	}
	return pids
}

// processesWith lists the pids whose command line contains s.
func processesWith(s string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) {
			pids = append(pids, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return pids
}

// TestKillAndResume kills perfbot with SIGKILL in the middle of a compare;
// re-running the same command resumes: the stored runs are kept and only
// the missing ones are taken.
//
// It must hold on a loaded machine, so it waits for states, not for fixed
// times, under deadlines far beyond what an idle machine needs: the kill
// comes once the log shows killAfter stored runs (polled every 20 ms), and
// the check for leftover processes polls until none is left. Between the
// poll that sees killAfter runs and the kill, perfbot may store a few more;
// with 2*runs runs in all it cannot finish them before the kill unless the
// test is stalled for seconds, and the test says so if it does.
func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the kill-and-resume test in short mode")
	}
	const (
		runs      = 20 // per commit
		total     = 2 * runs
		killAfter = 5
		deadline  = 5 * time.Minute
	)
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	// The same work, other bytes (a global nobody reads): byte-identical
	// builds would be one minimal look, not a measurement to resume.
	next := r.Commit("a global", map[string]string{"bench.c": testutil.BenchC(1, "next") + "\nint perfbot_next_marker = 1;\n"})
	job := writeJob(t, jobYAML(r.Dir, runs, "./bench 4000000"))
	bin := buildPerfbot(t)

	cmd := exec.Command(bin, "compare", "--cpu", "none", job, base, next)
	logPath := filepath.Join(t.TempDir(), "stderr")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Wait for killAfter stored runs, then kill perfbot without warning.
	start := time.Now()
	for {
		data, _ := os.ReadFile(logPath)
		if strings.Count(string(data), "perfbot: run ") >= killAfter {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("perfbot exited (%v) before it stored %d runs:\n%s", err, killAfter, data)
		default:
		}
		if time.Since(start) > deadline {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-exited
			t.Fatalf("perfbot stored fewer than %d runs in %v:\n%s", killAfter, deadline, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	logFile.Close()
	first, _ := os.ReadFile(logPath)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the compare ended (%v) before the kill: the test was stalled too long to kill it mid-way:\n%s", cmd.ProcessState, first)
	}
	// The benchmark in flight dies with perfbot (review finding 7): the
	// shell perfbot started is killed with it (Pdeathsig); a benchmark
	// the shell forked ends with its run. Wait for both to be gone.
	var left []string
	for killed := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if left = processesIn(filepath.Dir(job)); len(left) == 0 {
			if d := time.Since(killed); d > time.Second {
				t.Logf("the run in flight took %v to end after perfbot was killed", d.Round(time.Millisecond))
			}
			break
		}
		if time.Since(killed) > time.Minute {
			t.Errorf("processes still running a minute after perfbot was killed: %v", left)
			break
		}
	}
	doneBefore := strings.Count(string(first), "perfbot: run ")
	if doneBefore < killAfter || doneBefore >= total {
		t.Fatalf("killed after %d runs; want between %d and %d:\n%s", doneBefore, killAfter, total-1, first)
	}

	out, err := exec.Command(bin, "compare", "--cpu", "none", "--all", job, base, next).CombinedOutput()
	if err != nil {
		t.Fatalf("resumed compare: %v\n%s", err, out)
	}
	taken := strings.Count(string(out), "perfbot: run ")
	// At most the run in flight is lost.
	// The resumed compare takes whole rounds (both commits, interleaved):
	// the complete rounds stored before the kill are reused, a round cut
	// in half is taken again under a new run number (its half stays
	// stored). Every logged run was stored; one more may have been stored
	// but not logged when the kill came.
	complete := doneBefore / 2
	if want := total - 2*complete; taken != want && taken != want-2 {
		t.Errorf("first compare logged %d runs (%d whole rounds), the resumed one took %d; want %d (or %d if one more round was stored unlogged):\n%s", doneBefore, complete, taken, want, want-2, out)
	}
	if !strings.Contains(string(out), "(cached)") {
		t.Errorf("resumed compare rebuilt instead of using the cache:\n%s", out)
	}
}

// builtPerfbot is the command compiled once per test binary (by
// buildPerfbot), in a folder TestMain removes.
var builtPerfbot struct {
	once sync.Once
	dir  string // the folder it lies in
	bin  string
	err  error
}

// buildPerfbot compiles the command once per test binary and returns the
// path of the executable, which the tests share and only run.
func buildPerfbot(t *testing.T) string {
	t.Helper()
	b := &builtPerfbot
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "perfbot-test-bin-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "perfbot")
		if out, err := exec.Command("go", "build", "-o", b.bin, ".").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// removeBuiltPerfbot removes what buildPerfbot compiled (TestMain, after
// the tests).
func removeBuiltPerfbot() {
	if builtPerfbot.dir != "" {
		_ = os.RemoveAll(builtPerfbot.dir)
	}
}
