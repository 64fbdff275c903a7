package watch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/textfx"
)

// figuresSeed places the planted commits of the demo's 40-commit "watch"
// history: the data-alignment shift at 5, the real 30 % slowdown at 18,
// the text-alignment shift at 24, the build failure at 38 (fixed at 39),
// so each growth of the branch brings one of them.
const figuresSeed = 4

// figuresGrowth is how far the watched branch reaches at each cycle.
var figuresGrowth = []int{1, 10, 20, 30, 40}

// TestWatchFigures measures the robot on the demo's 40-commit "watch"
// history (a real 30 % slowdown of text_ms, a commit that only shifts the
// hot loop, one that only moves data_kernel's arrays, a build failure
// fixed by the next commit, and notes-only commits), watched from its base
// and then growing by 10 commits between `watch --once` cycles, three
// ways, each on its own copy of the repository and its own store:
//
//   - watch with test: every-4 (the culprits between tested commits are
//     found by bisection);
//   - watch with test: heads (only each cycle's head is tested);
//   - the 0-day scheme on the same heads: a head is flagged when the mean
//     of one of its metrics moved by 5 % or more against the previous
//     head (6 runs each, in the same rounds), and every flagged head is
//     bisected with a fixed 6 runs per commit ("git bisect run"), no
//     check, no triage.
//
// It prints, per scheme, the findings against the planted truth, the runs,
// builds and machine time, and the machine time per finding;
// docs/watch.md quotes it. It runs for minutes, so only with
// PERFBOT_WATCH_FIGURES=1:
//
//	PERFBOT_WATCH_FIGURES=1 go test -run TestWatchFigures -v -timeout 60m ./internal/watch
//
// PERFBOT_WATCH_FIGURES_ONLY=every-4 (or heads, fixed6) runs one scheme.
func TestWatchFigures(t *testing.T) {
	if os.Getenv("PERFBOT_WATCH_FIGURES") != "1" {
		t.Skip("runs watch over a 40-commit history for minutes; set PERFBOT_WATCH_FIGURES=1 to measure")
	}
	testutil.NeedTool(t, "git", "gcc", "make")
	only := os.Getenv("PERFBOT_WATCH_FIGURES_ONLY")
	var figs []*figure
	for _, scheme := range []string{"every-4", "heads", "fixed6"} {
		if only != "" && only != scheme {
			continue
		}
		repo, err := demo.Create(filepath.Join(t.TempDir(), "kvstore"), demo.Options{History: demo.HistoryWatch, Seed: figuresSeed, Text: textfx.Placement(t)})
		if err != nil {
			t.Fatal(err)
		}
		if scheme == "every-4" {
			for _, c := range repo.Commits {
				if c.Effect != demo.EffectNoChange && c.Effect != demo.EffectBase {
					t.Logf("planted: %s %s (commit %d)", c.Hash[:12], c.Effect, repo.Index(c.Label)+1)
				}
			}
		}
		var fig *figure
		if scheme == "fixed6" {
			fig = fixedFigure(t, repo)
		} else {
			fig = watchFigure(t, repo, scheme)
		}
		figs = append(figs, fig)
	}
	// findings: all / naming a planted commit / naming it by what it is;
	// m/b/t runs: the runs of measuring, bisecting (with the check) and
	// triage; run and build time are the benchmark's and the compiler's
	// wall time; machine is the scheme's whole wall time.
	t.Logf("%-13s  %-8s  %5s  %-11s  %6s  %7s  %7s  %9s  %9s  %s", "scheme", "findings", "runs", "m/b/t runs", "builds", "run", "build", "machine", "per right", "findings")
	for _, f := range figs {
		t.Logf("%s", f)
	}
}

// figure is what one scheme did over the whole growth of the branch.
type figure struct {
	scheme   string
	cost     *costCounter
	wall     time.Duration
	findings []figFinding
}

// figFinding is one reported culprit and what the scheme called it.
type figFinding struct {
	culprit, metric, verdict string
	change                   float64
	planted                  string // the culprit's planted effect
}

// planted says whether the finding names a planted change (whatever it
// calls it).
func (f figFinding) plantedChange() bool {
	switch f.planted {
	case demo.EffectRealRegression, demo.EffectDataAlignment, demo.EffectTextAlignment:
		return true
	}
	return false
}

// right says whether the finding names a planted change by what it is:
// the real regression as a regression, an alignment shift as that
// alignment artifact (the fixed scheme, which does not triage, calls
// every change a regression or an improvement).
func (f figFinding) right() bool {
	switch f.planted {
	case demo.EffectRealRegression:
		return f.verdict == demo.EffectRealRegression || f.verdict == fixedRegression
	case demo.EffectDataAlignment, demo.EffectTextAlignment:
		return f.verdict == f.planted
	}
	return false
}

func (f *figure) String() string {
	right, named := 0, 0
	var list []string
	for _, x := range f.findings {
		if x.right() {
			right++
		}
		if x.plantedChange() {
			named++
		}
		list = append(list, fmt.Sprintf("%s %s %+.1f%% %s (planted: %s)", x.culprit[:12], x.metric, x.change, x.verdict, x.planted))
	}
	per := "-"
	if right > 0 {
		per = (f.wall / time.Duration(right)).Round(time.Second).String()
	}
	return fmt.Sprintf("%-13s  %-8s  %5d  %-11s  %6d  %7v  %7v  %9v  %9s  %s", f.scheme, fmt.Sprintf("%d/%d/%d", len(f.findings), named, right),
		f.cost.runs, f.cost.byPhase(), f.cost.builds, f.cost.runWall.Round(time.Second), f.cost.build.Round(time.Second), f.wall.Round(time.Second),
		per, strings.Join(list, "; "))
}

// growBranch moves the branch "watched" of the repository to its n-th
// commit.
func growBranch(t *testing.T, repo *demo.Repo, n int) {
	t.Helper()
	cmd := exec.Command("git", "branch", "-f", "watched", repo.Commits[n-1].Hash)
	cmd.Dir = repo.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git branch: %v\n%s", err, out)
	}
}

func plantedEffect(repo *demo.Repo, hash string) string {
	for _, c := range repo.Commits {
		if c.Hash == hash {
			return c.Effect
		}
	}
	return "not on the branch"
}

// watchFigure runs watch cycles over the growing branch with a test policy.
func watchFigure(t *testing.T, repo *demo.Repo, policy string) *figure {
	dir := filepath.Dir(repo.Dir)
	watchFile := filepath.Join(dir, "watch.yaml")
	write(t, watchFile, fmt.Sprintf("jobs:\n  - {file: %q, report: all, anchor: false}\nbranches: [watched]\ntest: %s\nreport: {dir: %q}\n",
		repo.JobFile, policy, filepath.Join(dir, "reports")))
	cfg, err := Load(watchFile)
	if err != nil {
		t.Fatal(err)
	}
	cost := &costCounter{}
	w := &Watcher{Config: cfg, CPUMode: "none", Logf: cost.logf(t), Progress: cost}
	start := time.Now()
	for _, n := range figuresGrowth {
		growBranch(t, repo, n)
		before := cost.snapshot()
		rep, err := w.Cycle(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: cycle up to commit %d: %d tested, findings %v, errors %v; %d runs, %d builds, %v",
			policy, n, len(rep.Tested), shorts(rep.Findings), rep.Errors, cost.runs-before.runs, cost.builds-before.builds,
			rep.Finished.Sub(rep.Started).Round(time.Second))
	}
	fig := &figure{scheme: "watch " + policy, cost: cost, wall: time.Since(start)}
	if st, err := store.Open(filepath.Join(dir, "kvstore", ".perfbot")); err == nil {
		r, _ := gitrev.Open(context.Background(), repo.Dir)
		list, _ := r.FirstParents(context.Background(), "watched", 0)
		jobs, _ := job.Load(repo.JobFile)
		for _, m := range []string{demo.MetricText, demo.MetricData} {
			if s, err := history.Build(context.Background(), st, jobs[0].Key(), "", m, list, 0.01); err == nil {
				_ = history.Annotate(context.Background(), st, s, jobs[0].Name)
				var b strings.Builder
				_ = report.WriteHistory(&b, s, report.HistoryOptions{JobName: jobs[0].Name, Branch: "watched"})
				t.Logf("%s: history of %s:\n%s", policy, m, b.String())
			}
		}
		st.Close()
	}
	fs, err := cfg.Findings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fs {
		f, err := finding.Decode(r.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range f.Metrics {
			fig.findings = append(fig.findings, figFinding{culprit: r.Culprit, metric: m.Metric, verdict: string(m.Verdict), change: m.Change,
				planted: plantedEffect(repo, r.Culprit)})
		}
		t.Logf("%s: mail subject: %s", policy, report.FindingSubject(f))
		if !fig.findings[len(fig.findings)-1].right() {
			t.Logf("%s: %s is %s, not what was planted: %s\n%s", policy, gitrev.Short(r.Culprit), f.Verdict, f.Sentence, f.Triage)
		}
	}
	return fig
}

func shorts(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = gitrev.Short(h)
	}
	return out
}

// costCounter is a measure.Progress that counts the runs and builds a
// scheme took, and their machine time, in all and per phase (measuring
// the tested commits, bisecting with its check, triage), the phase
// being told by the watcher's log (see phaseOf).
type costCounter struct {
	mu             sync.Mutex
	runs, builds   int
	runWall, build time.Duration
	phase          string
	phaseRuns      map[string]int
}

// The phases of a scheme's work.
const (
	phaseMeasure = "measure"
	phaseBisect  = "bisect"
	phaseTriage  = "triage"
)

// setPhase attributes the runs from now on to phase.
func (c *costCounter) setPhase(phase string) {
	c.mu.Lock()
	c.phase = phase
	c.mu.Unlock()
}

// logf is a watcher's Logf: it logs, and follows the phase from the
// watcher's lines ("testing N new commits", "... changes by", "triage:").
func (c *costCounter) logf(t *testing.T) func(string, ...any) {
	return func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		switch {
		case strings.Contains(line, " new commits against "):
			c.setPhase(phaseMeasure)
		case strings.Contains(line, " changes by "):
			c.setPhase(phaseBisect)
		case strings.HasPrefix(line, "watch: triage: "):
			c.setPhase(phaseTriage)
		}
		t.Log(line)
	}
}

// snapshot returns the counts so far.
func (c *costCounter) snapshot() costCounter {
	c.mu.Lock()
	defer c.mu.Unlock()
	return costCounter{runs: c.runs, builds: c.builds, runWall: c.runWall, build: c.build}
}

// byPhase says how many runs each phase took.
func (c *costCounter) byPhase() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%d/%d/%d", c.phaseRuns[phaseMeasure], c.phaseRuns[phaseBisect], c.phaseRuns[phaseTriage])
}

func (c *costCounter) Building(int, int, measure.Target) {}
func (c *costCounter) Built(_, _ int, _ measure.Target, r *build.Result, _ error) {
	if r == nil || r.Cached || r.Record == nil {
		return
	}
	c.mu.Lock()
	c.builds++
	c.build += r.Record.Duration
	c.mu.Unlock()
}
func (c *costCounter) Ran(_, _ int, _ measure.Target, r *store.RunRecord) {
	c.mu.Lock()
	c.runs++
	c.runWall += r.Usage.Wall
	if c.phaseRuns == nil {
		c.phaseRuns = map[string]int{}
	}
	c.phaseRuns[c.phase]++
	c.mu.Unlock()
}
