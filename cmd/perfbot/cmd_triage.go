package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/triage"
)

// exitWith is the error that ends a command with exit status code: nil
// for 0, errRegression for a regression nothing more needs saying about,
// else an error that prints why.
func exitWith(code int, why string) error {
	switch {
	case code == exitOK:
		return nil
	case code == exitRegression && why == "":
		return errRegression
	}
	return exitCodeError{code: code, msg: why}
}

// triageFlags are the flags of perfbot triage: a triage.Config but for
// the machine, which the session gives, and the format.
type triageFlags struct {
	cfg      triage.Config
	format   report.Format
	cpu      string
	storeDir string
	jobName  string
}

func newTriageCmd(a *app) *cobra.Command {
	var f triageFlags
	cmd := &cobra.Command{
		Use:   "triage JOB BASE CHANGED",
		Short: "say whether a performance change is real or an alignment artifact, with the experiments that show it",
		Long: `Triage decides whether the change of a metric from BASE to CHANGED is a real
performance change or an artifact of code or data alignment, the way a 0-day
engineer triages a report by hand, and prints the evidence.

It runs these experiments, in the order that reaches a verdict with the
fewest runs, and stops as soon as the verdict is clear:

  plain             both commits as they build, in interleaved pairs,
                    10 -> 20 -> 40 runs a side while the answer is unknown;
                    plus the layout diff of the two builds (no runs)
  layout sweep      both commits built under several layouts that move
                    code, data and stack (4, growing to 16 when needed), a
                    few runs each; the change is estimated with the layouts
                    as a random factor, with an interval across layouts
  forced alignment  both commits rebuilt with functions and loops aligned
                    to 64 bytes: a change that vanishes was text alignment
  restore           the changed commit rebuilt with padding that gives the
                    layout diff's top suspect its old offset back, beside
                    both commits: recovery of the base figure proves the
                    cause (base, changed, changed+padding)

The verdict rests on the layout-robust estimate, not on the plain
comparison alone, and the report says when the two disagree (a real change
can hide behind an alignment change). Verdicts: real-regression,
real-improvement, text-alignment, data-alignment, no-change, inconclusive.

--preset names the layout knobs of the build (see docs/knobs.md): c (gcc,
clang: compiler wrappers first on PATH add the flags and link the padding
first into the job's artifacts, so any build that calls the compiler by
name takes them), go, rust, kernel (KCFLAGS, and an ld wrapper that pads
vmlinux), or env (PERFBOT_* variables that the build command maps to its
own flags).

Every run and build is stored (.perfbot/ next to the job file) and reused:
a killed triage resumes where it stopped, and a repeated one runs nothing.

Exit status: 0 not a real regression (no-change, an alignment artifact or a
real improvement), 1 real regression, 2 error, 3 inconclusive.`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return triageJob(cmd.Context(), a, cmd, f, args[0], args[1], args[2])
		},
	}
	c := &f.cfg
	fl := cmd.Flags()
	fl.StringVar(&c.Metric, "metric", "", "metric to triage (default: the job's first metric)")
	fl.StringVar(&c.Preset, "preset", triage.DefaultPreset, "layout knobs: "+strings.Join(knobs.Names(), ", "))
	formatFlag(fl, &f.format, report.TriageFormats)
	fl.IntVar(&c.MaxRuns, "max-runs", triage.DefaultMaxRuns, "most runs per build in one experiment (the 10 -> 20 -> 40 schedule stops there)")
	cpuFlag(fl, &f.cpu)
	storeFlag(fl, &f.storeDir)
	jobFlag(fl, &f.jobName)
	seedFlag(fl, &c.Seed)
	fl.Float64Var(&c.Alpha, "alpha", triage.DefaultAlpha, "level of each look of each sequential test (the triage looks several times, so lower than compare's 0.05)")
	effectFlag(fl, &c.EffectPct)
	fl.IntVar(&c.Layouts, "layouts", triage.DefaultLayouts, "layouts of the first sweep, the plain build included")
	fl.IntVar(&c.MaxLayouts, "max-layouts", triage.DefaultMaxLayouts, "most layouts the sweep grows to")
	return cmd
}

// triageJob triages the change from baseRev to changedRev of the job file:
// the flags are checked before the machine is waited for.
func triageJob(ctx context.Context, a *app, cmd *cobra.Command, f triageFlags, jobFile, baseRev, changedRev string) error {
	if !isJobFile(jobFile) {
		return fmt.Errorf("triage %s: want a job file (.yaml or .yml)", jobFile)
	}
	if err := measure.CheckCPUMode(f.cpu); err != nil {
		return err
	}
	j, err := pickJob(jobFile, f.jobName)
	if err != nil {
		return err
	}
	cfg := f.cfg
	cfg.Job, cfg.Base, cfg.Changed = j, baseRev, changedRev
	if err := cfg.Check(); err != nil {
		return err
	}
	s, err := a.open(ctx, j, f.storeDir)
	if err != nil {
		return err
	}
	defer s.Close()
	return triagePrint(ctx, a, cmd, cfg, f, jobFile, s, map[string]string{})
}

// triagePrint triages in session s as cfg asks (with --cpu f.cpu), then
// prints the report in f.format as perfbot triage does, its "to
// reproduce" line the command cmd with the flags typed and those of set.
func triagePrint(ctx context.Context, a *app, cmd *cobra.Command, cfg triage.Config, f triageFlags, jobFile string, s *measure.Session, set map[string]string) error {
	cfg.Env = s.Env(f.cpu, progress.New(a.stderr, a.stderrTTY), a.logf, a.waitf)
	cfg.Log = a.stderr
	res, err := triage.Run(ctx, cfg)
	if err != nil {
		return err
	}
	a.logf("%s", res.Budget())
	set["metric"] = res.Metric
	ropt := report.TriageOptions{Format: f.format, Machine: res.Machine,
		Command: reproduce(cmd, []string{jobFile, res.Base.Short(), res.Changed.Short()}, set)}
	if err := report.WriteTriage(a.stdout, res, ropt); err != nil {
		return err
	}
	return exitWith(res.ExitStatus())
}
