package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// watchSetup is a watched repository with a job beside it, and a watch
// file (with a report hook that logs what it is told) in a folder of its
// own.
type watchSetup struct {
	repo      *testutil.GitRepo
	job       string // the job file
	watchFile string
	hookLog   string
	bin       string
}

// newWatchSetup makes one with a job of testutil.BenchC's bench, runs runs.
func newWatchSetup(t *testing.T, runs int) *watchSetup {
	t.Helper()
	r := newGitRepo(t)
	r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "base"), "Makefile": testutil.BenchMakefile})
	w := &watchSetup{repo: r, bin: buildPerfbot(t)}
	w.job = filepath.Join(filepath.Dir(r.Dir), "job.yaml")
	if err := os.WriteFile(w.job, []byte(jobYAML(r.Dir, runs, "./bench 4000000")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w.watchFile = filepath.Join(dir, "watch.yaml")
	w.hookLog = filepath.Join(dir, "hook.log")
	w.writeWatch(t, fmt.Sprintf("jobs: [%s]\nbranches: [main]\ninterval: 1h\nreport:\n  hook: 'echo \"$PERFBOT_FINDING\" >> hook.log'\n", w.job))
	return w
}

func (w *watchSetup) writeWatch(t *testing.T, content string) {
	t.Helper()
	if err := os.WriteFile(w.watchFile, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// once runs `perfbot watch --once` and returns its exit status and stderr.
func (w *watchSetup) once(t *testing.T) (int, string) {
	t.Helper()
	cmd := exec.Command(w.bin, "watch", "--once", w.watchFile)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("watch --once: %v\n%s", err, out)
	return 0, ""
}

// told is what the hook was told, one file a line.
func (w *watchSetup) told() []string {
	data, _ := os.ReadFile(w.hookLog)
	return strings.Fields(string(data))
}

// cycles returns the job's recorded cycles of the store next to jobFile,
// newest first.
func cycles(t *testing.T, jobFile string) []store.CycleRecord {
	t.Helper()
	st, err := store.Open(filepath.Join(filepath.Dir(jobFile), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cs, err := st.Cycles(context.Background(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestWatchOnceExitNoticeGC runs `perfbot watch --once` cycles on two
// jobs with real gcc builds: one whose branch is missing (an error every
// cycle), one that gains a real 2x regression. It checks the exit status
// (2 on error even when a regression was found, 1 for a new real
// regression alone, 0 otherwise), that each job's cycle is recorded with
// its error while the other job goes on, that notice_after failed cycles
// send one notice per streak through the hook and a recovery is told,
// and that the gc budget removes every worktree after each cycle while a
// later compare still works from the cached builds.
func TestWatchOnceExitNoticeGC(t *testing.T) {
	if testing.Short() {
		t.Skip("real builds, bisection and triage")
	}
	w := newWatchSetup(t, 5)
	broken := newGitRepo(t)
	broken.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, "other"), "Makefile": testutil.BenchMakefile})
	broken.Git("branch", "-m", "main", "trunk") // no branch main: the job's cycle fails
	jobB := filepath.Join(filepath.Dir(broken.Dir), "job.yaml")
	if err := os.WriteFile(jobB, []byte(jobYAML(broken.Dir, 5, "./bench 4000000")), 0o644); err != nil {
		t.Fatal(err)
	}
	w.writeWatch(t, fmt.Sprintf(`jobs: [%s, %s]
branches: [main]
notice_after: 2
gc: {max_size: 1KiB}
report:
  hook: 'echo "$PERFBOT_FINDING" >> hook.log'
`, w.job, jobB))
	worktrees := filepath.Join(filepath.Dir(w.job), ".perfbot", "worktrees")
	noWorktrees := func(when string) {
		t.Helper()
		entries, _ := os.ReadDir(worktrees)
		for _, e := range entries {
			if e.IsDir() {
				t.Errorf("%s: worktree %s left although gc.max_size is 1KiB", when, e.Name())
			}
		}
	}

	// Cycle 1: the good job's history starts; the other fails.
	code, out := w.once(t)
	if code != exitError || !strings.Contains(out, "branch main") {
		t.Fatalf("cycle 1: exit %d, want 2 naming the missing branch:\n%s", code, out)
	}
	if cs := cycles(t, w.job); len(cs) != 1 || cs[0].Failed() || cs[0].Tested != 1 {
		t.Fatalf("cycle 1 of the good job: %+v; want one cycle that tested its head", cs)
	}
	if cs := cycles(t, jobB); len(cs) != 1 || !strings.Contains(cs[0].Error, "branch main") {
		t.Fatalf("cycle 1 of the broken job: %+v; want its error recorded", cs)
	}
	noWorktrees("cycle 1")

	// Cycle 2: a real regression, and the second failure in a row: exit 2
	// (the error first), one notice.
	w.repo.Commit("hash twice", map[string]string{"bench.c": testutil.BenchC(2, "base")})
	code, out = w.once(t)
	if code != exitError {
		t.Fatalf("cycle 2: exit %d, want 2 (an error beats the regression):\n%s", code, out)
	}
	if !strings.Contains(out, "2 failed watch cycles in a row") {
		t.Errorf("cycle 2: no failure notice logged:\n%s", out)
	}
	notices := noticeFiles(w.told())
	if len(notices) != 1 {
		t.Fatalf("after 2 failed cycles the hook was told %v; want one notice", w.told())
	}
	if data, _ := os.ReadFile(notices[0]); !strings.Contains(string(data), `"event": "failing"`) || !strings.Contains(string(data), "branch main") {
		t.Errorf("notice file:\n%s", data)
	}
	if len(findingFiles(w)) != 1 {
		t.Fatalf("cycle 2 told the findings %v; want the regression once", w.told())
	}
	noWorktrees("cycle 2")

	// Cycle 3: still failing: no second notice; nothing new: no finding again.
	code, out = w.once(t)
	if code != exitError {
		t.Fatalf("cycle 3: exit %d, want 2:\n%s", code, out)
	}
	if n := len(noticeFiles(w.told())); n != 1 || len(findingFiles(w)) != 1 {
		t.Errorf("cycle 3: told %v; want still one notice and one finding", w.told())
	}
	if cs := cycles(t, jobB); len(cs) != 3 || !cs[1].Noticed || cs[0].Noticed || cs[2].Noticed {
		t.Errorf("broken job's cycles: %+v; want 3 failed, the second marked noticed", cs)
	}

	// The branch appears: the job recovers (logged, told), exit 0.
	broken.Git("branch", "main", "trunk")
	code, out = w.once(t)
	if code != exitOK || !strings.Contains(out, "went through again after 3 failed cycles") {
		t.Fatalf("cycle 4: exit %d, want 0 and the recovery logged:\n%s", code, out)
	}
	if n := len(noticeFiles(w.told())); n != 2 {
		t.Errorf("after the recovery: told %v; want the failure and the recovery notices", w.told())
	}

	// A new real regression and no error: exit 1.
	w.repo.Commit("hash twice again", map[string]string{"bench.c": testutil.BenchC(4, "base")})
	code, out = w.once(t)
	if code != exitRegression || !strings.Contains(out, "new real regressions") {
		t.Fatalf("cycle 5: exit %d, want 1 for the new real regression:\n%s", code, out)
	}
	noWorktrees("cycle 5")

	// Every result stayed: a compare of the history's ends reuses the
	// cached builds and sees the regressions.
	cmp := exec.Command(w.bin, "compare", "--cpu", "none", w.job, "main~2", "main")
	cmpOut, err := cmp.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != exitRegression) {
		t.Fatalf("compare after gc: %v\n%s", err, cmpOut)
	}
	if err == nil || strings.Count(string(cmpOut), "(cached)") < 2 {
		t.Errorf("compare after gc: %v; want a regression, both builds from the cache:\n%s", err, cmpOut)
	}
}

// noticeFiles are the notices among the hook's files.
func noticeFiles(told []string) []string {
	var out []string
	for _, f := range told {
		if strings.Contains(f, string(filepath.Separator)+"notices"+string(filepath.Separator)) {
			out = append(out, f)
		}
	}
	return out
}

// findingFiles are the findings the hook was told.
func findingFiles(w *watchSetup) []string {
	var out []string
	for _, f := range w.told() {
		if len(noticeFiles([]string{f})) == 0 {
			out = append(out, f)
		}
	}
	return out
}
