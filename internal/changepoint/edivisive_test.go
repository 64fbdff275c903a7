package changepoint

import (
	"math"
	"math/rand/v2"
	"testing"
)

// qDirect is the energy statistic of x[:tau] | x[tau:] from its definition.
func qDirect(x []float64, tau int) float64 {
	X, Y := x[:tau], x[tau:]
	m, k := float64(len(X)), float64(len(Y))
	var cross, wx, wy float64
	for _, a := range X {
		for _, b := range Y {
			cross += math.Abs(a - b)
		}
	}
	for i := range X {
		for j := i + 1; j < len(X); j++ {
			wx += math.Abs(X[i] - X[j])
		}
	}
	for i := range Y {
		for j := i + 1; j < len(Y); j++ {
			wy += math.Abs(Y[i] - Y[j])
		}
	}
	e := 2 * cross / (m * k)
	if m > 1 {
		e -= wx / (m * (m - 1) / 2)
	}
	if k > 1 {
		e -= wy / (k * (k - 1) / 2)
	}
	return m * k / (m + k) * e
}

func TestBestSplitMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, minSize int }{{2, 1}, {7, 1}, {20, 3}, {50, 5}, {9, 5}} {
		x := make([]float64, tc.n)
		for i := range x {
			x[i] = r.NormFloat64()
			if i > tc.n/3 {
				x[i] += 1.5
			}
		}
		tau, q, ok := bestSplit(x, tc.minSize)
		if ok != (tc.n >= 2*tc.minSize) {
			t.Fatalf("n %d minSize %d: ok %v", tc.n, tc.minSize, ok)
		}
		if !ok {
			continue
		}
		bestTau, bestQ := 0, math.Inf(-1)
		for s := tc.minSize; s <= tc.n-tc.minSize; s++ {
			if v := qDirect(x, s); v > bestQ {
				bestTau, bestQ = s, v
			}
		}
		if tau != bestTau || math.Abs(q-bestQ) > 1e-9*math.Max(1, bestQ) {
			t.Errorf("n %d minSize %d: bestSplit = %d, %v; definition %d, %v", tc.n, tc.minSize, tau, q, bestTau, bestQ)
		}
	}
}

func TestSplitFindsStepsInWindows(t *testing.T) {
	x := make([]Point, 120)
	for i := range x {
		x[i].Value = 1 + 0.001*float64(i%3)
		if i >= 40 {
			x[i].Value *= 1.2
		}
		if i >= 90 {
			x[i].Value *= 0.8
		}
	}
	s, err := FromValues(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := split(s, Options{}.normalized(), 0.01)
	has := map[int]bool{}
	for _, i := range got {
		has[i] = true
	}
	if !has[40] || !has[90] {
		t.Errorf("weak change points %v, want 40 and 90 among them", got)
	}
}
