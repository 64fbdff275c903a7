package changepoint

import "math"

// bestSplit returns the split x[:tau] | x[tau:] that maximises the
// energy-distance statistic of Matteson and James (2014) with exponent 1,
//
//	Q(tau) = m k/(m+k) * (2/(m k) sum|X-Y| - sum_{i<j}|Xi-Xj|/C(m,2) - sum_{i<j}|Yi-Yj|/C(k,2)),
//
// with X = x[:tau] (m points) and Y = x[tau:] (k points), over the splits
// that leave at least minSize points on each side. The right end is the end
// of x (as in MongoDB's implementation; Otava also searches it). It runs in
// O(len(x)^2): moving one point from Y to X updates the three sums with
// its distances to the others. ok is false when no split is allowed.
func bestSplit(x []float64, minSize int) (tau int, q float64, ok bool) {
	n := len(x)
	minSize = max(minSize, 1)
	if n < 2*minSize {
		return 0, 0, false
	}
	var cross, within, yterm float64 // sum|X-Y|, sum|Xi-Xj|, sum|Yi-Yj|
	for i := range n {
		for j := i + 1; j < n; j++ {
			yterm += math.Abs(x[i] - x[j])
		}
	}
	q = math.Inf(-1)
	for t := 0; t <= n-minSize; t++ {
		if t >= minSize {
			if v := energy(cross, within, yterm, t, n-t); v > q {
				tau, q = t, v
			}
		}
		if t == n-minSize {
			break
		}
		// Move x[t] from Y to X.
		var col, row float64
		for i := range t {
			col += math.Abs(x[i] - x[t])
		}
		for j := t + 1; j < n; j++ {
			row += math.Abs(x[t] - x[j])
		}
		cross += row - col
		within += col
		yterm -= row
	}
	return tau, q, true
}

// energy is Q for the three sums and the sizes m, k of X and Y.
func energy(cross, within, yterm float64, m, k int) float64 {
	fm, fk := float64(m), float64(k)
	e := 2 * cross / (fm * fk)
	if m > 1 {
		e -= 2 * within / (fm * (fm - 1))
	}
	if k > 1 {
		e -= 2 * yterm / (fk * (fk - 1))
	}
	return fm * fk / (fm + fk) * e
}

// split is the split step of Otava's E-divisive means: windows of
// opt.Window points, each starting opt.Window/2 after the last, are cut
// recursively where the energy statistic is largest, as long as the
// Welch t-test between the two sides of the cut gives p <= weakP. It
// returns the union of the cuts ("weak" change points), sorted.
func split(s Series, opt Options, weakP float64) []int {
	n := s.Len()
	found := make([]bool, n)
	var cut func(a, b int)
	cut = func(a, b int) {
		tau, _, ok := bestSplit(s.Log[a:b], opt.MinSize)
		if !ok {
			return
		}
		tau += a
		if _, p := welch(segment(s, a, tau), segment(s, tau, b)); p > weakP {
			return
		}
		found[tau] = true
		cut(a, tau)
		cut(tau, b)
	}
	for start := 0; start < n; start += opt.Window / 2 {
		end := min(start+opt.Window, n)
		cut(start, end)
		if end == n {
			break
		}
	}
	var idx []int
	for i, f := range found {
		if f {
			idx = append(idx, i)
		}
	}
	return idx
}
