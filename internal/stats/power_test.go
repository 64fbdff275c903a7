package stats

import "testing"

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
