// What a bisection finds: comparisons, steps, the check and the result.

package bisect

import (
	"time"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
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
