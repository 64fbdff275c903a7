// The search's options: a Config resolved by Run, and their checks.

package bisect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
)

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
	// SpeculateAuto is SpeculateBuild when the runs are pinned and another
	// CPU is free for the builds, else SpeculateNone ([AutoSpeculation]).
	SpeculateAuto Speculation = "auto"
)

// Speculations lists the speculations a Config takes, as --speculate
// spells them.
var Speculations = []Speculation{SpeculateNone, SpeculateBuild, SpeculateRuns, SpeculateAuto}

// options configure the search. Zero values take the defaults.
type options struct {
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
	// DefaultAlpha); EffectPct the change, in percent, within which two
	// commits count as the same (default DefaultEffectPct).
	Alpha, EffectPct float64
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
	// Parallel, when > 1, searches k-ary: each step measures Parallel
	// candidates at once, evenly spaced in the range, each in Measure
	// calls of its own together with fresh runs of both ends (so that a
	// fleet takes each candidate and the reference runs it is compared
	// with on one machine), and the range shrinks to the stretch between
	// the last candidate like good and the first like bad. The Measurer
	// must take concurrent Measure calls (a fleet's). Not with Fixed.
	Parallel int
	// MaxCulprits is the most culprits to name (default
	// DefaultMaxCulprits): after each confirmed culprit, the ranges it
	// leaves (from the range's good end to the culprit's parent, from the
	// culprit to the range's bad end) are searched in turn when their
	// ends differ. Once MaxCulprits are named, the ranges left are not
	// searched and are reported as such ([RangeBudget]); 1 names only the
	// first culprit, as "git bisect" does. ExtraRuns, when > 0, caps the
	// runs taken after the first culprit is confirmed the same way: no
	// range starts, and no step of a started one is taken, once that many
	// runs are spent (a look or a check under way is finished). Neither
	// cap stops the search inside a merge culprit: it refines a culprit
	// already counted.
	MaxCulprits, ExtraRuns int
	// FirstParentOnly leaves merges as they are: a culprit that is a
	// merge is reported as one. Otherwise, with a Graph, the merged side
	// of a merge culprit M is searched: from merge-base(M^1, M^2) to M^2,
	// when M^2 reproduces the change against that base; when it does not,
	// the merge itself is the culprit (an interaction of the two sides).
	FirstParentOnly bool
	// Graph is the commit graph (parents, merge bases, first-parent
	// paths) for the search inside merges; nil uses the Measurer when it
	// implements [Graph], else merges are not searched.
	Graph Graph
	// Relevance, when set, decides a candidate at once when its diff from
	// a classified neighbour cannot matter (see inherit); nil measures
	// every candidate.
	Relevance Relevance
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

func (o *options) defaults() error {
	if o.Measurer == nil {
		return errors.New("bisect: no Measurer")
	}
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if !(o.Alpha > 0 && o.Alpha < 0.5) {
		return fmt.Errorf("bisect: alpha %v is not in (0, 0.5)", o.Alpha)
	}
	if o.EffectPct == 0 {
		o.EffectPct = DefaultEffectPct
	}
	if !(o.EffectPct > 0 && o.EffectPct < 1000) {
		return fmt.Errorf("bisect: effect %v%% is not in (0, 1000)", o.EffectPct)
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
	switch {
	case o.MaxCulprits < 0:
		return fmt.Errorf("bisect: at most %d culprits", o.MaxCulprits)
	case o.ExtraRuns < 0:
		return fmt.Errorf("bisect: a budget of %d extra runs", o.ExtraRuns)
	case o.MaxCulprits == 0:
		o.MaxCulprits = DefaultMaxCulprits
	}
	if o.Graph == nil {
		o.Graph, _ = o.Measurer.(Graph)
	}
	if o.Fixed > 0 {
		// The fixed scheme is the plain "git bisect run": one culprit.
		o.MaxCulprits, o.FirstParentOnly = 1, true
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
