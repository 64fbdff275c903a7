package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/history"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
)

func newHistoryCmd(a *app) *cobra.Command {
	var metricName, storeDir, jobName, hist, preset string
	var cfg history.Config
	var format report.Format
	cmd := &cobra.Command{
		Use:   "history JOB [--metric M] [--branch B] [--history plain|forced] [-f text|json|csv|svg]",
		Short: "print the history perfbot watch keeps of a job's metric along a branch",
		Long: `History prints, per commit perfbot watch tested on the branch (oldest first),
the metric's chained level, its median in its own session with the
median's interval, its step against the commit tested before it (measured
within one session, with its interval and p-value), its ratio to the
history's anchor commit when watch keeps one, and the change points watch
handled with their culprits, the culprits' triage verdicts and the
findings' states. --history forced shows the history a watch file's
histories: [forced] keeps (under the forced alignment of --preset). It
reads the store and measures nothing, so it runs beside a watch; the
dashboard's history page shows the same history. docs/watch.md documents
the JSON.

Exit status: 0 printed, 2 error (among them: no commit of the branch is
tested yet).`,
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
			if cfg.Variant, err = history.VariantOf(hist, preset, storeDir); err != nil {
				return fmt.Errorf("--history: %w", err)
			}
			st, err := store.Open(storeDir)
			if err != nil {
				return err
			}
			defer st.Close()
			if cfg.Repo, err = gitrev.Open(ctx, j.Repo); err != nil {
				return fmt.Errorf("%s: repo: %w", j.File, err)
			}
			cfg.Store, cfg.JobKey, cfg.JobName, cfg.Metric = st, j.Key(), j.Name, ref.Name
			series, err := history.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if len(series.Points) == 0 {
				return fmt.Errorf("no commit of %s is tested for job %s (%s history) in %s: run perfbot watch first", cfg.Branch, j.Name, hist, storeDir)
			}
			return report.WriteHistory(a.stdout, series, report.HistoryOptions{Format: format, JobName: j.Name, History: hist, Branch: cfg.Branch})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&metricName, "metric", "", "the metric (default: the job's first)")
	fl.StringVar(&cfg.Branch, "branch", history.DefaultBranch, "the branch whose first-parent history to follow")
	fl.StringVar(&hist, "history", "plain", "plain, or forced: the history kept under forced alignment (histories: [forced])")
	fl.StringVar(&preset, "preset", history.DefaultPreset, "the layout-knob preset of the forced history (the watch file's preset:)")
	fl.Float64Var(&cfg.Alpha, "alpha", history.DefaultAlpha, "level of each step's and ratio's interval, as the watch file's alpha: (each look of its sequential test)")
	formatFlag(fl, &format, report.HistoryFormats)
	storeFlag(fl, &storeDir)
	jobFlag(fl, &jobName)
	return cmd
}
