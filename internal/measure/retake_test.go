package measure

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestMachineLock: a second measurement on the machine waits for the first,
// whatever store it uses, and is told who holds the lock.
func TestMachineLock(t *testing.T) {
	t.Setenv(MachineLockEnv, t.TempDir()+"/machine.lock")
	ctx := context.Background()
	release, err := LockMachine(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
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
		if !strings.Contains(h, "pid") {
			t.Errorf("holder %q does not name the pid", h)
		}
	case err := <-got:
		t.Fatalf("second lock taken while the first is held (err %v)", err)
	case <-time.After(time.Minute):
		t.Fatal("second lock neither waited nor returned")
	}
	release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	// Cancelled while waiting: an error naming the lock.
	release, _ = LockMachine(ctx, nil)
	defer release()
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := LockMachine(cctx, nil); err == nil || !strings.Contains(err.Error(), "machine lock") {
		t.Errorf("cancelled wait: err %v", err)
	}
}
