package bisect

import (
	"fmt"
	"math"
	"slices"

	"github.com/perfbot/perfbot/internal/metric"

	"github.com/perfbot/perfbot/internal/stats"
)

// unpairedComparison decides between ref and x with Mann-Whitney U
// (stats.Decide, unpaired): runs taken at different times do not pair.
func unpairedComparison(ref, x []float64, opt stats.DecideOptions) Comparison {
	d := stats.Decide(ref, x, false, opt)
	return fromDecision(d, len(x), len(ref))
}

func fromDecision(d stats.DecisionResult, n, refN int) Comparison {
	c := d.Comparison
	return Comparison{Decision: d.Decision.String(), Change: c.Change, Lo: c.Lo, Hi: c.Hi, P: c.P,
		Test: c.Test, N: n, RefN: refN, Reason: d.Reason}.clean()
}

// meanComparison is the fixed scheme's view: the change of the means, no
// test.
func meanComparison(ref, x []float64) Comparison {
	mr, mx := mean(ref), mean(x)
	c := Comparison{Decision: "unknown", Test: "mean", N: len(x), RefN: len(ref), P: 1}
	if mr != 0 {
		c.Change = 100 * (mx - mr) / math.Abs(mr)
	}
	c.Lo, c.Hi = c.Change, c.Change
	c.Reason = fmt.Sprintf("means %.4g and %.4g", mr, mx)
	return c.clean()
}

// clean replaces NaN and infinities (which JSON cannot hold) by 0.
func (c Comparison) clean() Comparison {
	for _, x := range []*float64{&c.Change, &c.Lo, &c.Hi, &c.P} {
		if math.IsNaN(*x) || math.IsInf(*x, 0) {
			*x = 0
		}
	}
	return c
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// bestQuartile returns the quartile of xs on the better side: the 25th
// percentile for lower-is-better metrics, the 75th for higher-is-better
// ones (linear interpolation between order statistics).
func bestQuartile(xs []float64, better metric.Better) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	q := 0.25
	if better == metric.HigherIsBetter {
		q = 0.75
	}
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[i]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}
