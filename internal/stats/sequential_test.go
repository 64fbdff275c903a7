package stats

import (
	"math"
	"math/rand"
	"testing"
)

// TestPlanSequentialKnownBounds: the boundaries of Lan-DeMets designs with
// two equally spaced looks at overall 0.05: Pocock-type 2.157 and 2.201
// (Lan & DeMets 1983); O'Brien-Fleming-type 2.772 (the first look spends
// 2-2*Phi(1.96*sqrt 2) = 0.0056) and 1.979; both spend 0.05 in all.
func TestPlanSequentialKnownBounds(t *testing.T) {
	for _, tc := range []struct {
		s    Spending
		want []float64
	}{
		{PocockSpending, []float64{2.157, 2.201}},
		{OBrienFlemingSpending, []float64{2.772, 1.979}},
	} {
		p := PlanSequential([]int{10, 20}, 0.05, tc.s)
		for k, c := range p.Bounds {
			if math.Abs(c-tc.want[k]) > 0.002 {
				t.Errorf("%v: look %d boundary %.4f, want %.3f", tc.s, k+1, c, tc.want[k])
			}
		}
		if got := SequentialError(p.Looks, p.Nominal); math.Abs(got-0.05) > 1e-4 {
			t.Errorf("%v: overall error %.5f, want 0.05", tc.s, got)
		}
	}
}

// TestSequentialErrorSimulated: the overall error of independent-level
// looks and of a planned design agree with a simulation of accumulating
// normal data.
func TestSequentialErrorSimulated(t *testing.T) {
	looks := []int{10, 20, 40}
	naive := []float64{0.01, 0.01, 0.01}
	plan := PlanSequential(looks, 0.03, PocockSpending)
	r := rand.New(rand.NewSource(1))
	const trials = 200000
	var rejNaive, rejPlan int
	for range trials {
		s, n := 0.0, 0
		hitN, hitP := false, false
		for k, m := range looks {
			for ; n < m; n++ {
				s += r.NormFloat64()
			}
			z := math.Abs(s) / math.Sqrt(float64(n))
			hitN = hitN || z >= zTwoSided(naive[k])
			hitP = hitP || z >= plan.Bounds[k]
		}
		if hitN {
			rejNaive++
		}
		if hitP {
			rejPlan++
		}
	}
	check := func(name string, rej int, want float64) {
		got := float64(rej) / trials
		if math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/trials) {
			t.Errorf("%s: simulated overall error %.5f, computed %.5f", name, got, want)
		}
	}
	check("three looks at 0.01", rejNaive, SequentialError(looks, naive))
	check("Pocock plan at 0.03", rejPlan, 0.03)
	if e := SequentialError(looks, naive); !(e > 0.02 && e < 0.03) {
		t.Errorf("three looks at 0.01: overall error %.4f, want between 0.02 and 0.03 (the looks share data)", e)
	}
}

func zTwoSided(alpha float64) float64 {
	lo, hi := 0.0, 10.0
	for range 80 {
		mid := (lo + hi) / 2
		if 2*(1-normCDF(mid)) > alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
