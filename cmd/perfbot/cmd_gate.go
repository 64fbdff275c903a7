package main

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/gate"
	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/report"
)

// gateFlags are the flags of perfbot gate: a gate.Config but for the
// machine, which the session gives, and where the report goes.
type gateFlags struct {
	cfg      gate.Config
	format   report.Format
	summary  string
	comment  string
	cpu      string
	storeDir string
	jobName  string
}

func newGateCmd(a *app) *cobra.Command {
	var f gateFlags
	cmd := &cobra.Command{
		Use:   "gate JOB BASE HEAD",
		Short: "the CI form of compare: pass or fail a pull request on its performance, with the smallest change the runner can see",
		Long: `Gate decides whether HEAD (a pull request's head) makes the job's metrics
worse than BASE (its base) by more than a threshold, on this runner, the way
a CI job needs it: without crying wolf on a noisy shared machine.

  1. A diff that touches only the job's ignore: paths is reported as
     unchanged, with no build and no run.
  2. BASE and HEAD are built in their worktrees. When their artifacts are
     byte-identical the report says so, and one look that agrees ends it.
  3. Both are measured in balanced interleaved rounds (B H, H B, ...) on
     this machine, look by look (10, 20, 40, ... pairs up to max_runs),
     each gated metric decided at every look by a one-sided paired test
     against its threshold, with the false-positive rate alpha spent over
     all metrics and looks. It stops when every gated metric is decided,
     at max_runs, or when the next look would pass max_time.
  4. A regression is triaged within what is left of max_time: an alignment
     artifact is reported as such, with its evidence, and passes unless
     the job's gate.alignment is fail.

The first line of every format is the verdict, e.g.
  no regression: text_ms -0.3 % [-2.1 %, +0.5 %]; smallest detectable change here 4 %
The smallest detectable change (at 80 % power with this budget, from the
runs' noise) is always printed: "no regression" means no regression of
that size or more.

The job file's gate: section sets the threshold, the gated metrics, alpha,
max_runs, max_time and the policies (docs/jobs.md); the flags override it.
Every run is stored (.perfbot/ next to the job file) and reused by a rerun.
The Markdown report is appended to $GITHUB_STEP_SUMMARY when it is set (or
to --summary FILE), and written to --comment FILE for a PR comment.

Exit status: 0 pass (no regression, an alignment artifact under the default
policy, or unchanged with 0 runs), 1 a regression significant and beyond the
threshold, 2 error, 3 inconclusive within the budget (gate.inconclusive may
make it 0 or 1).`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return gateJob(cmd.Context(), a, f, args[0], args[1], args[2])
		},
	}
	c := &f.cfg
	fl := cmd.Flags()
	formatFlag(fl, &f.format, report.GateFormats)
	fl.StringVar(&f.summary, "summary", "", "append the Markdown report to this file (default: $GITHUB_STEP_SUMMARY when set)")
	fl.StringVar(&f.comment, "comment", "", "write the Markdown report to this file, for a pull-request comment")
	fl.Float64Var(&c.ThresholdPct, "threshold", 0, fmt.Sprintf("smallest regression in percent that fails, for every gated metric (default: the job's gate:, else %g)", gate.DefaultThresholdPct))
	fl.StringArrayVar(&c.Metrics, "metric", nil, "gate on this metric (repeat for several; default: the job's gate.metrics, else all its own metrics)")
	fl.IntVar(&c.MaxRuns, "max-runs", 0, fmt.Sprintf("most runs of each revision (default: the job's gate.max_runs, else %d)", gate.DefaultMaxRuns))
	fl.DurationVar(&c.MaxTime, "max-time", 0, fmt.Sprintf("most wall time of measuring and triage (default: the job's gate.max_time, else %s)", gate.DefaultMaxTime))
	fl.Float64Var(&c.Alpha, "alpha", 0, fmt.Sprintf("false-positive rate of the gate over all metrics and looks (default: the job's gate.alpha, else %g)", gate.DefaultAlpha))
	fl.BoolVar(&c.NoTriage, "no-triage", false, "do not triage a regression (an alignment artifact then fails like any regression)")
	cpuFlag(fl, &f.cpu)
	storeFlag(fl, &f.storeDir)
	jobFlag(fl, &f.jobName)
	seedFlag(fl, &c.Seed)
	return cmd
}

// gateJob gates the change from baseRev to headRev of the job file: the
// flags are checked before the machine is waited for.
func gateJob(ctx context.Context, a *app, f gateFlags, jobFile, baseRev, headRev string) error {
	if !isJobFile(jobFile) {
		return fmt.Errorf("gate %s: want a job file (.yaml or .yml)", jobFile)
	}
	j, err := pickJob(jobFile, f.jobName)
	if err != nil {
		return err
	}
	cfg := f.cfg
	cfg.Job, cfg.Base, cfg.Head = j, baseRev, headRev
	cfg.Env.CPU = f.cpu
	if err := cfg.Check(); err != nil {
		return err
	}
	s, err := a.open(ctx, j, f.storeDir)
	if err != nil {
		return err
	}
	defer s.Close()
	cfg.Env = s.Env(f.cpu, progress.New(a.stderr, a.stderrTTY), a.logf, a.waitf)
	cfg.Log = a.stderr
	res, err := gate.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := report.WriteGate(a.stdout, res, f.format); err != nil {
		return err
	}
	if err := writeGateMarkdown(res, f.summary, f.comment); err != nil {
		return err
	}
	return exitWith(res.ExitStatus())
}

// writeGateMarkdown appends the Markdown report to the step summary
// (--summary, else $GITHUB_STEP_SUMMARY) and writes it to --comment.
func writeGateMarkdown(res *gate.Result, summary, comment string) error {
	if summary == "" {
		summary = os.Getenv("GITHUB_STEP_SUMMARY")
	}
	if summary == "" && comment == "" {
		return nil
	}
	var md bytes.Buffer
	if err := report.WriteGate(&md, res, report.FormatMarkdown); err != nil {
		return err
	}
	if summary != "" {
		fh, err := os.OpenFile(summary, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("step summary: %w", err)
		}
		_, err = fh.Write(md.Bytes())
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("step summary %s: %w", summary, err)
		}
	}
	if comment != "" {
		if err := os.WriteFile(comment, md.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--comment %s: %w", comment, err)
		}
	}
	return nil
}
