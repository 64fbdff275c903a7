package changepoint

import (
	"fmt"
	"math"
)

// Options are the detector's parameters. The zero value gives the defaults.
type Options struct {
	// Window is the number of points E-divisive looks at together (windows
	// start every Window/2 points), the most points on each side of a change
	// that its test and summaries use, and the number of steps around a step
	// that give a chain's noise. Default 50, Otava's.
	Window int
	// MaxPValue is the largest p-value of a change that is reported.
	// Default 0.001, Otava's. The split step of E-divisive keeps candidates
	// up to 10 times it, and the merge step drops those above it.
	MaxPValue float64
	// MinMagnitude is the smallest relative change reported, as a fraction
	// (0.01 is 1 %). Default 0.01: below it a change cannot be confirmed by
	// a bisection at 10-20 pairs per step on this machine, and lkp and
	// Chromium's dashboard skip such changes too. Negative means 0.
	MinMagnitude float64
	// MinSize is the fewest points on each side of a change found by
	// E-divisive (single spikes and short bursts cannot become a segment).
	// Default 5. A fresher change is [Head]'s.
	MinSize int
	// KeepDrifts reports level changes that a straight line explains. By
	// default a change must also pass MaxPValue as a step on top of a line
	// through both sides: a slow drift spread over many commits has no
	// culprit to bisect.
	KeepDrifts bool
}

// Default values of Options.
const (
	DefaultWindow       = 50
	DefaultMaxPValue    = 0.001
	DefaultMinMagnitude = 0.01
	DefaultMinSize      = 5
)

// normalized fills in the defaults.
func (o Options) normalized() Options {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if !(o.MaxPValue > 0) {
		o.MaxPValue = DefaultMaxPValue
	}
	if o.MinMagnitude == 0 {
		o.MinMagnitude = DefaultMinMagnitude
	} else if o.MinMagnitude < 0 {
		o.MinMagnitude = 0
	}
	if o.MinSize <= 0 {
		o.MinSize = DefaultMinSize
	}
	o.Window = max(o.Window, 2*o.MinSize)
	return o
}

// Direction is the sign of a change of the metric's value.
type Direction int

// The directions. Whether Up is a regression depends on the metric.
const (
	Down Direction = -1
	Up   Direction = 1
)

// String returns "up" or "down".
func (d Direction) String() string {
	switch d {
	case Up:
		return "up"
	case Down:
		return "down"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// Summary describes the points on one side of a change, in the series'
// unit (for a chained series, relative to its first point).
type Summary struct {
	N      int
	Mean   float64 // geometric mean (exp of the mean log), weighted
	Median float64
}

// A ChangePoint is a change of level between points Index-1 and Index.
type ChangePoint struct {
	// Index is the first point of the new level.
	Index int
	// Before and After summarise the points on each side, up to the
	// neighbouring change points and at most Options.Window points.
	Before, After Summary
	// Change is the relative change (0.05 is +5 %): the ratio of the
	// geometric means minus 1, or for a chained series the step measured.
	Change float64
	// P is the p-value of the change's test.
	P         float64
	Direction Direction
}

// Detect returns the change points of s, oldest first.
//
// For a series of independent values it is E-divisive means as in Otava:
// a split step over sliding windows, then a merge step that drops, one at a
// time, the weakest change whose Welch t-test between its neighbouring
// segments fails MaxPValue, MinMagnitude, MinSize or the drift check, and
// tests its neighbours again. For a chained series each step is tested
// against the steps around it (see the package doc).
func Detect(s Series, opt Options) []ChangePoint {
	opt, s = opt.normalized(), s.filled()
	if s.Chained {
		return detectSteps(s, opt)
	}
	weakP := opt.MaxPValue * 10
	if opt.MaxPValue >= 0.05 {
		weakP = math.Min(1, opt.MaxPValue*2)
	}
	return merge(s, split(s, opt, weakP), opt)
}

// judged is a candidate change point and its test.
type judged struct {
	cp   ChangePoint
	a, b int  // the segments tested: [a, cp.Index) and [cp.Index, b)
	ok   bool // passes every criterion
}

// merge is Otava's merge step, with segments capped at opt.Window points.
func merge(s Series, idx []int, opt Options) []ChangePoint {
	js := make([]judged, len(idx))
	judge := func(k int) {
		a, b := 0, s.Len()
		if k > 0 {
			a = idx[k-1]
		}
		if k+1 < len(idx) {
			b = idx[k+1]
		}
		js[k] = judgeSplit(s, max(a, idx[k]-opt.Window), idx[k], min(b, idx[k]+opt.Window), opt)
	}
	for k := range idx {
		judge(k)
	}
	for {
		worst := -1
		for k, j := range js {
			if j.ok {
				continue
			}
			if worst < 0 || j.cp.P > js[worst].cp.P ||
				j.cp.P == js[worst].cp.P && math.Abs(j.cp.Change) < math.Abs(js[worst].cp.Change) {
				worst = k
			}
		}
		if worst < 0 {
			break
		}
		idx = append(idx[:worst], idx[worst+1:]...)
		js = append(js[:worst], js[worst+1:]...)
		if worst > 0 {
			judge(worst - 1)
		}
		if worst < len(idx) {
			judge(worst)
		}
	}
	cps := make([]ChangePoint, len(js))
	var buf []float64
	for k, j := range js {
		cps[k] = j.cp
		cps[k].Before, cps[k].After = summarize(s, j.a, j.cp.Index, &buf), summarize(s, j.cp.Index, j.b, &buf)
	}
	return cps
}

// judgeSplit tests the change between s.Log[a:t] and s.Log[t:b] (without
// the summaries).
func judgeSplit(s Series, a, t, b int, opt Options) judged {
	l, r := segment(s, a, t), segment(s, t, b)
	_, p := welch(l, r)
	if l.n < opt.MinSize || r.n < opt.MinSize {
		p = 1
	}
	cp := ChangePoint{Index: t, Change: math.Exp(r.mean-l.mean) - 1, P: p, Direction: Up}
	if cp.Change < 0 {
		cp.Direction = Down
	}
	ok := p <= opt.MaxPValue && math.Abs(cp.Change) >= opt.MinMagnitude
	if ok && !opt.KeepDrifts {
		ok = stepOverLine(s, l, r) <= opt.MaxPValue
	}
	return judged{cp: cp, a: a, b: b, ok: ok}
}
