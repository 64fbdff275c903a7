package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/triage"
)

func newDemoCmd(a *app) *cobra.Command {
	var f compareFlags
	var dir string
	var noTriage bool
	var history string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "run perfbot's main job on a built-in demo project",
		Long: `Demo creates a small C benchmark project with a real git history in a
temporary folder (or --dir), then compares its commits the way
"perfbot compare" does: a base commit, a commit that only moves the hot
loop's alignment, one that only moves two arrays' alignment, a commit that
really makes the hot path about 2x slower, and a commit with no effect.
Then it triages the alignment-only commits against their parents
("perfbot triage"), which rebuilds both under forced alignment and other
layouts and says whether the change is real.

Which code offsets are slow is a property of the CPU, so the demo first
calibrates: it builds the hot loop at 32 offsets of its 64-byte line,
times them, confirms the largest difference with 12 fresh interleaved
pairs and puts the code-alignment commit between that fast and that slow
offset. Where no offset matters (a median ratio under 1.10, or fewer than
10 of the 12 pairs slower) it says so, and only the data-alignment commit
is triaged. It needs git, make and gcc, and takes about two minutes.

With --history triage, bisect, bisect-merge or watch, demo only creates the
history that perfbot's triage, bisect and watch tests use (a base with one
branch per case; 64 commits with one real regression, one alignment-only
shift and one broken build; 24 first-parent commits with an alignment-only
shift and the merge of a branch that holds the real regression; 40 commits
with one real regression, one code-alignment and one data-alignment shift
and one broken build) and prints the commands to run on it. Those
histories are not calibrated: their code-alignment commit moves the hot
loop from byte 22 to byte 54 of its line, which costs about 38 % on the
AMD EPYC hosts this project runs on and may cost nothing elsewhere.

The project and its results store are kept, so you can run perfbot on them
yourself afterwards; demo prints the commands.

Exit status: 0 the demo ran (whatever its verdicts: they are in the report),
2 error (git, make or gcc missing, a build that failed, bad flags).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if dir == "" {
				tmp, err := os.MkdirTemp("", "perfbot-demo-")
				if err != nil {
					return err
				}
				dir = tmp
			}
			opt := demo.Options{History: history}
			var cal *demo.Calibration
			if history == demo.HistoryDemo {
				// Where is this CPU slow? The history's text-alignment
				// commit moves the hot loop from a fast offset to a slow
				// one of this CPU, if it has one.
				cpu := demo.AutoCPU
				if f.cpu != "" && f.cpu != "auto" {
					var err error
					if cpu, err = measure.ChooseCPU(ctx, f.cpu, f.runs, f.effect, a.logf); err != nil {
						return err
					}
				}
				fmt.Fprintf(a.stderr, "perfbot: calibrating: where in its 64-byte line does this CPU run the demo's hot loop slowly?\n")
				var err error
				cal, err = demo.Calibrate(ctx, demo.CalibrateOptions{Dir: filepath.Join(dir, "calibration"), CPU: cpu, Log: indent{a.stderr}})
				if err != nil {
					return fmt.Errorf("calibrating the demo: %w", err)
				}
				opt.Text = &cal.Placement
				if !cal.Matters() {
					fmt.Fprintf(a.stderr, "perfbot: the hot loop's offset does not matter on this CPU (%+.1f %% at most, confirmed by %d pairs): "+
						"the text-alignment commit will measure as no change; the data-alignment commit shows an alignment artifact.\n", cal.TextEffectPct, len(cal.Ratios))
				}
			}
			repo, err := demo.Create(filepath.Join(dir, "kvstore"), opt)
			if err != nil {
				return fmt.Errorf("creating the demo project: %w", err)
			}
			if history != demo.HistoryDemo {
				return describeHistory(a, repo)
			}
			fmt.Fprintf(a.stderr, "perfbot: demo project in %s with commits:\n", repo.Dir)
			var revs []string
			for _, c := range repo.Commits {
				fmt.Fprintf(a.stderr, "  %.12s  %-16s %s\n", c.Hash, c.Effect, c.Subject)
				revs = append(revs, c.Hash)
			}
			jobs, err := job.Load(repo.JobFile)
			if err != nil {
				return err
			}
			t, err := measureTable(ctx, a, f, jobs[0], revs)
			if err != nil {
				return err
			}
			if err := report.Write(a.stdout, t, report.Options{All: f.all, Format: f.format}); err != nil {
				return err
			}
			// The table cannot tell an alignment-only commit from a real
			// regression: triage them against their parents, as an
			// engineer would (the text one only where its shift costs
			// time on this CPU).
			var suspects []demo.Commit
			if cal.Matters() {
				suspects = append(suspects, repo.ByLabel(demo.EffectTextAlignment))
			}
			suspects = append(suspects, repo.ByLabel(demo.EffectDataAlignment))
			for _, c := range suspects {
				if noTriage {
					break
				}
				if err := demoTriage(ctx, a, cmd, f, repo, jobs[0], c); err != nil {
					return err
				}
			}
			base, text := repo.ByLabel(demo.EffectBase), repo.ByLabel(demo.EffectTextAlignment)
			fmt.Fprintf(a.stderr, "\nperfbot: try it yourself:\n  perfbot compare %s %.12s %.12s\n  perfbot layout diff %s %.12s %.12s\n  perfbot triage %s %.12s %.12s\n",
				repo.JobFile, revs[0], revs[len(revs)-1], repo.JobFile, base.Hash, text.Hash, repo.JobFile, base.Hash, text.Hash)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&history, "history", demo.HistoryDemo, "demo (create and measure), or only create the history the triage, bisect or watch tests use: triage, bisect, bisect-merge, watch")
	fl.BoolVar(&noTriage, "no-triage", false, "only compare; do not triage the alignment-only commit")
	fl.StringVar(&dir, "dir", "", "create the demo project here (default: a new temporary folder)")
	fl.BoolVarP(&f.all, "all", "a", false, "print every metric, not only the changed ones")
	formatFlag(fl, &f.format, report.Formats)
	fl.IntVar(&f.runs, "runs", 10, "runs of each commit")
	cpuFlag(fl, &f.cpu)
	fl.Float64Var(&f.alpha, "alpha", 0.01, "significance level (the demo tests 4 commits x 2 metrics: 0.01 keeps false alarms rare)")
	effectFlag(fl, &f.effect)
	return cmd
}

// describeHistory lists a created history's commits and the commands that
// exercise it.
func describeHistory(a *app, repo *demo.Repo) error {
	fmt.Fprintf(a.stdout, "demo project (%s history) in %s\n", repo.History, repo.Dir)
	for _, c := range repo.Commits {
		if repo.History != demo.HistoryDemo && repo.History != demo.HistoryTriage && c.Effect == demo.EffectNoChange {
			continue
		}
		on := ""
		if c.Branch != "main" && repo.History == demo.HistoryBisectMerge {
			on = " (on branch " + c.Branch + ")"
		}
		fmt.Fprintf(a.stdout, "  %.12s  %-16s %s%s\n", c.Hash, c.Effect, c.Subject, on)
	}
	base := repo.ByLabel(demo.EffectBase)
	switch repo.History {
	case demo.HistoryTriage:
		fmt.Fprintf(a.stdout, "\ntry:\n")
		for _, c := range repo.Commits[1:] {
			fmt.Fprintf(a.stdout, "  perfbot triage --metric %s %s %.12s %.12s   # %s\n", orDefault(c.Metric, "text_ms"), repo.JobFile, base.Hash, c.Hash, c.Effect)
		}
	case demo.HistoryBisect, demo.HistoryBisectMerge:
		last := repo.Commits[len(repo.Commits)-1]
		fmt.Fprintf(a.stdout, "\ntry (a few minutes each):\n")
		fmt.Fprintf(a.stdout, "  perfbot bisect %s --good %.12s --bad %.12s --metric text_ms\n", repo.JobFile, base.Hash, last.Hash)
		fmt.Fprintf(a.stdout, "  perfbot bisect %s --good %.12s --bad %.12s --metric text_ms --layout-robust forced\n", repo.JobFile, base.Hash, last.Hash)
	case demo.HistoryWatch:
		// A branch "watched" grows along main by a quarter at a time, with
		// a watch cycle after each step.
		top := filepath.Dir(repo.Dir)
		wf := filepath.Join(top, "watch.yaml")
		fmt.Fprintf(a.stdout, "\ntry (a watch cycle after each growth of the branch \"watched\"; a few minutes in all):\n")
		fmt.Fprintf(a.stdout, "  printf 'jobs: [{file: %s, report: all}]\\nbranches: [watched]\\ntest: every-4\\n' > %s\n",
			filepath.Join(filepath.Base(repo.Dir), demo.JobFileName), wf)
		n := len(repo.Commits)
		for _, i := range []int{0, n / 4, n / 2, 3 * n / 4, n - 1} {
			fmt.Fprintf(a.stdout, "  git -C %s branch -f watched %.12s && perfbot watch %s --once\n", repo.Dir, repo.Commits[i].Hash, wf)
		}
		fmt.Fprintf(a.stdout, "  perfbot findings %s\n", wf)
		fmt.Fprintf(a.stdout, "  perfbot history %s --branch watched --metric data_ms\n", repo.JobFile)
	}
	return nil
}

// demoTriage triages commit c of the demo against its parent, as
// "perfbot triage --metric METRIC" would, with the triage's defaults.
func demoTriage(ctx context.Context, a *app, cmd *cobra.Command, f compareFlags, repo *demo.Repo, j *job.Job, c demo.Commit) error {
	fmt.Fprintf(a.stdout, "\nperfbot triage --metric %s %.12s %.12s (%s):\n\n", c.Metric, c.Parent, c.Hash, c.Subject)
	// The triage command of this perfbot, so that the report's "to
	// reproduce" line is a whole perfbot command line.
	tc, _, err := cmd.Root().Find([]string{"triage"})
	if err != nil {
		return err
	}
	cfg := triage.Config{Job: j, Base: c.Parent, Changed: c.Hash, Metric: c.Metric}
	if err := cfg.Check(); err != nil {
		return err
	}
	set := map[string]string{}
	if f.cpu != "" {
		set["cpu"] = f.cpu
	}
	s, err := a.open(ctx, j, "")
	if err != nil {
		return err
	}
	defer s.Close()
	err = triagePrint(ctx, a, tc, cfg, triageFlags{cpu: f.cpu}, repo.JobFile, s, set)
	var coded interface{ ExitCode() int }
	if err != nil && !errors.Is(err, errRegression) && !errors.As(err, &coded) {
		return err
	}
	return nil
}

// indent writes each line it gets indented by two spaces.
type indent struct{ w io.Writer }

func (i indent) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	if _, err := io.WriteString(i.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
