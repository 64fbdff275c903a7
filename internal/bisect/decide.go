package bisect

import (
	"fmt"
	"math"
	"math/rand"
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

// Plan returns the order in which to take runs of several targets, as
// target indices: counts[i] runs of target i, each target's runs spread
// evenly over the whole batch (stratified at random: its j-th run falls in
// the j-th of counts[i] equal parts of the batch). Targets with the same
// count take their j-th runs side by side, as rounds; a target with one
// run lands in the middle of the others'. Slow drift and bursts of load
// thus hit every target alike.
func Plan(counts []int, rng *rand.Rand) []int {
	type slot struct {
		target int
		key    float64
	}
	var slots []slot
	for i, k := range counts {
		for j := range k {
			slots = append(slots, slot{i, (float64(j) + 0.25 + 0.5*rng.Float64()) / float64(k)})
		}
	}
	slices.SortStableFunc(slots, func(a, b slot) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	out := make([]int, len(slots))
	for i, s := range slots {
		out[i] = s.target
	}
	return out
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
