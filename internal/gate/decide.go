// Package gate is perfbot's pull-request gate (perfbot gate): the base and
// head of a change built on the same runner and measured in balanced
// interleaved pairs, adaptively, until every gated metric is decided or
// the budget is spent; a regression beyond its threshold is triaged, and
// an alignment artifact is reported as such.
//
// This file is the decision: a pure function of the paired samples, which
// the gate, perfbot qualify and the A/A studies of docs/ci.md share.
package gate

import (
	"fmt"
	"math"
	"slices"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
	"gonum.org/v1/gonum/stat/distuv"
)

// Defaults of the gate: section's zero fields.
const (
	DefaultAlpha   = 0.05 // false-positive rate of one gate
	DefaultMaxRuns = 60   // runs of each revision
	FirstLook      = 10   // pairs at the first look
	// Power is the probability at which the smallest detectable change is
	// quoted.
	Power = 0.8
)

// Call is the decision about one gated metric.
type Call int

const (
	// Undecided: the pairs do not settle it yet (at the last look: the
	// gate is inconclusive for this metric).
	Undecided Call = iota
	// Within: the change is shown to be smaller than the threshold in the
	// worse direction (an improvement is Within too).
	Within
	// Regressed: the change is significantly worse and its estimate is
	// at least the threshold.
	Regressed
)

func (c Call) String() string {
	switch c {
	case Undecided:
		return "undecided"
	case Within:
		return "within"
	case Regressed:
		return "regressed"
	}
	return fmt.Sprintf("Call(%d)", int(c))
}

// Rule is one gated metric.
type Rule struct {
	Metric       string
	ThresholdPct float64 // the smallest regression that fails, in percent (> 0)
	Better       metric.Better
}

// Design is the group-sequential plan of one gate: its looks, in pairs,
// and the two-sided nominal level of each, spent (Pocock) so that, over
// all looks and all metrics, the chance that identical builds fail the
// gate is at most Alpha (Bonferroni over the metrics; each decision is
// one-sided, so a metric spends 2*Alpha/len(metrics) of a two-sided
// design).
type Design struct {
	Alpha   float64
	Metrics int
	Looks   []int
	Nominal []float64
}

// NewDesign plans a gate of m metrics with at most maxRuns pairs at
// level alpha (0: the defaults).
func NewDesign(alpha float64, m, maxRuns int) Design {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	if maxRuns <= 0 {
		maxRuns = DefaultMaxRuns
	}
	m = max(m, 1)
	var looks []int
	for n := FirstLook; n < maxRuns; n *= 2 {
		looks = append(looks, n)
	}
	looks = append(looks, maxRuns)
	two := min(2*alpha/float64(m), 0.5)
	p := stats.PlanSequential(looks, two, stats.PocockSpending)
	return Design{Alpha: alpha, Metrics: m, Looks: looks, Nominal: p.Nominal}
}

// Look is the look at which n pairs are in: the index of the last
// planned look at or below n, -1 before the first.
func (d Design) Look(n int) int {
	k := -1
	for i, l := range d.Looks {
		if l <= n {
			k = i
		}
	}
	return k
}

// Decision is a metric's state at one look.
type Decision struct {
	Rule
	Call  Call
	Pairs int
	// Change is the estimated change in percent (Hodges-Lehmann on the
	// pairs' log ratios), [Lo, Hi] its interval at 1-Nominal (each bound
	// one-sided at Nominal/2), P the signed-rank test's.
	Change, Lo, Hi, P float64
	Nominal           float64
	// DetectablePct is the smallest regression this gate would fail on
	// with probability Power at its last look, from the pairs' noise (see
	// Detectable); NaN when it cannot be estimated.
	DetectablePct float64
	Reason        string
}

// Worse is the change in the metric's worse direction: Change for a
// lower-is-better metric, -Change for a higher-is-better one.
func (d Decision) Worse() float64 { return worse(d.Better, d.Change) }

// Improved reports whether the metric is shown better.
func (d Decision) Improved() bool {
	lo, hi := worse(d.Better, d.Lo), worse(d.Better, d.Hi)
	return d.Call == Within && max(lo, hi) < 0
}

func worse(b metric.Better, x float64) float64 {
	if b == metric.HigherIsBetter {
		return -x
	}
	return x
}

// Decide decides one metric from its pairs base[i], head[i] at the look
// the number of pairs reaches (fewer than the first look: Undecided).
func (d Design) Decide(r Rule, base, head []float64) Decision {
	n := min(len(base), len(head))
	out := Decision{Rule: r, Pairs: n, Change: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), DetectablePct: math.NaN()}
	k := d.Look(n)
	if k < 0 {
		out.Reason = fmt.Sprintf("%d pairs, fewer than the first look's %d", n, d.Looks[0])
		return out
	}
	out.Nominal = d.Nominal[k]
	c := stats.ComparePaired(base[:n], head[:n], out.Nominal)
	out.Change, out.Lo, out.Hi, out.P = c.Change, c.Lo, c.Hi, c.P
	out.DetectablePct = d.Detectable(r, base[:n], head[:n])
	if c.Test == "" {
		out.Reason = "no test could run"
		return out
	}
	w, wlo, whi := worse(r.Better, c.Change), min(worse(r.Better, c.Lo), worse(r.Better, c.Hi)), max(worse(r.Better, c.Lo), worse(r.Better, c.Hi))
	t := r.ThresholdPct
	switch {
	case wlo > 0 && w >= t:
		out.Call = Regressed
		out.Reason = fmt.Sprintf("%+.2f%% worse, interval [%+.2f%%, %+.2f%%] above 0, estimate at least the %.3g%% threshold", w, wlo, whi, t)
	case whi < t:
		out.Call = Within
		out.Reason = fmt.Sprintf("the worse bound %+.2f%% is below the %.3g%% threshold", whi, t)
	default:
		out.Reason = fmt.Sprintf("%+.2f%% worse, interval [%+.2f%%, %+.2f%%]: neither above 0 with the estimate at %.3g%%, nor below %.3g%%", w, wlo, whi, t, t)
		if k == len(d.Looks)-1 {
			out.Reason += fmt.Sprintf("; at the budget of %d pairs", d.Looks[k])
		}
	}
	return out
}

// Last reports whether n pairs reach the design's last look.
func (d Design) Last(n int) bool { return n >= d.Looks[len(d.Looks)-1] }

// Next returns the pairs to have at the next look after n (0: none).
func (d Design) Next(n int) int {
	for _, l := range d.Looks {
		if l > n {
			return l
		}
	}
	return 0
}

// Detectable estimates the smallest regression, in percent, that the
// gate fails on with probability Power at its last look, given the noise
// of the pairs: with se the standard error of the estimated log change at
// the last look's N pairs and z the one-sided quantile of its nominal
// level, a true change δ is caught when both δ > (z+z_P)·se (the
// interval above 0) and log(1+δ) > log(1+T)+z_P·se (the estimate beyond
// the threshold T). se is read off the signed-rank interval of the pairs
// seen (its half-width over the normal quantile of its coverage, scaled
// by √(n/N)), which is as efficient as the test itself; with too few
// pairs for an interval, from 1.4826 MAD of the log ratios inflated by
// the test's efficiency (3/π). It is an estimate from the pairs seen, as
// noisy as they are. NaN with fewer than 3 usable pairs.
func (d Design) Detectable(r Rule, base, head []float64) float64 {
	var logs []float64
	for i := range min(len(base), len(head)) {
		if base[i] > 0 && head[i] > 0 && !math.IsInf(base[i], 0) && !math.IsInf(head[i], 0) {
			logs = append(logs, math.Log(head[i]/base[i]))
		}
	}
	if len(logs) < 3 {
		return math.NaN()
	}
	N := float64(d.Looks[len(d.Looks)-1])
	se := robustSD(logs) / math.Sqrt(3/math.Pi) / math.Sqrt(N)
	if c := stats.ComparePaired(base, head, 0.05); c.Test != "" && c.Confidence > 0.5 && c.Lo > -100 && !math.IsNaN(c.Lo) && !math.IsNaN(c.Hi) && c.Hi > c.Lo {
		zc := distuv.UnitNormal.Quantile(1 - (1-c.Confidence)/2)
		se = (math.Log1p(c.Hi/100) - math.Log1p(c.Lo/100)) / (2 * zc) * math.Sqrt(float64(c.N)/N)
	}
	z := distuv.UnitNormal.Quantile(1 - d.Nominal[len(d.Nominal)-1]/2)
	zp := distuv.UnitNormal.Quantile(Power)
	sig := 100 * math.Expm1((z+zp)*se)
	thr := 100 * math.Expm1(math.Log1p(r.ThresholdPct/100)+zp*se)
	return max(sig, thr)
}

func robustSD(xs []float64) float64 {
	m := stats.Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	mad := stats.Median(dev)
	if mad == 0 {
		// Mostly identical ratios: the standard deviation says more.
		var ss float64
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		return math.Sqrt(ss / float64(len(xs)-1))
	}
	return 1.4826 * mad
}

// Overall is the gate's answer over its metrics at one look: Regressed
// when any metric regressed, Within when every one is within, else
// Undecided.
func Overall(ds []Decision) Call {
	if slices.ContainsFunc(ds, func(d Decision) bool { return d.Call == Regressed }) {
		return Regressed
	}
	if len(ds) > 0 && !slices.ContainsFunc(ds, func(d Decision) bool { return d.Call != Within }) {
		return Within
	}
	return Undecided
}

// Simulate runs the gate's adaptive procedure over pre-recorded pairs:
// base[m] and head[m] are metric m's values, pair i in position i. It
// takes the looks in order, stopping at the first look at which Overall
// is decided, and returns the decisions at that look (or at the last look
// the pairs reach). perfbot qualify and the A/A studies use it on
// resampled runs; the gate itself decides look by look as it measures.
func (d Design) Simulate(rules []Rule, base, head [][]float64) []Decision {
	n := len(base[0])
	for m := range base {
		n = min(n, len(base[m]), len(head[m]))
	}
	var ds []Decision
	for _, l := range d.Looks {
		if l > n {
			break
		}
		ds = ds[:0]
		for m, r := range rules {
			ds = append(ds, d.Decide(r, base[m][:l], head[m][:l]))
		}
		if Overall(ds) != Undecided {
			break
		}
	}
	return ds
}
