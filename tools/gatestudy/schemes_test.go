package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWilson: the 95 % Wilson interval at known points (Newcombe 1998's
// table: 0/10 -> [0, 0.2775], 1/29 -> [0.0061, 0.1718]).
func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{{0, 10, 0, 0.2775}, {1, 29, 0.0061, 0.1718}, {10, 10, 0.7225, 1}} {
		lo, hi := wilson(c.k, c.n)
		if math.Abs(lo-c.lo) > 5e-4 || math.Abs(hi-c.hi) > 5e-4 {
			t.Errorf("wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

// TestNaiveSchemes: on seeded normal samples of known shift, Welch's
// one-sided test fires at about alpha on identical distributions and
// almost always on a shift of 3 standard errors; the threshold scheme
// fires on the means only.
func TestNaiveSchemes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	sample := func(n int, mean float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = mean + rng.NormFloat64()
		}
		return xs
	}
	const trials = 4000
	var aa, shifted int
	for range trials {
		if welchSlower(sample(5, 100), sample(5, 100), 0.05) {
			aa++
		}
		if welchSlower(sample(20, 100), sample(20, 101.5), 0.05) {
			shifted++
		}
	}
	// 4000 trials: the A/A rate's standard error is 0.0034.
	if r := float64(aa) / trials; math.Abs(r-0.05) > 0.015 {
		t.Errorf("Welch A/A rate %.4f, want 0.05 +- 0.015", r)
	}
	// A shift of 1.5 sd, 20 a side: power about 0.95 (noncentrality 4.74).
	if r := float64(shifted) / trials; r < 0.9 {
		t.Errorf("Welch rate on a 4.7-standard-error shift %.3f, want above 0.9", r)
	}
	if !thresholdSlower([]float64{10, 10}, []float64{11, 11}, 10) || thresholdSlower([]float64{10, 10}, []float64{10.9, 11}, 10) {
		t.Errorf("threshold scheme: want +10 %% flagged and +9.5 %% not")
	}
}
