package main

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/report"
)

// compareFlags are the flags of perfbot compare.
type compareFlags struct {
	all      bool
	format   report.Format
	runs     int
	variant  string
	cpu      string
	seed     int64
	alpha    float64
	effect   float64
	storeDir string
	fdr      bool
}

func newCompareCmd(a *app) *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare JOB REV1 REV2 [REV...] | compare OLD.txt NEW.txt [MORE.txt...]",
		Short: "measure commits of a job and print the 0-day comparison table",
		Long: `Compare builds every revision of the job (each in its own git worktree,
cached by commit and build variant), runs the benchmark the job's number of
times per revision, interleaved in randomised balanced order (A B B A ...),
pinned to the quietest CPU, and prints the comparison in the layout of the
0-day robot's reports (lkp ncompare), first revision as the base.

Every finished run is committed to the results store (.perfbot/ next to the
job file) at once: an interrupted compare resumes where it stopped when run
again, and a second compare of the same revisions builds and runs nothing.

Each changed row is judged twice: by the lkp rule (the samples separate and
the means differ by more than 1%, 5% for resource figures) and by a real
statistical test with a confidence interval of the change (Wilcoxon
signed-rank on the interleaved pairs, or Mann-Whitney U for unpaired
samples). Rows the test calls significant are marked and listed under the
table. Only changed rows are printed unless --all.

With Go benchmark result files instead of a job (any arguments not ending
in .yaml or .yml), compare reads them like benchstat and compares them
unpaired, without running anything.

With many metrics (a Go benchmark package), --fdr adjusts the p-values
with the Benjamini-Hochberg procedure, so that about alpha of the reported
changes, not alpha of all metrics, are false alarms.

Exit status: 0 no significant regression of the job's metrics, 1 a significant
regression of one of them (perfbot's own resource figures, time.*, are shown
but do not count), 2 error.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if isJobFile(args[0]) {
				if len(args) < 3 {
					return fmt.Errorf("compare %s: need at least two revisions", args[0])
				}
				return compareJob(cmd.Context(), a, f, args[0], args[1:])
			}
			return compareFiles(a, f, args)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.all, "all", "a", false, "print every metric, not only the changed ones")
	formatFlag(fl, &f.format, report.Formats)
	fl.IntVar(&f.runs, "runs", 0, "runs per revision (default: the job's runs)")
	fl.StringVar(&f.variant, "variant", "", "build every revision with this build variant of the job")
	fl.StringVar(&f.cpu, "cpu", "", "auto (pin to the quietest CPU), none, or a CPU number (default: the job's run.cpu)")
	fl.Int64Var(&f.seed, "seed", 0, "seed of the run order (default: derived from the job)")
	fl.Float64Var(&f.alpha, "alpha", compare.DefaultAlpha, "significance level of the statistical tests")
	fl.Float64Var(&f.effect, "effect", 5, "smallest change in percent you care about: warn when the machine is too noisy to see it")
	fl.StringVar(&f.storeDir, "store", "", "results store folder (default: .perfbot next to the job file)")
	fl.BoolVar(&f.fdr, "fdr", false, "adjust p-values over the metrics (Benjamini-Hochberg false discovery rate): use with many metrics, e.g. a Go benchmark package")
	return cmd
}

func isJobFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

func compareJob(ctx context.Context, a *app, f compareFlags, jobFile string, revs []string) error {
	jobs, err := job.Load(jobFile)
	if err != nil {
		return err
	}
	// A params matrix gives one table per atomic job.
	regressions := 0
	var tables []report.JobTable
	for _, j := range jobs {
		t, err := measureTable(ctx, a, f, j, revs)
		if err != nil {
			return err
		}
		r, _ := t.Regressions()
		regressions += r
		tables = append(tables, report.JobTable{Name: j.Name, Key: j.Key(), Table: t})
	}
	if err := report.WriteJobs(a.stdout, tables, report.Options{All: f.all, Format: f.format}); err != nil {
		return err
	}
	if regressions > 0 {
		return errRegression
	}
	return nil
}

// measureTable measures revs of one atomic job and builds the table.
func measureTable(ctx context.Context, a *app, f compareFlags, j *job.Job, revs []string) (*compare.Table, error) {
	s, err := a.open(ctx, j, f.storeDir)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	commits, err := s.Resolve(ctx, revs)
	if err != nil {
		return nil, err
	}
	var v job.Variant
	if f.variant != "" {
		var ok bool
		if v, ok = j.Variant(f.variant); !ok {
			return nil, fmt.Errorf("--variant %q: job %s declares no such variant", f.variant, j.File)
		}
	}
	runs := j.Runs
	if f.runs > 0 {
		runs = f.runs
	}
	if runs < 3 {
		return nil, fmt.Errorf("--runs %d: need at least 3 runs per revision", runs)
	}
	cpu, err := measure.ChooseCPU(ctx, cpuMode(f.cpu, j), runs, f.effect, a.logf)
	if err != nil {
		return nil, err
	}
	targets := make([]measure.Target, len(commits))
	for i, c := range commits {
		targets[i] = measure.Target{Commit: c, Variant: v}
	}
	opt := measure.Options{Store: s.Store, Builder: s.Builder, Runs: runs, CPU: cpu, WholeRounds: true, Retry: true,
		Progress: progress.New(a.stderr, a.stderrTTY), Wait: a.waitf}
	if f.seed != 0 {
		opt.Rand = rand.New(rand.NewSource(f.seed))
	}
	out, err := measure.Measure(ctx, j, targets, opt)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted (%v): every finished run is stored in %s; run the same command again to resume", ctx.Err(), s.Store.Dir())
		}
		return nil, err
	}
	if err := out.BuildErrors(); err != nil {
		return nil, err
	}
	t, err := out.Table(ctx, f.alpha)
	if t != nil {
		_ = report.WriteFailures(a.stderr, t)
	}
	if err == nil && f.fdr {
		t.AdjustFDR()
	}
	return t, err
}

// compareFiles compares Go benchmark result files, like benchstat.
func compareFiles(a *app, f compareFlags, paths []string) error {
	t, warnings, err := compare.FromFiles(paths, f.alpha)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		a.logf("warning: %v", w)
	}
	if f.fdr {
		t.AdjustFDR()
	}
	if err := report.Write(a.stdout, t, report.Options{All: f.all, Format: f.format}); err != nil {
		return err
	}
	if r, _ := t.Regressions(); r > 0 {
		return errRegression
	}
	return nil
}
