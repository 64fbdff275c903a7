package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/report"
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
loop's alignment, a commit that really makes the hot path about 2x slower,
and a commit with no effect. Then it triages the alignment-only commit
against its parent ("perfbot triage"), which rebuilds both under forced
alignment and other layouts and says whether the change is real. It needs
git, make and gcc, and takes about a minute.

With --history triage, bisect, bisect-merge or watch, demo only creates the
history that perfbot's triage, bisect and watch tests use (a base with one
branch per case; 64 commits with one real regression, one alignment-only
shift and one broken build; 24 first-parent commits with an alignment-only
shift and the merge of a branch that holds the real regression; 40 commits
with one real regression, one code-alignment and one data-alignment shift
and one broken build) and prints the commands to run on it.

The project and its results store are kept, so you can run perfbot on them
yourself afterwards; demo prints the commands.`,
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
			repo, err := demo.Create(filepath.Join(dir, "kvstore"), demo.Options{History: history})
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
			base, text := repo.ByLabel(demo.EffectBase), repo.ByLabel(demo.EffectTextAlignment)
			if !noTriage {
				// The table cannot tell the alignment-only commit from a real
				// regression: triage it, as an engineer would.
				fmt.Fprintf(a.stdout, "\nperfbot triage %.12s %.12s (%s):\n\n", base.Hash, text.Hash, text.Subject)
				tf := defaultTriageFlags()
				tf.cpu = f.cpu
				// The triage command of this perfbot, so that the report's
				// "to reproduce" line is a whole perfbot command line.
				tc, _, err := cmd.Root().Find([]string{"triage"})
				if err != nil {
					return err
				}
				if tf.cpu != "" {
					_ = tc.Flags().Set("cpu", tf.cpu)
				}
				err = triageJob(ctx, a, tc, tf, repo.JobFile, base.Hash, text.Hash)
				var coded interface{ ExitCode() int }
				if err != nil && !errors.Is(err, errRegression) && !errors.As(err, &coded) {
					return err
				}
			}
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
	fl.StringVarP(&f.format, "format", "f", "ncompare", "output format: ncompare, benchstat, json, csv, markdown")
	fl.IntVar(&f.runs, "runs", 10, "runs per commit")
	fl.StringVar(&f.cpu, "cpu", "", "auto, none or a CPU number")
	fl.Float64Var(&f.alpha, "alpha", 0.01, "significance level (the demo tests 4 commits x 2 metrics: 0.01 keeps false alarms rare)")
	fl.Float64Var(&f.effect, "effect", 5, "smallest change in percent you care about")
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

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
