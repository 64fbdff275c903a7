package run

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MinDetectableEffect returns the smallest relative effect (0.05 is 5 %)
// that pairs paired runs detect at 95 % confidence and 80 % power when one
// run's time has coefficient of variation cv (0.04 is 4 %). It is +Inf for
// fewer than 2 pairs and NaN for a negative or NaN cv.
//
// The power analysis: a pair is one run of each of two commits
// taken side by side (the same round of a Schedule); the test is a paired,
// two-sided t test on the log-ratios d = ln(a/b) at 95 % confidence with
// 80 % power. With a per-run coefficient of variation cv, the log of one run
// has a standard deviation of about cv, so d has sd = sqrt(2)*cv (runs
// independent; slow drift cancels within a pair). A true effect ln(1+e) is
// detected with that power when
//
//	ln(1+e) >= (t(0.975, n-1) + t(0.80, n-1)) * sqrt(2) * cv / sqrt(n)
//
// with t(p, df) Student's t quantile (the usual approximation of the
// non-central t power). On the project's machines this matches the measured
// rules of thumb: at cv ≈ 14.5 % it gives 6 pairs for a 35 % effect and 19
// for 15 %; at cv ≈ 4.5 % it gives 16 pairs for 5 % and 39 for 3 %. A rank
// test (Mann-Whitney, as benchstat uses) needs about 5 % more runs.
func MinDetectableEffect(cv float64, pairs int) float64 {
	if math.IsNaN(cv) || cv < 0 {
		return math.NaN()
	}
	if pairs < 2 {
		return math.Inf(1)
	}
	return math.Expm1(tSum(pairs) * math.Sqrt2 * cv / math.Sqrt(float64(pairs)))
}

// tSum is t(0.975, n-1) + t(0.80, n-1).
func tSum(n int) float64 {
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
	return t.Quantile(0.975) + t.Quantile(0.80)
}

// RunsNeeded returns the number of pairs of runs needed to detect a
// relative effect (0.05 is 5 %) at 95 % confidence and 80 % power when one
// run has coefficient of variation cv: the smallest n >= 2 with
// MinDetectableEffect(cv, n) <= effect. It returns 0 when the question has
// no answer (effect not positive, cv negative, NaN or infinite) and caps
// the answer at math.MaxInt32.
//
// A command can warn with it, e.g. "machine too noisy for a 5 % effect with
// 6 runs (CV 4.1 % on CPU 1): need 14 runs" when RunsNeeded(0.041, 0.05) > 6.
func RunsNeeded(cv, effect float64) int {
	if !(effect > 0) || math.IsInf(effect, 0) || math.IsNaN(cv) || cv < 0 || math.IsInf(cv, 0) {
		return 0
	}
	if cv == 0 {
		return 2
	}
	// The normal approximation is a lower bound: t quantiles exceed z.
	z := distuv.UnitNormal.Quantile(0.975) + distuv.UnitNormal.Quantile(0.80)
	n0 := math.Pow(z*math.Sqrt2*cv/math.Log1p(effect), 2)
	if n0 >= math.MaxInt32 {
		return math.MaxInt32
	}
	for n := max(2, int(n0)); n < math.MaxInt32; n++ {
		if MinDetectableEffect(cv, n) <= effect {
			return n
		}
	}
	return math.MaxInt32
}
