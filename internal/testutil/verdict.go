package testutil

import (
	"fmt"
	"math"
	"testing"
)

// Design is what a test of a statistical verdict measures with: the
// planted effect it must see, the runs of each side at its last look and
// the confidence of its interval.
type Design struct {
	Effect     float64 // the planted effect, in percent
	Runs       int     // runs of each side at the last look
	Confidence float64 // of the interval of the change, e.g. 0.98
}

// MaxCV is the largest coefficient of variation of single runs, in
// percent, at which the design resolves its effect: where the interval of
// the change, ±z·CV·√(2/Runs), is at most half the effect wide on each
// side, so that "no change" and "the effect" cannot both lie inside it.
// For a 30 % effect, 40 runs a side and 98 % intervals it is 28.8 %.
func (d Design) MaxCV() float64 {
	z := math.Sqrt2 * math.Erfinv(d.Confidence)
	return d.Effect / 2 / (z * math.Sqrt(2/float64(d.Runs)))
}

// CV is the coefficient of variation of values in percent (the sample
// standard deviation over the mean); 0 for fewer than two values.
func CV(values []float64) float64 {
	if len(values) < 2 {
		return 0
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	mean := sum / float64(len(values))
	var ss float64
	for _, v := range values {
		ss += (v - mean) * (v - mean)
	}
	if mean == 0 {
		return 0
	}
	return 100 * math.Sqrt(ss/float64(len(values)-1)) / math.Abs(mean)
}

// Sample is one build's runs in a verdict test, named for the log.
type Sample struct {
	Name   string
	Values []float64
}

// SkipInconclusive is the one rule for a verdict test whose decision
// came out inconclusive (a wrong verdict is the caller's failure, never
// this helper's business): it skips when the noisiest sample's CV exceeds
// what the design can resolve (Design.MaxCV), naming both, and fails
// otherwise: on noise the design resolves, an inconclusive verdict is a
// bug. It also fails when there is no sample to measure the noise by.
func SkipInconclusive(tb testing.TB, d Design, what string, samples ...Sample) {
	tb.Helper()
	worst, name := -1.0, ""
	for _, s := range samples {
		if cv := CV(s.Values); cv > worst {
			worst, name = cv, fmt.Sprintf("%s, %d runs", s.Name, len(s.Values))
		}
	}
	if worst < 0 {
		tb.Fatalf("%s: inconclusive, and no runs to measure the noise by", what)
	}
	limit := d.MaxCV()
	if worst > limit {
		tb.Skipf("skipping: %s: inconclusive on noise the design cannot resolve: CV %.1f %% (%s) exceeds the %.1f %% at which %d runs a side resolve a %.0f %% effect with %.0f %% intervals",
			what, worst, name, limit, d.Runs, d.Effect, 100*d.Confidence)
	}
	tb.Fatalf("%s: inconclusive although the noise is within what the design resolves: CV %.1f %% (%s) <= %.1f %% (%d runs a side, a %.0f %% effect, %.0f %% intervals)",
		what, worst, name, limit, d.Runs, d.Effect, 100*d.Confidence)
}
