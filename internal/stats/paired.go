package stats

import (
	"fmt"
	"math"
	"slices"
)

// ComparePaired compares new sample b against base a where a[i] and b[i]
// ran as the i-th interleaved pair (same round, same machine state).
//
// The test is the two-sided Wilcoxon signed-rank test on the differences
// d[i] = log(b[i]/a[i]) (b[i]-a[i] when any value is <= 0). Zero
// differences are dropped before ranking (Wilcoxon's method, R's and
// scipy's default; not Pratt's), tied |d| get average ranks (midranks).
// When at most 50 nonzero differences remain, P is exact: from the null
// distribution of W+ over all 2^n sign patterns of the n nonzero
// differences, conditional on their |d| (with ties, the permutation
// distribution of the midrank statistic, as R's coin::wilcoxsign_test with
// zero.method = "Wilcoxon" and distribution = "exact"), so it is never below
// 2^(1-n), the chance that all n signs agree. P is 2*min(P(W+ <= w),
// P(W+ >= w)), at most 1, both tails summed directly; the distribution is
// symmetric about n(n+1)/4, so this is also twice the tail beyond the
// observed distance from the mean. Above 50 P is the
// normal approximation with the tie-corrected variance
// n(n+1)(2n+1)/24 - sum(t^3-t)/48 and a continuity correction of 0.5.
//
// Change is the Hodges-Lehmann estimate, the median of the n(n+1)/2 Walsh
// averages (d[i]+d[j])/2, i <= j, over all pairs (zeros included: they are
// observations of the shift), as 100*(exp(d)-1), or in percent of |median(a)|
// on raw values. [Lo, Hi] is the interval A(k), A(M+1-k) of the sorted Walsh
// averages obtained by inverting the signed-rank test: k from the exact W+
// distribution up to 50 pairs, from the normal approximation above, in both
// cases the untied distribution (a tied one would change with the shift
// tried). Confidence is that distribution's coverage; it is exact for
// continuous data and, with ties (discrete data), a lower bound: the
// closed interval covers at least that often (Noether, JASA 62, 1967;
// checked here by exact enumeration on discrete grids). The interval and
// the test can then disagree at the edge: the interval, conservative and
// built from all pairs, may touch 0 when P < alpha, more so with zeros,
// which the test drops.
//
// When a and b differ in length only the common prefix is used, with a
// warning; pairs with a NaN or ±Inf are dropped, with a warning.
func ComparePaired(a, b []float64, alpha float64) Comparison {
	alpha, warns := checkAlpha(alpha)
	return comparePaired(a, b, alpha, 1-alpha, warns)
}

func comparePaired(a, b []float64, alpha, conf float64, warns []error) Comparison {
	c := Comparison{Alpha: alpha, P: 1, Warnings: warns}
	n := min(len(a), len(b))
	if len(a) != len(b) {
		c.Warnings = append(c.Warnings, fmt.Errorf("paired samples differ in length (base %d, new %d); using the first %d pairs", len(a), len(b), n))
	}
	a, b = a[:n], b[:n]
	logScale := true
	dropped := 0
	for i := range n {
		if !isFinite(a[i]) || !isFinite(b[i]) {
			dropped++
		} else if !(a[i] > 0 && b[i] > 0) {
			logScale = false
		}
	}
	d := make([]float64, 0, n)
	base := make([]float64, 0, n)
	for i := range n {
		x, y := a[i], b[i]
		if !isFinite(x) || !isFinite(y) {
			continue
		}
		base = append(base, x)
		if logScale {
			d = append(d, math.Log(y/x))
		} else {
			d = append(d, y-x)
		}
	}
	if dropped > 0 {
		c.Warnings = append(c.Warnings, fmt.Errorf("dropped %d pair(s) with a non-finite value (NaN or ±Inf) of %d", dropped, n))
	}
	n = len(d)
	c.N = n
	if n == 0 {
		c.Warnings = append(c.Warnings, fmt.Errorf("need at least one pair"))
		return c
	}
	c.Test = "wilcoxon"
	var nz int
	c.P, nz = signedRankP(d)
	c.Significant = c.P < alpha
	if nz == 0 {
		c.Warnings = append(c.Warnings, fmt.Errorf("all %d differences are zero", n))
	} else if !c.Significant && math.Ldexp(1, 1-nz) > alpha {
		c.Warnings = append(c.Warnings, fmt.Errorf("need >= %d nonzero pairs to detect a difference at alpha level %v", minPairs(alpha), alpha))
	}

	est, lo, hi, actual := walshCI(d, conf)
	c.Confidence = actual
	if actual < conf-1e-12 {
		c.Warnings = append(c.Warnings, fmt.Errorf("need >= %d pairs for a %v confidence interval of the change; interval is at %.3g", minPairs(1-conf), conf, actual))
	}
	slices.Sort(base)
	c.Change, c.Lo, c.Hi, c.Warnings = toPercent(logScale, median(base), est, lo, hi, c.Warnings)
	return c
}

// signedRankP returns the two-sided p-value of the Wilcoxon signed-rank test
// on d (reordering d) and the number of nonzero differences it used.
func signedRankP(d []float64) (p float64, nonzero int) {
	slices.SortFunc(d, func(x, y float64) int {
		switch ax, ay := math.Abs(x), math.Abs(y); {
		case ax < ay:
			return -1
		case ax > ay:
			return 1
		}
		return 0
	})
	zeros := 0
	for zeros < len(d) && d[zeros] == 0 {
		zeros++
	}
	nz := d[zeros:]
	n := len(nz)
	if n == 0 {
		return 1, 0
	}
	// Ranks 1..n by |d|, ties get their average rank (midrank). Doubled
	// midranks are integers: twoW is 2*W+ exactly; T holds the tie groups'
	// sizes in rank order.
	wplus, tieTerm, twoW := 0.0, 0.0, 0
	T := make([]int, 0, n)
	for i := 0; i < n; {
		j := i + 1
		for j < n && math.Abs(nz[j]) == math.Abs(nz[i]) {
			j++
		}
		rank := float64(i+1+j) / 2 // average of ranks i+1..j
		for _, x := range nz[i:j] {
			if x > 0 {
				wplus += rank
				twoW += i + 1 + j
			}
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
		}
		T = append(T, j-i)
		i = j
	}
	if n <= exactLimit {
		if tieTerm == 0 {
			return exactTwoSided(wCDF(n), int(wplus)), n
		}
		return exactTwoSided(tiedWCDF(T), twoW), n
	}
	fn := float64(n)
	mu := fn * (fn + 1) / 4
	v := fn*(fn+1)*(2*fn+1)/24 - tieTerm/48
	if v <= 0 {
		return 1, n
	}
	return normalTwoSided(wplus, mu, math.Sqrt(v)), n
}

// walshCI returns the Hodges-Lehmann estimate of the center of symmetry of
// d, the median of the Walsh averages, and its confidence interval at conf
// with the interval's actual confidence. The order k comes from the untied
// signed-rank distribution of all len(d) values, ties and zeros or not:
// with ties the closed interval [A(k), A(M+1-k)] still covers the center
// with probability at least actual (Noether 1967), so actual is a lower
// bound there (see TestPairedTiesSizeAndCoverage).
func walshCI(d []float64, conf float64) (est, lo, hi, actual float64) {
	n := len(d)
	M := n * (n + 1) / 2
	w := make([]float64, 0, M)
	for i, x := range d {
		for _, y := range d[i:] {
			w = append(w, (x+y)/2)
		}
	}
	var cdf []float64
	if n <= exactLimit {
		cdf = wCDF(n)
	}
	fn := float64(n)
	k, actual := ciOrder(cdf, float64(M)/2, math.Sqrt(fn*(fn+1)*(2*fn+1)/24), M, conf)
	lo, est, hi = hlOrderStats(w, k)
	return est, lo, hi, actual
}

// minPairs is the least number of nonzero, untied pairs for which the exact
// signed-rank test can reach two-sided p <= alpha: 2^(1-n) <= alpha.
func minPairs(alpha float64) int {
	n := 1
	for math.Ldexp(1, 1-n) > alpha && n < 64 {
		n++
	}
	return n
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
