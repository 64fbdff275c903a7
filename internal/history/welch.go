package history

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// welchLogP is the two-sided p-value of Welch's t-test of the logs of a
// and b (a test of the ratio of their geometric means); 0 when it cannot
// be computed (fewer than 2 values a side, or a value that is not
// positive). Unlike the rank tests it weighs how far each run lies, so
// that one run slowed by the machine's load, which turns its pair and
// passes every run of the other side, still leaves a large step
// significant at a cycle's 8 runs (see Point.TP).
func welchLogP(a, b []float64) float64 {
	ma, va, ok := logMoments(a)
	mb, vb, okb := logMoments(b)
	if !ok || !okb {
		return 0
	}
	sa, sb := va/float64(len(a)), vb/float64(len(b))
	se2 := sa + sb
	d := mb - ma
	if se2 == 0 {
		if d == 0 {
			return 1
		}
		return math.SmallestNonzeroFloat64
	}
	df := se2 * se2 / (sa*sa/float64(len(a)-1) + sb*sb/float64(len(b)-1))
	if df < 1 || math.IsNaN(df) {
		df = 1
	}
	p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(d)/math.Sqrt(se2))
	return max(p, math.SmallestNonzeroFloat64)
}

// logMoments returns the mean and the sample variance of the logs of xs.
func logMoments(xs []float64) (mean, variance float64, ok bool) {
	if len(xs) < 2 {
		return 0, 0, false
	}
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 1) {
			return 0, 0, false
		}
		mean += math.Log(x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		d := math.Log(x) - mean
		variance += d * d
	}
	return mean, variance / float64(len(xs)-1), true
}
