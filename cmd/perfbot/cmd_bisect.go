package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/report"
)

// bisectFlags are the flags of perfbot bisect: a bisect.Config but for
// the machine, which the session gives, and the format.
type bisectFlags struct {
	cfg       bisect.Config
	robust    string
	speculate string
	format    report.Format
	cpu       string
	storeDir  string
	jobName   string
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

It measures the two ends first (--runs, 9 each by default, interleaved, more while
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
layout. Without --layout-robust (and --no-triage) it then runs perfbot
triage on the pair, to say whether the change is real or an alignment
artifact. With --layout-robust every commit is built with forced
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
	c := &f.cfg
	fl := cmd.Flags()
	fl.StringVar(&c.Good, "good", "", "a revision without the change (required)")
	fl.StringVar(&c.Bad, "bad", "", "a later revision with the change (required)")
	fl.StringVar(&c.Metric, "metric", "", "the metric to bisect (default: the job's first metric)")
	fl.StringVar(&f.robust, "layout-robust", "", "measure every commit under forced alignment (forced) or a layout sweep (sweep)")
	fl.StringVar(&c.Preset, "preset", bisect.DefaultPreset, "layout knobs of --layout-robust and of the triage: "+strings.Join(knobs.Names(), ", "))
	deprecatedAlias(fl, "knobs", "preset", a.stderr)
	fl.IntVar(&c.Layouts, "layouts", bisect.DefaultLayouts, "layouts of --layout-robust sweep")
	formatFlag(fl, &f.format, report.BisectFormats)
	fl.BoolVar(&c.Improvement, "improvement", false, "search for the commit that made the metric better")
	fl.IntVar(&c.Runs, "runs", 0, "runs of each end (--good, --bad) at the first look (default: the fewest with which a first look at a commit can reach --alpha, 9)")
	fl.IntVar(&c.StepRuns, "step-runs", bisect.DefaultStepRuns, "runs of a tested commit at the first look")
	fl.IntVar(&c.MaxRuns, "max-runs", bisect.DefaultMaxRuns, "most runs of any commit (per layout)")
	fl.IntVar(&c.CheckRuns, "check-runs", 0, "fresh runs of culprit and parent each in the check (default: the fewest that can reach --alpha, 5)")
	fl.IntVar(&c.Fixed, "fixed", 0, "instead of tests, the plain git-bisect-run scheme with this many runs per commit (for comparison)")
	fl.Float64Var(&c.Alpha, "alpha", bisect.DefaultAlpha, "level of each look of each sequential test (a bisection looks many times, so lower than compare's 0.05)")
	effectFlag(fl, &c.EffectPct)
	fl.StringVar(&f.speculate, "speculate", string(bisect.DefaultSpeculate), "work ahead: none, build (build the next commits while runs are taken), runs (measure them too) or auto (build when runs are pinned and a CPU is free)")
	cpuFlag(fl, &f.cpu)
	seedFlag(fl, &c.Seed)
	storeFlag(fl, &f.storeDir)
	jobFlag(fl, &f.jobName)
	fl.BoolVar(&c.Restart, "restart", false, "forget a saved bisection of these arguments and start again")
	fl.BoolVar(&c.NoTriage, "no-triage", false, "do not triage the culprits")
	fl.IntVar(&c.MaxCulprits, "max-culprits", bisect.DefaultMaxCulprits, "most culprits to name: after each, the ranges it leaves are searched while their ends differ (1: only the first)")
	fl.IntVar(&c.ExtraRuns, "extra-runs", 0, "most runs to take after the first culprit, looking for more (0: no cap but --max-culprits)")
	fl.BoolVar(&c.FirstParentOnly, "first-parent", false, "do not search inside a culprit that is a merge")
	_ = fl.MarkHidden("fixed")
	return cmd
}

// bisectJob bisects the job file's job: the flags are checked before the
// machine is waited for.
func bisectJob(ctx context.Context, a *app, cmd *cobra.Command, f bisectFlags, jobFile string) error {
	if err := measure.CheckCPUMode(f.cpu); err != nil {
		return err
	}
	j, err := pickJob(jobFile, f.jobName)
	if err != nil {
		return err
	}
	cfg := f.cfg
	cfg.Job, cfg.Mode, cfg.Speculate = j, bisect.Mode(f.robust), bisect.Speculation(f.speculate)
	if err := cfg.Check(); err != nil {
		return err
	}
	s, err := a.open(ctx, j, f.storeDir)
	if err != nil {
		return err
	}
	defer s.Close()
	cfg.Env = s.Env(f.cpu, progress.New(a.stderr, a.stderrTTY), a.logf, a.waitf)
	res, err := bisect.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if res.Table != nil {
		_ = report.WriteFailures(a.stderr, res.Table)
	}
	r := &report.BisectReport{Result: res, Job: j.Name, Repo: j.Repo, Params: j.Params, Mode: string(res.Mode), ModeDetail: res.ModeDetail, Table: res.Table,
		Command: reproduce(cmd, []string{jobFile}, map[string]string{"good": res.Good.Short(), "bad": res.Bad.Short(), "metric": res.Metric})}
	if err := report.WriteBisect(a.stdout, r, f.format); err != nil {
		return err
	}
	return exitWith(res.ExitStatus())
}

// exitNoCulprit is bisect's exit status when it found no confirmed culprit.
const exitNoCulprit = bisect.ExitNoCulprit
