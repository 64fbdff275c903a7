package main

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/perfbot/perfbot/internal/gate"
	"gonum.org/v1/gonum/stat/distuv"
)

// gateResult is one gate of the study: perfbot's decision over fresh,
// balanced interleaved pairs, taken look by look as the gate takes them.
type gateResult struct {
	call  gate.Call
	pairs int
	wall  time.Duration
}

// runGate measures pairs in the gate's order, B H | H B | B H | ..., up to
// each look of the design, and stops at the first look at which the
// decision is made (or at the budget, inconclusive).
func runGate(ctx context.Context, b *bench, d gate.Design, r gate.Rule, pct float64) (gateResult, error) {
	start := time.Now()
	var base, head []float64
	var dec gate.Decision
	for n := d.Next(0); n > 0; n = d.Next(n) {
		for i := len(base); i < n; i++ {
			var x, y float64
			var err error
			if i%2 == 0 {
				if x, err = b.run(ctx, 0); err == nil {
					y, err = b.run(ctx, pct)
				}
			} else {
				if y, err = b.run(ctx, pct); err == nil {
					x, err = b.run(ctx, 0)
				}
			}
			if err != nil {
				return gateResult{}, err
			}
			base, head = append(base, x), append(head, y)
		}
		dec = d.Decide(r, base, head)
		if gate.Overall([]gate.Decision{dec}) != gate.Undecided {
			break
		}
	}
	return gateResult{call: dec.Call, pairs: len(base), wall: time.Since(start)}, nil
}

// runNaive measures as the same-runner scripts do: n runs of the base,
// then n of the head.
func runNaive(ctx context.Context, b *bench, n int, pct float64) (base, head []float64, err error) {
	arms := [2][]float64{}
	for arm, p := range []float64{0, pct} {
		for range n {
			v, err := b.run(ctx, p)
			if err != nil {
				return nil, nil, err
			}
			arms[arm] = append(arms[arm], v)
		}
	}
	return arms[0], arms[1], nil
}

// welchSlower reports whether Welch's t-test finds head slower than base
// at level alpha, one-sided (the same nominal level as the gate's
// one-sided decision).
func welchSlower(base, head []float64, alpha float64) bool {
	mb, vb := meanVar(base)
	mh, vh := meanVar(head)
	nb, nh := float64(len(base)), float64(len(head))
	se2 := vb/nb + vh/nh
	if se2 == 0 {
		return mh > mb
	}
	t := (mh - mb) / math.Sqrt(se2)
	df := se2 * se2 / ((vb/nb)*(vb/nb)/(nb-1) + (vh/nh)*(vh/nh)/(nh-1))
	p := 1 - distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(t)
	return p < alpha
}

// thresholdSlower reports whether the head's mean is at least pct percent
// above the base's.
func thresholdSlower(base, head []float64, pct float64) bool {
	mb, _ := meanVar(base)
	mh, _ := meanVar(head)
	return 100*(mh/mb-1) >= pct
}

func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// wilson is the 95 % Wilson score interval of k successes in n trials.
func wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.959963984540054
	p, nf := float64(k)/float64(n), float64(n)
	c := (p + z*z/(2*nf)) / (1 + z*z/nf)
	h := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return max(0, c-h), min(1, c+h)
}
