// Group-sequential designs: alpha spending over planned looks.

package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Spending is a Lan-DeMets alpha-spending function: how much of a
// design's overall error a test may have spent once a fraction t of the
// planned runs is in (Lan & DeMets, Biometrika 70, 1983).
type Spending int

const (
	// PocockSpending spends alpha*ln(1+(e-1)t): nearly the same nominal
	// level at every look, so early looks can stop a clear case.
	PocockSpending Spending = iota
	// OBrienFlemingSpending spends 2-2*Phi(z(1-alpha/2)/sqrt(t)): almost
	// nothing early, nearly alpha at the last look.
	OBrienFlemingSpending
)

// String names the spending function.
func (s Spending) String() string {
	switch s {
	case PocockSpending:
		return "Pocock"
	case OBrienFlemingSpending:
		return "O'Brien-Fleming"
	}
	return fmt.Sprintf("Spending(%d)", int(s))
}

// Spent is the error spent by information fraction t (0..1) of a design
// whose overall error is alpha.
func (s Spending) Spent(alpha, t float64) float64 {
	switch {
	case t <= 0:
		return 0
	case t >= 1:
		return alpha
	}
	if s == OBrienFlemingSpending {
		z := distuv.UnitNormal.Quantile(1 - alpha/2)
		return 2 * distuv.UnitNormal.Survival(z/math.Sqrt(t))
	}
	return alpha * math.Log(1+(math.E-1)*t)
}

// SequentialPlan is a group-sequential two-sided test: looks at Looks[k]
// runs per side (or pairs), each testing at the two-sided nominal level
// Nominal[k], so that over all looks the chance of a false rejection is
// Alpha (under the normal approximation of the test statistic, whose
// values at two looks correlate as sqrt(n_j/n_k): a Wilcoxon or t
// statistic on accumulating data).
type SequentialPlan struct {
	Looks    []int
	Nominal  []float64
	Bounds   []float64 // the |z| boundary of each look
	Alpha    float64
	Spending Spending
}

// PlanSequential computes the nominal levels of a group-sequential design
// with looks at the given numbers of runs (increasing) and overall error
// alpha spent by s. The boundaries are found look by look by numerical
// integration of the statistic's density over the region where no earlier
// look stopped (Armitage, McPherson & Rowe 1969; Jennison & Turnbull,
// "Group Sequential Methods", ch. 19), so that look k spends exactly
// s.Spent(alpha, t_k) - s.Spent(alpha, t_(k-1)).
func PlanSequential(looks []int, alpha float64, s Spending) SequentialPlan {
	p := SequentialPlan{Looks: looks, Alpha: alpha, Spending: s}
	if len(looks) == 0 {
		return p
	}
	last := float64(looks[len(looks)-1])
	g := newSeqGrid()
	spent := 0.0
	for _, n := range looks {
		t := float64(n) / last
		want := s.Spent(alpha, t) - spent
		c := g.boundary(float64(n), want)
		p.Bounds = append(p.Bounds, c)
		p.Nominal = append(p.Nominal, 2*distuv.UnitNormal.Survival(c))
		spent += g.advance(float64(n), c)
	}
	return p
}

// SequentialError is the chance that a two-sided test at nominal level
// nominal[k] at look k (looks[k] runs) rejects at some look when nothing
// changed: the overall error of a design of independent-level looks.
func SequentialError(looks []int, nominal []float64) float64 {
	g := newSeqGrid()
	total := 0.0
	for k, n := range looks {
		total += g.advance(float64(n), distuv.UnitNormal.Quantile(1-nominal[k]/2))
	}
	return total
}

// seqGrid is the density of the score statistic S = Z*sqrt(n) on the
// region where no look has stopped yet, on a grid.
type seqGrid struct {
	n    float64   // information (runs) of the last look, 0 before the first
	x, f []float64 // grid points and density; nil before the first look
	w    []float64 // Simpson weights of x
}

const seqPoints = 601 // odd, for Simpson's rule

func newSeqGrid() *seqGrid { return &seqGrid{} }

// crossing is the chance of |S_n| >= c*sqrt(n) at a look at n runs,
// having not stopped before.
func (g *seqGrid) crossing(n, c float64) float64 {
	if g.x == nil {
		return 2 * distuv.UnitNormal.Survival(c)
	}
	sd := math.Sqrt(n - g.n)
	b := c * math.Sqrt(n)
	p := 0.0
	for i, u := range g.x {
		p += g.w[i] * g.f[i] * (distuv.UnitNormal.Survival((b-u)/sd) + distuv.UnitNormal.CDF((-b-u)/sd))
	}
	return p
}

// boundary finds the |z| boundary at a look at n runs that spends want.
func (g *seqGrid) boundary(n, want float64) float64 {
	if want <= 0 {
		return math.Inf(1)
	}
	lo, hi := 0.0, 10.0
	if g.crossing(n, lo) <= want {
		return lo
	}
	for range 60 {
		mid := (lo + hi) / 2
		if g.crossing(n, mid) > want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// advance moves the density to a look at n runs with boundary c and
// returns the chance of stopping there.
func (g *seqGrid) advance(n, c float64) float64 {
	p := g.crossing(n, c)
	if math.IsInf(c, 1) {
		c = 12 // no stop at this look: all the mass goes on
	}
	b := c * math.Sqrt(n)
	x := make([]float64, seqPoints)
	w := make([]float64, seqPoints)
	h := 2 * b / float64(seqPoints-1)
	for i := range x {
		x[i] = -b + float64(i)*h
		switch {
		case i == 0 || i == seqPoints-1:
			w[i] = h / 3
		case i%2 == 1:
			w[i] = 4 * h / 3
		default:
			w[i] = 2 * h / 3
		}
	}
	f := make([]float64, seqPoints)
	if g.x == nil {
		sd := math.Sqrt(n)
		for i, s := range x {
			f[i] = distuv.UnitNormal.Prob(s/sd) / sd
		}
	} else {
		sd := math.Sqrt(n - g.n)
		for i, s := range x {
			v := 0.0
			for j, u := range g.x {
				v += g.w[j] * g.f[j] * distuv.UnitNormal.Prob((s-u)/sd)
			}
			f[i] = v / sd
		}
	}
	g.n, g.x, g.f, g.w = n, x, f, w
	return p
}
