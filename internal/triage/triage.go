package triage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/verdict"
)

// Options configures a triage. Job, Store and Builder are required.
type Options struct {
	Job     *job.Job
	Store   *store.Store
	Builder *build.Builder
	// CPU pins every run to that CPU; -1 for no pinning.
	CPU int
	// Metric is the metric to triage; "" means the job's first metric.
	Metric string
	// Preset names the layout knobs (knobs.Lookup); "" means "c".
	Preset string
	// MaxRuns is the most runs per build in one experiment: the repeat
	// schedule 10 -> 20 -> 40 stops there. Default 40, at least 10.
	MaxRuns int
	// Progress receives the builds and runs as they happen; may be nil.
	Progress measure.Progress
	// Log receives one line per experiment step; may be nil.
	Log io.Writer

	// Alpha is the level of each look of the doubling schedule (10, 20,
	// 40 runs) whose overall error the paired experiments' looks spend,
	// and of each look of the sweep. Default 0.01.
	Alpha float64
	// MinEffect is the smallest change, in percent, that counts: smaller
	// changes are "no change". Default 5.
	MinEffect float64
	// Layouts is the number of layouts of the first sweep (the plain build
	// included), MaxLayouts the most it grows to. Defaults 4 and 16.
	Layouts, MaxLayouts int
	// LayoutRuns is the number of runs of each commit under each layout of
	// the sweep. Default 3.
	LayoutRuns int
	// Seed orders the runs; 0 derives it from the job and commits.
	Seed int64
}

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

// Errors that name bad options.
var errNoJob = errors.New("triage: Options.Job, Store and Builder are required")

// withDefaults fills in the zero options.
func (o Options) withDefaults() (Options, error) {
	if o.Preset == "" {
		o.Preset = "c"
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = 40
	}
	if o.MaxRuns < startRuns {
		return o, fmt.Errorf("triage: max runs %d is below the first look's %d runs", o.MaxRuns, startRuns)
	}
	if o.Alpha == 0 {
		o.Alpha = 0.01
	}
	if !(o.Alpha > 0 && o.Alpha < 0.25) {
		return o, fmt.Errorf("triage: alpha %v is not in (0, 0.25)", o.Alpha)
	}
	if o.MinEffect == 0 {
		o.MinEffect = 5
	}
	if !(o.MinEffect > 0 && o.MinEffect < 100) {
		return o, fmt.Errorf("triage: min effect %v%% is not in (0, 100)", o.MinEffect)
	}
	if o.Layouts == 0 {
		o.Layouts = 4
	}
	if o.MaxLayouts == 0 {
		o.MaxLayouts = knobs.MaxLayouts
	}
	if o.Layouts < 2 || o.MaxLayouts < o.Layouts || o.MaxLayouts > knobs.MaxLayouts {
		return o, fmt.Errorf("triage: layouts %d to %d: want 2 <= first <= most <= %d", o.Layouts, o.MaxLayouts, knobs.MaxLayouts)
	}
	if o.LayoutRuns == 0 {
		o.LayoutRuns = 3
	}
	if o.LayoutRuns < 2 {
		return o, fmt.Errorf("triage: %d runs per layout: want at least 2", o.LayoutRuns)
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o, nil
}

// Run triages the change from base to changed on the job's metric: it
// builds and measures what the experiments need (reusing every stored run
// and build), and returns the verdict with its evidence. A build that fails
// is an error naming it; so is a metric that no run printed.
func Run(ctx context.Context, opt Options, base, changed gitrev.Commit) (*Result, error) {
	start := time.Now()
	if opt.Job == nil || opt.Store == nil || opt.Builder == nil {
		return nil, errNoJob
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if base.Hash == changed.Hash {
		return nil, fmt.Errorf("triage: base and changed are the same commit %s", base.Short())
	}
	preset, err := knobs.LookupIn(opt.Preset, knobsDir(opt.Store))
	if err != nil {
		return nil, err
	}
	lab, err := newStoreLab(opt, preset, base, changed)
	if err != nil {
		return nil, err
	}
	st, err := loadState(ctx, opt.Store, lab.stateKey())
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
	res.NewRuns, res.Builds, res.NewBuilds = lab.taken, len(lab.builds), lab.newBuilds
	res.Wall = time.Since(start)
	if err := e.save(ctx, "done", res); err != nil {
		return nil, err
	}
	return res, nil
}
