// Package changepoint finds the commits where a benchmark history changes
// level. It is pure computation over one history of one (job, metric):
// no I/O, no clock, no randomness.
//
// # Input: values or a chain of steps
//
// A history is a [Series] in log space (a change is a ratio). It is built
// in one of two ways, and the way decides how machine drift is kept out:
//
//   - [FromValues]: one value per commit. The detector assumes their errors
//     are independent. Medians taken in different sessions carry the
//     machine's speed at that time (on this project's machine up to 2x
//     between hours), and E-divisive reports that drift as change points
//     (docs/changepoints.md: precision 10 %). Use values only where they are
//     comparable across sessions: a stable machine, or each commit's ratio
//     to an anchor commit that every session re-measures.
//   - [FromSteps]: a chain of within-session ratios, each new commit
//     measured together with the previous one, integrated into a log
//     series. The machine's speed cancels in each ratio, so this is what
//     perfbot watch should give. But the errors of the steps add up along
//     the chain: the integrated series wanders like a random walk, and a
//     test between segment means (E-divisive's) takes that walk for
//     changes (precision 17-31 %). For a random walk the only evidence of a
//     change at commit i is the step measured into i, so a chained series
//     is detected step by step: each step against the Window steps around
//     it (their median is the local drift, their robust scale the noise),
//     with its own interval moderated by that scale. A fresh change is then
//     seen as soon as its step is measured, and a single badly measured
//     session with a wide interval is not a change.
//
// The chain pays for its drift immunity in power: no number of later
// commits confirms a step, only measuring it again does (a bisection does).
// The anchor design gets both: each session also re-measures one anchor
// commit (for example the commit of the last change point), and the ratios
// to it go to FromValues, where E-divisive pools the points of a segment.
//
// # Detection
//
// For independent values, [Detect] is E-divisive means with significance
// pruning as in Apache Otava (formerly Hunter; Fleming et al. 2023):
//
//  1. Split: windows of Window points, one every Window/2, are cut
//     recursively at the split that maximises the energy statistic of
//     Matteson and James (2014), while the Welch t-test between the two
//     sides gives p <= 10*MaxPValue ("weak" change points).
//  2. Merge: each weak change point is tested between its neighbouring
//     change points (at most Window points each side); the weakest that
//     fails (p > MaxPValue, |change| < MinMagnitude, fewer than MinSize
//     points on a side, or not a step on top of a straight line) is
//     dropped and its neighbours are tested again, until all pass.
//
// Significance is a t-test, as in Otava's newer versions, not MongoDB's
// permutation test: at p = 0.001 a permutation test needs thousands of
// permutations per candidate (each O(Window^2)), which would not fit the
// budget of 10,000 commits x 50 metrics in under a second, and a t-test
// needs no seed to be deterministic. Its assumption (roughly normal logs
// within a segment) holds for medians of ten or more runs; heavy tails
// make it conservative. A pass costs O(n*Window).
//
// [Head] tests the newest k points against the history before them, so a
// change at the head is reported at once, before E-divisive has the MinSize
// points after it that it needs.
//
// docs/changepoints.md has the parameters and the precision and recall
// measured on simulated histories with known truth.
package changepoint
