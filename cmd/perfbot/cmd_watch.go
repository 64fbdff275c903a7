package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/watch"
)

func newWatchCmd(a *app) *cobra.Command {
	var once bool
	var cpu, since string
	var grace time.Duration
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
reported twice. SIGTERM (or SIGINT) stops it in order: the run or build in
flight finishes and is stored (one still going after --grace, default 60s,
is interrupted and taken again at the next start); a second one stops it at
once. SIGHUP reads FILE again before the next cycle (a file with errors is
refused, logged, and the old one kept). A job whose cycle fails (an error, a
panic) is recorded in its store and the others go on; after notice_after
failed cycles in a row (default 3) a notice goes through the report hook and
mail. After each cycle old build worktrees are removed within the watch
file's gc budget (default 20GiB and 168h per store folder).

Exit status of --once (a failed job or branch is an error after the others
ran, and an error wins): 0 the cycle ran and found no new real regression
(its findings are in the report folder); 1 the cycle found a new real
regression (a finding that nobody dismissed); 2 error. Without --once: 0
when stopped by SIGTERM or SIGINT, 2 on error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := watch.Load(args[0])
			if err != nil {
				return err
			}
			if since != "" {
				cfg.Start = since
			}
			return runWatch(cmd.Context(), a, cfg, cpu, once, grace)
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "run one cycle and exit (for cron and CI)")
	cmd.Flags().StringVar(&since, "since", "", "backfill each branch's history from this commit (the watch file's start:), oldest first, max_commits a cycle")
	cmd.Flags().StringVar(&cpu, "cpu", "", "auto (pin to the quietest CPU, calibrated each cycle), none, or a CPU number (default: each job's run.cpu)")
	cmd.Flags().DurationVar(&grace, "grace", watch.DefaultGrace, "on SIGTERM, how long the run or build in flight may go on before it is interrupted")
	return cmd
}

func runWatch(ctx context.Context, a *app, cfg *watch.Config, cpuFlag string, once bool, grace time.Duration) error {
	if err := measure.CheckCPUMode(cpuFlag); err != nil {
		return err
	}
	w := &watch.Watcher{Config: cfg, CPUMode: cpuFlag, Progress: progress.New(a.stderr, a.stderrTTY), Logf: a.logf, Wait: a.waitf}
	if !once {
		stop, reload := make(chan struct{}, 1), make(chan struct{}, 1)
		defer procSignals.take(stop, reload)()
		return w.Run(ctx, watch.Signals{Stop: stop, Reload: reload, Grace: grace})
	}
	rep, err := w.Cycle(ctx)
	if err != nil {
		return err
	}
	w.Collect(ctx)
	a.logf("watch: %d commits tested, %d findings (report folder %s)", len(rep.Tested), len(rep.Findings), cfg.Report.Dir)
	if len(rep.Errors) > 0 {
		return fmt.Errorf("watch: %w", errors.Join(rep.Errors...))
	}
	regs, err := cfg.Regressions(ctx, rep)
	if err != nil {
		return err
	}
	if len(regs) > 0 {
		a.logf("watch: new real regressions: %s", strings.Join(shortHashes(regs), ", "))
		return errRegression
	}
	return nil
}

func shortHashes(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = gitrev.Short(h)
	}
	return out
}
