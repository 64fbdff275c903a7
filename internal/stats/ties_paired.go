package stats

import (
	"math"
	"sync"
	"sync/atomic"
)

// tiedWCDFs caches tiedWCDF results, keyed by the tie pattern.
var tiedWCDFs sync.Map

// tiedWCDFCount counts the entries of tiedWCDFs; maxTiedWCDFs bounds it
// (about 20 KB an entry at n = 50) so that a long-lived process comparing
// many distinct tie patterns does not grow without limit. Past the bound
// the distributions are still computed, just not kept.
var tiedWCDFCount atomic.Int64

const maxTiedWCDFs = 1024

// tiedWCDF returns cdf with cdf[s] = P(2*W+ <= s), s = 0..n(n+1), for W+
// the Wilcoxon signed-rank statistic (sum of the midranks of the positive
// differences) of n = sum(T) nonzero differences whose |d| form tie groups
// of sizes T in rank order, under the null hypothesis that each difference
// is positive or negative with probability 1/2, independently, given the
// |d| (the exact conditional, or permutation, distribution).
//
// Doubled midranks are integers: the group of t values at ranks
// start..start+t-1 has doubled midrank 2*start+t-1. The dynamic programme
// runs over the groups: choosing k of a group's t signs positive, C(t, k)
// ways, adds k times its doubled midrank. Counts stay exact in float64 up to
// n = 52 (at most 2^n patterns), and dividing by 2^n is exact, so every
// cdf value is the exact probability. With T all ones it is wCDF(n) on the
// even indices. Results are cached by T, as tiedCDF does for Mann-Whitney:
// the same tie patterns recur across the metrics of one comparison.
func tiedWCDF(T []int) []float64 {
	key := tieKey(T)
	if v, ok := tiedWCDFs.Load(key); ok {
		return v.([]float64)
	}
	n := sumInts(T)
	top := n * (n + 1) // 2 * the largest W+
	dp := make([]float64, top+1)
	next := make([]float64, top+1)
	dp[0] = 1
	start, reach := 1, 0 // first rank of the group; largest 2W+ so far
	for _, t := range T {
		twoR := 2*start + t - 1
		binom := choose(t)
		clear(next[:reach+t*twoR+1])
		for s := 0; s <= reach; s++ {
			c := dp[s]
			if c == 0 {
				continue
			}
			for k, b := range binom {
				next[s+k*twoR] += c * b
			}
		}
		dp, next = next, dp
		reach += t * twoR
		start += t
	}
	acc := 0.0
	for s := range dp {
		acc += dp[s]
		dp[s] = math.Ldexp(acc, -n)
	}
	if tiedWCDFCount.Load() >= maxTiedWCDFs {
		return dp
	}
	v, loaded := tiedWCDFs.LoadOrStore(key, dp)
	if !loaded {
		tiedWCDFCount.Add(1)
	}
	return v.([]float64)
}
