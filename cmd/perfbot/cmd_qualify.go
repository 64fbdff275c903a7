package main

import (
	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/qualify"
	"github.com/perfbot/perfbot/internal/report"
)

func newQualifyCmd(a *app) *cobra.Command {
	var cfg qualify.Config
	var storeDir, jobName string
	var format report.Format
	cmd := &cobra.Command{
		Use:   "qualify JOB [REV]",
		Short: "measure whether this runner is quiet enough for the gate: A/A false-positive rate, noise, smallest detectable change",
		Long: `Qualify measures this runner for a job before anyone trusts perfbot gate on
it. It builds REV (default HEAD), takes fresh runs of it in interleaved
rounds until --max-runs or the time budget (--max-time, else the job's
qualify.max_time, else 20m), and from them:

  A/A gates        the same build on both sides: consecutive runs paired in
                   balanced order (A B | B A), resampled into --gates gates of
                   the gate's budget, each decided by the gate's own procedure
                   (every look, every gated metric); the share that fail is the
                   gate's false-positive rate on this runner, with its binomial
                   interval (the resampled gates share one pool of runs, so the
                   interval is narrower than over fresh runs)
  noise            per gated metric, the robust standard deviation of the
                   pairs' log ratios, in percent
  detectable       per gated metric, the smallest slowdown the gate fails on
                   in 80 % of the resampled gates, found by planting a
                   multiplicative shift in the A/A pairs and searching it
  planted slowdown when the job names one (qualify.slowdown: a variant or a
                   run environment that adds known work), measured beside the
                   plain build: its size and how often the gate fails on it

The runner and the figures are recorded in the store (the gate quotes the
latest qualification of its runner). Every run is stored too.

Exit status: 0 qualified, 1 not fit for the gate (its false-positive rate
is above the gate's alpha; the report says what to do), 2 error.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			j, err := pickJob(args[0], jobName)
			if err != nil {
				return err
			}
			cfg.Job = j
			if len(args) > 1 {
				cfg.Rev = args[1]
			}
			if err := cfg.Check(); err != nil {
				return err
			}
			s, err := a.open(ctx, j, storeDir)
			if err != nil {
				return err
			}
			defer s.Close()
			cfg.Env = s.Env(cfg.Env.CPU, progress.New(a.stderr, a.stderrTTY), a.logf, a.waitf)
			res, err := qualify.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if err := report.WriteQualify(a.stdout, res, format); err != nil {
				return err
			}
			return exitWith(res.ExitStatus())
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&cfg.MaxTime, "max-time", 0, "wall time of the qualification, builds included (default: the job's qualify.max_time, else 20m)")
	fl.IntVar(&cfg.MaxRuns, "max-runs", 0, "most runs of the plain build (default: 2 x gate.max_runs, one gate's pairs)")
	fl.IntVar(&cfg.Gates, "gates", qualify.DefaultGates, "resampled A/A gates")
	formatFlag(fl, &format, report.QualifyFormats)
	cpuFlag(fl, &cfg.Env.CPU)
	storeFlag(fl, &storeDir)
	jobFlag(fl, &jobName)
	seedFlag(fl, &cfg.Seed)
	return cmd
}
