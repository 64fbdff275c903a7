package stats

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// tiesExactLimit is benchmath's (go-moremath's MannWhitneyTiesExactLimit)
// largest sample size a side for which the exact U distribution is used
// when there are ties.
const tiesExactLimit = 25

// tiedCDFs caches tiedCDF results, keyed by n1 and the tie pattern;
// tiedCDFCount counts its entries and maxTiedCDFs bounds them (about 20 KB
// an entry at 25 a side), so a long-lived process does not grow without
// limit.
var (
	tiedCDFs     sync.Map
	tiedCDFCount atomic.Int64
)

const maxTiedCDFs = 1024

// tiedCDF returns cdf with cdf[k] = P(2*U1 <= k) under the null hypothesis,
// where U1 is the Mann-Whitney statistic of a sample of n1 values among the
// N = sum(T) ranked values whose tie groups, in rank order, have sizes T
// (midranks for ties). This is the distribution go-moremath's UDist{T}
// computes with a memoised recursion on every call; here it is a dynamic
// programme over the tie groups (choose k of a group's t values for the
// sample, C(t, k) ways, adding k midranks), cached by (n1, T) because the
// same tie patterns recur across the metrics of one comparison. Counts stay
// exact in float64 up to N = 50 (C(50, 25) < 2^53).
func tiedCDF(n1 int, T []int) []float64 {
	key := strconv.Itoa(n1) + ";" + tieKey(T)
	if v, ok := tiedCDFs.Load(key); ok {
		return v.([]float64)
	}
	N := sumInts(T)
	maxS := N * (N + 1) // 2 * the largest rank sum
	dp := make([][]float64, n1+1)
	next := make([][]float64, n1+1)
	for j := range dp {
		dp[j] = make([]float64, maxS+1)
		next[j] = make([]float64, maxS+1)
	}
	dp[0][0] = 1
	start, reach := 1, 0 // first rank of the group; largest 2W reached so far
	for _, t := range T {
		twoR := 2*start + t - 1 // twice the group's midrank
		binom := choose(t)
		for j := range next {
			clear(next[j][:min(reach+t*twoR, maxS)+1])
		}
		for j := 0; j <= n1; j++ {
			row := dp[j]
			for s := 0; s <= reach; s++ {
				w := row[s]
				if w == 0 {
					continue
				}
				for k := 0; k <= t && j+k <= n1; k++ {
					next[j+k][s+k*twoR] += w * binom[k]
				}
			}
		}
		dp, next = next, dp
		reach = min(reach+t*twoR, maxS)
		start += t
	}
	// 2*U1 = 2*W - n1*(n1+1).
	off := n1 * (n1 + 1)
	total := 0.0
	for _, w := range dp[n1] {
		total += w
	}
	cdf := make([]float64, maxS-off+1)
	acc := 0.0
	for s := off; s <= maxS; s++ {
		acc += dp[n1][s]
		cdf[s-off] = acc / total
	}
	if tiedCDFCount.Load() >= maxTiedCDFs {
		return cdf // computed, not kept: the cache is full
	}
	v, loaded := tiedCDFs.LoadOrStore(key, cdf)
	if !loaded {
		tiedCDFCount.Add(1)
	}
	return v.([]float64)
}

// choose returns the binomial coefficients C(t, 0..t).
func choose(t int) []float64 {
	c := make([]float64, t+1)
	c[0] = 1
	for k := 1; k <= t; k++ {
		c[k] = c[k-1] * float64(t-k+1) / float64(k)
	}
	for k := range c {
		c[k] = math.Round(c[k])
	}
	return c
}

// fastUTestTied is fastUTest for sorted samples with ties, in the cases
// where benchmath uses the exact tied distribution and adds no warning
// (10 to 25 values a side): the same p-value (capped at 1), from the cached
// tiedCDF.
func fastUTestTied(a, b []float64, alpha float64) (p float64, ok bool) {
	m, n := len(a), len(b)
	if m < 10 || n < 10 || m > tiesExactLimit || n > tiesExactLimit || alpha < 1e-4 {
		return 0, false
	}
	// Merge, collecting tie groups and twice a's rank sum.
	var T []int
	twoR1 := 0
	i, j, rank := 0, 0, 1
	for i < m || j < n {
		var v float64
		if j >= n || (i < m && a[i] <= b[j]) {
			v = a[i]
		} else {
			v = b[j]
		}
		inA := 0
		t := 0
		for i < m && a[i] == v {
			i, t, inA = i+1, t+1, inA+1
		}
		for j < n && b[j] == v {
			j, t = j+1, t+1
		}
		T = append(T, t)
		twoR1 += inA * (2*rank + t - 1)
		rank += t
	}
	if len(T) == 1 {
		return 0, false // all equal: benchmath's own error path
	}
	twoU1 := twoR1 - m*(m+1)
	twoU2 := 2*m*n - twoU1
	if twoU1 == twoU2 {
		return 1, true
	}
	// benchmath's two-sided p: twice U1's CDF at the smaller of U1 and U2.
	// With ties U1's distribution need not be symmetric, so at U2 this is
	// not quite the upper tail; we keep benchmath's value so that perfbot
	// and benchstat make the same calls. When U2 lies below U1's support
	// (heavy ties) go-moremath's recursion returns nonsense (p > 1) and ours
	// would return 0: leave those rare cases to benchmath itself.
	p = 2 * tiedCDF(m, T)[min(twoU1, twoU2)]
	if p == 0 {
		return 0, false
	}
	return math.Min(p, 1), true
}

// tieKey is a tie pattern as a cache key.
func tieKey(T []int) string {
	var kb strings.Builder
	for i, t := range T {
		if i > 0 {
			kb.WriteByte(',')
		}
		kb.WriteString(strconv.Itoa(t))
	}
	return kb.String()
}

func sumInts(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
