package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
)

// noise is how one run's time scatters: log-normal with sd cv, and with
// probability load a run is slowed by an exponential factor of mean tail
// (log units): another process competing for the core.
type noise struct {
	name       string
	cv         float64
	load, tail float64
}

// noises are the levels of /work/shared/notes/alignment-effects.md "Noise":
// CV 1-4 % on a quiet machine, heavy tails under load (up to 38 % CV).
var noises = []noise{
	{name: "quiet, CV 1 %", cv: 0.01},
	{name: "quiet, CV 2 %", cv: 0.02},
	{name: "quiet, CV 4 %", cv: 0.04},
	{name: "loaded: CV 2 % + 25 % of runs slowed ~Exp(25 %)", cv: 0.02, load: 0.25, tail: 0.25},
}

// disturbed is the noise of a session during which the machine was busy
// throughout (the sessions of the outlier series).
func (nz noise) disturbed() noise { return noise{cv: nz.cv, load: 1, tail: 0.3} }

func (nz noise) run(r *rand.Rand) float64 {
	e := nz.cv * r.NormFloat64()
	if nz.load > 0 && r.Float64() < nz.load {
		e += nz.tail * r.ExpFloat64()
	}
	return e
}

// form is how a history is measured and given to the detector.
type form int

const (
	steady   form = iota // absolute medians, machine without drift
	drifting             // absolute medians, machine speed drifting between sessions
	anchored             // per session, median ratio to an anchor re-measured in it
	chain                // per session, median ratio to the previous commit (FromSteps)
	chainED              // the chain's integrated series given to E-divisive as independent values
	numForms
)

var formNames = [numForms]string{
	"values, steady machine",
	"values, drifting machine",
	"ratio to an anchor",
	"chain of steps",
	"chain via E-divisive",
}

// runs is the number of runs (pairs) per commit and session.
const runs = 10

// history simulates measuring commits with true log levels mu, session i
// measuring commit i (and its reference); disturbed sessions use
// nz.disturbed(). It returns the series the detector gets.
func history(r *rand.Rand, mu []float64, f form, nz noise, disturbed map[int]bool) Series {
	n := len(mu)
	pts := make([]Point, 0, n)
	drift := 0.0
	buf := make([]float64, runs)
	for i := range n {
		sn := nz
		if disturbed[i] {
			sn = nz.disturbed()
		}
		// The machine's speed this session: AR(1) in log, sd 0.2, phi 0.95.
		drift = 0.95*drift + 0.2*math.Sqrt(1-0.95*0.95)*r.NormFloat64()
		switch f {
		case steady, drifting:
			for j := range buf {
				buf[j] = mu[i] + sn.run(r)
				if f == drifting {
					buf[j] += drift
				}
			}
			pts = append(pts, Point{Value: math.Exp(median(buf))})
		case anchored, chain, chainED:
			ref := 0.0 // the anchor's true level
			if f != anchored {
				if i == 0 {
					continue // the chain starts at commit 0
				}
				ref = mu[i-1]
			}
			for j := range buf {
				buf[j] = mu[i] - ref + sn.run(r) - sn.run(r)
			}
			pts = append(pts, medianCI(buf))
		}
	}
	var s Series
	var err error
	if f == steady || f == drifting || f == anchored {
		s, err = FromValues(pts, ciLevel)
	} else {
		s, err = FromSteps(1, pts, ciLevel)
	}
	if err != nil {
		panic(err)
	}
	if f == chainED {
		s.Chained = false
	}
	return s
}

// ciLevel is the confidence of medianCI's interval: the sign test's
// coverage of x(2), x(9) of 10, 1 - 2*11/1024.
const ciLevel = 1 - 2*11.0/1024

// medianCI returns the median of the log ratios xs as a Point with the
// sign-test interval (x(2), x(9) of 10).
func medianCI(xs []float64) Point {
	slices.Sort(xs)
	m := median(xs)
	lo, hi := xs[1], xs[len(xs)-2]
	return Point{Value: math.Exp(m), Lo: math.Exp(math.Min(lo, m)), Hi: math.Exp(math.Max(hi, m))}
}

// stepSizes are the sizes of the planted changes.
var stepSizes = []float64{0.02, 0.05, 0.10, 0.30}

// truth is a planted change: at index at, of relative size size.
type truth struct {
	at   int
	size float64
}

// stepLevels returns n log levels with changes at 6 positions at least 60
// apart and 30 from the ends, sizes cycling through stepSizes from offset
// first, each up or down at random.
func stepLevels(r *rand.Rand, n, first int) ([]float64, []truth) {
	var ts []truth
	pos := 30 + r.IntN(30)
	for k := 0; k < 6 && pos < n-30; k++ {
		size := stepSizes[(first+k)%len(stepSizes)]
		if r.IntN(2) == 0 {
			size = 1/(1+size) - 1 // down by the same factor
		}
		ts = append(ts, truth{at: pos, size: size})
		pos += 60 + r.IntN(20)
	}
	mu := make([]float64, n)
	level, k := 0.0, 0
	for i := range mu {
		if k < len(ts) && ts[k].at == i {
			level += math.Log1p(ts[k].size)
			k++
		}
		mu[i] = level
	}
	return mu, ts
}

// driftLevels is flat, then a linear drift of total relative change total
// over length points starting at start, then flat.
func driftLevels(n, start, length int, total float64) []float64 {
	mu := make([]float64, n)
	for i := range mu {
		f := math.Min(1, math.Max(0, float64(i-start)/float64(length)))
		mu[i] = f * math.Log1p(total)
	}
	return mu
}
