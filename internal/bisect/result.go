// What a bisection finds: comparisons, steps, the check and the result.

package bisect

import (
	"slices"
	"time"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/verdict"
)

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

// Verdict is where a [Step] put its commit.
type Verdict string

// Verdicts of a [Step].
const (
	Good Verdict = "good"
	Bad  Verdict = "bad"
	Skip Verdict = "skip" // like "git bisect skip": it does not build, or its runs all fail
)

// Step is one tested commit.
type Step struct {
	N         int           `json:"n"`     // 1-based
	Index     int           `json:"index"` // position on the path (0 = the good commit's child)
	Commit    gitrev.Commit `json:"commit"`
	Remaining int           `json:"remaining"` // commits that could be the culprit before this step
	Verdict   Verdict       `json:"verdict"`   // Good, Bad or Skip
	// Guessed is set when neither comparison was decided at MaxRuns and
	// the commit was put on the side of the nearer end.
	Guessed bool `json:"guessed,omitempty"`
	Runs    int  `json:"runs"` // runs of the commit (per layout) when decided
	// Disturbed counts the looks not trusted because a canary run of an
	// end showed the machine out of its usual state.
	Disturbed int `json:"disturbed,omitempty"`
	// Retest is set on the re-test of a culprit the check did not
	// confirm, or of its parent.
	Retest bool `json:"retest,omitempty"`
	// Between is set when, looking for every culprit, the commit differs
	// from both ends toward each other: the range was split there.
	Between bool `json:"between,omitempty"`
	// Unchanged is set when the commit's diff from a classified neighbour
	// touches only paths the job ignores: it took that neighbour's
	// verdict with no run.
	Unchanged bool `json:"unchanged,omitempty"`
	// Range is the index in Result.Ranges of the range searched (0, the
	// main range, is left out of the JSON); Index is on its path.
	Range  int         `json:"range,omitempty"`
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
	Verdict  verdict.Verdict `json:"verdict"`
	Sentence string          `json:"sentence"`
	Error    string          `json:"error,omitempty"`
}

// Culprit is one commit that changed the metric, confirmed by its check.
type Culprit struct {
	Commit gitrev.Commit `json:"commit"`
	Parent gitrev.Commit `json:"parent"` // its first parent
	// Change is the check's estimate of the change from parent to
	// culprit, in percent.
	Change float64 `json:"change"`
	Check  *Check  `json:"check,omitempty"`
	Range  int     `json:"range"` // the index in Result.Ranges of the range that named it
	// Merge is set when the culprit is a merge commit: its merged side was
	// not searched, or did not name a culprit of its own (see Interaction
	// and Note).
	Merge bool `json:"merge,omitempty"`
	// Interaction is set on a merge whose second parent, measured against
	// the merge base, does not reproduce the change: neither side alone
	// has it, so it comes from combining them.
	Interaction bool `json:"interaction,omitempty"`
	// Via lists the merges, outermost first, through which the culprit
	// came into the first-parent history; empty when it is on it.
	Via    []gitrev.Commit `json:"via,omitempty"`
	Triage *Triage         `json:"triage,omitempty"`
	Note   string          `json:"note,omitempty"`
}

// RangeKind says why a range was bisected.
type RangeKind string

// Kinds of a [Range].
const (
	RangeMain   RangeKind = "main"   // --good..--bad, the range asked for
	RangeBefore RangeKind = "before" // from a range's good end to a culprit's parent, or to a split point
	RangeAfter  RangeKind = "after"  // from a culprit, or a split point, to its range's bad end
	RangeMerge  RangeKind = "merge"  // inside a merge culprit: from the merge base to its second parent
)

// RangeStatus is where the search of a range stands, or how it ended.
type RangeStatus string

// Statuses of a [Range].
const (
	RangePending     RangeStatus = "pending"     // not searched yet
	RangeSearching   RangeStatus = "searching"   // being searched
	RangeCulprit     RangeStatus = "culprit"     // a culprit named and confirmed
	RangeUnconfirmed RangeStatus = "unconfirmed" // a culprit named, but the check did not confirm it
	RangeCandidates  RangeStatus = "candidates"  // skipped commits leave several candidates
	RangeSame        RangeStatus = "same"        // the ends do not differ: no further change
	RangeSmall       RangeStatus = "small"       // the ends differ, by less than EffectPct
	RangeOtherWay    RangeStatus = "other-way"   // the ends differ the other way
	RangeUndecided   RangeStatus = "undecided"   // the runs cannot tell at MaxRuns
	RangeBudget      RangeStatus = "budget"      // not searched, or stopped: the budget ran out
	RangeFailed      RangeStatus = "failed"      // an end cannot be built or measured
	RangeSplit       RangeStatus = "split"       // a commit differs from both ends: searched as two ranges
)

// Range is one stretch of history searched for a change: the main range,
// a sub-range left over by a culprit, or the merged side of a merge.
type Range struct {
	Kind    RangeKind     `json:"kind"`
	Good    gitrev.Commit `json:"good"`
	Bad     gitrev.Commit `json:"bad"`
	Commits int           `json:"commits"` // first-parent commits after Good, Bad included
	// Of is the culprit or split point (or, for a merge range, the merge)
	// the range is before, after or inside; nil for the main range.
	Of *gitrev.Commit `json:"of,omitempty"`
	// Via lists the merges, outermost first, inside which the range lies.
	Via []gitrev.Commit `json:"via,omitempty"`
	// Split is set on the two halves of a range split at Of, a commit
	// that differed from both its ends by at least EffectPct: a half is
	// searched when its ends differ toward the change at all.
	Split bool `json:"split,omitempty"`
	// Path is the index of the range whose first-parent path holds this
	// range's commits (the main range's path, or a merge range's own),
	// and Span their positions on it: (Span[0], Span[1]], -1 being that
	// path's good end.
	Path   int         `json:"path"`
	Span   [2]int      `json:"span"`
	Status RangeStatus `json:"status"`
	// Ends compares Bad with Good (for a merge range: the merged side
	// against the merge base, whether it reproduces the change).
	Ends     *Comparison `json:"ends,omitempty"`
	EndsRuns [2]int      `json:"ends_runs"`
	// The search's outcome, as in Result.
	Culprit    *gitrev.Commit  `json:"culprit,omitempty"`
	Parent     *gitrev.Commit  `json:"parent,omitempty"`
	Merge      bool            `json:"merge,omitempty"`
	Candidates []gitrev.Commit `json:"candidates,omitempty"`
	Check      *Check          `json:"check,omitempty"`
	// Triage is the triage of an unconfirmed culprit of the main range
	// (confirmed culprits keep theirs in Culprit.Triage).
	Triage *Triage `json:"triage,omitempty"`
	// Runs taken while this range was searched, of which CheckRuns by
	// its checks.
	Runs      int    `json:"runs"`
	CheckRuns int    `json:"check_runs"`
	Note      string `json:"note,omitempty"`
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
	// when skipped commits leave several possible (Candidates). With
	// several culprits, these fields (Culprit to Triage) are those of the
	// first of Culprits (the main range's, or the one found inside it when
	// it is a merge); without a confirmed culprit, those of the main
	// range's search.
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
	// Culprits lists every confirmed culprit, in the order found: the
	// main range's first (or the culprits found inside it when it is a
	// merge), then those of the ranges left over by each.
	Culprits []Culprit `json:"culprits,omitempty"`
	// Ranges lists the ranges searched or left unsearched, the main range
	// first.
	Ranges []Range `json:"ranges,omitempty"`
	// FirstRuns is Runs when the first culprit was confirmed.
	FirstRuns int `json:"first_runs,omitempty"`

	// Mode is how every commit was built, ModeDetail how in words (the
	// variant, the layouts). Set by Run.
	Mode       Mode   `json:"-"`
	ModeDetail string `json:"-"`
	// Table compares parent and culprit over every metric in the 0-day
	// layout, from the check's fresh runs; nil without a checked culprit.
	// Set by Run.
	Table *compare.Table `json:"-"`
}

// ExtraRuns is the runs taken after the first culprit was confirmed, to
// look for more (0 without a culprit).
func (r *Result) ExtraRuns() int {
	if len(r.Culprits) == 0 {
		return 0
	}
	return r.Runs - r.FirstRuns
}

// Unsearched returns the ranges the budget left unsearched or stopped.
func (r *Result) Unsearched() []Range {
	var out []Range
	for _, rg := range r.Ranges {
		if rg.Status == RangeBudget {
			out = append(out, rg)
		}
	}
	return out
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

// SkipSpan is a range that ended with only skipped commits left (their
// build fails, or their runs all fail): the change is at one of Skipped
// or at First, the first commit after them that builds, and Good is the
// last commit before them that built, the one to compare First with.
type SkipSpan struct {
	Good    gitrev.Commit
	First   gitrev.Commit
	Skipped []gitrev.Commit
	Range   int // the index in Ranges
}

// SkipSpans returns the ranges that ended with only skipped commits left,
// in the order of Ranges.
func (r *Result) SkipSpans() []SkipSpan {
	var out []SkipSpan
	for i, rg := range r.Ranges {
		if rg.Status != RangeCandidates || len(rg.Candidates) < 2 || rg.Parent == nil {
			continue
		}
		n := len(rg.Candidates)
		out = append(out, SkipSpan{Good: *rg.Parent, First: rg.Candidates[n-1], Skipped: slices.Clone(rg.Candidates[:n-1]), Range: i})
	}
	return out
}

// Found reports whether the bisection named one culprit and the check
// confirmed it (always true for a confirmed culprit of the fixed scheme,
// which has no check).
func (r *Result) Found() bool {
	return r.Culprit != nil && (r.Check == nil && r.Fixed > 0 || r.Check != nil && r.Check.Confirmed)
}
