package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/compare/stored"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/report"
	runner "github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/triage"
)

// bisectFlags are the flags of perfbot bisect.
type bisectFlags struct {
	good, bad, metric string
	robust, knobs     string
	layouts           int
	format            report.Format
	improvement       bool
	endRuns, stepRuns int
	maxRuns           int
	checkRuns         int
	fixed             int
	alpha, effect     float64
	speculate         string
	cpu               string
	seed              int64
	storeDir          string
	jobName           string
	restart, noTriage bool
	maxCulprits       int
	extraRuns         int
	firstParent       bool
}

func newBisectCmd(a *app) *cobra.Command {
	var f bisectFlags
	cmd := &cobra.Command{
		Use:   "bisect JOB --good REV --bad REV --metric M",
		Short: "find the commit that changed a metric, deciding each step with a statistical test",
		Long: `Bisect searches the first-parent history from --good (exclusive) to --bad
for the first commit whose --metric is like the bad side's, the way
"git bisect run" would, but noise-aware: every step is a statistical
decision on repeated runs, not one run.

It measures the two ends first (9 runs each, interleaved, more while
unknown) and stops at once when they do not differ, or when the bad side
is the better one (the revisions are probably swapped; --improvement
searches for the commit that made the metric better). Each step then
measures the commit nearest the middle (3 runs to start) and compares it
with both ends (Mann-Whitney U, alpha 0.01 per look): the same as good or
different from bad toward good puts it on the good side; the same as bad
or different from good toward bad on the bad side; otherwise it gets more
runs (3 -> 6 -> 12 -> 24 -> 40). Each look also takes one run of an end
in the middle of the commit's runs, a canary: when it is far off its
usual figure the machine was in a burst of load, and the look is not
trusted. Runs already in the results store (from an earlier bisect or
compare) are reused, never repeated. A commit that does not build, or
whose runs all fail, is skipped like "git bisect skip" and reported.

When it lands, it checks the culprit against its parent with fresh
interleaved runs (the "sandwich"); when the check does not confirm it,
the culprit and its parent are re-tested and the search goes on from the
wrong step. It prints the comparison table of the two in the 0-day
layout. Without --layout-robust it then runs perfbot triage on the pair,
to say whether the change is real or an alignment artifact. With --layout-robust every commit is built with forced
alignment (forced) or measured under a sweep of --layouts text layouts
(sweep; the figure is the geometric mean over the layouts), so that a
commit that only moves code does not look like a change.

A range can hold more than one change. After each confirmed culprit, the
ranges it leaves (from the range's good end to the culprit's parent, and
from the culprit to the range's bad end) are compared end to end and
searched in turn when their ends differ, so every culprit is named; a
commit found to differ from both ends of its range splits the range in
two the same way. --max-culprits (default 4; 1 names only the first) and
--extra-runs (a cap on the runs taken after the first culprit; 0: none)
bound that search; the ranges the budget leaves are listed as not searched,
and running again with a larger budget goes on from there.

A culprit that is a merge is searched inside: when its second parent,
measured against the merge base, reproduces the change, the merged side
(from the merge base to the second parent, on its first-parent history)
is bisected and the culprit found there is named, with the merge it came
through; when it does not, neither side alone has the change and the merge
itself is the culprit (an interaction). --first-parent leaves merges as
they are.

The bisection's state is saved in the results store after every step:
an interrupted bisect resumes where it stopped when run again with the
same arguments; a finished one prints its report again. --restart forgets
the state (the stored runs are still reused).

--speculate build builds both possible next commits on the other CPUs
while the current one runs (auto does so when runs are pinned and another
CPU is free); it hides the build time but disturbs the runs on machines
whose CPUs share a core or a cache. --speculate runs measures them in the
same interleaved batch, which only pays when several runs can happen at
once. See docs/bisect.md.

Exit status: 0 a culprit was found and the check confirmed it (the first
one: the others, and a budget that ran out, are in the report); 1 no
confirmed culprit (the ends do not differ, the check did not confirm, or
skipped commits leave several candidates); 2 bad input or an error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return bisectJob(cmd.Context(), a, cmd, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.good, "good", "", "a revision without the change (required)")
	fl.StringVar(&f.bad, "bad", "", "a later revision with the change (required)")
	fl.StringVar(&f.metric, "metric", "", "the metric to bisect (default: the job's only metric)")
	fl.StringVar(&f.robust, "layout-robust", "", "measure every commit under forced alignment (forced) or a layout sweep (sweep)")
	fl.StringVar(&f.knobs, "knobs", "c", "layout knobs preset for --layout-robust: "+strings.Join(knobs.Names(), ", "))
	fl.IntVar(&f.layouts, "layouts", 4, "layouts of --layout-robust sweep")
	formatFlag(fl, &f.format, report.BisectFormats)
	fl.BoolVar(&f.improvement, "improvement", false, "search for the commit that made the metric better")
	fl.IntVar(&f.endRuns, "runs", 0, "runs of each end at the first look (default: the fewest with which a first look at a commit can reach --alpha, 9)")
	fl.IntVar(&f.stepRuns, "step-runs", bisect.DefaultStepRuns, "runs of a tested commit at the first look")
	fl.IntVar(&f.maxRuns, "max-runs", bisect.DefaultMaxRuns, "most runs of any commit (per layout)")
	fl.IntVar(&f.checkRuns, "check-runs", 0, "fresh runs of culprit and parent each in the check (default: the fewest that can reach --alpha, 5)")
	fl.IntVar(&f.fixed, "fixed", 0, "instead of tests, the plain git-bisect-run scheme with this many runs per commit (for comparison)")
	fl.Float64Var(&f.alpha, "alpha", bisect.DefaultAlpha, "error rate of each look of each test")
	fl.Float64Var(&f.effect, "effect", 100*bisect.DefaultMinEffect, "changes within this many percent count as the same")
	fl.StringVar(&f.speculate, "speculate", "none", "work ahead: none, build (build the next commits while runs are taken), runs (measure them too) or auto (build when runs are pinned and a CPU is free)")
	fl.StringVar(&f.cpu, "cpu", "", "auto (pin to the quietest CPU), none, or a CPU number (default: the job's run.cpu)")
	fl.Int64Var(&f.seed, "seed", 0, "seed of the run order (default: derived from the job)")
	fl.StringVar(&f.storeDir, "store", "", "results store folder (default: .perfbot next to the job file)")
	fl.StringVar(&f.jobName, "job", "", "the atomic job to bisect when the job file has a params matrix")
	fl.BoolVar(&f.restart, "restart", false, "forget a saved bisection of these arguments and start again")
	fl.BoolVar(&f.noTriage, "no-triage", false, "do not triage the culprits")
	fl.IntVar(&f.maxCulprits, "max-culprits", bisect.DefaultMaxCulprits, "most culprits to name: after each, the ranges it leaves are searched while their ends differ (1: only the first)")
	fl.IntVar(&f.extraRuns, "extra-runs", 0, "most runs to take after the first culprit, looking for more (0: no cap but --max-culprits)")
	fl.BoolVar(&f.firstParent, "first-parent", false, "do not search inside a culprit that is a merge")
	_ = fl.MarkHidden("fixed")
	return cmd
}

// validate checks the flags that need no job.
func (f *bisectFlags) validate() error {
	var errs []error
	if f.good == "" {
		errs = append(errs, errors.New("--good is required"))
	}
	if f.bad == "" {
		errs = append(errs, errors.New("--bad is required"))
	}
	if _, err := bisect.ParseMode(f.robust); err != nil {
		errs = append(errs, err)
	}
	if f.robust == "sweep" && (f.layouts < 2 || f.layouts > knobs.MaxLayouts) {
		errs = append(errs, fmt.Errorf("--layouts %d: want 2 to %d", f.layouts, knobs.MaxLayouts))
	}
	switch f.speculate {
	case "auto", "none", "build", "runs":
	default:
		errs = append(errs, fmt.Errorf("--speculate %q: want auto, none, build or runs", f.speculate))
	}
	if f.maxCulprits < 1 {
		errs = append(errs, fmt.Errorf("--max-culprits %d: want 1 or more", f.maxCulprits))
	}
	if f.extraRuns < 0 {
		errs = append(errs, fmt.Errorf("--extra-runs %d: want 0 (no cap) or more", f.extraRuns))
	}
	if !(f.effect > 0 && f.effect < 1000) {
		errs = append(errs, fmt.Errorf("--effect %v: want a percentage above 0", f.effect))
	}
	return errors.Join(errs...)
}

// bisectPath resolves the revisions and the first-parent path between them,
// with errors that say which flag is wrong.
func bisectPath(ctx context.Context, repo *gitrev.Repo, goodRev, badRev string) (gitrev.Commit, []gitrev.Commit, error) {
	good, errG := repo.Resolve(ctx, goodRev)
	bad, errB := repo.Resolve(ctx, badRev)
	if errG != nil || errB != nil {
		var errs []error
		if errG != nil {
			errs = append(errs, fmt.Errorf("--good: %w", errG))
		}
		if errB != nil {
			errs = append(errs, fmt.Errorf("--bad: %w", errB))
		}
		return good, nil, errors.Join(errs...)
	}
	if good.Hash == bad.Hash {
		return good, nil, fmt.Errorf("--good %s and --bad %s are the same commit %s: nothing to bisect", goodRev, badRev, good.Short())
	}
	path, err := repo.FirstParentPath(ctx, good.Hash, bad.Hash)
	if err == nil {
		return good, path, nil
	}
	if _, rerr := repo.FirstParentPath(ctx, bad.Hash, good.Hash); rerr == nil {
		return good, nil, fmt.Errorf("--good %s (%s) comes after --bad %s (%s) in the history: the revisions are swapped; --good must be the older commit",
			goodRev, good.Short(), badRev, bad.Short())
	}
	return good, nil, fmt.Errorf("--good %s (%s) and --bad %s (%s): %v; bisect follows the first-parent history, so --good must be a first-parent ancestor of --bad (try their merge base)",
		goodRev, good.Short(), badRev, bad.Short(), err)
}

func bisectJob(ctx context.Context, a *app, cmd *cobra.Command, f bisectFlags, jobFile string) error {
	if err := f.validate(); err != nil {
		return err
	}
	mode, _ := bisect.ParseMode(f.robust)
	j, err := pickJob(jobFile, f.jobName)
	if err != nil {
		return err
	}
	if f.metric == "" && len(j.Metrics) > 1 {
		return fmt.Errorf("--metric is required: job %s produces %s", j.Name, strings.Join(j.MetricNames(), ", "))
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
	good, path, err := bisectPath(ctx, s.Repo, f.good, f.bad)
	if err != nil {
		return err
	}
	bad := path[len(path)-1]

	var preset knobs.Preset
	doTriage := mode == bisect.Plain && !f.noTriage && f.fixed == 0
	if mode != bisect.Plain || doTriage {
		preset, err = knobs.LookupIn(f.knobs, filepath.Join(s.Store.Dir(), "knobs"))
		if err != nil {
			return fmt.Errorf("--knobs: %w", err)
		}
	}
	variants, detail, err := mode.Variants(preset, f.layouts)
	if err != nil {
		return err
	}
	cpu, err := measure.ChooseCPU(ctx, cpuMode(f.cpu, j), max(f.endRuns, 6), f.effect, a.logf)
	if err != nil {
		return err
	}
	spec := bisect.Speculation(f.speculate)
	if f.speculate == "auto" {
		spec = bisect.AutoSpeculation(cpu, len(runner.Allowed()))
	}

	// The saved state of the same bisection, if any.
	key := bisect.StateKey(j, good.Hash, bad.Hash, ref.Name, variants, bisect.Settings{Improvement: f.improvement,
		Alpha: f.alpha, EffectPct: f.effect, EndRuns: f.endRuns, StepRuns: f.stepRuns, MaxRuns: f.maxRuns, CheckRuns: f.checkRuns, Fixed: f.fixed,
		FirstParentOnly: f.firstParent})
	resume, err := bisect.LoadState(ctx, s.Store, key, f.restart)
	if err != nil {
		return err
	}
	if resume != nil {
		a.logf("bisect: resuming the saved bisection %s", key)
	}

	logf := func(l string) { a.logf("bisect: %s", l) }
	m := &bisect.StoreMeasurer{Job: j, Store: s.Store, Builder: s.Builder, Repo: s.Repo, Metric: ref.Name,
		Variants: variants, CPU: cpu, Progress: progress.New(a.stderr, a.stderrTTY), Log: logf}
	if f.seed != 0 {
		m.Rand = rand.New(rand.NewSource(f.seed))
	}
	defer m.Wait()
	opt := bisect.Options{
		Measurer: m, Metric: ref.Name, Better: ref.Better, Improvement: f.improvement,
		Alpha: f.alpha, MinEffect: f.effect / 100,
		EndRuns: f.endRuns, StepRuns: f.stepRuns, MaxRuns: f.maxRuns, CheckRuns: f.checkRuns,
		Fixed: f.fixed, Speculate: spec, Resume: resume, Save: bisect.SaveState(s.Store, key), Log: logf,
		MaxCulprits: f.maxCulprits, ExtraRuns: f.extraRuns, FirstParentOnly: f.firstParent, Graph: bisect.GitGraph{Repo: s.Repo},
	}
	if doTriage {
		opt.Triage = func(ctx context.Context, parent, culprit gitrev.Commit) (*bisect.Triage, error) {
			res, err := triage.Run(ctx, triage.Options{
				Job: j, Store: s.Store, Builder: s.Builder, CPU: cpu, Metric: ref.Name, Preset: preset.Name(),
				Progress: progress.New(a.stderr, a.stderrTTY), Log: a.stderr,
			}, parent, culprit)
			if err != nil {
				return nil, err
			}
			return &bisect.Triage{Verdict: res.Verdict, Sentence: res.Sentence}, nil
		}
	}
	res, err := bisect.Run(ctx, opt, good, path)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("bisect interrupted (%w); the state is saved: run the same command again to resume", err)
		}
		if errors.Is(err, bisect.ErrNoChange) {
			return exitCodeError{code: exitNoCulprit, msg: "bisect: " + err.Error()}
		}
		return err
	}

	r := &report.BisectReport{Result: res, Job: j.Name, Repo: j.Repo, Params: j.Params, Mode: string(mode), ModeDetail: detail,
		Command: reproduce(cmd, []string{jobFile}, map[string]string{"good": good.Short(), "bad": bad.Short(), "metric": ref.Name})}
	if res.Culprit != nil && res.Check != nil {
		if r.Table, err = bisectTable(ctx, a, s.Store, j, res, variants); err != nil {
			// The report stands without its table.
			res.Notes = append(res.Notes, "the check's table cannot be shown: "+err.Error())
		}
	}
	if err := report.WriteBisect(a.stdout, r, f.format); err != nil {
		return err
	}
	if !res.Found() {
		return exitCodeError{code: exitNoCulprit, msg: "bisect: no confirmed culprit (see the report)"}
	}
	return nil
}

// exitNoCulprit is bisect's exit status when it found no confirmed culprit.
const exitNoCulprit = 1

// bisectTable is the 0-day table of parent vs culprit over every metric,
// from the check's fresh interleaved runs.
func bisectTable(ctx context.Context, a *app, st *store.Store, j *job.Job, res *bisect.Result, variants []job.Variant) (*compare.Table, error) {
	var ids []string
	for _, v := range variants {
		ids = append(ids, measure.VariantID(v))
	}
	name := ""
	if len(variants) == 1 {
		name = variants[0].Name
	}
	srcs := []stored.Source{
		{Commit: *res.Parent, Variant: name, Layouts: ids, Round: stored.Within(res.Check.ParentRuns[0], res.Check.ParentRuns[1])},
		{Commit: *res.Culprit, Variant: name, Layouts: ids, Round: stored.Within(res.Check.CulpritRuns[0], res.Check.CulpritRuns[1])},
	}
	t, err := stored.Table(ctx, st, j.Key(), srcs, compare.DefaultAlpha)
	if t != nil {
		_ = report.WriteFailures(a.stderr, t)
	}
	return t, err
}
