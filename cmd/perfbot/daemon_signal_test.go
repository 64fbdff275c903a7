package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// daemon is a running `perfbot watch` (without --once).
type daemon struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error
}

func (w *watchSetup) start(t *testing.T, args ...string) *daemon {
	t.Helper()
	d := &daemon{log: filepath.Join(t.TempDir(), "stderr"), exited: make(chan struct{})}
	f, err := os.Create(d.log)
	if err != nil {
		t.Fatal(err)
	}
	d.cmd = exec.Command(w.bin, append(append([]string{"watch"}, args...), w.watchFile)...)
	d.cmd.Stdout, d.cmd.Stderr = f, f
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.err = d.cmd.Wait(); f.Close(); close(d.exited) }()
	t.Cleanup(func() {
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.exited
	})
	return d
}

func (d *daemon) output() string { data, _ := os.ReadFile(d.log); return string(data) }

// waitFor waits until the log holds s n times (or the process exits).
func (d *daemon) waitFor(t *testing.T, s string, n int, limit time.Duration) string {
	t.Helper()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		out := d.output()
		if strings.Count(out, s) >= n {
			return out
		}
		select {
		case <-d.exited:
			t.Fatalf("perfbot watch exited (%v) before logging %q %d times:\n%s", d.err, s, n, out)
		default:
		}
		if time.Since(start) > limit {
			t.Fatalf("perfbot watch did not log %q %d times in %v:\n%s", s, n, limit, out)
		}
	}
}

// stop sends sig and waits at most limit for the exit; it returns the
// exit status and how long it took.
func (d *daemon) stop(t *testing.T, sig syscall.Signal, limit time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	_ = d.cmd.Process.Signal(sig)
	select {
	case <-d.exited:
	case <-time.After(limit):
		t.Fatalf("perfbot watch still running %v after %v:\n%s", limit, sig, d.output())
	}
	return d.cmd.ProcessState.ExitCode(), time.Since(start)
}

// noneLeft waits for every process working in dir to be gone.
func noneLeft(t *testing.T, dir string) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		left := processesIn(dir)
		if len(left) == 0 {
			return
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("processes still running a minute after perfbot watch ended: %v", left)
		}
	}
}

// plainRuns counts the plain build's runs the store holds of commits.
func plainRuns(t *testing.T, jobFile string, commits ...string) int {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(filepath.Join(filepath.Dir(jobFile), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys, err := st.JobKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range keys {
		for _, c := range commits {
			rs, err := st.Runs(ctx, k, c, "")
			if err != nil {
				t.Fatal(err)
			}
			n += len(rs)
		}
	}
	return n
}

// startedHistory is a watch setup whose first cycle (watch --once) has
// tested the base commit, which it returns.
func startedHistory(t *testing.T, runs int) (*watchSetup, string) {
	t.Helper()
	w := newWatchSetup(t, runs)
	if code, out := w.once(t); code != exitOK {
		t.Fatalf("first cycle: exit %d\n%s", code, out)
	}
	return w, w.repo.Git("rev-parse", "HEAD")
}

// TestWatchDaemonKillResume kills `perfbot watch` with SIGKILL in the
// middle of a cycle's measuring and starts it again: no process of it is
// left, every run it logged is stored, the next start tests the same new
// commits (taking only what is missing), finds the planted regression and
// tells it once, and a third start tells nothing again.
func TestWatchDaemonKillResume(t *testing.T) {
	if testing.Short() {
		t.Skip("real builds, bisection and triage")
	}
	w, base := startedHistory(t, 10)
	slow := w.repo.Commit("hash twice", map[string]string{"bench.c": testutil.BenchC(2, "base")})
	docs := w.repo.Commit("docs", map[string]string{"README": "notes\n"})
	before := plainRuns(t, w.job, base, slow, docs)

	d := w.start(t)
	out := d.waitFor(t, "perfbot: run ", 5, 5*time.Minute)
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.exited
	first := d.output()
	noneLeft(t, filepath.Dir(w.job))
	logged := strings.Count(first, "perfbot: run ")
	if !strings.Contains(out, "testing 2 new commits") || strings.Contains(first, "cycle done") {
		t.Fatalf("not killed in the middle of measuring the 2 new commits:\n%s", first)
	}
	if got := plainRuns(t, w.job, base, slow, docs) - before; got != logged && got != logged+1 {
		t.Errorf("killed after logging %d runs; the store gained %d (want all of them, one more at most)", logged, got)
	}

	d = w.start(t)
	second := d.waitFor(t, "cycle done", 1, 10*time.Minute)
	if code, _ := d.stop(t, syscall.SIGTERM, 90*time.Second); code != 0 {
		t.Errorf("SIGTERM between cycles: exit %d, want 0", code)
	}
	if !strings.Contains(second, "testing 2 new commits") {
		t.Errorf("the restarted watch did not resume the killed cycle:\n%s", second)
	}
	if f := findingFiles(w); len(f) != 1 || !strings.Contains(f[0], slow[:12]) {
		t.Fatalf("after the resumed cycle the hook was told %v; want the regression %s once:\n%s", w.told(), slow[:12], second)
	}

	d = w.start(t)
	third := d.waitFor(t, "cycle done", 1, 5*time.Minute)
	d.stop(t, syscall.SIGTERM, 90*time.Second)
	if f := findingFiles(w); len(f) != 1 {
		t.Errorf("a third start told the findings again: %v\n%s", w.told(), third)
	}
	if strings.Contains(third, "perfbot: run ") {
		t.Errorf("a third start measured again:\n%s", third)
	}
}

// TestWatchDaemonTerm: SIGTERM in the middle of a cycle's runs ends
// `perfbot watch` with status 0 after the run in flight, which is stored;
// SIGTERM during a build that outlasts --grace interrupts it within the
// grace and leaves no process behind.
func TestWatchDaemonTerm(t *testing.T) {
	if testing.Short() {
		t.Skip("real builds")
	}
	w, base := startedHistory(t, 20)
	next := w.repo.Commit("docs", map[string]string{"README": "notes\n"})
	before := plainRuns(t, w.job, base, next)

	d := w.start(t, "--grace", "30s")
	d.waitFor(t, "perfbot: run ", 3, 5*time.Minute)
	code, took := d.stop(t, syscall.SIGTERM, 40*time.Second)
	out := d.output()
	if code != 0 || !strings.Contains(out, "watch: stopping") || !strings.Contains(out, "watch: stopped") {
		t.Errorf("SIGTERM mid-cycle: exit %d after %v, want 0 and the stop logged:\n%s", code, took, out)
	}
	logged := strings.Count(out, "perfbot: run ")
	if got := plainRuns(t, w.job, base, next) - before; got != logged {
		t.Errorf("stopped after logging %d runs; the store gained %d: the run in flight must finish and be stored", logged, got)
	}
	if logged >= 40 {
		t.Errorf("the whole cycle ran (%d runs) before the stop: not stopped after the run in flight", logged)
	}
	t.Logf("SIGTERM mid-runs: exit after %v, %d runs stored", took.Round(time.Millisecond), logged)
	noneLeft(t, filepath.Dir(w.job))

	// A build that takes longer than the grace: interrupted at its end.
	slowJob := strings.Replace(jobYAML(w.repo.Dir, 20, "./bench 4000000"), "command: make bench", "command: sleep 120; make bench", 1)
	if err := os.WriteFile(w.job, []byte(slowJob), 0o644); err != nil {
		t.Fatal(err)
	}
	d = w.start(t, "--grace", "3s")
	d.waitFor(t, "testing", 1, time.Minute)
	time.Sleep(500 * time.Millisecond)
	code, took = d.stop(t, syscall.SIGTERM, 20*time.Second)
	out = d.output()
	if code != 0 || took > 10*time.Second || !strings.Contains(out, "interrupting") {
		t.Errorf("SIGTERM during a 120 s build with --grace 3s: exit %d after %v; want 0 within the grace and a few seconds:\n%s", code, took, out)
	}
	t.Logf("SIGTERM during a long build, --grace 3s: exit after %v", took.Round(time.Millisecond))
	noneLeft(t, filepath.Dir(w.job))
}

// TestWatchDaemonReload: SIGHUP makes `perfbot watch` read its watch file
// again: a file with an error is refused (logged, the old one kept, still
// running), a good one is taken (its shorter interval starts the next
// cycle); SIGHUP does not stop it.
func TestWatchDaemonReload(t *testing.T) {
	if testing.Short() {
		t.Skip("real builds")
	}
	w := newWatchSetup(t, 3)
	good, _ := os.ReadFile(w.watchFile)
	d := w.start(t)
	d.waitFor(t, "cycle done", 1, 5*time.Minute)

	w.writeWatch(t, strings.Replace(string(good), "interval: 1h", "interval: soon", 1))
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	out := d.waitFor(t, "keeping the watch file read before", 1, 30*time.Second)
	if !strings.Contains(out, "interval") || !strings.Contains(out, "soon") {
		t.Errorf("the refused reload does not say why:\n%s", out)
	}

	w.writeWatch(t, strings.Replace(string(good), "interval: 1h", "interval: 2s", 1))
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitFor(t, "watch: reloaded", 1, 30*time.Second)
	d.waitFor(t, "cycle done", 2, 2*time.Minute) // the new interval: not an hour
	if code, _ := d.stop(t, syscall.SIGTERM, 90*time.Second); code != 0 {
		t.Errorf("SIGTERM: exit %d, want 0:\n%s", code, d.output())
	}
}
