package compare

import (
	"math/rand"
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
)

// TestEffectPct: a real 2 % slowdown with 0.2 % noise is significant, but
// under a 5 % effect it is small: shown, marked, not counted; a real 30 %
// slowdown counts whatever the effect up to 30 %. The truth is known: the
// samples are drawn around the means given.
func TestEffectPct(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	base := noisy(rng, 20, 100, 0.002)
	small := noisy(rng, 20, 102, 0.002)
	big := noisy(rng, 20, 130, 0.002)
	for _, paired := range []bool{true, false} {
		tab := Build(cols(3), []Series{
			{Metric: "ms", Better: metric.LowerIsBetter, KPI: true, Samples: [][]Sample{base, small, big}},
		}, paired, 0.05)
		d2, d30 := tab.Rows[0].Cells[1].Delta, tab.Rows[0].Cells[2].Delta
		if !d2.Regression || !d2.Stat.Significant || !d30.Regression {
			t.Fatalf("paired=%v: 2%% %+v, 30%% %+v: want both significant regressions", paired, d2, d30)
		}
		for _, c := range []struct {
			effect      float64
			small2      bool
			small30     bool
			regressions int
		}{{0, false, false, 2}, {1, false, false, 2}, {5, true, false, 1}, {31, true, true, 0}} {
			tab.EffectPct = c.effect
			if got := tab.Small(d2); got != c.small2 {
				t.Errorf("paired=%v effect %g: Small(2%% change, estimate %+.2f%%) = %v, want %v", paired, c.effect, d2.Effect(), got, c.small2)
			}
			if got := tab.Small(d30); got != c.small30 {
				t.Errorf("paired=%v effect %g: Small(30%% change) = %v, want %v", paired, c.effect, got, c.small30)
			}
			if reg, _ := tab.Regressions(); reg != c.regressions {
				t.Errorf("paired=%v effect %g: Regressions() = %d, want %d", paired, c.effect, reg, c.regressions)
			}
		}
	}
}

// TestEffectPctLKPRule: with 3 runs no test can reach alpha and the lkp
// rule decides; the change of the means is what is held against the
// effect, in percent also on a row of points.
func TestEffectPctLKPRule(t *testing.T) {
	tab := Build(cols(2), []Series{
		{Metric: "ms", Better: metric.LowerIsBetter, KPI: true, Samples: [][]Sample{samples(100, 100.1, 99.9), samples(103, 103.1, 102.9)}},
		{Metric: "busy%", Better: metric.LowerIsBetter, KPI: true, Samples: [][]Sample{samples(50, 50.1, 49.9), samples(51.5, 51.6, 51.4)}},
	}, true, 0.05)
	tab.EffectPct = 5
	for _, r := range tab.Rows {
		d := r.Cells[1].Delta
		if !d.Regression || d.Stat.Significant {
			t.Fatalf("%s: %+v: want a regression by the lkp rule", r.Metric, d)
		}
		if !tab.Small(d) {
			t.Errorf("%s: a %+.1f%% change under a 5%% effect is not small", r.Metric, d.Effect())
		}
	}
	if got := tab.Rows[1].Cells[1].Delta.Effect(); got < 2.9 || got > 3.1 {
		t.Errorf("busy%%: 50 to 51.5 points: effect %.2f%%, want 3%% of the base", got)
	}
	if reg, _ := tab.Regressions(); reg != 0 {
		t.Errorf("Regressions() = %d, want 0: both changes are under the effect", reg)
	}
}
