package triage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/verdict"
)

// Result is the verdict and the evidence behind it.
type Result struct {
	Verdict verdict.Verdict
	// Sentence is what a maintainer reads first: whether the change is
	// real, how large, and the experiment that shows it.
	Sentence string
	// Metric is the metric triaged, with its unit and direction.
	Metric string
	Unit   string
	Better metric.Better
	Job    string // the job's name
	Preset string // the knobs preset used

	Base, Changed gitrev.Commit

	// Change is the plain comparison's estimate of the change in percent
	// (Hodges-Lehmann, changed vs base) and Robust the estimate across
	// layouts; Disagreement says, when not empty, how the two differ.
	Change       float64
	Robust       *Robust
	Disagreement string

	// DecidedBy names the experiments the verdict rests on (none for an
	// inconclusive one): for a real change the layout sweep, or forced
	// alignment (or the data restore) with the sweep agreeing; for an
	// alignment artifact the plain comparison and the experiment that
	// removed the change.
	DecidedBy []ExperimentName

	// Identical is true when the two builds' artifacts (build.artifacts)
	// are byte-identical; the verdict rests on it only when the plain
	// comparison shows no difference (the change may live elsewhere).
	Identical bool
	// Experiments in the order they ran (skipped ones are absent).
	Experiments []Experiment
	// Suspects are the layout diff's top suspects, most likely first:
	// symbols whose place in their cache lines changed.
	Suspects []Suspect
	// Padding describes the restore padding, when one was proposed.
	Padding string
	// SourcePatch is the source patch that undoes the root change behind
	// the restore's suspect, when triage made one: measured as the restore
	// experiment's third column when it gave the layout back
	// (SourcePatch.Restored), else only reported.
	SourcePatch *SourcePatch
	// Notes say what the triage could not do, and for an inconclusive
	// verdict what would settle it.
	Notes []string
	// Instructions weighs the plain builds' instruction counts against
	// the change, for a job that counts them (nil otherwise).
	Instructions *InstructionEvidence

	// Runs is the number of benchmark runs the evidence rests on, NewRuns
	// those taken by this invocation (the rest came from the store).
	Runs, NewRuns int
	// Builds is the number of builds used, NewBuilds those built now.
	Builds, NewBuilds int
	// FixedRuns is what a fixed design would spend: every build this
	// triage could use (the plain, forced-alignment and first sweep's
	// builds, and the restore's three) measured 10 times.
	FixedRuns int
	// Wall is the time this invocation took.
	Wall time.Duration
	// Resumed is true when the store held an unfinished or finished
	// triage of the same question.
	Resumed bool
	// Machine describes the machine that took the runs, for the email
	// ("" for a fleet's).
	Machine string
}

// Robust is the change estimated across layouts (the sweep).
type Robust struct {
	Layouts int
	// Change, Lo, Hi: the code effect in percent and its interval at
	// Confidence; P its two-sided test.
	Change, Lo, Hi, P float64
	Confidence        float64
	Significant       bool
	// SensitivityBase and SensitivityChanged are the spread (percent) that
	// layout alone causes in each commit; LayoutP tests that layouts
	// matter at all.
	SensitivityBase, SensitivityChanged float64
	LayoutP                             float64
	WithinCV                            float64
}

// SuspectKind says what a suspect symbol is.
type SuspectKind string

// Suspect kinds, the words of layout.Kind.
const (
	FuncSuspect   SuspectKind = "func"   // code
	ObjectSuspect SuspectKind = "object" // data
)

// Suspect is one symbol of the layout diff's ranking.
type Suspect struct {
	Name    string
	Kind    SuspectKind // FuncSuspect or ObjectSuspect
	Section string
	// OffBase and OffChanged are its offsets inside its 64-byte line.
	OffBase, OffChanged uint64
	Why                 string
}

// ExperimentName identifies an experiment of a triage. Its values are
// stable identifiers: JSON output relies on them.
type ExperimentName string

// Experiment names.
const (
	PlainExperiment   ExperimentName = "plain"            // the two commits as they build
	SweepExperiment   ExperimentName = "layout-sweep"     // both commits under several layouts
	ForcedExperiment  ExperimentName = "forced-alignment" // both commits with forced alignment
	RestoreExperiment ExperimentName = "restore"          // the changed commit padded back
)

// Outcome is an experiment's answer. Its values are stable identifiers:
// JSON output relies on them.
type Outcome string

// Outcomes. OutcomeDifferent, OutcomeSame and OutcomeUnknown are the
// words of stats.Decision.
const (
	OutcomeDifferent     Outcome = "different"
	OutcomeSame          Outcome = "same"
	OutcomeUnknown       Outcome = "unknown"
	OutcomeSignificant   Outcome = "significant"
	OutcomeUnclear       Outcome = "unclear"
	OutcomeUninformative Outcome = "uninformative"
	OutcomeFailed        Outcome = "failed"
)

// Experiment is one experiment of a triage: its builds (columns) and what
// they show.
type Experiment struct {
	// Name is PlainExperiment, SweepExperiment, ForcedExperiment or
	// RestoreExperiment.
	Name ExperimentName
	// Title says what was built, in words.
	Title string
	// Columns are the builds compared, the base first; each later one is
	// compared with the first.
	Columns []Column
	// Runs is the number of runs of each build (per layout for the sweep).
	Runs int
	// Outcome is the experiment's answer: OutcomeDifferent, OutcomeSame
	// or OutcomeUnknown (stats.Decide) for the paired experiments;
	// OutcomeSignificant, OutcomeSame, OutcomeUnclear or
	// OutcomeUninformative for the sweep; OutcomeFailed when most runs of
	// a build failed, which ends the triage.
	Outcome Outcome
	// Change, Lo, Hi, P and Confidence are the main comparison's estimate
	// in percent (changed vs base; for restore, changed+padding vs base).
	Change, Lo, Hi, P, Confidence float64
	// Looks is how many times the experiment was looked at.
	Looks int
	// Reason says why, in words.
	Reason string
	// Layouts are the sweep's per-layout figures.
	Layouts []LayoutRow `json:",omitempty"`
	// Table is the experiment in the 0-day layout (one column per build).
	Table *compare.Table `json:"-"`
}

// Column is one build of an experiment.
type Column struct {
	Label   string // "base", "changed", "changed+padding", ...
	Commit  string // full hash
	Variant string // build variant name, "" for the plain build
	N       int    // runs with a value
	Failed  int    // runs that failed (crashed, timed out, no metric)
	Median  float64
	Change  float64 // median change against the first column, percent
	// Values are the runs' values, sorted (for distribution plots).
	Values []float64
}

// LayoutRow is one layout of the sweep.
type LayoutRow struct {
	Variant       string
	Base, Changed float64 // medians
	Change        float64 // percent
	N             int     // runs per commit
	// BaseValues and ChangedValues are the runs' values under the layout.
	BaseValues, ChangedValues []float64
}

// options are a triage's Config with its defaults filled in, its metric
// resolved, and the CPU its runs are pinned to (-1: none).
type options struct {
	Config
	CPU int
}

// Run triages the change from cfg.Base to cfg.Changed on the job's metric:
// it checks cfg ([Config.Check]), resolves the revisions, pins the runs
// (measure.Env.Pin), builds and measures what the experiments need (reusing
// every stored run and build), and returns the verdict with its evidence.
// A build that fails is an error naming it; so is a metric that no run
// printed.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	start := time.Now()
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	env := cfg.Env
	if env.Store == nil || env.Repo == nil || env.Builder == nil {
		return nil, errNoEnv
	}
	cfg = cfg.withDefaults()
	ref, err := cfg.Job.ResolveMetric(cfg.Metric)
	if err != nil {
		return nil, err
	}
	cfg.Metric = ref.Name
	base, errB := env.Repo.Resolve(ctx, cfg.Base)
	changed, errC := env.Repo.Resolve(ctx, cfg.Changed)
	if err := errors.Join(named("BASE", errB), named("CHANGED", errC)); err != nil {
		return nil, err
	}
	cpu, err := env.Pin(ctx, cfg.Job, startRuns, cfg.EffectPct)
	if err != nil {
		return nil, err
	}
	res, err := run(ctx, options{Config: cfg, CPU: cpu}, base, changed)
	if err != nil {
		return nil, err
	}
	if !env.Remote() {
		res.Machine = measure.DescribeMachine(cpu)
	}
	res.Wall = time.Since(start)
	return res, nil
}

// named prefixes a revision's error with the argument it came from.
func named(arg string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", arg, err)
}

var errNoEnv = errors.New("triage: Config.Env needs a Store, a Repo and a Builder")

// run triages base against changed with opt.
func run(ctx context.Context, opt options, base, changed gitrev.Commit) (*Result, error) {
	start := time.Now()
	if base.Hash == changed.Hash {
		return nil, fmt.Errorf("triage: base and changed are the same commit %s", base.Short())
	}
	preset, err := knobs.LookupIn(opt.Preset, knobsDir(opt.Env.Store))
	if err != nil {
		return nil, err
	}
	lab, err := newStoreLab(opt, preset, base, changed)
	if err != nil {
		return nil, err
	}
	st, err := loadState(ctx, opt.Env.Store, lab.stateKey())
	if err != nil {
		return nil, err
	}
	e := &engine{opt: opt, lab: lab, state: st,
		res: &Result{Base: base, Changed: changed, Job: opt.Job.Name, Preset: preset.Name(), Resumed: st.Stage != ""}}
	if e.res.Resumed {
		fmt.Fprintf(opt.Log, "triage: resuming (last stored step: %s); stored runs and builds are reused\n", st.Stage)
	}
	res, err := e.run(ctx)
	if err != nil {
		return nil, err
	}
	if res.Instructions, err = instructionEvidence(ctx, opt, e, base, changed); err != nil {
		return nil, err
	}
	res.NewRuns, res.Builds, res.NewBuilds = lab.taken, len(lab.builds), lab.newBuilds
	res.Wall = time.Since(start)
	if err := e.save(ctx, "done", res); err != nil {
		return nil, err
	}
	return res, nil
}
