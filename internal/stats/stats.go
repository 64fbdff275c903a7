// Package stats decides whether two sets of benchmark samples differ.
//
// It gives, side by side, the rule the 0-day robot uses (lkp's "changed"
// test, [LKPChanged]) and real statistical tests with a confidence interval
// of the change: Mann-Whitney U (through golang.org/x/perf/benchmath) for
// unpaired samples, and the Wilcoxon signed-rank test with a Hodges-Lehmann
// interval for interleaved pairs. On top of these, [Decide] gives bisection
// a three-way answer (same, different, unknown: run more) and
// [CompareLayouts] estimates a code change's effect with code layouts as a
// random factor, to tell real changes from alignment artifacts. Results
// carry warnings as data (too few samples, dropped values), in the manner
// of benchmath.
package stats

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat"
)

// Summary describes one sample the way lkp ncompare and benchstat print it.
type Summary struct {
	N      int
	Mean   float64
	Stddev float64 // population standard deviation (lkp's %stddev uses it)
	// RelStddev is 100*Stddev/|Mean| (the "%stddev" column), 0 when Mean is 0.
	RelStddev float64
	Median    float64
	Min, Max  float64
	// Lo and Hi bound the median's confidence interval (benchmath
	// AssumeNothing); both equal Median when N is too small.
	Lo, Hi float64
	// Warnings says why the interval is missing (too few samples) and
	// which values were dropped (NaN, ±Inf).
	Warnings []error
}

// Comparison is the statistical comparison of a new sample against a base.
type Comparison struct {
	Test string // "mann-whitney", "wilcoxon" or "" when none could run
	N    int    // samples per side (unpaired: min of both) or pairs (paired)
	P    float64
	// Change is the estimated relative change in percent (Hodges-Lehmann on
	// log values when all values are positive), and [Lo, Hi] its confidence
	// interval at the comparison's confidence level.
	Change, Lo, Hi float64
	// Confidence is the actual coverage of [Lo, Hi]: at least 1-Alpha
	// (exact order-statistic intervals can only step in discrete levels),
	// or less, with a warning, when there are too few samples for 1-Alpha.
	Confidence  float64
	Alpha       float64
	Significant bool // P < Alpha
	Warnings    []error
}

// SummaryConfidence is the confidence level of Summary's median interval,
// benchstat's default.
const SummaryConfidence = 0.95

// Summarize describes xs: count, mean, population standard deviation (as
// lkp's %stddev), median with its distribution-free confidence interval at
// 95 % (benchmath.AssumeNothing, as benchstat prints it), min and max.
// Non-finite values are dropped with a warning; xs is not modified.
func Summarize(xs []float64) Summary {
	vals, warns := finite(xs, "sample")
	s := Summary{N: len(vals), Warnings: warns}
	if len(vals) == 0 {
		s.Warnings = append(s.Warnings, fmt.Errorf("sample: no values"))
		return s
	}
	s.Mean, s.Stddev = stat.PopMeanStdDev(vals, nil)
	if s.Mean != 0 {
		s.RelStddev = 100 * s.Stddev / math.Abs(s.Mean)
	}
	// NewSample sorts vals in place; vals is already our own copy.
	sample := benchmath.NewSample(vals, &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(sample, SummaryConfidence)
	s.Median, s.Lo, s.Hi = sum.Center, sum.Lo, sum.Hi
	s.Min, s.Max = vals[0], vals[len(vals)-1]
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) {
		s.Lo, s.Hi = s.Median, s.Median
	}
	s.Warnings = append(s.Warnings, sum.Warnings...)
	return s
}

// finite returns a copy of xs without NaN and ±Inf, and a warning naming
// what (e.g. "base") when it dropped any.
func finite(xs []float64, what string) ([]float64, []error) {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	if d := len(xs) - len(out); d > 0 {
		return out, []error{fmt.Errorf("%s: dropped %d non-finite value(s) (NaN or ±Inf) of %d", what, d, len(xs))}
	}
	return out, nil
}

// allPositive reports whether every value of every slice is > 0, that is
// whether changes can be estimated on log values.
func allPositive(xss ...[]float64) bool {
	for _, xs := range xss {
		for _, x := range xs {
			if !(x > 0) {
				return false
			}
		}
	}
	return true
}

// checkAlpha returns alpha, or 0.05 and a warning when alpha is not in (0, 1).
func checkAlpha(alpha float64) (float64, []error) {
	if alpha > 0 && alpha < 1 {
		return alpha, nil
	}
	return 0.05, []error{fmt.Errorf("alpha %v is not in (0, 1); using 0.05", alpha)}
}

// Median returns the median of xs (NaN when xs is empty); xs is not
// modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return median(s)
}
