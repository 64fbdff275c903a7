package measure

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/internal/store"
)

// TestFailedRunsAreRetakenLater: a run that fails in every attempt of one
// measurement (its cause is outside the benchmark: a missing input, a
// too-short timeout, which the job key leaves out) is taken again by the
// next measurement, once the user has fixed the cause.
func TestFailedRunsAreRetakenLater(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "input-present")
	opt, targets := setup(t, "test -f "+flag+" || { echo missing input >&2; exit 1; }; echo work_ms: VERSION.5\n")
	j := loadJob(t, "3")
	out, err := Measure(context.Background(), j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	if out.Targets[0].Runs[0].Status != store.RunCrashed {
		t.Fatalf("run without input: status %q", out.Targets[0].Runs[0].Status)
	}
	// The user fixes the environment and re-runs the same command.
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = Measure(context.Background(), j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for _, tg := range out.Targets {
		for _, r := range tg.Runs {
			if r.Status == store.RunOK {
				ok++
			}
		}
	}
	if ok == 0 {
		t.Errorf("after fixing the cause, the second measure took %d runs and still has 0 OK runs: failed runs are sticky", out.Taken)
	}
}

// TestFailedRunReplacedWithin: one run that fails by chance is replaced in
// the same measurement (issue 12, defect 4): the comparison gets Runs whole
// rounds, all of them OK, and the failed attempt stays stored under its
// own run number.
func TestFailedRunReplacedWithin(t *testing.T) {
	dir := t.TempDir()
	// Commit 1's second run fails; every other run succeeds.
	opt, targets := setup(t, "c="+dir+"/count-VERSION; n=$(cat $c 2>/dev/null || echo 0); n=$((n+1)); echo $n > $c\n"+
		"if [ VERSION = 1 ] && [ $n = 2 ]; then echo flaky >&2; exit 1; fi; echo work_ms: VERSION.5\n")
	opt.WholeRounds, opt.Retry = true, true
	j := loadJob(t, "3")
	out, err := Measure(context.Background(), j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	if out.Taken != 8 {
		t.Errorf("took %d runs, want 8: 3 rounds of 2 and one round to replace the failed run", out.Taken)
	}
	if len(out.Rounds) != 3 {
		t.Fatalf("rounds %v, want 3", out.Rounds)
	}
	for i := range out.Targets {
		for _, r := range out.Targets[i].Runs {
			if slices.Contains(out.Rounds, r.Index) && r.Status != store.RunOK {
				t.Errorf("target %d: compared round %d has a %s run", i, r.Index, r.Status)
			}
		}
	}
	failed := 0
	for _, r := range out.Targets[0].Runs {
		if r.Status == store.RunCrashed && strings.Contains(r.Reason, "flaky") {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d failed runs of commit 1 stored, want the 1 failed attempt kept", failed)
	}
}

// TestBrokenTargetNotRetried: a target whose every run fails is broken, not
// flaky: no more passes are made, the rounds it failed are the ones
// compared (so the table reports the failures).
func TestBrokenTargetNotRetried(t *testing.T) {
	opt, targets := setup(t, "if [ VERSION = 1 ]; then exit 3; fi; echo work_ms: VERSION.5\n")
	opt.WholeRounds, opt.Retry = true, true
	j := loadJob(t, "3")
	out, err := Measure(context.Background(), j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	if out.Taken != 6 || !slices.Equal(out.Rounds, []int{1, 2, 3}) {
		t.Errorf("took %d runs, rounds %v; want 6 runs in rounds [1 2 3] and no retry", out.Taken, out.Rounds)
	}
}

// TestPerTargetRuns: targets may ask for different numbers of runs; they
// are spread over one session.
func TestPerTargetRuns(t *testing.T) {
	opt, targets := setup(t, "echo work_ms: VERSION.5\n")
	opt.Order = Spread
	targets[0].Runs, targets[1].Runs = 2, 5
	out, err := Measure(context.Background(), loadJob(t, "3"), targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := len(out.Targets[0].Runs), len(out.Targets[1].Runs); a != 2 || b != 5 || out.Taken != 7 {
		t.Errorf("stored %d and %d runs, took %d; want 2, 5 and 7", a, b, out.Taken)
	}
	if out.Targets[0].Runs[0].Session != out.Targets[1].Runs[4].Session {
		t.Errorf("runs of one measurement in two sessions")
	}
}

// recorder is an Executor that runs locally and records the tasks.
type recorder struct {
	mu    sync.Mutex
	tasks []Task
}

func (r *recorder) Execute(ctx context.Context, t Task) (*store.RunRecord, error) {
	r.mu.Lock()
	r.tasks = append(r.tasks, t)
	r.mu.Unlock()
	return Local{CPU: -1, Machine: "bench-7"}.Execute(ctx, t)
}

// TestExecutorPluggable: every run, warm-ups included, goes through the
// executor given; the records it returns are what is stored.
func TestExecutorPluggable(t *testing.T) {
	opt, targets := setup(t, "echo work_ms: VERSION.5\n")
	rec := &recorder{}
	opt.Executor = rec
	out, err := Measure(context.Background(), loadJob(t, "3"), targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	warm := 0
	for _, task := range rec.tasks {
		if task.Warmup {
			warm++
		}
		if task.Session != out.Session || task.LogDir == "" || task.Build == nil {
			t.Errorf("task %+v: want the measurement's session, a log folder and the build", task.Key)
		}
	}
	if warm != 2 || len(rec.tasks) != 8 {
		t.Errorf("executor got %d tasks, %d warm-ups; want 8 and 2 (one per target)", len(rec.tasks), warm)
	}
	// What the executor returned is what is stored: the machine too.
	for _, tg := range out.Targets {
		for _, r := range tg.Runs {
			if r.Machine != "bench-7" || r.Session != out.Session {
				t.Errorf("stored run %d: machine %q session %q; want bench-7 and %s", r.Index, r.Machine, r.Session, out.Session)
			}
		}
	}
}

// flockHeld reports whether the lock file is flocked by someone: it tries
// the lock through its own open file description (which conflicts with any
// other, even in this process) and gives it back at once.
func flockHeld(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return true
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}

// TestMachineLock: a measurement waits while another holds the machine
// lock, whatever store it uses, and is told who holds it; within one
// process the lock is re-entrant (a triage inside a bisection's session).
func TestMachineLock(t *testing.T) {
	path := t.TempDir() + "/machine.lock"
	t.Setenv(MachineLockEnv, path)
	ctx := context.Background()

	// Re-entrant: the second hold does not wait; the lock goes with the
	// last release.
	if h, busy := MachineHolder(); busy {
		t.Errorf("a lock never taken is held by %q", h)
	}
	r1, err := LockMachine(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h, busy := MachineHolder(); !busy || !strings.Contains(h, "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("while held: MachineHolder = %q, %v", h, busy)
	}
	r2, err := LockMachine(ctx, func(string) { t.Error("waited for itself") })
	if err != nil {
		t.Fatal(err)
	}
	r1()
	r1() // a second call of one release does nothing
	if !flockHeld(t, path) {
		t.Fatal("lock dropped while a hold remains")
	}
	r2()
	if flockHeld(t, path) {
		t.Fatal("lock kept after the last release")
	}
	if h, busy := MachineHolder(); busy {
		t.Errorf("after the release: held by %q", h)
	}

	// Another holder (another open file description, as another process
	// has): LockMachine waits, says who, and gets the lock once it is free.
	other, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	other.WriteAt([]byte("perfbot pid 4242 in /elsewhere\n"), 0)
	told := make(chan string, 1)
	got := make(chan error, 1)
	go func() {
		rel, err := LockMachine(ctx, func(h string) { told <- h })
		if err == nil {
			rel()
		}
		got <- err
	}()
	select {
	case h := <-told:
		if !strings.Contains(h, "pid 4242") {
			t.Errorf("holder %q does not name the other perfbot", h)
		}
	case err := <-got:
		t.Fatalf("lock taken while another holds it (err %v)", err)
	case <-time.After(time.Minute):
		t.Fatal("LockMachine neither waited nor returned")
	}
	other.Close() // releases its flock
	if err := <-got; err != nil {
		t.Fatal(err)
	}

	// Cancelled while waiting: an error naming the lock.
	other, _ = os.OpenFile(path, os.O_RDWR, 0)
	defer other.Close()
	unix.Flock(int(other.Fd()), unix.LOCK_EX)
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := LockMachine(cctx, nil); err == nil || !strings.Contains(err.Error(), "machine lock") {
		t.Errorf("cancelled wait: err %v", err)
	}
}

// TestTargetRuns: a target asking for no runs is only built and read; From
// leaves the runs up to it alone; one target given twice is an error.
func TestTargetRuns(t *testing.T) {
	opt, targets := setup(t, "echo work_ms: VERSION.5\n")
	j := loadJob(t, "3")
	ctx := context.Background()
	targets[0].Runs, targets[1].Runs = -1, -1
	out, err := Measure(ctx, j, targets, opt)
	if err != nil || out.Taken != 0 || out.Targets[0].Build == nil {
		t.Fatalf("read-only targets: took %d runs (err %v), build %v", out.Taken, err, out.Targets[0].Build)
	}
	targets[0].Runs, targets[0].From = 5, 3
	targets[1].Runs = -1
	out, err = Measure(ctx, j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	var idx []int
	for _, r := range out.Targets[0].Runs {
		idx = append(idx, r.Index)
	}
	if !slices.Equal(idx, []int{4, 5}) {
		t.Errorf("From 3, Runs 5 stored runs %v, want [4 5]", idx)
	}
	if _, err := Measure(ctx, j, []Target{targets[0], targets[0]}, opt); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a target given twice: err %v", err)
	}
}
