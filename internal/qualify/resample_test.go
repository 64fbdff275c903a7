package qualify

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/gate"
	"github.com/perfbot/perfbot/internal/metric"
)

// lognormal is n seeded runs of a benchmark of 100 with relative noise sd.
func lognormal(seed int64, n int, sd float64) [][]float64 {
	r := rand.New(rand.NewSource(seed))
	out := make([][]float64, n)
	for i := range out {
		out[i] = []float64{100 * math.Exp(sd*r.NormFloat64())}
	}
	return out
}

func analysed(t *testing.T, runs [][]float64, rounds pool, thr float64) *Result {
	t.Helper()
	in := inputs{rules: []gate.Rule{{Metric: "t_ms", ThresholdPct: thr, Better: metric.LowerIsBetter}}, plain: runs, rounds: rounds,
		budget: 40, gates: 200, rng: rand.New(rand.NewSource(7))}
	if rounds.pairs() > 0 {
		in.slowName = "slow"
	}
	res := &Result{Alpha: 0.05}
	if err := in.analyse(res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestQuietRunner: 1 % noise, a 5 % threshold: identical builds never
// fail the gate (the estimate would have to reach the threshold), the
// noise is measured as about 1.4 % (the sd of a ratio of two runs of 1 %),
// and the detectable change is just above the threshold, where the gate's
// own formula puts it; a planted shift of that size is caught at 80 %.
func TestQuietRunner(t *testing.T) {
	res := analysed(t, lognormal(1, 80, 0.01), pool{}, 5)
	m := res.Metrics[0]
	t.Logf("FP %d/%d, undecided %d, noise %.2f%%, detectable %.2f%% (formula %.2f%%)", res.FalsePositives, res.Gates, res.Undecided, m.NoisePct, m.DetectablePct, m.FormulaPct)
	if res.Pairs != 40 || res.Gates != 200 || res.FalsePositives != 0 || !res.Fit {
		t.Errorf("pairs %d, %d/%d false positives, fit %v: want 40 pairs, 0/200, fit", res.Pairs, res.FalsePositives, res.Gates, res.Fit)
	}
	if !(m.NoisePct > 1.0 && m.NoisePct < 2.0) {
		t.Errorf("noise %.2f%%, want about 1.4%%", m.NoisePct)
	}
	if !(m.DetectablePct >= 5 && m.DetectablePct < 6 && math.Abs(m.DetectablePct-m.FormulaPct) < 0.5) {
		t.Errorf("detectable %.2f%%, formula %.2f%%: want both just above the 5%% threshold", m.DetectablePct, m.FormulaPct)
	}
	if lo, hi := res.FPLo, res.FPHi; lo != 0 || !(hi > 0.015 && hi < 0.02) {
		t.Errorf("0/200: interval [%g, %g], want [0, 0.0183]", lo, hi)
	}
	// The search's answer, replayed: caught at Power, a little less not.
	d := gate.NewDesign(0.05, 1, 40)
	aa := aaPool(lognormal(1, 80, 0.01), 1)
	ds := draws(rand.New(rand.NewSource(7)), 200, 40, aa.pairs(), true)
	power := func(p float64) float64 { return float64(run(d, rulesT(5), aa, ds, shift{0, p}).ByMetric[0]) / 200 }
	if p := power(m.DetectablePct); p < gate.Power {
		t.Errorf("a planted %.2f%% is caught in %.0f%% of the gates", m.DetectablePct, 100*p)
	}
	if p := power(m.DetectablePct - 0.2); p >= gate.Power {
		t.Errorf("%.2f%%, below the detectable change, is caught in %.0f%%", m.DetectablePct-0.2, 100*p)
	}
}

func rulesT(thr float64) []gate.Rule {
	return []gate.Rule{{Metric: "t_ms", ThresholdPct: thr, Better: metric.LowerIsBetter}}
}

// TestPeriodicRunner: a runner whose runs go 100, 110, 110, 100, ... (a
// background job in step with the rounds) makes every balanced pair read
// +10 %: identical builds fail every gate, and the runner is not fit.
func TestPeriodicRunner(t *testing.T) {
	var runs [][]float64
	for i := range 80 {
		v := 100.0
		if i%4 == 1 || i%4 == 2 {
			v = 110
		}
		runs = append(runs, []float64{v})
	}
	res := analysed(t, runs, pool{}, 5)
	if res.Fit || len(res.OrderEffect) != 1 || !strings.HasPrefix(res.OrderEffect[0], "t_ms +10.0 %") {
		t.Errorf("order effect %q, fit %v: want the +10 %% between a round's places found, not fit", res.OrderEffect, res.Fit)
	}
	if code, why := res.ExitStatus(); code != 1 || why == "" {
		t.Errorf("exit %d %q", code, why)
	}
}

// TestSlowdownRounds: a real slowdown of 10 % over 2 % noise, paired by
// round, is measured at about 10 % and fails nearly every gate; one of
// 3 % (below the 5 % threshold) fails almost none.
func TestSlowdownRounds(t *testing.T) {
	plain := lognormal(2, 60, 0.02)
	noise := lognormal(3, 60, 0.02)
	for _, c := range []struct {
		factor   float64
		min, max int
	}{{1.10, 190, 200}, {1.03, 0, 10}} {
		var p pool
		p.base, p.head = make([][]float64, 1), make([][]float64, 1)
		for i := range plain {
			p.base[0] = append(p.base[0], plain[i][0])
			p.head[0] = append(p.head[0], c.factor*noise[i][0])
		}
		res := analysed(t, lognormal(4, 60, 0.02), p, 5)
		s := res.Slowdown
		if s == nil || len(s.Sizes) != 1 || s.Rounds != 60 {
			t.Fatalf("slowdown %+v", s)
		}
		want := 100 * (c.factor - 1)
		if z := s.Sizes[0]; math.Abs(z.Change-want) > 1.5 || z.Lo > want || z.Hi < want {
			t.Errorf("x%g: size %+.2f%% [%+.2f, %+.2f], want about %+.0f%%", c.factor, z.Change, z.Lo, z.Hi, want)
		}
		if s.Detected < c.min || s.Detected > c.max {
			t.Errorf("x%g: detected in %d of %d gates, want %d-%d", c.factor, s.Detected, s.Gates, c.min, c.max)
		}
	}
}

func TestBinomialInterval(t *testing.T) {
	// Closed forms: the lower bound of 1/200 solves 1-(1-p)^200 = 0.025;
	// the upper solves (1-p)^200 + 200p(1-p)^199 = 0.025 (0.0275419).
	lo, hi := binomialInterval(1, 200, 0.05)
	if math.Abs(lo-(1-math.Pow(0.975, 1.0/200))) > 1e-9 || math.Abs(hi-0.0275419) > 1e-6 {
		t.Errorf("1/200: [%g, %g]", lo, hi)
	}
	if lo, hi := binomialInterval(200, 200, 0.05); hi != 1 || math.Abs(lo-math.Pow(0.025, 1.0/200)) > 1e-9 {
		t.Errorf("200/200: [%g, %g]", lo, hi)
	}
}
