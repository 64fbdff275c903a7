// Package bisect finds the commit that changed a benchmark metric on the
// first-parent history between a good and a bad commit, deciding every
// step with a statistical test instead of one run.
//
// The search, step by step:
//
//  1. The ends. The good and bad commits are measured first (EndRuns runs
//     each, interleaved, more while the answer is unknown). When they do
//     not differ, or differ the wrong way (the bad side is faster for a
//     regression search), bisection stops with [ErrNoChange] or
//     [ErrWrongDirection] before measuring anything else.
//  2. The steps. The untested commit nearest the middle of the range is
//     measured (StepRuns runs to start) and compared, unpaired
//     (Mann-Whitney U through [stats.Decide], Alpha per look), with both
//     ends: same, different or unknown. It is on the good side when it is
//     the same as good, or different from bad toward good; on the bad
//     side when it is the same as bad, or different from good toward bad;
//     and the evidence must agree with the end it is nearer to. Otherwise
//     it gets more runs (doubling, up to MaxRuns; the ends get as many).
//     A candidate that differs from both ends (the range holds more than
//     one change) goes to the nearer end and the step says so; one still
//     unknown at MaxRuns is placed the same way and marked as a guess. A
//     commit that fails to build, or whose runs all fail, is skipped like
//     "git bisect skip".
//  3. Canaries. Every look at a candidate takes one fresh run of an end
//     in the middle of the candidate's runs ([measure.Spread] spreads each target's
//     runs over a batch). When it is far off its end's usual figure, the
//     machine was in a burst of load, which could have made a good commit
//     look bad: a verdict for the worse side is then not trusted and more
//     runs are taken. (Load never makes runs better, so a verdict for the
//     better side stands.)
//  4. The check. The culprit and its parent get CheckRuns fresh runs each,
//     interleaved (the "sandwich"), and must differ. When they do not, the
//     culprit and then its parent are re-tested with all their runs; if
//     one turns out to be on the other side, the search goes on from
//     there (at most [MaxRetests] times).
//  5. Triage. With an [Options.Triage] function (the plain build mode),
//     the culprit and its parent are triaged, to say whether the change is
//     real or an alignment artifact.
//
// With several layouts (a layout sweep: every commit built under each),
// the figure of a run number is the geometric mean over the layouts of
// that run number's runs: a pure alignment shift only permutes the
// layouts' figures when the layouts span the alignment cycle, and leaves
// the mean alone, while a real change moves it.
//
// Every measurement goes through a [Measurer], which takes only the runs
// its store does not hold yet, so runs are never thrown away or repeated,
// and the bisection's progress is a [State] checkpointed after every
// decision (see [Options.Save]): a killed bisection resumes where it
// stopped. [StoreMeasurer] is the real measurer (builds, pinned
// interleaved runs, the results store); tests use simulated ones.
// [Options.Fixed] replaces the tests by the plain "git bisect run" scheme
// (a fixed number of runs, the midpoint of the ends' means), to measure
// what the tests save.
package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
)

// Defaults of [Options]. The ends' and the check's first looks default to
// the fewest runs with which the Mann-Whitney test can reach Alpha at all
// (see [MinRuns]): 9 runs of each end for a first look of 3 runs at a
// candidate, and 5 runs of each side in the check, at Alpha 0.01.
const (
	DefaultStepRuns  = 3    // first look at a candidate
	DefaultMaxRuns   = 40   // most runs of one commit (per layout)
	DefaultAlpha     = 0.01 // per look, Pinpoint's
	DefaultMinEffect = 0.05 // changes within ±5 % count as "the same"
)

// MinRuns returns the fewest runs n of one side such that a Mann-Whitney
// test of n runs against m runs can give p < alpha: the two-sided p of
// complete separation, 2/C(n+m, m), must be below alpha. At least 3.
func MinRuns(alpha float64, m int) int {
	for n := 3; n < 1000; n++ {
		c := 1.0 // C(n+m, m)
		for i := 1; i <= m; i++ {
			c = c * float64(n+i) / float64(i)
		}
		if m > 0 && 2/c < alpha {
			return n
		}
	}
	return 1000
}

// minCheckRuns is the fewest runs of each side of the check that can
// reach alpha: 2/C(2n, n) < alpha.
func minCheckRuns(alpha float64) int {
	for n := 3; n < 1000; n++ {
		if MinRuns(alpha, n) <= n {
			return n
		}
	}
	return 1000
}

// Errors that end a bisection without a culprit; both wrap the figures.
var (
	// ErrNoChange: the good and bad commits perform the same (or the runs
	// could not tell at the cap): there is nothing to bisect.
	ErrNoChange = errors.New("good and bad do not differ")
	// ErrWrongDirection: the bad commit is better than the good one for
	// a regression search (worse for an improvement search): the
	// revisions are probably swapped.
	ErrWrongDirection = errors.New("good and bad differ the other way")
	// ErrEndFailed: the good or the bad commit cannot be measured (its
	// build or all its runs failed).
	ErrEndFailed = errors.New("an end of the range cannot be measured")
)

// Measurer takes runs and returns what is stored. Implementations take
// only the runs their store lacks, interleaving the runs of the requests of
// one call (round r runs every request that still needs a run once, in a
// random order), so that runs of one call with the same number of new runs
// pair up round by round.
type Measurer interface {
	// Measure makes sure each request's commit has at least Runs runs
	// (per layout) stored, and returns, in request order, everything
	// stored for each.
	Measure(ctx context.Context, reqs []Request) (*Batch, error)
	// Layouts is the number of layouts each commit is measured under: 1,
	// or the size of the layout sweep.
	Layouts() int
}

// Prefetcher is implemented by measurers that can build commits ahead, in
// the background, while runs are being taken ([SpeculateBuild]).
type Prefetcher interface {
	Prefetch(ctx context.Context, commits []gitrev.Commit)
}

// Request asks for Runs runs per layout of one commit.
type Request struct {
	Commit gitrev.Commit
	Runs   int
}

// Batch is what one Measure call found and did.
type Batch struct {
	Samples []Samples // one per request
	Taken   int       // runs taken by this call
	Built   int       // builds made (not found in the build cache) since the last call, speculative ones included
	Better  metric.Better
}

// Samples is what is stored for one commit.
type Samples struct {
	// Layouts[k] holds the runs under layout k, in run order (one layout
	// unless the measurer sweeps layouts).
	Layouts [][]Value
	// BuildErr is set when the commit (under some layout) does not build.
	BuildErr error
}

// Value is one stored run's figure for the bisected metric.
type Value struct {
	Index  int     // run number, from 1
	OK     bool    // false for failed runs (crash, timeout, missing metric)
	Value  float64 // the metric (the median of the run's values); 0 when !OK
	Reason string  // why it failed
}

// runs is the number of runs stored per layout (the fewest of any layout).
func (s Samples) runs() int {
	if len(s.Layouts) == 0 {
		return 0
	}
	n := math.MaxInt
	for _, l := range s.Layouts {
		n = min(n, len(l))
	}
	return n
}

// replicates returns one figure per run number: the run's value, or with
// several layouts the geometric mean over the layouts of the runs with that
// number (run numbers where every layout has an OK run). Averaged over a
// fixed set of layouts that spans the alignment cycle, a pure alignment
// shift only permutes the layouts' figures and leaves the mean alone, while
// a real change moves it.
func (s Samples) replicates() []float64 {
	if len(s.Layouts) == 1 {
		var out []float64
		for _, r := range s.Layouts[0] {
			if r.OK {
				out = append(out, r.Value)
			}
		}
		return out
	}
	return s.replicatesAfter(0)
}

// replicatesAfter returns the replicates of the runs numbered above from,
// keyed by round (run number - from), in round order.
func (s Samples) replicatesAfter(from int) []float64 {
	byRound := map[int][]float64{}
	maxRound := 0
	for _, l := range s.Layouts {
		for _, r := range l {
			if r.OK && r.Index > from && r.Value > 0 {
				byRound[r.Index-from] = append(byRound[r.Index-from], math.Log(r.Value))
				maxRound = max(maxRound, r.Index-from)
			}
		}
	}
	var out []float64
	for round := 1; round <= maxRound; round++ {
		if xs := byRound[round]; len(xs) == len(s.Layouts) {
			out = append(out, math.Exp(mean(xs)))
		}
	}
	return out
}

// failure says why no run is usable: "" when some run is OK or none ran.
func (s Samples) failure() string {
	total, reasons := 0, map[string]int{}
	for _, l := range s.Layouts {
		for _, r := range l {
			if r.OK {
				return ""
			}
			total++
			reasons[r.Reason]++
		}
	}
	if total == 0 {
		return ""
	}
	var rs []string
	for r := range reasons {
		rs = append(rs, r)
	}
	sort.Strings(rs)
	return fmt.Sprintf("all %d runs failed: %s", total, strings.Join(rs, "; "))
}

// Speculation is how a bisection works ahead of its decisions.
type Speculation string

const (
	// SpeculateNone measures one candidate at a time and builds it when
	// it is needed.
	SpeculateNone Speculation = "none"
	// SpeculateBuild builds both possible next candidates in the
	// background while the current one's runs are taken (needs a
	// [Prefetcher]): one wasted build per step, and the wall time of the
	// builds hidden behind the runs.
	SpeculateBuild Speculation = "build"
	// SpeculateRuns measures both possible next candidates (StepRuns
	// runs each) in the same interleaved batch as the current one: the
	// next step then often needs no new runs. It costs about 1.5 times the
	// runs and builds, so it only saves wall time when the measurer runs
	// several benchmarks at once (several machines or quiet CPUs).
	SpeculateRuns Speculation = "runs"
)

// Options configure a bisection. Zero values take the defaults.
type Options struct {
	Measurer Measurer
	// Metric names the bisected metric (for messages).
	Metric string
	// Better is the metric's good direction; 0 takes it from the first
	// measurement ([Batch.Better]).
	Better metric.Better
	// Improvement searches for the commit that made the metric better
	// (the bad side is the better one); the default searches for a
	// regression.
	Improvement bool
	// Alpha is the error rate of each look of each comparison (default
	// 0.01); MinEffect the relative change within which two commits
	// count as the same (default 0.05).
	Alpha, MinEffect float64
	// EndRuns, StepRuns and MaxRuns are the runs (per layout) of the
	// first look at the ends, of the first look at a candidate, and the
	// most of any commit; CheckRuns the fresh runs of each side of the
	// culprit check (doubling while unknown, up to MaxRuns).
	EndRuns, StepRuns, MaxRuns, CheckRuns int
	// Fixed, when > 0, replaces the statistical decisions by the plain
	// "git bisect run" scheme with Fixed runs per commit: a commit is bad
	// when the mean of its runs is past the midpoint of the ends' means.
	// No check, no triage. Used to measure what the tests save.
	Fixed int
	// Speculate says how to work ahead (default SpeculateNone).
	Speculate Speculation
	// Triage, when set, is called on the culprit and its parent.
	Triage func(ctx context.Context, parent, culprit gitrev.Commit) (*Triage, error)
	// Resume continues the bisection this state describes; nil starts
	// afresh. Save, when set, is called with the state after every
	// decision, so that the bisection can be resumed.
	Resume *State
	Save   func(ctx context.Context, st *State) error
	// Log receives one line per event (no trailing newline); may be nil.
	Log func(string)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (o *Options) defaults() error {
	if o.Measurer == nil {
		return errors.New("bisect: no Measurer")
	}
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if !(o.Alpha > 0 && o.Alpha < 0.5) {
		return fmt.Errorf("bisect: alpha %v is not in (0, 0.5)", o.Alpha)
	}
	if o.MinEffect == 0 {
		o.MinEffect = DefaultMinEffect
	}
	if !(o.MinEffect > 0 && o.MinEffect < 10) {
		return fmt.Errorf("bisect: effect %v%% is not in (0, 1000)", 100*o.MinEffect)
	}
	if o.StepRuns == 0 {
		o.StepRuns = DefaultStepRuns
	}
	if o.EndRuns == 0 {
		o.EndRuns = MinRuns(o.Alpha, o.StepRuns)
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = DefaultMaxRuns
	}
	if o.CheckRuns == 0 {
		o.CheckRuns = minCheckRuns(o.Alpha)
	}
	switch {
	case o.Fixed == 0 && o.EndRuns < 3:
		return fmt.Errorf("bisect: %d runs at the ends: need at least 3", o.EndRuns)
	case o.StepRuns < 1 || o.StepRuns > 100:
		return fmt.Errorf("bisect: %d runs per step: want 1 to 100", o.StepRuns)
	case o.Fixed == 0 && (o.MaxRuns < o.EndRuns || o.MaxRuns < o.StepRuns):
		return fmt.Errorf("bisect: at most %d runs per commit is below the first look (%d at the ends, %d per step)", o.MaxRuns, o.EndRuns, o.StepRuns)
	case o.CheckRuns < minCheckRuns(o.Alpha):
		return fmt.Errorf("bisect: %d check runs: need at least %d of each side for a test at alpha %v", o.CheckRuns, minCheckRuns(o.Alpha), o.Alpha)
	case o.Fixed < 0:
		return fmt.Errorf("bisect: %d fixed runs", o.Fixed)
	}
	switch o.Speculate {
	case "":
		o.Speculate = SpeculateNone
	case SpeculateNone, SpeculateBuild, SpeculateRuns:
	default:
		return fmt.Errorf("bisect: unknown speculation %q (want none, build or runs)", o.Speculate)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Comparison is one three-way decision between a commit and a reference.
type Comparison struct {
	Decision string  `json:"decision"` // "same", "different" or "unknown"
	Change   float64 `json:"change"`   // % change of the commit against the reference
	Lo       float64 `json:"ci_lo"`    // interval of Change (at 1-2*alpha)
	Hi       float64 `json:"ci_hi"`
	P        float64 `json:"p"`
	Test     string  `json:"test"` // "mann-whitney", "wilcoxon", "layouts" or "mean" (fixed scheme)
	N        int     `json:"n"`    // runs (or layouts) of the commit compared
	RefN     int     `json:"ref_n"`
	Reason   string  `json:"reason"`
}

// Verdicts of a [Step].
const (
	Good = "good"
	Bad  = "bad"
	Skip = "skip"
)

// Step is one tested commit.
type Step struct {
	N         int           `json:"n"`     // 1-based
	Index     int           `json:"index"` // position on the path (0 = the good commit's child)
	Commit    gitrev.Commit `json:"commit"`
	Remaining int           `json:"remaining"` // commits that could be the culprit before this step
	Verdict   string        `json:"verdict"`   // Good, Bad or Skip
	// Guessed is set when neither comparison was decided at MaxRuns and
	// the commit was put on the side of the nearer end.
	Guessed bool `json:"guessed,omitempty"`
	Runs    int  `json:"runs"` // runs of the commit (per layout) when decided
	// Disturbed counts the looks not trusted because a canary run of an
	// end showed the machine out of its usual state.
	Disturbed int `json:"disturbed,omitempty"`
	// Retest is set on the re-test of a culprit the check did not
	// confirm, or of its parent.
	Retest bool        `json:"retest,omitempty"`
	VsGood *Comparison `json:"vs_good,omitempty"`
	VsBad  *Comparison `json:"vs_bad,omitempty"`
	Reason string      `json:"reason"` // why the verdict, in words
	Note   string      `json:"note,omitempty"`
}

// Check is the culprit check: fresh interleaved runs of parent and culprit.
type Check struct {
	Confirmed  bool       `json:"confirmed"`
	Comparison Comparison `json:"comparison"`
	// ParentRuns and CulpritRuns are the run numbers (first, last) of the
	// fresh runs, per layout.
	ParentRuns  [2]int `json:"parent_runs"`
	CulpritRuns [2]int `json:"culprit_runs"`
	Reason      string `json:"reason"`
}

// Triage is the triage verdict on the culprit (see package triage).
type Triage struct {
	Verdict  string `json:"verdict"`
	Sentence string `json:"sentence"`
	Error    string `json:"error,omitempty"`
}

// Result is a finished (or, inside a [State], ongoing) bisection.
type Result struct {
	Metric      string        `json:"metric"`
	Better      metric.Better `json:"better"`
	Improvement bool          `json:"improvement,omitempty"`
	Layouts     int           `json:"layouts"`
	Fixed       int           `json:"fixed,omitempty"`
	Good        gitrev.Commit `json:"good"`
	Bad         gitrev.Commit `json:"bad"`
	Commits     int           `json:"commits"` // first-parent commits after good, bad included
	// Ends compares bad with good.
	Ends     *Comparison `json:"ends,omitempty"`
	EndsRuns [2]int      `json:"ends_runs"` // runs of good and bad (per layout)
	Steps    []Step      `json:"steps"`
	// Culprit is the first bad commit and Parent its first parent; nil
	// when skipped commits leave several possible (Candidates).
	Culprit    *gitrev.Commit  `json:"culprit,omitempty"`
	Parent     *gitrev.Commit  `json:"parent,omitempty"`
	Merge      bool            `json:"merge,omitempty"` // the culprit is a merge commit
	Candidates []gitrev.Commit `json:"candidates,omitempty"`
	Check      *Check          `json:"check,omitempty"`
	Triage     *Triage         `json:"triage,omitempty"`
	// Builds made (not cached; speculative ones included), of which
	// BuildFailures failed; Runs taken, of which CheckRuns by the check;
	// RunsUsed the runs of every commit looked at (taken now or found in
	// the store).
	Builds        int           `json:"builds"`
	BuildFailures int           `json:"build_failures"`
	Runs          int           `json:"runs"`
	CheckRuns     int           `json:"check_runs"`
	RunsUsed      int           `json:"runs_used"`
	Wall          time.Duration `json:"wall_ns"`
	Notes         []string      `json:"notes,omitempty"`
}

// Skipped returns the skipped steps.
func (r *Result) Skipped() []Step {
	var out []Step
	for _, s := range r.Steps {
		if s.Verdict == Skip {
			out = append(out, s)
		}
	}
	return out
}

// Found reports whether the bisection named one culprit and the check
// confirmed it (always true for a confirmed culprit of the fixed scheme,
// which has no check).
func (r *Result) Found() bool {
	return r.Culprit != nil && (r.Check == nil && r.Fixed > 0 || r.Check != nil && r.Check.Confirmed)
}

// Phases of a [State].
const (
	PhaseEnds   = "ends"
	PhaseSteps  = "steps"
	PhaseCheck  = "check"
	PhaseRetest = "retest"
	PhaseTriage = "triage"
	PhaseDone   = "done"
)

// StateVersion is the version of the [State] encoding.
const StateVersion = 1

// State is a bisection in progress, as checkpointed. It is JSON-encodable.
type State struct {
	Version int    `json:"version"`
	Phase   string `json:"phase"`
	// Lo and Hi bound the culprit's position on the path: it is in
	// (Lo, Hi]; Lo = -1 is the good commit.
	Lo, Hi int    `json:"-"`
	LoHi   [2]int `json:"lo_hi"`
	// CheckFrom holds the runs stored (per layout) of parent and culprit
	// when the check began; the check's runs are the ones after.
	CheckFrom [2]int `json:"check_from"`
	// Retests counts the re-tests after unconfirmed checks.
	Retests int `json:"retests"`
	// Used is the runs stored of every commit looked at, by hash.
	Used map[string]int `json:"used"`
	// Elapsed is the wall time of the earlier sessions (Result.Wall when
	// resumed).
	Elapsed time.Duration `json:"-"`
	Result  Result        `json:"result"`
}

// bisector is one session of a bisection.
type bisector struct {
	opt   Options
	path  []gitrev.Commit
	good  gitrev.Commit
	st    *State
	start time.Time
	dir   float64 // +1 when bad values are higher than good ones, -1 otherwise
	ends  [2]Samples
}

// Run bisects path, the first-parent commits after good (oldest first, the
// bad commit last), and returns the result. Errors: [ErrNoChange],
// [ErrWrongDirection] and [ErrEndFailed] (each with the figures, and with a
// partial Result), failures of the measurer, and ctx's error when
// interrupted (after saving the state).
func Run(ctx context.Context, opt Options, good gitrev.Commit, path []gitrev.Commit) (*Result, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	if len(path) == 0 {
		return nil, fmt.Errorf("bisect: no commits after %s", good.Short())
	}
	b := &bisector{opt: opt, path: path, good: good, start: opt.Now()}
	if opt.Resume != nil {
		if err := b.resume(opt.Resume); err != nil {
			return nil, err
		}
	} else {
		b.st = &State{Version: StateVersion, Phase: PhaseEnds, Lo: -1, Hi: len(path) - 1, Used: map[string]int{},
			Result: Result{Metric: opt.Metric, Better: opt.Better, Improvement: opt.Improvement,
				Layouts: opt.Measurer.Layouts(), Fixed: opt.Fixed,
				Good: good, Bad: path[len(path)-1], Commits: len(path)}}
	}
	return b.run(ctx)
}

func (b *bisector) resume(st *State) error {
	if st.Version != StateVersion {
		return fmt.Errorf("bisect: saved state has version %d, this perfbot reads %d; start again", st.Version, StateVersion)
	}
	r := &st.Result
	last := b.path[len(b.path)-1]
	if r.Good.Hash != b.good.Hash || r.Bad.Hash != last.Hash || r.Commits != len(b.path) {
		return fmt.Errorf("bisect: saved state is for %s..%s, not %s..%s", r.Good.Short(), r.Bad.Short(), b.good.Short(), last.Short())
	}
	if r.Layouts != b.opt.Measurer.Layouts() || r.Fixed != b.opt.Fixed {
		return fmt.Errorf("bisect: saved state was made with other options")
	}
	st.Lo, st.Hi = st.LoHi[0], st.LoHi[1]
	if st.Lo < -1 || st.Hi >= len(b.path) || st.Lo >= st.Hi {
		return fmt.Errorf("bisect: saved state has an invalid range (%d, %d]", st.Lo, st.Hi)
	}
	if st.Used == nil {
		st.Used = map[string]int{}
	}
	st.Elapsed = st.Result.Wall
	b.st = st
	b.logf("resuming: %s", b.progressLine())
	return nil
}

func (b *bisector) progressLine() string {
	switch b.st.Phase {
	case PhaseEnds:
		return "measuring the ends"
	case PhaseSteps:
		return fmt.Sprintf("%d steps done, %d commits left", len(b.st.Result.Steps), b.st.Hi-b.st.Lo)
	case PhaseCheck:
		return "checking the culprit"
	case PhaseRetest:
		return "re-testing an unconfirmed culprit"
	case PhaseTriage:
		return "triaging the culprit"
	}
	return "finished"
}

func (b *bisector) logf(format string, args ...any) {
	if b.opt.Log != nil {
		b.opt.Log(fmt.Sprintf(format, args...))
	}
}

// save checkpoints the state.
func (b *bisector) save(ctx context.Context) error {
	st := b.st
	st.LoHi = [2]int{st.Lo, st.Hi}
	st.Result.Wall = st.Elapsed + b.opt.Now().Sub(b.start)
	used := 0
	for _, n := range st.Used {
		used += n
	}
	st.Result.RunsUsed = used
	if b.opt.Save == nil {
		return nil
	}
	// A cancelled ctx must not lose the last decision.
	return b.opt.Save(context.WithoutCancel(ctx), st)
}

func (b *bisector) run(ctx context.Context) (*Result, error) {
	r := &b.st.Result
	b.dirFromEnds()
	for {
		var err error
		switch b.st.Phase {
		case PhaseEnds:
			err = b.measureEnds(ctx)
		case PhaseSteps:
			err = b.step(ctx)
		case PhaseCheck:
			err = b.check(ctx)
		case PhaseRetest:
			err = b.retest(ctx)
		case PhaseTriage:
			err = b.triage(ctx)
		case PhaseDone:
			return r, nil
		default:
			return r, fmt.Errorf("bisect: saved state has unknown phase %q", b.st.Phase)
		}
		if err != nil {
			if serr := b.save(ctx); serr != nil && ctx.Err() == nil {
				return r, errors.Join(err, serr)
			}
			return r, err
		}
		if err := b.save(ctx); err != nil {
			return r, err
		}
	}
}

// measure runs one batch and books its cost.
func (b *bisector) measure(ctx context.Context, reqs []Request) ([]Samples, error) {
	batch, err := b.opt.Measurer.Measure(ctx, reqs)
	if batch != nil {
		b.st.Result.Runs += batch.Taken
		if b.st.Phase == PhaseCheck {
			b.st.Result.CheckRuns += batch.Taken
		}
		b.st.Result.Builds += batch.Built
		if b.st.Result.Better == 0 && batch.Better != 0 {
			b.st.Result.Better = batch.Better
		}
	}
	if err != nil {
		return nil, err
	}
	if len(batch.Samples) != len(reqs) {
		return nil, fmt.Errorf("bisect: measurer returned %d results for %d requests", len(batch.Samples), len(reqs))
	}
	for i, s := range batch.Samples {
		n := s.runs() * max(len(s.Layouts), 1)
		if n > b.st.Used[reqs[i].Commit.Hash] {
			b.st.Used[reqs[i].Commit.Hash] = n
		}
	}
	return batch.Samples, nil
}

// endsRequests asks for n runs of the ends (at least what they have).
func (b *bisector) endsRequests(n int) []Request {
	return []Request{{Commit: b.good, Runs: max(n, b.st.Result.EndsRuns[0])}, {Commit: b.path[len(b.path)-1], Runs: max(n, b.st.Result.EndsRuns[1])}}
}

func (b *bisector) measureEnds(ctx context.Context) error {
	r := &b.st.Result
	n := b.opt.EndRuns
	if b.opt.Fixed > 0 {
		n = b.opt.Fixed
	}
	for {
		ss, err := b.measure(ctx, b.endsRequests(n))
		if err != nil {
			return err
		}
		b.setEnds(ss[0], ss[1])
		for i, s := range ss {
			name := [2]string{"good", "bad"}[i]
			c := [2]gitrev.Commit{r.Good, r.Bad}[i]
			if s.BuildErr != nil {
				return fmt.Errorf("%w: the %s commit %s does not build, so it cannot anchor the bisection; pick one that builds: %v", ErrEndFailed, name, c.Short(), s.BuildErr)
			}
			if f := s.failure(); f != "" {
				return fmt.Errorf("%w: the %s commit %s cannot be measured: %s", ErrEndFailed, name, c.Short(), f)
			}
		}
		if r.Better == 0 {
			return fmt.Errorf("bisect: the direction of %s (higher or lower is better) is unknown; set better: in the job file", r.Metric)
		}
		var cmp Comparison
		if b.opt.Fixed > 0 {
			cmp = meanComparison(b.goodValues(), b.badValues())
			cmp.Decision = "different"
		} else {
			cmp = b.compare(ss[0], ss[1], n)
		}
		r.Ends = &cmp
		b.logf("good %s vs bad %s: %s %+.1f%% (%s)", r.Good.Short(), r.Bad.Short(), r.Metric, cmp.Change, cmp.Reason)
		switch cmp.Decision {
		case "same":
			return fmt.Errorf("%w: %s at bad %s is within ±%.3g%% of good %s (%+.1f%%, interval [%+.1f%%, %+.1f%%], %d and %d runs): nothing to bisect",
				ErrNoChange, r.Metric, r.Bad.Short(), 100*b.opt.MinEffect, r.Good.Short(), cmp.Change, cmp.Lo, cmp.Hi, r.EndsRuns[0], r.EndsRuns[1])
		case "unknown":
			if n >= b.opt.MaxRuns {
				return fmt.Errorf("%w: after %d runs of each, the runs cannot tell whether %s differs between good %s and bad %s (%s); the machine may be too noisy for this change",
					ErrNoChange, n, r.Metric, r.Good.Short(), r.Bad.Short(), cmp.Reason)
			}
			n = min(2*n, b.opt.MaxRuns)
			continue
		}
		worse := (cmp.Change > 0) == (r.Better == metric.LowerIsBetter)
		if worse == r.Improvement {
			want, got := "regression", "better"
			if r.Improvement {
				want, got = "improvement", "worse"
			}
			return fmt.Errorf("%w: %s is %s at bad %s than at good %s (%+.1f%%, %s is better): that is not a %s. Are --good and --bad swapped? (To search for the other direction, use --improvement%s.)",
				ErrWrongDirection, r.Metric, got, r.Bad.Short(), r.Good.Short(), cmp.Change, r.Better, want, map[bool]string{true: "=false", false: ""}[r.Improvement])
		}
		b.dirFromEnds()
		b.st.Phase = PhaseSteps
		return nil
	}
}

func (b *bisector) goodValues() []float64 { return b.ends[0].replicates() }
func (b *bisector) badValues() []float64  { return b.ends[1].replicates() }

// compare decides between reference ref and commit c, unpaired: their runs
// were mostly taken at different times.
func (b *bisector) compare(ref, c Samples, startN int) Comparison {
	return unpairedComparison(ref.replicates(), c.replicates(), b.decideOptions(startN))
}

func (b *bisector) decideOptions(startN int) stats.DecideOptions {
	return stats.DecideOptions{Alpha: b.opt.Alpha, MinEffect: b.opt.MinEffect, StartN: startN, MaxN: b.opt.MaxRuns}
}

// pick returns the untested position of (lo, hi) nearest the middle, the
// lower one on a tie, or -1.
func (b *bisector) pick(lo, hi int) int {
	skipped := map[int]bool{}
	for _, s := range b.st.Result.Steps {
		if s.Verdict == Skip {
			skipped[s.Index] = true
		}
	}
	mid := lo + (hi-lo)/2
	for d := 0; mid-d > lo || mid+d < hi; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i > lo && i < hi && !skipped[i] {
				return i
			}
		}
	}
	return -1
}

// step tests one candidate, or ends the search.
func (b *bisector) step(ctx context.Context) error {
	st, r := b.st, &b.st.Result
	if err := b.loadEnds(ctx); err != nil {
		return err
	}
	if st.Hi-st.Lo == 1 {
		return b.land(ctx)
	}
	m := b.pick(st.Lo, st.Hi)
	if m < 0 {
		// Only skipped commits left: like git bisect, name them all.
		r.Candidates = append([]gitrev.Commit(nil), b.path[st.Lo+1:st.Hi+1]...)
		if st.Lo >= 0 {
			p := b.path[st.Lo]
			r.Parent = &p
		} else {
			r.Parent = &r.Good
		}
		b.logf("only skipped commits are left: the first bad commit is one of %d", len(r.Candidates))
		st.Phase = PhaseDone
		return nil
	}
	cand := b.path[m]
	remaining := st.Hi - st.Lo
	b.logf("step %d: testing %s %q (%d commits left, about %d more steps)", len(r.Steps)+1, cand.Short(), cand.Subject, remaining, stepsLeft(remaining))

	// Work ahead: the two commits the next step may test.
	var next []gitrev.Commit
	if b.opt.Speculate != SpeculateNone {
		for _, i := range []int{b.pick(st.Lo, m), b.pick(m, st.Hi)} {
			if i >= 0 {
				next = append(next, b.path[i])
			}
		}
	}
	if pf, ok := b.opt.Measurer.(Prefetcher); ok && b.opt.Speculate == SpeculateBuild && len(next) > 0 {
		pf.Prefetch(ctx, next)
	}

	s := Step{N: len(r.Steps) + 1, Index: m, Commit: cand, Remaining: remaining}
	var err error
	if b.opt.Fixed > 0 {
		err = b.classifyFixed(ctx, &s)
	} else {
		err = b.classify(ctx, &s, next)
	}
	if err != nil {
		return err
	}
	r.Steps = append(r.Steps, s)
	switch s.Verdict {
	case Good:
		st.Lo = m
	case Bad:
		st.Hi = m
	case Skip:
		if strings.HasPrefix(s.Reason, "build failed") {
			r.BuildFailures++
		}
	}
	b.logf("step %d: %s is %s: %s%s", s.N, cand.Short(), s.Verdict, s.Reason, noteSuffix(s.Note))
	return nil
}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}

// stepsLeft is the number of halvings that bring n commits down to one.
func stepsLeft(n int) int {
	s := 0
	for n > 1 {
		n = (n + 1) / 2
		s++
	}
	return s
}

func (b *bisector) dirFromEnds() {
	b.dir = 1
	if c := b.st.Result.Ends; c != nil && c.Change < 0 {
		b.dir = -1
	}
}

// classify decides which side of the culprit s.Commit is on.
func (b *bisector) classify(ctx context.Context, s *Step, next []gitrev.Commit) error {
	r := &b.st.Result
	n := b.opt.StepRuns
	for look := 0; ; look++ {
		// The ends get half as many runs as the candidate if they have
		// fewer, so that the tests are not limited by the ends' side
		// (these runs stay for the later steps), and one of them gets a
		// fresh run in the middle of the candidate's: a canary of the
		// machine's state (see canaryAlarm).
		before := [2]int{b.ends[0].runs(), b.ends[1].runs()}
		want := [2]int{max(n/2, before[0]), max(n/2, before[1])}
		canary := (s.N + look) % 2
		want[canary] = max(want[canary], before[canary]+1)
		reqs := []Request{{Commit: s.Commit, Runs: n}, {Commit: b.good, Runs: want[0]}, {Commit: r.Bad, Runs: want[1]}}
		if b.opt.Speculate == SpeculateRuns {
			for _, c := range next {
				reqs = append(reqs, Request{Commit: c, Runs: b.opt.StepRuns})
			}
		}
		old := b.ends
		ss, err := b.measure(ctx, reqs)
		if err != nil {
			return err
		}
		b.setEnds(ss[1], ss[2])
		c := ss[0]
		s.Runs = c.runs()
		if c.BuildErr != nil {
			s.Verdict, s.Reason = Skip, "build failed: "+firstLine(c.BuildErr.Error())
			return nil
		}
		if f := c.failure(); f != "" && s.Runs >= n {
			s.Verdict, s.Reason = Skip, f
			return nil
		}
		vg := b.compare(b.ends[0], c, b.opt.StepRuns)
		vb := b.compare(b.ends[1], c, b.opt.StepRuns)
		s.VsGood, s.VsBad = &vg, &vb
		near := b.nearer(c)
		verdict, reason, note := b.evidence(vg, vb, near)
		// Load only makes runs worse, so only a verdict for the worse
		// side can be its doing.
		worse := Bad
		if r.Improvement {
			worse = Good
		}
		if alarm := b.canaryAlarm(old, before); alarm != "" && verdict == worse && n < b.opt.MaxRuns {
			s.Disturbed++
			b.logf("step %d: look at %d runs not trusted: %s", s.N, s.Runs, alarm)
			verdict = ""
		}
		if verdict != "" {
			s.Verdict, s.Reason, s.Note = verdict, reason, note
			return nil
		}
		if n >= b.opt.MaxRuns {
			s.Verdict, s.Guessed = near, true
			s.Reason = fmt.Sprintf("undecided after %d runs (vs good: %s; vs bad: %s); placed with the nearer end", s.Runs, vg.Reason, vb.Reason)
			return nil
		}
		n = min(2*max(n, s.Runs), b.opt.MaxRuns)
	}
}

// setEnds records the ends' samples.
func (b *bisector) setEnds(good, bad Samples) {
	b.ends = [2]Samples{good, bad}
	b.st.Result.EndsRuns = [2]int{good.runs(), bad.runs()}
}

// canaryAlarm says why the runs of the ends taken in the last batch (those
// after before) show that the machine was not in its usual state: one is
// off its end's median (over old, the runs before the batch) by more than
// a quarter of the distance between the ends and more than three times the
// end's usual spread (1.4826 MAD of the log values). The candidate's runs
// of that batch were interleaved with them, so a burst of load that could
// make a good commit look bad likely shows on them too. "" when all is
// well.
func (b *bisector) canaryAlarm(old [2]Samples, before [2]int) string {
	mg, mb := stats.Median(old[0].replicates()), stats.Median(old[1].replicates())
	if !(mg > 0 && mb > 0) {
		return ""
	}
	gap := math.Abs(math.Log(mb / mg))
	for k := range 2 {
		logs := logsOf(old[k].replicates())
		med := stats.Median(logs)
		dev := make([]float64, len(logs))
		for i, x := range logs {
			dev[i] = math.Abs(x - med)
		}
		limit := max(gap/4, 3*1.4826*stats.Median(dev))
		for _, v := range b.ends[k].replicatesAfter(before[k]) {
			if d := math.Log(v) - med; math.Abs(d) > limit {
				return fmt.Sprintf("a run of the %s end taken among them is %+.1f%% off its usual figure", [2]string{"good", "bad"}[k], 100*math.Expm1(d))
			}
		}
	}
	return ""
}

func logsOf(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 {
			out = append(out, math.Log(x))
		}
	}
	return out
}

// evidence turns the two comparisons into a verdict ("" for unknown), the
// reason, and a note when the evidence conflicts.
func (b *bisector) evidence(vg, vb Comparison, near string) (verdict, reason, note string) {
	xg, xb := logChange(vg.Change), logChange(vb.Change)
	// Toward bad, from good: dir*xg > 0. On the good side of bad: dir*xb < 0.
	var good, bad []string
	switch vg.Decision {
	case "same":
		good = append(good, fmt.Sprintf("same as good (%+.1f%%)", vg.Change))
	case "different":
		if b.dir*xg > 0 {
			bad = append(bad, fmt.Sprintf("differs from good by %+.1f%%, toward bad", vg.Change))
		} else {
			good = append(good, fmt.Sprintf("differs from good by %+.1f%%, away from bad", vg.Change))
		}
	}
	switch vb.Decision {
	case "same":
		bad = append(bad, fmt.Sprintf("same as bad (%+.1f%%)", vb.Change))
	case "different":
		if b.dir*xb < 0 {
			good = append(good, fmt.Sprintf("differs from bad by %+.1f%%, toward good", vb.Change))
		} else {
			bad = append(bad, fmt.Sprintf("differs from bad by %+.1f%%, beyond it", vb.Change))
		}
	}
	switch {
	case len(good) > 0 && len(bad) > 0:
		return near, strings.Join(append(good, bad...), "; ") + "; nearer to " + near,
			"more than one change in the range: this commit differs from both ends"
	case len(good) > 0 && near == Good:
		return Good, strings.Join(good, "; "), ""
	case len(bad) > 0 && near == Bad:
		return Bad, strings.Join(bad, "; "), ""
	}
	// No evidence, or evidence for the side whose end is the farther:
	// an outlier among few runs can do that; take more.
	return "", "", ""
}

// nearer returns the verdict of the end whose figure is nearer to c's, in
// log terms. Figures are each commit's best quartile (the 25th percentile
// of a lower-is-better metric, the 75th of a higher-is-better one): load
// only ever makes runs worse, so the better runs show a commit's speed
// even when a burst spoiled some of them.
func (b *bisector) nearer(c Samples) string {
	q := func(s Samples) float64 { return bestQuartile(s.replicates(), b.st.Result.Better) }
	xc, xg, xb := q(c), q(b.ends[0]), q(b.ends[1])
	if !(xc > 0 && xg > 0 && xb > 0) {
		return Good
	}
	if math.Abs(math.Log(xc/xg)) <= math.Abs(math.Log(xb/xc)) {
		return Good
	}
	return Bad
}

func logChange(pct float64) float64 {
	if pct <= -100 || math.IsNaN(pct) {
		return math.Inf(-1)
	}
	return math.Log1p(pct / 100)
}

// classifyFixed is the plain scheme: Fixed runs, then the side of the
// midpoint of the ends' means.
func (b *bisector) classifyFixed(ctx context.Context, s *Step) error {
	ss, err := b.measure(ctx, []Request{{Commit: s.Commit, Runs: b.opt.Fixed}})
	if err != nil {
		return err
	}
	c := ss[0]
	s.Runs = c.runs()
	if c.BuildErr != nil {
		s.Verdict, s.Reason = Skip, "build failed: "+firstLine(c.BuildErr.Error())
		return nil
	}
	if f := c.failure(); f != "" {
		s.Verdict, s.Reason = Skip, f
		return nil
	}
	vg, vb := meanComparison(b.goodValues(), c.replicates()), meanComparison(b.badValues(), c.replicates())
	s.VsGood, s.VsBad = &vg, &vb
	mg, mb, mc := mean(b.goodValues()), mean(b.badValues()), mean(c.replicates())
	mid := (mg + mb) / 2
	if (mc > mid) == (mb > mg) {
		s.Verdict = Bad
	} else {
		s.Verdict = Good
	}
	s.Reason = fmt.Sprintf("mean %.4g is on the %s side of the midpoint %.4g", mc, s.Verdict, mid)
	return nil
}

// land records the culprit and moves to the check.
func (b *bisector) land(ctx context.Context) error {
	st, r := b.st, &b.st.Result
	c := b.path[st.Hi]
	p := r.Good
	if st.Lo >= 0 {
		p = b.path[st.Lo]
	}
	r.Culprit, r.Parent = &c, &p
	if m, ok := b.opt.Measurer.(interface {
		IsMerge(ctx context.Context, c gitrev.Commit) (bool, error)
	}); ok {
		merge, err := m.IsMerge(ctx, c)
		if err != nil {
			return err
		}
		r.Merge = merge
	}
	b.logf("first bad commit: %s %q (after %d steps)", c.Short(), c.Subject, len(r.Steps))
	if b.opt.Fixed > 0 {
		st.Phase = PhaseDone
		return nil
	}
	// The check's fresh runs are the ones after those stored now.
	ss, err := b.measure(ctx, []Request{{Commit: p}, {Commit: c}})
	if err != nil {
		return err
	}
	st.CheckFrom = [2]int{ss[0].runs(), ss[1].runs()}
	st.Phase = PhaseCheck
	return nil
}

// check re-measures parent and culprit with fresh interleaved runs.
func (b *bisector) check(ctx context.Context) error {
	st, r := b.st, &b.st.Result
	p, c := *r.Parent, *r.Culprit
	n := b.opt.CheckRuns
	for {
		ss, err := b.measure(ctx, []Request{{Commit: p, Runs: st.CheckFrom[0] + n}, {Commit: c, Runs: st.CheckFrom[1] + n}})
		if err != nil {
			return err
		}
		for i, s := range ss {
			if s.BuildErr != nil {
				return fmt.Errorf("bisect: check: %s no longer builds: %w", [2]gitrev.Commit{p, c}[i].Short(), s.BuildErr)
			}
		}
		pv, cv := ss[0].replicatesAfter(st.CheckFrom[0]), ss[1].replicatesAfter(st.CheckFrom[1])
		cmp := unpairedComparison(pv, cv, b.decideOptions(b.opt.CheckRuns))
		r.Check = &Check{Comparison: cmp,
			ParentRuns:  [2]int{st.CheckFrom[0] + 1, st.CheckFrom[0] + n},
			CulpritRuns: [2]int{st.CheckFrom[1] + 1, st.CheckFrom[1] + n}}
		if cmp.Decision == "unknown" && n < b.opt.MaxRuns {
			n = min(2*n, b.opt.MaxRuns)
			b.logf("check: %s; more runs (%d of each)", cmp.Reason, n)
			continue
		}
		toward := b.dir*logChange(cmp.Change) > 0
		switch {
		case cmp.Decision == "different" && toward:
			r.Check.Confirmed = true
			r.Check.Reason = fmt.Sprintf("confirmed: in %d fresh interleaved runs of each, the culprit differs from its parent by %+.1f%% [%+.1f%%, %+.1f%%] (%s)", cmp.N, cmp.Change, cmp.Lo, cmp.Hi, cmp.Reason)
		case cmp.Decision == "different":
			r.Check.Reason = fmt.Sprintf("not confirmed: in fresh runs the culprit differs from its parent the other way (%+.1f%%)", cmp.Change)
		case cmp.Decision == "same":
			r.Check.Reason = fmt.Sprintf("not confirmed: in fresh runs the culprit performs like its parent (%+.1f%%, within ±%.3g%%); the change may be spread over several commits, or the bisection was misled by noise", cmp.Change, 100*b.opt.MinEffect)
		default:
			r.Check.Reason = fmt.Sprintf("not confirmed: fresh runs cannot tell culprit and parent apart (%s)", cmp.Reason)
		}
		b.logf("check: %s", r.Check.Reason)
		st.Phase = PhaseTriage
		if !r.Check.Confirmed && st.Retests < MaxRetests {
			st.Phase = PhaseRetest
		}
		return nil
	}
}

// MaxRetests is how many times a bisection re-tests a culprit that the
// check did not confirm.
const MaxRetests = 2

// retest runs after a check that did not confirm the culprit: one of the
// two decisions that bracket it was wrong (noise, a burst of load). It
// re-tests the culprit, then its parent, with every run they now have (the
// check's fresh runs included) and more while unknown; when one of them
// turns out to be on the other side, the bisection goes on from there.
func (b *bisector) retest(ctx context.Context) error {
	st, r := b.st, &b.st.Result
	if err := b.loadEnds(ctx); err != nil {
		return err
	}
	st.Retests++
	failed := fmt.Sprintf("the check did not confirm %s (%s)", r.Culprit.Short(), r.Check.Reason)
	test := func(i int) (string, error) {
		s := Step{N: len(r.Steps) + 1, Index: i, Commit: b.path[i], Remaining: st.Hi - st.Lo, Retest: true}
		if err := b.classify(ctx, &s, nil); err != nil {
			return "", err
		}
		r.Steps = append(r.Steps, s)
		b.logf("re-test %d: %s is %s: %s", st.Retests, s.Commit.Short(), s.Verdict, s.Reason)
		return s.Verdict, nil
	}
	v, err := test(st.Hi)
	if err != nil {
		return err
	}
	lo, hi := st.Lo, st.Hi
	switch {
	case v == Good:
		lo, hi = st.Hi, b.nextBad(st.Hi)
	case st.Lo >= 0:
		v, err := test(st.Lo)
		if err != nil {
			return err
		}
		if v == Bad {
			lo, hi = b.prevGood(st.Lo), st.Lo
		}
	}
	if lo == st.Lo && hi == st.Hi {
		r.Notes = append(r.Notes, failed+"; re-tests confirmed both sides, so the change is smaller or more spread out than the check can see")
		st.Phase = PhaseTriage
		return nil
	}
	r.Notes = append(r.Notes, failed+"; a re-test moved the search, which went on")
	r.Culprit, r.Parent, r.Check = nil, nil, nil
	st.Lo, st.Hi = lo, hi
	st.Phase = PhaseSteps
	return nil
}

// latest returns the latest verdict of each tested position.
func (b *bisector) latest() map[int]string {
	v := map[int]string{}
	for _, s := range b.st.Result.Steps {
		v[s.Index] = s.Verdict
	}
	return v
}

// nextBad is the first position after i found bad, else the bad end.
func (b *bisector) nextBad(i int) int {
	best := len(b.path) - 1
	for j, v := range b.latest() {
		if v == Bad && j > i && j < best {
			best = j
		}
	}
	return best
}

// prevGood is the last position before i found good, else the good end.
func (b *bisector) prevGood(i int) int {
	best := -1
	for j, v := range b.latest() {
		if v == Good && j < i && j > best {
			best = j
		}
	}
	return best
}

// loadEnds fetches the ends' samples after a resume (they are stored).
func (b *bisector) loadEnds(ctx context.Context) error {
	if b.ends[0].Layouts != nil {
		return nil
	}
	ss, err := b.measure(ctx, b.endsRequests(0))
	if err != nil {
		return err
	}
	b.setEnds(ss[0], ss[1])
	return nil
}

func (b *bisector) triage(ctx context.Context) error {
	r := &b.st.Result
	b.st.Phase = PhaseDone
	if b.opt.Triage == nil || r.Culprit == nil {
		return nil
	}
	b.logf("triage: %s vs its parent %s", r.Culprit.Short(), r.Parent.Short())
	t, err := b.opt.Triage(ctx, *r.Parent, *r.Culprit)
	if err != nil {
		if ctx.Err() != nil {
			b.st.Phase = PhaseTriage
			return err
		}
		r.Triage = &Triage{Error: err.Error()}
		b.logf("triage failed: %v", err)
		return nil
	}
	r.Triage = t
	b.logf("triage: %s: %s", t.Verdict, t.Sentence)
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}
