package stats

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// CompareUnpaired compares new sample b against base a, runs not paired.
//
// P is the two-sided Mann-Whitney U test exactly as benchstat computes it
// (benchmath.AssumeNothing.Compare: exact distribution up to 50 samples a
// side, or 25 with ties, else the normal approximation with tie and
// continuity corrections), with the same warnings; for untied samples of 10
// to 50 a side the same exact p-value comes from a cached table instead
// (see fastUTest). Change is the Hodges-Lehmann shift estimate,
// the median of all len(a)*len(b) differences log(b[j]) - log(a[i]),
// reported as 100*(exp(d)-1); [Lo, Hi] is its distribution-free interval
// at 1-alpha, the order statistics D(k) and D(M+1-k) of the sorted
// differences where k comes from the exact U distribution (normal
// approximation above 50 samples a side). When any value is <= 0 the
// differences are taken on raw values and reported in percent of |median(a)|.
// Non-finite values are dropped with a warning; a and b are not modified.
// Time and memory grow as len(a)*len(b).
func CompareUnpaired(a, b []float64, alpha float64) Comparison {
	alpha, warns := checkAlpha(alpha)
	return compareUnpaired(a, b, alpha, 1-alpha, warns)
}

func compareUnpaired(a, b []float64, alpha, conf float64, warns []error) Comparison {
	a, wa := finite(a, "base")
	b, wb := finite(b, "new")
	c := Comparison{Alpha: alpha, P: 1, N: min(len(a), len(b))}
	c.Warnings = append(append(append(c.Warnings, warns...), wa...), wb...)
	if len(a) == 0 || len(b) == 0 {
		c.Warnings = append(c.Warnings, fmt.Errorf("need samples on both sides (base %d, new %d)", len(a), len(b)))
		return c
	}
	// a and b are our own copies, sorted in place.
	slices.Sort(a)
	slices.Sort(b)
	c.Test = "mann-whitney"
	if p, ok := fastUTest(a, b, alpha); ok {
		c.P = p
	} else if p, ok := fastUTestTied(a, b, alpha); ok {
		c.P = p
	} else {
		th := &benchmath.Thresholds{CompareAlpha: alpha}
		res := benchmath.AssumeNothing.Compare(&benchmath.Sample{Values: a, Thresholds: th}, &benchmath.Sample{Values: b, Thresholds: th})
		c.P = res.P
		c.Warnings = append(c.Warnings, res.Warnings...)
	}
	c.Significant = c.P < alpha

	m, n := len(a), len(b)
	logScale := a[0] > 0 && b[0] > 0 // sorted: the minimum decides
	base := median(a)
	if logScale {
		for i, x := range a {
			a[i] = math.Log(x)
		}
		for j, y := range b {
			b[j] = math.Log(y)
		}
	}
	M := m * n
	d := make([]float64, 0, M)
	for _, y := range b {
		for _, x := range a {
			d = append(d, y-x)
		}
	}
	var cdf []float64
	if m <= exactLimit && n <= exactLimit {
		cdf = uCDF(m, n)
	}
	mu := float64(M) / 2
	sigma := math.Sqrt(float64(M) * float64(m+n+1) / 12)
	k, actual := ciOrder(cdf, mu, sigma, M, conf)
	lo, est, hi := hlOrderStats(d, k)
	c.Confidence = actual
	if actual < conf-1e-12 {
		c.Warnings = append(c.Warnings, fmt.Errorf("need >= %d samples a side for a %v confidence interval of the change; interval is at %.3g", minSamplesUnpaired(conf), conf, actual))
	}
	c.Change, c.Lo, c.Hi, c.Warnings = toPercent(logScale, base, est, lo, hi, c.Warnings)
	return c
}

// toPercent converts a shift estimate and its bounds to percent changes:
// 100*(exp(d)-1) on the log scale, else 100*d/|base| with base the base
// median (raw values), which must not be 0.
func toPercent(logScale bool, base, est, lo, hi float64, warns []error) (float64, float64, float64, []error) {
	if logScale {
		return 100 * math.Expm1(est), 100 * math.Expm1(lo), 100 * math.Expm1(hi), warns
	}
	warns = append(warns, fmt.Errorf("values <= 0: change estimated on raw values, in percent of the base median"))
	if base == 0 {
		return 0, 0, 0, append(warns, fmt.Errorf("base median is 0: change cannot be given in percent"))
	}
	s := 100 / math.Abs(base)
	return s * est, s * lo, s * hi, warns
}

// median returns the median of the sorted xs.
func median(sorted []float64) float64 {
	n := len(sorted)
	return (sorted[(n-1)/2] + sorted[n/2]) / 2
}

// fastUTest returns benchmath.AssumeNothing.Compare's p-value for the
// sorted samples a and b from the cached exact distribution, in the cases
// where benchmath would use the same exact distribution (no ties, at most
// 50 a side) and would add no warning (10 or more a side, so the least
// possible p is far below any alpha >= 1e-4). benchmath (go-moremath)
// rebuilds that distribution on every call, which made it 80 % of the time
// of comparing 10,000 metrics; TestFastUTestMatchesBenchmath checks that the
// values agree.
func fastUTest(a, b []float64, alpha float64) (p float64, ok bool) {
	m, n := len(a), len(b)
	if m < 10 || n < 10 || m > exactLimit || n > exactLimit || alpha < 1e-4 {
		return 0, false
	}
	// U1 = #{(i, j): a[i] > b[j]} by merging; any tie sends it to benchmath.
	u1, j := 0, 0
	for i, x := range a {
		if i > 0 && a[i-1] == x {
			return 0, false
		}
		for j < n && b[j] < x {
			if j > 0 && b[j-1] == b[j] {
				return 0, false
			}
			j++
		}
		if j < n && b[j] == x {
			return 0, false
		}
		u1 += j
	}
	for ; j < n; j++ {
		if j > 0 && b[j-1] == b[j] {
			return 0, false
		}
	}
	u2 := m*n - u1
	if u1 == u2 {
		return 1, true
	}
	return math.Min(1, 2*uCDF(m, n)[min(u1, u2)]), true
}

// minSamplesUnpaired is the least n for which two samples of n values give a
// Hodges-Lehmann interval at level conf: 2/C(2n, n) <= 1-conf.
func minSamplesUnpaired(conf float64) int {
	for n := 1; n < exactLimit; n++ {
		if uCDF(n, n)[0]*2 <= 1-conf {
			return n
		}
	}
	return exactLimit
}
