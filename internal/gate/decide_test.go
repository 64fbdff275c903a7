package gate

import (
	"math"
	"math/rand"
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
)

// pairs draws n pairs of a lognormal benchmark with relative noise sd,
// head slower by shift (0.1: 10 %), with a shared per-round drift, as
// interleaved rounds on a shared runner have.
func pairs(r *rand.Rand, n int, sd, shift float64) (base, head []float64) {
	for range n {
		drift := r.NormFloat64() * 2 * sd
		base = append(base, 100*math.Exp(drift+sd*r.NormFloat64()))
		head = append(head, 100*(1+shift)*math.Exp(drift+sd*r.NormFloat64()))
	}
	return base, head
}

func TestDesign(t *testing.T) {
	d := NewDesign(0, 2, 0)
	if want := []int{10, 20, 40, 60}; len(d.Looks) != len(want) || d.Looks[3] != 60 || d.Looks[0] != 10 {
		t.Fatalf("looks %v, want %v", d.Looks, want)
	}
	for k, a := range d.Nominal {
		if !(a > 0 && a < 2*DefaultAlpha/2) {
			t.Errorf("look %d: nominal %g not in (0, %g)", k, a, DefaultAlpha)
		}
	}
	if d.Look(9) != -1 || d.Look(25) != 1 || d.Look(60) != 3 || d.Next(20) != 40 || d.Next(60) != 0 {
		t.Errorf("Look/Next wrong: %d %d %d %d %d", d.Look(9), d.Look(25), d.Look(60), d.Next(20), d.Next(60))
	}
}

// TestFalsePositivesAndPower checks the procedure on data whose truth is
// known: identical builds fail at most alpha of the time over two metrics
// and every look; a 20 % slowdown of 2 % noise fails nearly always; the
// smallest detectable change quoted for a 2 % noise is caught at least at
// about Power.
func TestFalsePositivesAndPower(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	rules := []Rule{{"a_ms", 5, metric.LowerIsBetter}, {"b_ops", 5, metric.HigherIsBetter}}
	d := NewDesign(0.05, len(rules), 60)
	run := func(shift float64, gates int) (fail, pass, undecided int, detect float64) {
		for range gates {
			b0, h0 := pairs(r, 60, 0.02, shift)
			b1, h1 := pairs(r, 60, 0.02, 0)
			ds := d.Simulate(rules, [][]float64{b0, b1}, [][]float64{h0, h1})
			detect = ds[0].DetectablePct
			switch Overall(ds) {
			case Regressed:
				fail++
			case Within:
				pass++
			default:
				undecided++
			}
		}
		return
	}
	fail, pass, und, det := run(0, 2000)
	t.Logf("A/A: %d fail, %d pass, %d undecided of 2000; detectable %.1f%%", fail, pass, und, det)
	if fail > 100 { // alpha 5 %
		t.Errorf("A/A: %d of 2000 gates failed, above alpha", fail)
	}
	if pass < 1800 {
		t.Errorf("A/A: only %d of 2000 gates passed", pass)
	}
	fail, _, _, _ = run(0.20, 500)
	if fail < 490 {
		t.Errorf("20%% slowdown: %d of 500 gates failed", fail)
	}
	// A change at the quoted detectable size is caught at about Power.
	fail, _, _, _ = run(det/100, 1000)
	t.Logf("%.1f%% slowdown: %d of 1000 failed", det, fail)
	if fail < 700 {
		t.Errorf("%.1f%% (the quoted detectable change): %d of 1000 gates failed, want about %.0f%%", det, fail, 100*Power)
	}
	// Fewer pairs than the first look decide nothing.
	if got := d.Decide(rules[0], []float64{1, 2}, []float64{1, 2}); got.Call != Undecided {
		t.Errorf("2 pairs: %v", got.Call)
	}
}

// TestAlphaAccounting checks the spending itself, with a threshold far
// below the noise so that only the interval stands between an A/A gate and
// a failure: over two metrics and every look, identical builds fail at
// most alpha of the gates (3000 seeded gates: alpha plus three standard
// errors), and a design that spent alpha at each look would not pass.
func TestAlphaAccounting(t *testing.T) {
	rules := []Rule{{"a_ms", 0.001, metric.LowerIsBetter}, {"b_ops", 0.001, metric.HigherIsBetter}}
	d := NewDesign(0.05, len(rules), 60)
	count := func(d Design, gates int) int {
		r := rand.New(rand.NewSource(7))
		fail := 0
		for range gates {
			b0, h0 := pairs(r, 60, 0.02, 0)
			b1, h1 := pairs(r, 60, 0.02, 0)
			if Overall(d.Simulate(rules, [][]float64{b0, b1}, [][]float64{h0, h1})) == Regressed {
				fail++
			}
		}
		return fail
	}
	const gates = 3000
	limit := int(gates*0.05 + 3*math.Sqrt(gates*0.05*0.95))
	fail := count(d, gates)
	t.Logf("A/A with a 0.001 %% threshold: %d of %d gates failed (limit %d)", fail, gates, limit)
	if fail > limit {
		t.Errorf("%d of %d A/A gates failed: above alpha 0.05 over metrics and looks", fail, gates)
	}
	naive := d
	naive.Nominal = []float64{0.1, 0.1, 0.1, 0.1} // alpha 0.05 one-sided at each look, per metric
	if n := count(naive, gates); n <= limit {
		t.Errorf("a design spending alpha at every look and metric failed only %d of %d: the check cannot tell", n, gates)
	}
}
