package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Simulations with known truth and a seeded generator: error rates must
// stay within alpha plus three binomial standard errors.

func tolerance(p float64, reps int) float64 { return 3 * math.Sqrt(p*(1-p)/float64(reps)) }

// samples returns n log-normal run times 100*exp(shift + cv*N(0,1)).
func samples(r *rand.Rand, n int, shift, cv float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 100 * math.Exp(shift+cv*r.NormFloat64())
	}
	return xs
}

// pairs returns n interleaved pairs sharing a per-round machine state
// (sd 2 %) plus run noise cv; b is a changed by a factor exp(shift).
func pairs(r *rand.Rand, n int, shift, cv float64) (a, b []float64) {
	a, b = make([]float64, n), make([]float64, n)
	for i := range a {
		round := 0.02 * r.NormFloat64()
		a[i] = 100 * math.Exp(round+cv*r.NormFloat64())
		b[i] = 100 * math.Exp(round+shift+cv*r.NormFloat64())
	}
	return a, b
}

func TestFalsePositivesAndCoverage(t *testing.T) {
	const reps, n, alpha = 2000, 10, 0.05
	r := rand.New(rand.NewPCG(10, 11))
	truth := math.Log(1.10) // for coverage: a true +10 % change
	var fpU, fpP, missU, missP int
	for range reps {
		if CompareUnpaired(samples(r, n, 0, 0.03), samples(r, n, 0, 0.03), alpha).Significant {
			fpU++
		}
		if ComparePaired(pairsNull(r, n)).Significant {
			fpP++
		}
		c := CompareUnpaired(samples(r, n, 0, 0.03), samples(r, n, truth, 0.03), alpha)
		if !(c.Lo <= 10 && 10 <= c.Hi) {
			missU++
		}
		a, b := pairs(r, n, truth, 0.03)
		c = ComparePaired(a, b, alpha)
		if !(c.Lo <= 10 && 10 <= c.Hi) {
			missP++
		}
	}
	limit := alpha + tolerance(alpha, reps)
	for _, x := range []struct {
		what  string
		count int
	}{{"unpaired false positives", fpU}, {"paired false positives", fpP},
		{"unpaired interval misses of +10%", missU}, {"paired interval misses of +10%", missP}} {
		rate := float64(x.count) / reps
		t.Logf("%s: %.4f (limit %.4f)", x.what, rate, limit)
		if rate > limit {
			t.Errorf("%s: rate %.4f > %.4f", x.what, rate, limit)
		}
	}
}

func pairsNull(r *rand.Rand, n int) ([]float64, []float64, float64) {
	a, b := pairs(r, n, 0, 0.03)
	return a, b, 0.05
}

func TestPower30Percent(t *testing.T) {
	const reps, n = 300, 10
	r := rand.New(rand.NewPCG(12, 13))
	shift := math.Log(1.30)
	var hitU, hitP int
	var sumU, sumP float64
	for range reps {
		c := CompareUnpaired(samples(r, n, 0, 0.03), samples(r, n, shift, 0.03), 0.05)
		if c.Significant && c.Lo > 0 {
			hitU++
		}
		sumU += c.Change
		a, b := pairs(r, n, shift, 0.03)
		c = ComparePaired(a, b, 0.05)
		if c.Significant && c.Lo > 0 {
			hitP++
		}
		sumP += c.Change
	}
	t.Logf("power at +30%%, 10 runs, CV 3%%: unpaired %.3f, paired %.3f; mean estimate %.2f%%, %.2f%%",
		float64(hitU)/reps, float64(hitP)/reps, sumU/reps, sumP/reps)
	if hitU < reps*99/100 || hitP < reps*99/100 {
		t.Errorf("power too low: unpaired %d/%d, paired %d/%d", hitU, reps, hitP, reps)
	}
	if math.Abs(sumU/reps-30) > 1 || math.Abs(sumP/reps-30) > 1 {
		t.Errorf("mean estimates %.2f%%, %.2f%%, want 30%% ± 1", sumU/reps, sumP/reps)
	}
}

// adaptive runs the Decide loop the way bisect does: look at the first N
// runs, add runs up to NextN, until decided or at MaxN.
func adaptive(a, b []float64, paired bool, opt DecideOptions) (Decision, int) {
	n := opt.StartN
	for {
		res := Decide(a[:n], b[:n], paired, opt)
		if res.Decision != Unknown || res.NextN == 0 {
			return res.Decision, n
		}
		n = res.NextN
	}
}

func TestDecideErrorRates(t *testing.T) {
	opt := DecideOptions{Alpha: 0.01, MinEffect: 0.05, StartN: 10, MaxN: 40}
	if s := opt.Schedule(); len(s) != 3 || s[0] != 10 || s[1] != 20 || s[2] != 40 {
		t.Fatalf("schedule %v, want [10 20 40]", s)
	}
	family := 3 * opt.Alpha
	r := rand.New(rand.NewPCG(14, 15))
	for _, tc := range []struct {
		name   string
		paired bool
		reps   int
	}{{"paired", true, 1000}, {"unpaired", false, 300}} {
		gen := func(shift, cv float64) ([]float64, []float64) {
			if tc.paired {
				return pairs(r, 40, shift, cv)
			}
			return samples(r, 40, 0, cv), samples(r, 40, shift, cv)
		}
		var wrongDiff, wrongSame, sameNull, diffBig int
		for range tc.reps {
			// Identical builds: Different is the error.
			a, b := gen(0, 0.03)
			if d, _ := adaptive(a, b, tc.paired, opt); d == Different {
				wrongDiff++
			}
			// A true change of exactly MinEffect: Same is the error.
			a, b = gen(math.Log(1.05), 0.03)
			if d, _ := adaptive(a, b, tc.paired, opt); d == Same {
				wrongSame++
			}
			// Identical quiet builds should be shown the same.
			a, b = gen(0, 0.01)
			if d, _ := adaptive(a, b, tc.paired, opt); d == Same {
				sameNull++
			}
			// +30 % is different at the first look.
			a, b = gen(math.Log(1.30), 0.03)
			if d, n := adaptive(a, b, tc.paired, opt); d == Different && n == 10 {
				diffBig++
			}
		}
		reps := float64(tc.reps)
		limit := family + tolerance(family, tc.reps)
		t.Logf("%s: wrong different %.4f, wrong same %.4f (limit %.4f); same when equal %.3f; different at first look %.3f",
			tc.name, float64(wrongDiff)/reps, float64(wrongSame)/reps, limit, float64(sameNull)/reps, float64(diffBig)/reps)
		if float64(wrongDiff)/reps > limit || float64(wrongSame)/reps > limit {
			t.Errorf("%s: error rates %.4f (different) and %.4f (same) exceed %.4f", tc.name, float64(wrongDiff)/reps, float64(wrongSame)/reps, limit)
		}
		if float64(sameNull)/reps < 0.9 || float64(diffBig)/reps < 0.99 {
			t.Errorf("%s: too weak: same %.3f, different %.3f", tc.name, float64(sameNull)/reps, float64(diffBig)/reps)
		}
	}
}

// layoutRuns simulates runs of one commit under L layouts: each layout
// shifts run times by a uniform offset in ±spread (its alignment luck),
// runs vary by cv.
func layoutRuns(r *rand.Rand, L, runs int, shift, spread, cv float64) [][]float64 {
	out := make([][]float64, L)
	for k := range out {
		off := math.Log1p(spread * (2*r.Float64() - 1))
		out[k] = samples(r, runs, shift+off, cv)
	}
	return out
}

func TestCompareLayoutsSimulation(t *testing.T) {
	const reps, L, runs, alpha = 2000, 10, 5, 0.05
	r := rand.New(rand.NewPCG(16, 17))
	var fp, fn, sens, sensNull, naive int
	for range reps {
		// No code effect; each commit's layouts land at random ±10 %.
		base := layoutRuns(r, L, runs, 0, 0.10, 0.01)
		changed := layoutRuns(r, L, runs, 0, 0.10, 0.01)
		lc := CompareLayouts(base, changed, alpha)
		if lc.Significant {
			fp++
		}
		if lc.LayoutSensitive {
			sens++
		}
		// One layout only, as a plain A/B run does: the layout luck shows
		// as a code effect.
		if CompareUnpaired(base[0], changed[0], alpha).Significant {
			naive++
		}
		// A real +20 % code effect on top of the same layout noise.
		changed = layoutRuns(r, L, runs, math.Log(1.20), 0.10, 0.01)
		if lc := CompareLayouts(base, changed, alpha); !(lc.Significant && lc.Lo > 0) {
			fn++
		}
		// No layout effect at all: the ANOVA must not call it sensitive.
		base = layoutRuns(r, L, runs, 0, 0, 0.01)
		changed = layoutRuns(r, L, runs, 0, 0, 0.01)
		if CompareLayouts(base, changed, alpha).LayoutSensitive {
			sensNull++
		}
	}
	limit := alpha + tolerance(alpha, reps)
	t.Logf("layouts: false positives %.4f, false negatives at +20%% %.4f, layout-sensitive %.3f, sensitive without layout effect %.4f, single-layout A/B false positives %.3f",
		float64(fp)/reps, float64(fn)/reps, float64(sens)/reps, float64(sensNull)/reps, float64(naive)/reps)
	if float64(fp)/reps > limit || float64(fn)/reps > 0.05 || float64(sensNull)/reps > limit {
		t.Errorf("error rates: false positives %.4f, false negatives %.4f, sensitivity false positives %.4f (limits %.4f, 0.05)",
			float64(fp)/reps, float64(fn)/reps, float64(sensNull)/reps, limit)
	}
	if float64(sens)/reps < 0.95 {
		t.Errorf("layout effect of ±10%% against 1%% noise found in only %.3f", float64(sens)/reps)
	}
	// The simulation has teeth: a comparison under one layout is fooled.
	if float64(naive)/reps < 0.5 {
		t.Errorf("single-layout A/B false positives only %.3f: layout effect too weak to test anything", float64(naive)/reps)
	}
}

// TestLargeSamples covers the normal approximations (more than 50 runs a
// side or pairs): false positives and interval coverage.
func TestLargeSamples(t *testing.T) {
	const reps, n, alpha = 400, 60, 0.05
	r := rand.New(rand.NewPCG(18, 19))
	var fpU, fpP, missU, missP int
	for range reps {
		if CompareUnpaired(samples(r, n, 0, 0.03), samples(r, n, 0, 0.03), alpha).Significant {
			fpU++
		}
		a, b := pairs(r, n, 0, 0.03)
		if ComparePaired(a, b, alpha).Significant {
			fpP++
		}
		if c := CompareUnpaired(samples(r, n, 0, 0.03), samples(r, n, math.Log(1.1), 0.03), alpha); !(c.Lo <= 10 && 10 <= c.Hi) || c.Confidence < 0.95 {
			missU++
		}
		a, b = pairs(r, n, math.Log(1.1), 0.03)
		if c := ComparePaired(a, b, alpha); !(c.Lo <= 10 && 10 <= c.Hi) || c.Confidence < 0.95 {
			missP++
		}
	}
	limit := alpha + tolerance(alpha, reps)
	t.Logf("n=%d: false positives %.4f / %.4f, interval misses %.4f / %.4f (limit %.4f)",
		n, float64(fpU)/reps, float64(fpP)/reps, float64(missU)/reps, float64(missP)/reps, limit)
	for _, c := range []int{fpU, fpP, missU, missP} {
		if float64(c)/reps > limit {
			t.Errorf("rate %.4f > %.4f", float64(c)/reps, limit)
		}
	}
}
