package stats

import (
	"math"
	"slices"
)

// LKPChanged reports whether lkp ncompare (intel/lkp-tests) would list the
// stat as changed between base a and new sample b. kpi selects the ratio
// threshold: true for the benchmark's own metrics (lkp's perf_metric?),
// false for monitors.
//
// It follows lib/stats.rb (StatCompare, sort_remove_margin, min_mean_max,
// skip_regular_stat?, skip_small_change?, calc_stats_metrics) and
// lib/changed_stat.rb (ChangedStat#change? without the distance option,
// which ncompare does not set):
//
//   - Neither side may be empty, and at least one side needs >= 3 samples
//     (counted before trimming).
//   - Each side is sorted and floor(n/32) samples are trimmed from each end,
//     at most 3; the new side is trimmed by at most 1 when the base has <= 3
//     samples.
//   - lkp's "mean" of a trimmed side is the element at index n/2, the upper
//     median; it is called median here.
//   - The stat changed when min_b > median_a && median_b > max_a, or the
//     mirror min_a > median_b && median_a > max_b.
//   - ratio = high/low of the two medians (5 when low <= 0, capped at 5);
//     the change is dropped unless ratio > 1.01, and, for non-KPIs, unless
//     ratio > 1.05.
//
// Where lkp compares "ratio of means", its means are these medians, and
// this follows the code. Not included: lkp's per-stat absolute floors
// (reasonable_perf_change?), its latency and failure-stat rules, and the
// zero-filling of missing runs. Non-finite values are dropped first.
func LKPChanged(a, b []float64, kpi bool) bool {
	if len(a) < 3 && len(b) < 3 {
		return false
	}
	var bufA, bufB [64]float64
	sa := appendFinite(bufA[:0], a)
	sb := appendFinite(bufB[:0], b)
	if len(sa) == 0 || len(sb) == 0 {
		return false
	}
	slices.Sort(sa)
	slices.Sort(sb)
	sa = trimMargin(sa, 3)
	maxB := 3
	if len(a) <= 3 {
		maxB = 1
	}
	sb = trimMargin(sb, maxB)

	minA, medA, maxA := sa[0], sa[len(sa)/2], sa[len(sa)-1]
	minB, medB, maxB2 := sb[0], sb[len(sb)/2], sb[len(sb)-1]
	changed := (minB > medA && medB > maxA) || (minA > medB && medA > maxB2)
	if !changed {
		return false
	}
	high, low := medA, medB
	if medB > medA {
		high, low = medB, medA
	}
	const maxRatio = 5
	ratio := float64(maxRatio)
	if low > 0 {
		ratio = math.Min(high/low, maxRatio)
	}
	if !(ratio > 1.01) {
		return false
	}
	return ratio > 1.05 || kpi
}

// trimMargin drops floor(n/32), at most maxMargin, values from each end of
// the sorted xs (lkp's sort_remove_margin).
func trimMargin(xs []float64, maxMargin int) []float64 {
	m := min(len(xs)>>5, maxMargin)
	return xs[m : len(xs)-m]
}

// appendFinite appends the finite values of xs to dst.
func appendFinite(dst, xs []float64) []float64 {
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			dst = append(dst, x)
		}
	}
	return dst
}
