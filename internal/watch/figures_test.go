package watch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestWatchFigures measures the robot on a 40-commit branch with planted
// changes (the demo's "bisect" history: a real 30 % slowdown of text_ms, a
// commit that only shifts the hot loop, a build failure fixed by the next
// commit, and notes-only commits), from its base and then growing by 10
// commits between `watch --once` cycles with test: every-4, so the culprits between tested
// commits are found by bisection. It prints the findings against the
// planted truth and the machine time; docs/watch.md quotes it. It runs for
// minutes, so only with PERFBOT_WATCH_FIGURES=1:
//
//	PERFBOT_WATCH_FIGURES=1 go test -run TestWatchFigures -v -timeout 30m ./internal/watch
func TestWatchFigures(t *testing.T) {
	if os.Getenv("PERFBOT_WATCH_FIGURES") != "1" {
		t.Skip("runs watch over a 40-commit history for minutes; set PERFBOT_WATCH_FIGURES=1 to measure")
	}
	testutil.NeedTool(t, "git", "gcc", "make")
	dir := t.TempDir()
	repo, err := demo.Create(filepath.Join(dir, "kvstore"), demo.Options{History: demo.HistoryBisect, Commits: 40, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo.Dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	watchFile := filepath.Join(dir, "watch.yaml")
	write(t, watchFile, fmt.Sprintf("jobs:\n  - {file: %q, report: all}\nbranches: [watched]\ntest: every-4\nreport: {dir: %q}\n",
		repo.JobFile, filepath.Join(dir, "reports")))
	cfg, err := Load(watchFile)
	if err != nil {
		t.Fatal(err)
	}
	w := &Watcher{Config: cfg, CPU: -1, Logf: t.Logf}
	start := time.Now()
	// The history starts at the base; the branch then grows by 10.
	for _, n := range []int{1, 10, 20, 30, 40} {
		git("branch", "-f", "watched", repo.Commits[n-1].Hash)
		rep, err := w.Cycle(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("cycle up to commit %d: %d tested, findings %v, errors %v, %v", n, len(rep.Tested), rep.Findings, rep.Errors, rep.Finished.Sub(rep.Started).Round(time.Second))
	}
	if st, err := store.Open(filepath.Join(filepath.Dir(repo.JobFile), ".perfbot")); err == nil {
		r, _ := gitrev.Open(context.Background(), repo.Dir)
		list, _ := r.FirstParents(context.Background(), "watched", 0)
		jobs, _ := job.Load(repo.JobFile)
		for _, m := range []string{demo.MetricText, demo.MetricData} {
			if s, err := history.Build(context.Background(), st, jobs[0].Key(), "", m, list, 0.01); err == nil {
				var b strings.Builder
				report.WriteHistory(&b, s, nil, "text")
				t.Logf("history of %s:\n%s", m, b.String())
			}
		}
		st.Close()
	}
	fs, err := cfg.Findings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range repo.Commits {
		if c.Effect != demo.EffectNoChange && c.Effect != demo.EffectBase {
			t.Logf("planted: %s %s", c.Hash[:12], c.Effect)
		}
	}
	for _, r := range fs {
		f, _ := finding.Decode(r.Data)
		t.Logf("found: %s %s %+.1f%% %s", r.Culprit[:12], f.Verdict, f.Change, f.Metric)
	}
	t.Logf("machine time: %v for %d commits in %d cycles", time.Since(start).Round(time.Second), len(repo.Commits), 5)
}
