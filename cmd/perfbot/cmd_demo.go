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

func init() { commands = append(commands, newDemoCmd) }

func newDemoCmd(a *app) *cobra.Command {
	var f compareFlags
	var dir string
	var noTriage bool
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
			repo, err := demo.Create(filepath.Join(dir, "kvstore"), demo.Options{History: "demo"})
			if err != nil {
				return fmt.Errorf("creating the demo project: %w", err)
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
				err := triageJob(ctx, a, tf, repo.JobFile, base.Hash, text.Hash)
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
	fl.BoolVar(&noTriage, "no-triage", false, "only compare; do not triage the alignment-only commit")
	fl.StringVar(&dir, "dir", "", "create the demo project here (default: a new temporary folder)")
	fl.BoolVarP(&f.all, "all", "a", false, "print every metric, not only the changed ones")
	fl.StringVarP(&f.format, "format", "f", "ncompare", "output format: ncompare, benchstat, json, csv, markdown")
	fl.IntVar(&f.runs, "runs", 0, "runs per commit (default: the demo job's)")
	fl.StringVar(&f.cpu, "cpu", "", "auto, none or a CPU number")
	fl.Float64Var(&f.alpha, "alpha", 0.05, "significance level")
	fl.Float64Var(&f.effect, "effect", 5, "smallest change in percent you care about")
	return cmd
}
