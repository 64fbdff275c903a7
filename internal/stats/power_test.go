package stats

import (
	"math"
	"testing"
)

func TestMinP(t *testing.T) {
	for _, c := range []struct {
		got, want float64
	}{
		{MinPairedP(5), 0.0625}, {MinPairedP(6), 0.03125}, {MinPairedP(0), 1},
		{MinUnpairedP(3, 3), 0.1}, {MinUnpairedP(5, 5), 2.0 / 252}, {MinUnpairedP(0, 4), 1},
	} {
		if !near(c.got, c.want, 1e-12) {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
	}
	if n := PairsNeeded(0.05); n != 6 {
		t.Errorf("PairsNeeded(0.05) = %d, want 6", n)
	}
}

// TestBenjaminiHochberg checks against R's p.adjust(p, "BH").
func TestBenjaminiHochberg(t *testing.T) {
	for _, c := range []struct{ p, want []float64 }{
		{[]float64{0.2, 0.001, 0.04, 0.01}, []float64{0.2, 0.004, 0.04 * 4 / 3, 0.02}},
		{[]float64{0.01, 0.02, 0.03, 0.04, 0.05}, []float64{0.05, 0.05, 0.05, 0.05, 0.05}},
		{[]float64{0.9}, []float64{0.9}},
		{nil, []float64{}},
	} {
		got := BenjaminiHochberg(c.p)
		for i := range c.want {
			if !near(got[i], c.want[i], 1e-12) {
				t.Errorf("BH(%v) = %v, want %v", c.p, got, c.want)
				break
			}
		}
	}
}

func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2, 10}
	if got := Median(xs); got != 2.5 || xs[0] != 3 {
		t.Errorf("Median = %v (input now %v), want 2.5 and the input untouched", got, xs)
	}
	if got := Median([]float64{7}); got != 7 {
		t.Errorf("Median of one = %v", got)
	}
	if !math.IsNaN(Median(nil)) {
		t.Errorf("Median(nil) is not NaN")
	}
}
