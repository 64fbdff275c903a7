package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/triage"
	"github.com/perfbot/perfbot/internal/verdict"
)

// exitInconclusive is the exit status of a triage that reached no verdict.
const exitInconclusive = 3

// triageExit is the error a finished triage returns for its verdict: nil
// for a change that is not a real regression, errRegression for one, and
// an error with ExitCode 3 for an inconclusive triage.
func triageExit(v verdict.Verdict) error {
	switch v {
	case verdict.RealRegression:
		return errRegression
	case verdict.Inconclusive:
		return exitCodeError{code: exitInconclusive, msg: "triage inconclusive (see the notes above)"}
	}
	return nil
}

// triageFlags are the flags of perfbot triage.
type triageFlags struct {
	metric    string
	preset    string
	format    report.Format
	maxRuns   int
	cpu       string
	storeDir  string
	jobName   string
	seed      int64
	alpha     float64
	effect    float64
	layouts   int
	maxLayout int
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
			if err := f.validate(); err != nil {
				return err
			}
			return triageJob(cmd.Context(), a, cmd, f, args[0], args[1], args[2])
		},
	}
	d := defaultTriageFlags()
	fl := cmd.Flags()
	fl.StringVar(&f.metric, "metric", "", "metric to triage (default: the job's first metric)")
	fl.StringVar(&f.preset, "preset", d.preset, "layout knobs: "+strings.Join(knobs.Names(), ", "))
	formatFlag(fl, &f.format, report.TriageFormats)
	fl.IntVar(&f.maxRuns, "max-runs", d.maxRuns, "most runs per build in one experiment (the 10 -> 20 -> 40 schedule stops there)")
	fl.StringVar(&f.cpu, "cpu", "", "auto (pin to the quietest CPU), none, or a CPU number (default: the job's run.cpu)")
	fl.StringVar(&f.storeDir, "store", "", "results store folder (default: .perfbot next to the job file)")
	fl.StringVar(&f.jobName, "job", "", "the atomic job to triage when the job file has a params matrix")
	fl.Int64Var(&f.seed, "seed", 0, "seed of the run order (default: derived from the job and commits)")
	fl.Float64Var(&f.alpha, "alpha", d.alpha, "error rate of each look of each test")
	fl.Float64Var(&f.effect, "effect", d.effect, "smallest change in percent that counts; smaller is no change")
	fl.IntVar(&f.layouts, "layouts", d.layouts, "layouts of the first sweep, the plain build included")
	fl.IntVar(&f.maxLayout, "max-layouts", d.maxLayout, "most layouts the sweep grows to")
	return cmd
}

// defaultTriageFlags are the flags' defaults (perfbot demo triages with them).
func defaultTriageFlags() triageFlags {
	return triageFlags{preset: "c", maxRuns: 40, alpha: 0.01, effect: 5, layouts: 4, maxLayout: knobs.MaxLayouts}
}

// validate checks the flags that need no job.
func (f *triageFlags) validate() error {
	var errs []error
	if !slices.Contains(knobs.Names(), f.preset) {
		errs = append(errs, fmt.Errorf("--preset %q: want one of %s", f.preset, strings.Join(knobs.Names(), ", ")))
	}
	if f.maxRuns < 10 {
		errs = append(errs, fmt.Errorf("--max-runs %d: want at least 10", f.maxRuns))
	}
	if !(f.alpha > 0 && f.alpha < 0.25) {
		errs = append(errs, fmt.Errorf("--alpha %v: want a value in (0, 0.25)", f.alpha))
	}
	if !(f.effect > 0 && f.effect < 100) {
		errs = append(errs, fmt.Errorf("--effect %v: want a percentage in (0, 100)", f.effect))
	}
	if f.layouts < 2 || f.maxLayout < f.layouts || f.maxLayout > knobs.MaxLayouts {
		errs = append(errs, fmt.Errorf("--layouts %d, --max-layouts %d: want 2 <= layouts <= max-layouts <= %d", f.layouts, f.maxLayout, knobs.MaxLayouts))
	}
	return errors.Join(errs...)
}

func triageJob(ctx context.Context, a *app, cmd *cobra.Command, f triageFlags, jobFile, baseRev, changedRev string) error {
	if !isJobFile(jobFile) {
		return fmt.Errorf("triage %s: want a job file (.yaml or .yml)", jobFile)
	}
	j, err := pickJob(jobFile, f.jobName)
	if err != nil {
		return err
	}
	ref, err := j.ResolveMetric(f.metric)
	if err != nil {
		return fmt.Errorf("--metric %q: %w", f.metric, err)
	}
	s, err := a.open(ctx, j, f.storeDir)
	if err != nil {
		return err
	}
	defer s.Close()
	commits, err := s.Resolve(ctx, []string{baseRev, changedRev})
	if err != nil {
		return err
	}
	cpu, err := measure.ChooseCPU(ctx, cpuMode(f.cpu, j), 10, f.effect, a.logf)
	if err != nil {
		return err
	}
	opt := triage.Options{
		Job: j, Store: s.Store, Builder: s.Builder, CPU: cpu, Metric: ref.Name, Preset: f.preset,
		MaxRuns: f.maxRuns, Progress: progress.New(a.stderr, a.stderrTTY), Log: a.stderr,
		Alpha: f.alpha, MinEffect: f.effect, Layouts: f.layouts, MaxLayouts: f.maxLayout, Seed: f.seed,
	}
	res, err := triage.Run(ctx, opt, commits[0], commits[1])
	if err != nil {
		return err
	}
	a.logf("triage budget: %d runs (%d new), %d builds (%d new) in %.1fs; a fixed design would take %d runs",
		res.Runs, res.NewRuns, res.Builds, res.NewBuilds, res.Wall.Seconds(), res.FixedRuns)
	ropt := report.TriageOptions{Format: f.format, Machine: measure.DescribeMachine(cpu),
		Command: reproduce(cmd, []string{jobFile, commits[0].Short(), commits[1].Short()}, map[string]string{"metric": res.Metric})}
	if err := report.WriteTriage(a.stdout, res, ropt); err != nil {
		return err
	}
	return triageExit(res.Verdict)
}
