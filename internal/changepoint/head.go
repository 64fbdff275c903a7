package changepoint

import "math"

// Head tests the newest k points of s against the recent history, so that
// a change at the head is seen as soon as it is measured, before
// E-divisive has the points after it that it needs. It returns the change
// from the history to the head (Index is the first of the k points; the
// change lies between it and the point before it, or for k > 1 anywhere up
// to the last) and whether it is significant (P <= MaxPValue and
// |Change| >= MinMagnitude).
//
// For independent values the history is the Window points before the head
// (pass s from the last change point on to keep an older level out), and
// the test is Student's t on logs with the history's variance: the mean of
// the head against the mean of the history, which works for k = 1 (a rank
// test cannot reach p = 0.001 with one point and 50). For a chained series
// the jump is the sum of the last k steps, tested against the Window steps
// before them as in Detect. With fewer than 3 points (steps) of history,
// or k outside [1, s.Len()-1], it returns P = 1 and false.
func Head(s Series, k int, opt Options) (ChangePoint, bool) {
	opt, s = opt.normalized(), s.filled()
	n := s.Len()
	none := ChangePoint{Index: max(0, n-k), P: 1, Direction: Up}
	if k < 1 || k >= n {
		return none, false
	}
	t := n - k
	a := max(0, t-opt.Window)
	var buf []float64
	var cp ChangePoint
	if s.Chained {
		lo := max(1, a)
		if t-lo < minSteps {
			return none, false
		}
		steps := make([]float64, n-lo)
		for i := lo; i < n; i++ {
			steps[i-lo] = s.Log[i] - s.Log[i-1]
		}
		noise := noiseOf(steps[:t-lo], &buf)
		jump := s.Log[n-1] - s.Log[t-1]
		p := noise.test(jump-float64(k)*noise.med, s.SE[t:], 0)
		cp = stepPoint(s, a, t, n, jump, p, &buf)
	} else {
		if t-a < minSteps {
			return none, false
		}
		base, head := segment(s, a, t), segment(s, t, n)
		se := math.Sqrt(base.variance() * (1/base.neff() + 1/head.neff()))
		d := head.mean - base.mean
		p := 1.0
		switch {
		case se > 0:
			p = tP(d/se, base.neff()-1)
		case d != 0:
			p = 0
		}
		cp = stepPoint(s, a, t, n, d, p, &buf)
	}
	return cp, cp.P <= opt.MaxPValue && math.Abs(cp.Change) >= opt.MinMagnitude
}
