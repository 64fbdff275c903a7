package main

import (
	"context"
	"fmt"
	"io"
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
	// Result files only: benchstat's -filter, -row, -col and -ignore.
	filter, row, col, ignore string
}

func newCompareCmd(a *app) *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare JOB REV1 REV2 [REV...] | compare OLD NEW [MORE...] (result files, - for stdin)",
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
table. A significant change smaller than --effect percent is listed as
small: it is shown, but it is no change and does not count as a
regression. Only changed rows are printed unless --all.

With result files instead of a job (any arguments not ending in .yaml or
.yml; - reads standard input, once), compare reads them like benchstat and
compares them unpaired, without running anything, under the same --alpha,
--effect and --fdr. Each file's format is told by its content: Go benchmark
text (go test -bench; its units and its pkg: kept), Google Benchmark JSON,
hyperfine --export-json, pytest-benchmark --benchmark-json (with
--benchmark-save-data for its raw timings), Rust criterion (estimates.json
or the criterion suite's JSON lines). An empty file, or one of no known
format, is an error naming it. --filter, --row, --col and --ignore are
benchstat's (golang.org/x/perf/benchproc syntax): --filter '.name:Encode'
keeps those benchmarks, --col /size puts each size in a column.

-f bmf writes Bencher Metric Format for a Bencher dashboard: the head's
medians and intervals and perfbot's decision (docs/ci.md).

With many metrics (a Go benchmark package), --fdr adjusts the p-values
with the Benjamini-Hochberg procedure, so that about alpha of the reported
changes, not alpha of all metrics, are false alarms.

Exit status: 0 no significant regression of the job's metrics, 1 a significant
regression of one of them at least --effect large (perfbot's own resource
figures, time.*, are shown but do not count), 2 error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if isJobFile(args[0]) {
				return compareJob(cmd.Context(), a, f, args[0], args[1:])
			}
			return compareFiles(a, f, args, cmd.InOrStdin())
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.all, "all", "a", false, "print every metric, not only the changed ones")
	formatFlag(fl, &f.format, report.Formats)
	fl.IntVar(&f.runs, "runs", 0, fmt.Sprintf("runs of each revision, at least %d (default: the job's runs)", measure.MinCompareRuns))
	fl.StringVar(&f.variant, "variant", "", "build every revision with this build variant of the job")
	cpuFlag(fl, &f.cpu)
	seedFlag(fl, &f.seed)
	fl.Float64Var(&f.alpha, "alpha", compare.DefaultAlpha, "significance level of each row's test (as benchstat's)")
	effectFlag(fl, &f.effect)
	storeFlag(fl, &f.storeDir)
	fl.BoolVar(&f.fdr, "fdr", false, "adjust p-values over the metrics (Benjamini-Hochberg false discovery rate): use with many metrics, e.g. a Go benchmark package")
	fl.StringVar(&f.filter, "filter", "", "result files: keep only results matching this benchstat filter (e.g. '.name:Encode', '/size:1k', 'pkg:example.com/x')")
	fl.StringVar(&f.row, "row", "", "result files: one row per value of this benchstat projection (default .fullname)")
	fl.StringVar(&f.col, "col", "", "result files: one column per value of this benchstat projection, the first the base (default .file)")
	fl.StringVar(&f.ignore, "ignore", "", "result files: keys whose differences within a row and column are expected (benchstat's -ignore)")
	return cmd
}

func isJobFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// config maps the flags to the comparison of jobs' revs.
func (f compareFlags) config(jobs []*job.Job, revs []string) measure.CompareConfig {
	return measure.CompareConfig{Env: measure.Env{CPU: f.cpu}, Jobs: jobs, Revs: revs, Runs: f.runs, Variant: f.variant,
		Seed: f.seed, Alpha: f.alpha, EffectPct: f.effect, FDR: f.fdr}
}

func compareJob(ctx context.Context, a *app, f compareFlags, jobFile string, revs []string) error {
	jobs, err := job.Load(jobFile)
	if err != nil {
		return err
	}
	cmp, err := measureJobs(ctx, a, f, jobs, revs)
	if err != nil {
		return err
	}
	return a.writeComparison(cmp, f)
}

// measureJobs runs the comparison of jobs (the atomic jobs of one file,
// which share its store and repository: one session for all) and shows
// the failed runs of each table.
func measureJobs(ctx context.Context, a *app, f compareFlags, jobs []*job.Job, revs []string) (*measure.Comparison, error) {
	cfg := f.config(jobs, revs)
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	s, err := a.open(ctx, jobs[0], f.storeDir)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	cfg.Env = s.Env(f.cpu, progress.New(a.stderr, a.stderrTTY), a.logf, a.waitf)
	cmp, err := measure.Compare(ctx, cfg)
	if cmp != nil {
		for _, j := range cmp.Jobs {
			_ = report.WriteFailures(a.stderr, j.Table)
		}
	}
	return cmp, err
}

// measureTable is the comparison of one atomic job's revs (perfbot demo).
func measureTable(ctx context.Context, a *app, f compareFlags, j *job.Job, revs []string) (*compare.Table, error) {
	cmp, err := measureJobs(ctx, a, f, []*job.Job{j}, revs)
	if err != nil {
		return nil, err
	}
	return cmp.Jobs[0].Table, nil
}

// writeComparison prints a comparison and maps it to the exit status.
func (a *app) writeComparison(cmp *measure.Comparison, f compareFlags) error {
	tables := make([]report.JobTable, len(cmp.Jobs))
	for i, j := range cmp.Jobs {
		tables[i] = report.JobTable{Name: j.Name, Key: j.Key, Table: j.Table}
	}
	if err := report.WriteJobs(a.stdout, tables, report.Options{All: f.all, Format: f.format}); err != nil {
		return err
	}
	if cmp.Regressed() {
		return errRegression
	}
	return nil
}

// compareFiles compares result files, like benchstat.
func compareFiles(a *app, f compareFlags, paths []string, stdin io.Reader) error {
	cmp, warnings, err := measure.CompareFiles(measure.FilesConfig{Paths: paths, Stdin: stdin,
		Filter: f.filter, Row: f.row, Col: f.col, Ignore: f.ignore, Alpha: f.alpha, EffectPct: f.effect, FDR: f.fdr})
	if err != nil {
		return err
	}
	for _, w := range warnings {
		a.logf("warning: %v", w)
	}
	return a.writeComparison(cmp, f)
}
