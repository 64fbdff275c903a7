package changepoint

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// stepNoise is where a chain's steps sit when nothing changes and how far
// they scatter: the median of a set of steps (a slow drift's typical step)
// and their robust scale (1.4826 MAD, or the standard deviation where
// more than half the steps are equal).
type stepNoise struct {
	med, scale float64
	df         float64 // degrees of freedom of the scale's t reference
}

func noiseOf(steps []float64, buf *[]float64) stepNoise {
	med, scale := medianMAD(steps, buf)
	if scale == 0 {
		var ss float64
		for _, x := range steps {
			ss += (x - med) * (x - med)
		}
		scale = math.Sqrt(ss / float64(len(steps)-1))
	}
	return stepNoise{med: med, scale: scale, df: math.Max(1, madEfficiency*float64(len(steps)-1))}
}

// madEfficiency is the MAD's efficiency relative to the standard deviation
// at the normal: its t reference has that share of the degrees of freedom.
const madEfficiency = 0.37

// test returns the two-sided p-value of a jump dev (the sum of k steps less
// k times the median step) whose steps have the standard errors se (0:
// unknown). A step's variance is moderated as in limma (Smyth 2004): the
// mean of its own SE squared and the chain's scale squared, so that a
// noisy session's wide interval counts, while a narrow interval from a few
// runs does not claim more than the chain shows. (Weighing the scale by its
// degrees of freedom, twice the interval's, let through more changes from
// sessions under load: the sessions' noise varies more than a normal
// sample's.) tcrit, when above 0, skips the exact p-value of a |t| below
// it (reported as 1).
func (n stepNoise) test(dev float64, se []float64, tcrit float64) float64 {
	var v float64
	df := n.df
	for _, e := range se {
		if e > 0 {
			v += (e*e + n.scale*n.scale) / 2
			df = n.df + intervalDF
		} else {
			v += n.scale * n.scale
		}
	}
	if v == 0 {
		if dev == 0 {
			return 1
		}
		return 0
	}
	t := dev / math.Sqrt(v)
	if math.Abs(t) < tcrit {
		return 1
	}
	return tP(t, df)
}

// intervalDF is the degrees of freedom a step's own standard error adds to
// the test: that of an interval from 10 pairs.
const intervalDF = 9

// minSteps is the fewest steps that give a chain's noise.
const minSteps = 3

// detectSteps finds the change points of a chained series: the steps that
// stand out of the Window steps around them (the noise is measured once per
// block of Window/5 steps, over the Window steps centred on the block).
func detectSteps(s Series, opt Options) []ChangePoint {
	n := s.Len()
	steps := make([]float64, n) // steps[i] leads from point i-1 to point i
	for i := 1; i < n; i++ {
		steps[i] = s.Log[i] - s.Log[i-1]
	}
	tcrit := map[float64]float64{}
	block := max(1, opt.Window/5)
	var idx []int
	var ps []float64
	var buf []float64
	for b0 := 1; b0 < n; b0 += block {
		b1 := min(n, b0+block)
		hi := min(n, (b0+b1)/2+opt.Window/2)
		lo := max(1, hi-opt.Window)
		hi = min(n, lo+opt.Window)
		if hi-lo < minSteps {
			continue
		}
		noise := noiseOf(steps[lo:hi], &buf)
		// The critical t at the most degrees of freedom a test can have:
		// a |t| below it cannot pass.
		tc, ok := tcrit[noise.df]
		if !ok {
			tc = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: noise.df + intervalDF}.Quantile(1 - opt.MaxPValue/2)
			tcrit[noise.df] = tc
		}
		for i := b0; i < b1; i++ {
			if math.Abs(math.Exp(steps[i])-1) < opt.MinMagnitude {
				continue
			}
			if p := noise.test(steps[i]-noise.med, s.SE[i:i+1], tc); p <= opt.MaxPValue {
				idx = append(idx, i)
				ps = append(ps, p)
			}
		}
	}
	cps := make([]ChangePoint, len(idx))
	for k, i := range idx {
		a, b := 0, n
		if k > 0 {
			a = idx[k-1]
		}
		if k+1 < len(idx) {
			b = idx[k+1]
		}
		cps[k] = stepPoint(s, max(a, i-opt.Window), i, min(b, i+opt.Window), steps[i], ps[k], &buf)
	}
	return cps
}

// stepPoint is the change point of a measured jump (log units) at t, with
// the segments [a, t) and [t, b) as its summaries.
func stepPoint(s Series, a, t, b int, jump, p float64, buf *[]float64) ChangePoint {
	cp := ChangePoint{Index: t, Change: math.Exp(jump) - 1, P: p, Direction: Up}
	if jump < 0 {
		cp.Direction = Down
	}
	cp.Before, cp.After = summarize(s, a, t, buf), summarize(s, t, b, buf)
	return cp
}
