package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/watch"
)

func newHistoryCmd(a *app) *cobra.Command {
	var metricName, branch, storeDir, jobName, hist, preset string
	var format report.Format
	var alpha float64
	cmd := &cobra.Command{
		Use:   "history JOB [--metric M] [--branch B] [--history plain|forced] [--format text|json|csv|svg]",
		Short: "print the history perfbot watch keeps of a job's metric along a branch",
		Long: `History prints, per commit perfbot watch tested on the branch (oldest first),
the metric's chained level, its median in its own session with the
median's interval, its step against the commit tested before it (measured
within one session, with its interval and p-value), and the change points
watch handled with their culprits, the culprits' triage verdicts and the
findings' states. --history forced shows the history a watch file's
histories: [forced] keeps (under the forced alignment of --preset). It
reads the store and measures nothing, so it runs beside a watch.
docs/watch.md documents the JSON.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			j, err := pickJob(args[0], jobName)
			if err != nil {
				return err
			}
			ref, err := j.ResolveMetric(metricName)
			if err != nil {
				return fmt.Errorf("--metric %q: %w", metricName, err)
			}
			if storeDir == "" {
				storeDir = filepath.Join(filepath.Dir(j.File), ".perfbot")
			}
			variant, err := watch.HistoryVariant(hist, preset, storeDir)
			if err != nil {
				return fmt.Errorf("--history: %w", err)
			}
			st, err := store.Open(storeDir)
			if err != nil {
				return err
			}
			defer st.Close()
			repo, err := gitrev.Open(ctx, j.Repo)
			if err != nil {
				return fmt.Errorf("%s: repo: %w", j.File, err)
			}
			list, err := repo.FirstParents(ctx, branch, 0)
			if err != nil {
				return fmt.Errorf("--branch %q: %w", branch, err)
			}
			series, err := history.Build(ctx, st, j.Key(), variant, ref.Name, list, alpha)
			if err != nil {
				return err
			}
			if len(series.Points) == 0 {
				return fmt.Errorf("no commit of %s is tested for job %s (%s history) in %s: run perfbot watch first", branch, j.Name, hist, storeDir)
			}
			if err := watch.AnchorRatios(ctx, st, series, alpha); err != nil {
				return err
			}
			if err := watch.Annotate(ctx, st, series, j.Name); err != nil {
				return err
			}
			return report.WriteHistory(a.stdout, series, report.HistoryOptions{Format: format, JobName: j.Name, History: hist, Branch: branch})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&metricName, "metric", "", "the metric (default: the job's first)")
	fl.StringVar(&branch, "branch", "HEAD", "the branch whose first-parent history to follow")
	fl.StringVar(&hist, "history", "plain", "plain, or forced: the history kept under forced alignment (histories: [forced])")
	fl.StringVar(&preset, "preset", "c", "the layout preset of the forced history (the watch file's preset:)")
	fl.Float64Var(&alpha, "alpha", 0.01, "level of the steps' intervals (the watch file's alpha:)")
	formatFlag(fl, &format, report.HistoryFormats)
	fl.StringVar(&storeDir, "store", "", "results store folder (default: .perfbot next to the job file)")
	fl.StringVar(&jobName, "job", "", "the atomic job when the job file has a params matrix")
	return cmd
}
