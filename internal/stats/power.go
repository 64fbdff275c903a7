package stats

import "math"

// MinPairedP is the smallest two-sided p-value the signed-rank test can give
// with n pairs (all differences of one sign, no ties): 2/2^n.
func MinPairedP(n int) float64 {
	if n <= 0 {
		return 1
	}
	return math.Min(1, math.Ldexp(2, -n))
}

// PairsNeeded is the fewest pairs with which the signed-rank test can reach
// p < alpha.
func PairsNeeded(alpha float64) int {
	n := 1
	for MinPairedP(n) >= alpha && n < 64 {
		n++
	}
	return n
}

// MinUnpairedP is the smallest two-sided p-value the Mann-Whitney U test
// can give with samples of m and n values (complete separation, no ties):
// 2/C(m+n, m).
func MinUnpairedP(m, n int) float64 {
	if m <= 0 || n <= 0 {
		return 1
	}
	c := 1.0
	for i := 1; i <= min(m, n); i++ {
		c = c * float64(m+n-min(m, n)+i) / float64(i)
	}
	return math.Min(1, 2/c)
}
