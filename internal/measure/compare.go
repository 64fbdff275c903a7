package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/stats"
)

// MinCompareRuns is the fewest runs of each revision a comparison takes:
// with fewer, neither the lkp rule nor a test can tell anything.
const MinCompareRuns = 3

// CompareConfig is a comparison of revisions of a job (perfbot compare):
// each atomic job measured in whole interleaved rounds, one table each.
type CompareConfig struct {
	// Env is where the revisions are built and measured; every job of
	// Jobs is measured in it (atomic jobs of one file share its store and
	// repository).
	Env Env
	// Jobs are the atomic jobs of the job file: a params matrix gives one
	// table each.
	Jobs []*job.Job
	// Revs are the revisions as the user typed them, the first the base.
	Revs []string
	// Runs is the number of runs of each revision (0: the job's runs); at
	// least MinCompareRuns.
	Runs int
	// Variant builds every revision with this build variant of the job
	// ("": the plain build).
	Variant string
	// Seed seeds the run order (0: derived from the job).
	Seed int64
	// Alpha is the level of each row's test (0: compare.DefaultAlpha).
	Alpha float64
	// EffectPct is the smallest change, in percent, that counts (0:
	// stats.DefaultEffectPct): a significant change smaller is shown,
	// marked and not counted as a regression; the noise warning of the
	// CPU calibration is about this size of change.
	EffectPct float64
	// FDR adjusts the p-values over the job's metrics
	// (Benjamini-Hochberg false discovery rate).
	FDR bool
}

// Comparison is what a comparison found: one table per atomic job.
type Comparison struct {
	Jobs []JobComparison
}

// JobComparison is the table of one atomic job.
type JobComparison struct {
	Name  string // the atomic job's name ("" for result files)
	Key   string // its job key
	Table *compare.Table
}

// Regressions counts the regressions of the job's own metrics that count
// (at least EffectPct large), over every table.
func (c *Comparison) Regressions() int {
	n := 0
	for _, j := range c.Jobs {
		r, _ := j.Table.Regressions()
		n += r
	}
	return n
}

// Regressed says whether a regression counts: exit status 1.
func (c *Comparison) Regressed() bool { return c.Regressions() > 0 }

// Check checks what can be checked before a session is opened: the
// revisions, the runs of every job, the levels and the variant. The
// errors name the flag as the user types it.
func (c CompareConfig) Check() error {
	if len(c.Jobs) == 0 {
		return errors.New("compare: no job")
	}
	if len(c.Revs) < 2 {
		return fmt.Errorf("compare %s: need at least two revisions", c.Jobs[0].File)
	}
	if err := c.checkRules(); err != nil {
		return err
	}
	if err := CheckCPUMode(c.Env.CPU); err != nil {
		return err
	}
	// A job file's runs: are at least 3 (job.Parse).
	if c.Runs != 0 && c.Runs < MinCompareRuns {
		return fmt.Errorf("--runs %d: need at least %d runs per revision", c.Runs, MinCompareRuns)
	}
	for _, j := range c.Jobs {
		if c.Variant != "" {
			if _, ok := j.Variant(c.Variant); !ok {
				return fmt.Errorf("--variant %q: job %s declares no such variant", c.Variant, j.File)
			}
		}
	}
	return nil
}

// checkRules checks the levels that decide a table, for Compare and
// CompareFiles.
func (c CompareConfig) checkRules() error {
	if !(c.Alpha >= 0 && c.Alpha < 1) {
		return fmt.Errorf("--alpha %g: want a level between 0 and 1", c.Alpha)
	}
	if !(c.EffectPct >= 0) || math.IsInf(c.EffectPct, 0) {
		return fmt.Errorf("--effect %g: want a change in percent, 0 or more", c.EffectPct)
	}
	return nil
}

func (c CompareConfig) runs(j *job.Job) int {
	if c.Runs > 0 {
		return c.Runs
	}
	return j.Runs
}

func (c CompareConfig) effectPct() float64 {
	if c.EffectPct > 0 {
		return c.EffectPct
	}
	return stats.DefaultEffectPct
}

func (c CompareConfig) alpha() float64 {
	if c.Alpha > 0 {
		return c.Alpha
	}
	return compare.DefaultAlpha
}

// decide reads t under the config's rules: FDR, then the effect that
// counts.
func (c CompareConfig) decide(t *compare.Table) {
	if c.FDR {
		t.AdjustFDR()
	}
	t.EffectPct = c.effectPct()
}

// Compare measures the revisions of every job of cfg, each in whole
// interleaved rounds pinned as cfg.Env says, and reads their tables. A
// run that fails is taken again within the measurement. On an error after
// a job's table was read (a revision with no successful run), the
// comparison so far comes back with it, that table last, so that its
// failed runs can be shown.
func Compare(ctx context.Context, cfg CompareConfig) (*Comparison, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	commits, err := resolveRevs(ctx, cfg.Env.Repo, cfg.Revs)
	if err != nil {
		return nil, err
	}
	cmp := &Comparison{}
	for _, j := range cfg.Jobs {
		t, err := compareJob(ctx, cfg, j, commits)
		if t != nil {
			cmp.Jobs = append(cmp.Jobs, JobComparison{Name: j.Name, Key: j.Key(), Table: t})
		}
		if err != nil {
			if t != nil {
				return cmp, err
			}
			return nil, err
		}
	}
	return cmp, nil
}

// compareJob measures the commits of one atomic job and reads its table.
// A commit whose diff from the base touches only paths the job ignores is
// not built or run: its column has 0 runs and the reason. When every
// measured commit's artifacts are byte-identical to the base's, one
// minimal look is taken, and the full runs only if it sees a change.
func compareJob(ctx context.Context, cfg CompareConfig, j *job.Job, commits []gitrev.Commit) (*compare.Table, error) {
	env := cfg.Env
	var v job.Variant
	if cfg.Variant != "" {
		v, _ = j.Variant(cfg.Variant) // Check saw it
	}
	reasons, err := Irrelevant(ctx, env.Repo, j, commits)
	if err != nil {
		return nil, err
	}
	var measured []gitrev.Commit
	for i, c := range commits {
		if reasons[i] == "" {
			measured = append(measured, c)
		} else {
			env.logf("%s: %s is not measured: %s", j.Name, c.Short(), reasons[i])
		}
	}
	if len(measured) < 2 {
		return withUnchanged(nil, commits, v.Name, reasons, cfg.alpha()), nil // nothing can have changed
	}
	runs := cfg.runs(j)
	cpu, err := env.Pin(ctx, j, runs, cfg.effectPct())
	if err != nil {
		return nil, err
	}
	targets := make([]Target, len(measured))
	for i, c := range measured {
		targets[i] = Target{Commit: c, Variant: v}
	}
	opt := env.Options(cpu)
	opt.Retry = true
	same, err := identicalTargets(ctx, j, targets, opt)
	if err != nil {
		return nil, interrupted(ctx, env, err)
	}
	look := runs
	if allSet(same) {
		look = min(runs, MinimalLook)
		env.logf("%s: %s; one look of %d runs", j.Name, IdenticalNote, look)
	}
	t, err := measureTable(ctx, cfg, j, targets, opt, look)
	if err == nil && look < runs && kpiChanged(t) {
		env.logf("%s: the look sees a change the artifacts do not; taking the full %d runs", j.Name, runs)
		t, err = measureTable(ctx, cfg, j, targets, opt, runs)
	}
	if t == nil {
		return nil, err
	}
	for i := range t.Columns {
		t.Columns[i].Identical = same[i]
	}
	return withUnchanged(t, commits, v.Name, reasons, cfg.alpha()), err
}

// measureTable measures the targets in runs whole interleaved rounds and
// reads their table under cfg's rules.
func measureTable(ctx context.Context, cfg CompareConfig, j *job.Job, targets []Target, opt Options, runs int) (*compare.Table, error) {
	opt.Runs, opt.WholeRounds = runs, true
	if cfg.Seed != 0 {
		opt.Rand = rand.New(rand.NewSource(cfg.Seed))
	}
	out, err := Measure(ctx, j, targets, opt)
	if err != nil {
		return nil, interrupted(ctx, cfg.Env, err)
	}
	if err := out.BuildErrors(); err != nil {
		return nil, err
	}
	t, err := out.Table(ctx, cfg.alpha())
	if err != nil {
		return t, err
	}
	cfg.decide(t)
	return t, nil
}

// interrupted words an error of an interrupted measurement.
func interrupted(ctx context.Context, env Env, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted (%v): every finished run is stored in %s; run the same command again to resume", ctx.Err(), env.Store.Dir())
	}
	return err
}

// resolveRevs turns revisions into commits, naming every unknown one.
func resolveRevs(ctx context.Context, repo *gitrev.Repo, revs []string) ([]gitrev.Commit, error) {
	if repo == nil {
		return nil, errors.New("measure: no repository to resolve the revisions in")
	}
	var commits []gitrev.Commit
	var errs []error
	for _, r := range revs {
		c, err := repo.Resolve(ctx, r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		commits = append(commits, c)
	}
	return commits, errors.Join(errs...)
}
