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
