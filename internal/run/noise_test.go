package run

import (
	"math"
	"testing"
)

// TestNoiseFormulas checks the power formulas against the figures measured
// on the project's machines (shared/notes/alignment-effects.md, "Noise"):
// about 6 pairs for a 35 % effect and 15-20 pairs for 15 % (both at the
// same noise, a CV near 14.5 %), 10-20 per side for 5 % and 3 % not
// reliably detectable (a quieter CV near 4.5 %).
func TestNoiseFormulas(t *testing.T) {
	if n := RunsNeeded(0.145, 0.35); n != 6 {
		t.Errorf("CV 14.5%%, 35%% effect: %d pairs, want 6", n)
	}
	if n := RunsNeeded(0.145, 0.15); n < 15 || n > 20 {
		t.Errorf("CV 14.5%%, 15%% effect: %d pairs, want 15-20", n)
	}
	if n := RunsNeeded(0.045, 0.05); n < 10 || n > 20 {
		t.Errorf("CV 4.5%%, 5%% effect: %d pairs, want 10-20", n)
	}
	if n := RunsNeeded(0.045, 0.03); n <= 30 {
		t.Errorf("CV 4.5%%, 3%% effect: %d pairs, want well over the usual 6-20", n)
	}
	if e := MinDetectableEffect(0.145, 6); math.Abs(e-0.34) > 0.01 {
		t.Errorf("MinDetectableEffect(14.5%%, 6) = %.3f, want about 0.34", e)
	}

	// RunsNeeded is the inverse of MinDetectableEffect.
	for _, cv := range []float64{0.005, 0.01, 0.041, 0.1, 0.38} {
		for _, effect := range []float64{0.01, 0.03, 0.05, 0.15, 0.35, 1} {
			n := RunsNeeded(cv, effect)
			if n < 2 || MinDetectableEffect(cv, n) > effect || n > 2 && MinDetectableEffect(cv, n-1) <= effect {
				t.Errorf("RunsNeeded(%v, %v) = %d: MDE(n) = %v, MDE(n-1) = %v",
					cv, effect, n, MinDetectableEffect(cv, n), MinDetectableEffect(cv, n-1))
			}
		}
	}
	// More pairs detect smaller effects; more noise needs more runs.
	if !(MinDetectableEffect(0.04, 20) < MinDetectableEffect(0.04, 6)) {
		t.Errorf("MDE does not fall with more pairs")
	}
	if !(RunsNeeded(0.08, 0.05) > RunsNeeded(0.04, 0.05)) {
		t.Errorf("RunsNeeded does not grow with CV")
	}
}

func TestNoiseEdges(t *testing.T) {
	if e := MinDetectableEffect(0.04, 1); !math.IsInf(e, 1) {
		t.Errorf("1 pair: %v, want +Inf", e)
	}
	if e := MinDetectableEffect(-0.1, 6); !math.IsNaN(e) {
		t.Errorf("negative cv: %v, want NaN", e)
	}
	if e := MinDetectableEffect(0, 6); e != 0 {
		t.Errorf("cv 0: %v, want 0", e)
	}
	for _, c := range [][2]float64{{0.04, 0}, {0.04, -1}, {math.NaN(), 0.05}, {-1, 0.05}, {math.Inf(1), 0.05}, {0.04, math.NaN()}} {
		if n := RunsNeeded(c[0], c[1]); n != 0 {
			t.Errorf("RunsNeeded(%v, %v) = %d, want 0", c[0], c[1], n)
		}
	}
	if n := RunsNeeded(0, 0.05); n != 2 {
		t.Errorf("cv 0: %d, want 2", n)
	}
	if n := RunsNeeded(1, 1e-9); n != math.MaxInt32 {
		t.Errorf("hopeless: %d, want the cap", n)
	}
}
