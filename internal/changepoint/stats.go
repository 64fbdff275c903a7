package changepoint

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// moments are the weighted moments of a segment of a series' Log.
type moments struct {
	n     int
	sw    float64 // sum of weights
	sw2   float64 // sum of squared weights
	mean  float64 // weighted mean
	ss    float64 // weighted sum of squared deviations from mean
	first int     // index of the first point
}

// segment returns the moments of s.Log[a:b].
func segment(s Series, a, b int) moments {
	m := moments{n: b - a, first: a}
	for i := a; i < b; i++ {
		w := s.Weight[i]
		m.sw += w
		m.sw2 += w * w
		m.mean += w * s.Log[i]
	}
	if m.sw == 0 {
		return m
	}
	m.mean /= m.sw
	for i := a; i < b; i++ {
		d := s.Log[i] - m.mean
		m.ss += s.Weight[i] * d * d
	}
	return m
}

// neff is Kish's effective sample size.
func (m moments) neff() float64 { return m.sw * m.sw / m.sw2 }

// variance is the unbiased (reliability-weighted) variance.
func (m moments) variance() float64 {
	den := m.sw - m.sw2/m.sw
	if den <= 0 {
		return 0
	}
	return m.ss / den
}

// welch is the two-sided Welch t-test of the difference of the means of
// two segments (log values, so a test of the ratio of geometric means).
func welch(l, r moments) (t, p float64) {
	if l.n < 2 || r.n < 2 {
		return 0, 1
	}
	vl, vr := l.variance()/l.neff(), r.variance()/r.neff()
	d := r.mean - l.mean
	se2 := vl + vr
	if se2 == 0 {
		if d == 0 {
			return 0, 1
		}
		return math.Copysign(math.Inf(1), d), 0
	}
	df := se2 * se2 / (vl*vl/(l.neff()-1) + vr*vr/(r.neff()-1))
	if df < 1 || math.IsNaN(df) {
		df = 1
	}
	t = d / math.Sqrt(se2)
	return t, tP(t, df)
}

// tP is the two-sided p-value of t under Student's t with df degrees of
// freedom.
func tP(t, df float64) float64 {
	if math.IsInf(t, 0) {
		return 0
	}
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
}

// stepOverLine tests a step at the boundary of l and r against a straight
// line through both: in the regression Log = a + b*i + d*[i >= t] over the
// two segments it returns the two-sided p-value of d (Frisch-Waugh: the
// residuals of Log and of the step on the line). A slow drift is a line
// and leaves d near 0; a step is not.
func stepOverLine(s Series, l, r moments) float64 {
	a, t, c := l.first, r.first, r.first+r.n
	if c-a < 4 {
		return 1
	}
	var sw, sx, sy, ss float64
	for i := a; i < c; i++ {
		w := s.Weight[i]
		sw += w
		sx += w * float64(i)
		sy += w * s.Log[i]
		if i >= t {
			ss += w
		}
	}
	mx, my, ms := sx/sw, sy/sw, ss/sw
	var sxx, sxy, sxs float64
	for i := a; i < c; i++ {
		w, dx := s.Weight[i], float64(i)-mx
		sxx += w * dx * dx
		sxy += w * dx * (s.Log[i] - my)
		if i >= t {
			sxs += w * dx
		}
	}
	by, bs := sxy/sxx, sxs/sxx // slopes of Log and of the step on i
	var sye, see, syy float64
	for i := a; i < c; i++ {
		w, dx := s.Weight[i], float64(i)-mx
		ey := s.Log[i] - my - by*dx
		es := -ms - bs*dx
		if i >= t {
			es++
		}
		sye += w * ey * es
		see += w * es * es
		syy += w * ey * ey
	}
	if see == 0 {
		return 1
	}
	d := sye / see
	// Weights as relative precisions (WLS): sigma^2 = RSS/(n-3).
	df := float64(c - a - 3)
	se2 := (syy - d*sye) / df / see
	if se2 <= 0 {
		if d == 0 {
			return 1
		}
		return 0
	}
	return tP(d/math.Sqrt(se2), df)
}

// median returns the median of xs, reordering xs.
func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// medianMAD returns the median of xs and 1.4826 times their median absolute
// deviation (the normal-consistent robust scale), using *buf as scratch
// space; xs is left unchanged.
func medianMAD(xs []float64, buf *[]float64) (med, scale float64) {
	b := append((*buf)[:0], xs...)
	*buf = b
	med = median(b)
	for i, x := range xs {
		b[i] = math.Abs(x - med)
	}
	return med, 1.4826 * median(b)
}

// summarize returns the summary of s.Log[a:b] in the series' unit, using
// *buf as scratch space.
func summarize(s Series, a, b int, buf *[]float64) Summary {
	if b <= a {
		return Summary{}
	}
	m := segment(s, a, b)
	*buf = append((*buf)[:0], s.Log[a:b]...)
	return Summary{N: b - a, Mean: math.Exp(m.mean), Median: math.Exp(median(*buf))}
}
