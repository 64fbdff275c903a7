package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/watch"
)

func newWatchCmd(a *app) *cobra.Command {
	var once bool
	var cpu, since string
	cmd := &cobra.Command{
		Use:   "watch FILE",
		Short: "test new commits of watched branches unattended, find changes, bisect, triage and report them",
		Long: `Watch is perfbot's robot. FILE (a watch file, see docs/watch.md) names job
files, the branches of their repositories to follow, which new commits to
test and where to report.

Each cycle: optionally git fetch; test the untested commits after the newest
tested one (every, every-N or heads; at most max_commits per cycle), in
interleaved rounds together with that commit, so that every step of the
history is measured within one session; rebuild the history of each of the
job's metrics; for each change not handled before, bisect between the tested
commits around it, triage the culprit against its parent (real, or an
alignment artifact), and record one finding per culprit in the results
store, exported as JSON, Markdown and mail text into report.dir, and mailed
when report.smtp is set (policy per job: regressions, changes or all).

A commit that does not build is built once more in a later cycle, then
passed over (and reported, broken_builds); the next commit that builds is
measured against the last one that built. Runs are pinned as compare pins
them (--cpu, else each job's run.cpu; auto calibrates again each cycle).
--since REV (the watch file's start:) backfills each branch from REV,
oldest first, max_commits a cycle, resumable.

Without --once it runs a cycle every interval (default 10m) until stopped.
Kill it anywhere and start it again: nothing measured is lost and nothing is
reported twice.

Exit status: 0 the cycle ran (its findings are in the report folder); 2
error. With --once, a job or branch that failed is an error after the
others ran.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := watch.Load(args[0])
			if err != nil {
				return err
			}
			if since != "" {
				cfg.Start = since
			}
			return runWatch(cmd.Context(), a, cfg, cpu, once)
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "run one cycle and exit (for cron and CI)")
	cmd.Flags().StringVar(&since, "since", "", "backfill each branch's history from this commit (the watch file's start:), oldest first, max_commits a cycle")
	cmd.Flags().StringVar(&cpu, "cpu", "", "auto (pin to the quietest CPU, calibrated each cycle), none, or a CPU number (default: each job's run.cpu)")
	return cmd
}

func runWatch(ctx context.Context, a *app, cfg *watch.Config, cpuFlag string, once bool) error {
	if err := measure.CheckCPUMode(cpuFlag); err != nil {
		return err
	}
	w := &watch.Watcher{Config: cfg, CPUMode: cpuFlag, Progress: progress.New(a.stderr, a.stderrTTY), Logf: a.logf, Wait: a.waitf}
	if !once {
		return w.Run(ctx)
	}
	rep, err := w.Cycle(ctx)
	if err != nil {
		return err
	}
	a.logf("watch: %d commits tested, %d findings (report folder %s)", len(rep.Tested), len(rep.Findings), cfg.Report.Dir)
	if len(rep.Errors) > 0 {
		return fmt.Errorf("watch: %w", errors.Join(rep.Errors...))
	}
	return nil
}
