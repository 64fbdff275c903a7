package stats

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// exactLimit is the largest sample size (per side, or pairs) for which the
// exact null distributions are used; above it, normal approximations.
const exactLimit = 50

// uCDFs caches the exact null CDF of the Mann-Whitney U statistic, keyed by
// [2]int{m, n} with m <= n.
var uCDFs sync.Map

// uCDF returns cdf with cdf[u] = P(U <= u) for U the Mann-Whitney statistic
// (number of pairs (x, y) with x > y) of samples of sizes m and n under the
// null hypothesis, assuming no ties. m and n must be <= exactLimit.
//
// It uses the recurrence on the largest observation,
// p[i,j](u) = i/(i+j) p[i-1,j](u-j) + j/(i+j) p[i,j-1](u),
// whose terms are all positive, so it is numerically stable.
func uCDF(m, n int) []float64 {
	if m > n {
		m, n = n, m
	}
	key := [2]int{m, n}
	if v, ok := uCDFs.Load(key); ok {
		return v.([]float64)
	}
	// p[i] holds p[i,j] for the current j; p[i,j] has support 0..i*j.
	p := make([][]float64, m+1)
	for i := range p {
		p[i] = make([]float64, m*n+1)
	}
	p[0][0] = 1
	for i := 1; i <= m; i++ {
		p[i][0] = 1 // j = 0: U is 0
	}
	for j := 1; j <= n; j++ {
		for i := 1; i <= m; i++ {
			wi, wj := float64(i)/float64(i+j), float64(j)/float64(i+j)
			cur, prev := p[i], p[i-1] // cur is p[i,j-1], prev is p[i-1,j]
			for u := i * j; u >= 0; u-- {
				v := wj * cur[u]
				if u >= j {
					v += wi * prev[u-j]
				}
				cur[u] = v
			}
		}
	}
	cdf := cumulate(p[m])
	v, _ := uCDFs.LoadOrStore(key, cdf)
	return v.([]float64)
}

// wCDFs caches the exact null CDF of the Wilcoxon signed-rank statistic,
// keyed by n.
var wCDFs sync.Map

// wCDF returns cdf with cdf[w] = P(W+ <= w) for W+ the sum of the ranks of
// the positive differences among n nonzero, untied differences, under the
// null hypothesis of symmetry about 0: p[k](w) = (p[k-1](w) + p[k-1](w-k))/2.
func wCDF(n int) []float64 {
	if v, ok := wCDFs.Load(n); ok {
		return v.([]float64)
	}
	top := n * (n + 1) / 2
	p := make([]float64, top+1)
	p[0] = 1
	for k := 1; k <= n; k++ {
		for w := k * (k + 1) / 2; w >= 0; w-- {
			v := p[w]
			if w >= k {
				v += p[w-k]
			}
			p[w] = v / 2
		}
	}
	cdf := cumulate(p)
	v, _ := wCDFs.LoadOrStore(n, cdf)
	return v.([]float64)
}

// cumulate turns a probability mass function into its CDF, in place, and
// pins the last value to 1.
func cumulate(p []float64) []float64 {
	s := 0.0
	for i, x := range p {
		s += x
		p[i] = s
	}
	p[len(p)-1] = 1
	return p
}

// exactTwoSided is the two-sided p-value of statistic s with symmetric
// integer null distribution cdf: 2*min(P(S <= s), P(S >= s)), at most 1.
func exactTwoSided(cdf []float64, s int) float64 {
	lo := cdf[s]
	hi := 1.0
	if s > 0 {
		hi = 1 - cdf[s-1]
	}
	return math.Min(1, 2*math.Min(lo, hi))
}

// ciOrder returns the 1-based order k of the lower confidence bound among the
// sorted M differences (or Walsh averages) that make up a Hodges-Lehmann
// interval [D(k), D(M+1-k)], and the interval's actual confidence.
//
// With an exact null CDF of the rank statistic (symmetric on 0..M), k is
// the largest with P(S <= k-1) <= (1-conf)/2, so that coverage is
// 1 - 2 P(S <= k-1) >= conf (Hollander & Wolfe, Nonparametric Statistical
// Methods, 3.3 and 4.3). When even k = 1 misses conf, k is 1 (the whole
// range) and the confidence returned is below conf. With cdf nil, the
// normal approximation with mean mu, standard deviation sigma and a
// continuity correction is used.
func ciOrder(cdf []float64, mu, sigma float64, M int, conf float64) (k int, actual float64) {
	tail := (1 - conf) / 2
	if cdf != nil {
		k = 0
		for k < len(cdf) && cdf[k] <= tail {
			k++
		}
		// cdf[k-1] <= tail < cdf[k]: the order is k (1-based) when k >= 1.
		if k == 0 {
			return 1, 1 - 2*cdf[0]
		}
		if k > (M+1)/2 {
			k = (M + 1) / 2
		}
		return k, 1 - 2*cdf[k-1]
	}
	z := distuv.UnitNormal.Quantile(1 - tail)
	k = int(math.Floor(mu - z*sigma + 0.5))
	if k < 1 {
		k = 1
	}
	if k > (M+1)/2 {
		k = (M + 1) / 2
	}
	return k, 1 - 2*distuv.UnitNormal.CDF((float64(k-1)+0.5-mu)/sigma)
}

// normalTwoSided is the two-sided p-value of statistic s with mean mu and
// standard deviation sigma under the null, with a continuity correction.
func normalTwoSided(s, mu, sigma float64) float64 {
	d := math.Abs(s-mu) - 0.5
	if d < 0 {
		d = 0
	}
	return math.Min(1, 2*distuv.UnitNormal.Survival(d/sigma))
}

// hlOrderStats returns D(k), the median and D(M+1-k) of the M = len(d)
// values d (1-based orders, 1 <= k <= (M+1)/2), reordering d. It selects
// instead of sorting: linear time on average.
func hlOrderStats(d []float64, k int) (lo, med, hi float64) {
	M := len(d)
	m1, m2 := (M-1)/2, M/2 // median indices (equal when M is odd)
	selectNth(d, k-1)
	lo = d[k-1]
	rest := d[k:] // all >= lo; index i of d is i-k of rest
	if m1 >= k {
		selectNth(rest, m1-k)
	}
	med = d[m1]
	if m2 != m1 {
		// the smallest value above index m1
		v := d[m2]
		for _, x := range d[m2+1:] {
			v = math.Min(v, x)
		}
		med = (med + v) / 2
	}
	if M-k > m2 {
		tail := d[m2+1:]
		selectNth(tail, M-k-(m2+1))
	}
	hi = d[M-k]
	return lo, med, hi
}

// selectNth reorders x so that x[k] is its k-th smallest value (0-based),
// with x[:k] <= x[k] <= x[k+1:] (Hoare's FIND with a median-of-three pivot).
func selectNth(x []float64, k int) {
	lo, hi := 0, len(x)-1
	for hi > lo {
		if hi-lo < 12 {
			for i := lo + 1; i <= hi; i++ {
				for j := i; j > lo && x[j] < x[j-1]; j-- {
					x[j], x[j-1] = x[j-1], x[j]
				}
			}
			return
		}
		mid := lo + (hi-lo)/2
		if x[mid] < x[lo] {
			x[mid], x[lo] = x[lo], x[mid]
		}
		if x[hi] < x[lo] {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if x[hi] < x[mid] {
			x[hi], x[mid] = x[mid], x[hi]
		}
		pivot := x[mid]
		i, j := lo, hi
		for i <= j {
			for x[i] < pivot {
				i++
			}
			for x[j] > pivot {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}
