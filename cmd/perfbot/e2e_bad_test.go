package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCompareBadInput checks that bad input gets a clear error (exit 2)
// naming what is wrong, and that failing runs are recorded, not dropped.
func TestCompareBadInput(t *testing.T) {
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": benchC(1, "base"), "Makefile": benchMakefile})
	broken := r.Commit("break the build", map[string]string{"bench.c": "int main( {\n"})

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
		code, _, errOut := perfbot(t, "compare", "--cpu", "none", job, base, base+"^{commit}")
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
	base := r.Commit("base", map[string]string{"bench.c": benchC(1, "base"), "Makefile": benchMakefile})
	marker := "perfbot-hang-" + filepath.Base(t.TempDir())
	// The marker rides as $0 of the inner shells, so /proc shows it.
	job := writeJob(t, strings.Replace(jobYAML(r.Dir, 3, `sh -c 'sleep 300; :' `+marker+` & sh -c 'sleep 301; :' `+marker+`; wait`), "timeout: 60s", "timeout: 1s", 1))
	start := time.Now()
	code, _, errOut := perfbot(t, "compare", "--cpu", "none", job, base, base)
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
func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the kill-and-resume test in short mode")
	}
	r := newGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": benchC(1, "base"), "Makefile": benchMakefile})
	next := r.Commit("comment", map[string]string{"bench.c": benchC(1, "next")})
	job := writeJob(t, jobYAML(r.Dir, 10, "./bench 4000000"))
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
	// Wait for a few stored runs, then kill perfbot without warning.
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(logPath)
		if strings.Count(string(data), "perfbot: run ") >= 5 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	logFile.Close()
	// The benchmark in flight dies with perfbot (review finding 7).
	time.Sleep(300 * time.Millisecond)
	if left := processesIn(filepath.Dir(job)); len(left) > 0 {
		t.Errorf("processes left running after perfbot was killed: %v", left)
	}
	first, _ := os.ReadFile(logPath)
	doneBefore := strings.Count(string(first), "perfbot: run ")
	if doneBefore < 5 || doneBefore >= 20 {
		t.Fatalf("killed after %d runs; want between 5 and 19:\n%s", doneBefore, first)
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
	if want := 20 - 2*complete; taken != want && taken != want-2 {
		t.Errorf("first compare logged %d runs (%d whole rounds), the resumed one took %d; want %d (or %d if one more round was stored unlogged):\n%s", doneBefore, complete, taken, want, want-2, out)
	}
	if !strings.Contains(string(out), "(cached)") {
		t.Errorf("resumed compare rebuilt instead of using the cache:\n%s", out)
	}
}

// buildPerfbot compiles the command once per test binary.
func buildPerfbot(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "perfbot")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
