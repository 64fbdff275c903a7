package stats

import (
	"fmt"
	"math"
)

// Decision is the three-way answer of [Decide].
type Decision int

const (
	// Unknown means the samples do not settle it yet: run more.
	Unknown Decision = iota
	// Same means the change is shown to be smaller than MinEffect.
	Same
	// Different means the samples differ significantly.
	Different
)

// String returns "unknown", "same" or "different".
func (d Decision) String() string {
	switch d {
	case Unknown:
		return "unknown"
	case Same:
		return "same"
	case Different:
		return "different"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// DecideOptions configures [Decide]. The zero value gives the defaults.
type DecideOptions struct {
	// Alpha is the error rate allowed at each look, for each of the two
	// wrong answers (Different when nothing changed, Same when the change
	// is at least MinEffect). Default 0.01, Pinpoint's.
	Alpha float64
	// MinEffect is the relative change below which two builds count as the
	// same, e.g. 0.05 for ±5 %. Default 0.05.
	MinEffect float64
	// StartN is the number of runs per side of the first look. Default 10.
	StartN int
	// MaxN is the most runs per side; looks are at StartN, 2*StartN, 4*StartN,
	// ... and last at MaxN. Default 160 (16*StartN), as Pinpoint's Go
	// version; raised to StartN if below it.
	MaxN int
}

// DecisionResult is the answer of [Decide] and what it rests on.
type DecisionResult struct {
	Decision Decision
	// Comparison is the test behind the decision; its interval is at
	// 1-2*Alpha, the level of the equivalence test.
	Comparison Comparison
	// N is the number of runs per side (pairs) looked at.
	N int
	// NextN is the number of runs per side to have before the next look
	// (the next point of the schedule above N, at most MaxN); 0 when
	// decided or when N has reached MaxN.
	NextN int
	// Looks is the number of looks of the schedule StartN, 2*StartN, ...,
	// MaxN, and FamilyAlpha = Looks*Alpha bounds, over the whole adaptive
	// procedure, the probability of each wrong answer.
	Looks       int
	FamilyAlpha float64
	// Reason says why, in words.
	Reason   string
	Warnings []error
}

// withDefaults fills in zero options and says what it fixed.
func (o DecideOptions) withDefaults() (DecideOptions, []error) {
	var warns []error
	if o.Alpha == 0 {
		o.Alpha = 0.01
	} else if !(o.Alpha > 0 && o.Alpha < 0.5) {
		warns = append(warns, fmt.Errorf("decide: alpha %v is not in (0, 0.5); using 0.01", o.Alpha))
		o.Alpha = 0.01
	}
	if o.MinEffect == 0 {
		o.MinEffect = 0.05
	} else if !(o.MinEffect > 0) || math.IsInf(o.MinEffect, 0) {
		warns = append(warns, fmt.Errorf("decide: min effect %v is not > 0; using 0.05", o.MinEffect))
		o.MinEffect = 0.05
	}
	if o.StartN <= 0 {
		o.StartN = 10
	}
	if o.MaxN == 0 {
		o.MaxN = 16 * o.StartN
	}
	if o.MaxN < o.StartN {
		warns = append(warns, fmt.Errorf("decide: max runs %d is below the first look's %d; using %d", o.MaxN, o.StartN, o.StartN))
		o.MaxN = o.StartN
	}
	return o, warns
}

// Schedule returns the planned looks, in runs per side: StartN, 2*StartN,
// 4*StartN, ... and MaxN last (10, 20, 40, 80, 160 by default).
func (o DecideOptions) Schedule() []int {
	o, _ = o.withDefaults()
	var s []int
	for n := o.StartN; n < o.MaxN; n *= 2 {
		s = append(s, n)
	}
	return append(s, o.MaxN)
}

// Decide says whether builds a and b perform the same, differently, or
// whether more runs are needed, in the manner of Chromium's Pinpoint, for
// bisection and adaptive effort. With paired, a[i] and b[i] ran as the
// i-th interleaved pair and the test is [ComparePaired]; otherwise
// [CompareUnpaired].
//
// At each look:
//   - Same when the 1-2*Alpha confidence interval of the change lies
//     inside ±MinEffect: this is the two one-sided tests (TOST) equivalence
//     test at level Alpha, so when the true change is MinEffect or more,
//     Same is answered with probability at most Alpha. (Pinpoint instead
//     compares p with a "high threshold" found by simulation; an
//     equivalence interval needs no simulated table and states what "same"
//     means.)
//   - Different when the test's P < Alpha (Pinpoint's 0.01 by default).
//   - Unknown otherwise; NextN says how many runs per side to have for the
//     next look (10 -> 20 -> 40 -> ... -> MaxN), and at MaxN the answer
//     stays Unknown.
//
// Repeated looks: the caller looks at most Looks times (the schedule), and
// each look spends Alpha, so by the union bound (Bonferroni over the planned
// looks) the whole procedure answers Different for identical builds with
// probability at most Looks*Alpha, and Same for builds that differ by
// MinEffect or more with probability at most Looks*Alpha; both bounds are
// FamilyAlpha (5 % for the defaults). The looks share data, so the real
// rates are lower; the tests check both by simulation.
func Decide(a, b []float64, paired bool, opt DecideOptions) DecisionResult {
	opt, warns := opt.withDefaults()
	sched := opt.Schedule()
	r := DecisionResult{Looks: len(sched), FamilyAlpha: float64(len(sched)) * opt.Alpha}
	conf := 1 - 2*opt.Alpha
	if paired {
		r.Comparison = comparePaired(a, b, opt.Alpha, conf, nil)
	} else {
		r.Comparison = compareUnpaired(a, b, opt.Alpha, conf, nil)
	}
	c := &r.Comparison
	r.N = c.N
	r.Warnings = append(warns, c.Warnings...)
	bound := 100 * opt.MinEffect
	switch {
	case c.Test == "":
		r.Reason = "no test could run"
	case c.Confidence >= conf-1e-12 && c.Lo > -bound && c.Hi < bound:
		r.Decision = Same
		r.Reason = fmt.Sprintf("the %.0f%% interval of the change [%+.2f%%, %+.2f%%] lies within ±%.3g%%", 100*conf, c.Lo, c.Hi, bound)
	case c.P < opt.Alpha:
		r.Decision = Different
		r.Reason = fmt.Sprintf("%s p=%.3g < %.3g, change %+.2f%%", c.Test, c.P, opt.Alpha, c.Change)
	default:
		r.Reason = fmt.Sprintf("%s p=%.3g >= %.3g and the %.0f%% interval [%+.2f%%, %+.2f%%] is not within ±%.3g%%", c.Test, c.P, opt.Alpha, 100*conf, c.Lo, c.Hi, bound)
	}
	if r.Decision == Unknown {
		for _, n := range sched {
			if n > r.N {
				r.NextN = n
				break
			}
		}
		if r.NextN == 0 {
			r.Reason += fmt.Sprintf("; at the limit of %d runs", opt.MaxN)
		}
	}
	return r
}
