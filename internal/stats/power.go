package stats

import (
	"math"
	"sort"
)

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

// BenjaminiHochberg returns the Benjamini-Hochberg adjusted p-values of ps
// (in the same order): rejecting those below q controls the false
// discovery rate at q for independent or positively dependent tests.
func BenjaminiHochberg(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	adj := make([]float64, m)
	running := 1.0
	for k := m - 1; k >= 0; k-- {
		i := idx[k]
		running = math.Min(running, ps[i]*float64(m)/float64(k+1))
		adj[i] = math.Min(1, running)
	}
	return adj
}
