package changepoint

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// A Point is one tested commit of a history, or, given to [FromSteps], one
// step of a chain (the ratio of a commit's value to the previous commit's,
// measured within one session).
type Point struct {
	// Value is the commit's value (a median) or the step's ratio; it must
	// be positive, since detection works on logarithms.
	Value float64
	// Lo and Hi are an optional interval around Value at the confidence
	// given to FromValues or FromSteps (both 0: none). A chain's step test
	// uses it (a session with a wide interval is noisy); E-divisive does
	// not: the scatter between values shows the error between sessions,
	// which a value's own interval cannot.
	Lo, Hi float64
	// Weight is an optional weight of a value in E-divisive's segment means
	// and tests and in Head's, e.g. the number of runs behind it; 0 means
	// 1. A chain's steps are weighed by their intervals instead.
	Weight float64
}

// Series is a history in log space, as the detectors read it. Build one
// with [FromValues] or [FromSteps].
type Series struct {
	// Log is the natural logarithm of each commit's level.
	Log []float64
	// SE is the standard error, in log units, of each point's own value
	// (FromValues) or of the step into it (FromSteps; SE[0] is 0); 0 where
	// no interval was given.
	SE []float64
	// Weight is each point's weight (1 where none was given). In a series
	// built by hand, SE and Weight may be nil.
	Weight []float64
	// Chained says the series integrates a chain of steps: its errors add
	// up along the series (a random walk), so Detect and Head test steps,
	// not segment means (see the package doc).
	Chained bool
}

// filled returns s with SE and Weight of Log's length, as a Series built by
// hand may lack them (missing SEs are 0, missing weights 1).
func (s Series) filled() Series {
	n := len(s.Log)
	if len(s.SE) != n {
		se := make([]float64, n)
		copy(se, s.SE)
		s.SE = se
	}
	if len(s.Weight) != n {
		w := make([]float64, n)
		for i := range w {
			w[i] = 1
			if i < len(s.Weight) {
				w[i] = s.Weight[i]
			}
		}
		s.Weight = w
	}
	return s
}

// Len is the number of points.
func (s Series) Len() int { return len(s.Log) }

// Values returns the levels exp(Log). For a chained series they are in the
// unit of its first value.
func (s Series) Values() []float64 {
	v := make([]float64, len(s.Log))
	for i, l := range s.Log {
		v[i] = math.Exp(l)
	}
	return v
}

// Slice returns the points [a, b) of s, sharing its storage. For a chained
// series the step into point a is left out (point a is where it starts).
func (s Series) Slice(a, b int) Series {
	return Series{Log: s.Log[a:b], SE: s.SE[a:b], Weight: s.Weight[a:b], Chained: s.Chained}
}

// FromValues builds a series from each commit's value: medians comparable
// across sessions (a stable machine), or ratios to an anchor commit that
// every session re-measures. confidence is that of the points' intervals
// (e.g. 0.95); it is ignored where no point has one.
func FromValues(pts []Point, confidence float64) (Series, error) {
	s := Series{Log: make([]float64, len(pts)), SE: make([]float64, len(pts)), Weight: make([]float64, len(pts))}
	for i, p := range pts {
		l, se, w, err := logPoint(p, confidence)
		if err != nil {
			return Series{}, fmt.Errorf("point %d: %w", i, err)
		}
		s.Log[i], s.SE[i], s.Weight[i] = l, se, w
	}
	return s, nil
}

// FromSteps integrates a chain of within-session ratios into a series in
// log space: point 0 has the value first, and point i+1 is point i times
// steps[i].Value. The result has len(steps)+1 points; point i+1's SE and
// weight are those of steps[i]. first only sets the unit (1 gives levels
// relative to the first commit).
func FromSteps(first float64, steps []Point, confidence float64) (Series, error) {
	if !(first > 0) || math.IsInf(first, 0) {
		return Series{}, fmt.Errorf("first value %v is not positive and finite", first)
	}
	n := len(steps) + 1
	s := Series{Log: make([]float64, n), SE: make([]float64, n), Weight: make([]float64, n), Chained: true}
	s.Log[0], s.Weight[0] = math.Log(first), 1
	for i, p := range steps {
		l, se, w, err := logPoint(p, confidence)
		if err != nil {
			return Series{}, fmt.Errorf("step %d: %w", i, err)
		}
		s.Log[i+1], s.SE[i+1], s.Weight[i+1] = s.Log[i]+l, se, w
	}
	return s, nil
}

// logPoint checks p and returns its log value, the standard error of that
// log taken from its interval (0 if none) and its weight.
func logPoint(p Point, confidence float64) (l, se, w float64, err error) {
	if !(p.Value > 0) || math.IsInf(p.Value, 0) {
		return 0, 0, 0, fmt.Errorf("value %v is not positive and finite", p.Value)
	}
	switch w = p.Weight; {
	case w == 0:
		w = 1
	case !(w > 0) || math.IsInf(w, 0):
		return 0, 0, 0, fmt.Errorf("weight %v is not positive and finite", p.Weight)
	}
	if p.Lo != 0 || p.Hi != 0 {
		if !(p.Lo > 0 && p.Lo <= p.Value && p.Value <= p.Hi) || math.IsInf(p.Hi, 0) {
			return 0, 0, 0, fmt.Errorf("interval [%v, %v] is not positive around %v", p.Lo, p.Hi, p.Value)
		}
		if !(confidence > 0 && confidence < 1) {
			return 0, 0, 0, fmt.Errorf("interval given at confidence %v, not in (0, 1)", confidence)
		}
		z := distuv.UnitNormal.Quantile((1 + confidence) / 2)
		se = (math.Log(p.Hi) - math.Log(p.Lo)) / (2 * z)
	}
	return math.Log(p.Value), se, w, nil
}
