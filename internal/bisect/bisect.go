// Package bisect finds the commits that changed a benchmark metric between
// a good and a bad commit, on the first-parent history and inside the
// merges that brought a change, deciding every step with a statistical
// test instead of one run.
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
//     A candidate that differs from both ends toward each other (the range
//     holds more than one change) splits the range in two there (see 6);
//     with MaxCulprits 1 it goes to the nearer end and the step says so.
//     One still unknown at MaxRuns goes to the nearer end and is marked as
//     a guess. A
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
//  5. Merges. A confirmed culprit M that is a merge (without
//     [Config.FirstParentOnly]) is searched inside: when M^2 differs from
//     merge-base(M^1, M^2) like the ends of a range, that stretch of M^2's
//     first-parent history is bisected and the culprit found there takes
//     M's place (Culprit.Via names M); when it does not, neither side alone
//     has the change and M is the culprit, marked as an interaction.
//  6. Every culprit. The ranges a confirmed culprit leaves (from its
//     range's good end to its parent, from it to its range's bad end) are
//     compared end to end and searched the same way when they differ, so
//     that every change is named ([Result.Culprits], [Result.Ranges]), up
//     to MaxCulprits culprits and ExtraRuns runs; the ranges the budget
//     leaves are reported as such ([RangeBudget]).
//  7. Triage. In the plain build mode (not Fixed, not
//     [Config.NoTriage]), each culprit and its parent are triaged
//     (triage.Run with the same measure.Env), to say whether the change
//     is real or an alignment artifact.
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
// decision (under [Config.StateKey], or the key [StateKey] derives): a
// killed bisection resumes where it stopped. [Run] is the entry point (a
// [Config] in, a [Result] out); [StoreMeasurer] is the real measurer (builds, pinned
// interleaved runs, the results store); tests use simulated ones.
// [Config.Fixed] replaces the tests by the plain "git bisect run" scheme
// (a fixed number of runs, the midpoint of the ends' means), to measure
// what the tests save.
package bisect

import (
	"errors"

	"github.com/perfbot/perfbot/internal/stats"
)

// Defaults of [Config]. The ends' and the check's first looks default to
// the fewest runs with which the Mann-Whitney test can reach Alpha at all
// (see [MinRuns]): 9 runs of each end for a first look of 3 runs at a
// candidate, and 5 runs of each side in the check, at Alpha 0.01.
const (
	DefaultStepRuns  = 3                      // first look at a candidate
	DefaultMaxRuns   = 40                     // most runs of one commit (per layout)
	DefaultAlpha     = 0.01                   // per look, Pinpoint's
	DefaultEffectPct = stats.DefaultEffectPct // changes within ±5 % count as "the same"
	// DefaultMaxCulprits is the most culprits a bisection names.
	DefaultMaxCulprits = 4
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
