package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// This file checks the exact signed-rank test with ties and zeros against
// an independent brute force: midranks by counting, W+ over every one of
// the 2^n sign patterns of the nonzero differences.

// bruteMidranks returns the nonzero values of d and the midranks of their
// |d| among them, by counting: #{smaller} + (#{equal, itself included}+1)/2.
func bruteMidranks(d []float64) (nz, rank []float64) {
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	rank = make([]float64, len(nz))
	for i, x := range nz {
		less, eq := 0, 0
		for _, y := range nz {
			switch {
			case math.Abs(y) < math.Abs(x):
				less++
			case math.Abs(y) == math.Abs(x):
				eq++
			}
		}
		rank[i] = float64(less) + float64(eq+1)/2
	}
	return nz, rank
}

// bruteTiedW returns the number of sign patterns of values with the given
// midranks whose W+ is each possible 2W+ (index), over all 2^len(rank).
func bruteTiedW(rank []float64) []int {
	n := len(rank)
	counts := make([]int, n*(n+1)+1)
	for mask := 0; mask < 1<<n; mask++ {
		w := 0.0
		for i, r := range rank {
			if mask&(1<<i) != 0 {
				w += r
			}
		}
		counts[int(2*w)]++ // midranks are halves: 2w is an exact integer
	}
	return counts
}

// bruteTiedP is the two-sided exact p-value of the signed-rank test on d,
// zeros dropped, ties at midranks: 2*min(#{W+ <= w}, #{W+ >= w})/2^n.
func bruteTiedP(d []float64) float64 {
	nz, rank := bruteMidranks(d)
	if len(nz) == 0 {
		return 1
	}
	w := 0.0
	for i, x := range nz {
		if x > 0 {
			w += rank[i]
		}
	}
	counts := bruteTiedW(rank)
	le, ge := 0, 0
	for s, c := range counts {
		if float64(s) <= 2*w {
			le += c
		}
		if float64(s) >= 2*w {
			ge += c
		}
	}
	return math.Min(1, 2*float64(min(le, ge))/float64(int(1)<<len(nz)))
}

func TestTiedWCDFBruteForce(t *testing.T) {
	patterns := [][]int{{1}, {2}, {5}, {1, 1, 1}, {2, 1}, {1, 2}, {2, 1, 3},
		{3, 3, 3, 3}, {1, 4, 2, 1, 1, 3}, {13}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2}}
	r := rand.New(rand.NewPCG(20, 21))
	for range 30 {
		var T []int
		for n := 0; ; {
			tt := 1 + r.IntN(4)
			if n+tt > 14 {
				break
			}
			T = append(T, tt)
			n += tt
		}
		patterns = append(patterns, T)
	}
	for _, T := range patterns {
		var rank []float64 // midranks from |d| = group index + 1
		var d []float64
		for g, tt := range T {
			for range tt {
				d = append(d, float64(g+1))
			}
		}
		_, rank = bruteMidranks(d)
		counts := bruteTiedW(rank)
		cdf := tiedWCDF(T)
		if len(cdf) != len(counts) {
			t.Fatalf("T=%v: len(cdf) = %d, want %d", T, len(cdf), len(counts))
		}
		acc := 0
		for s, c := range counts {
			acc += c
			if want := float64(acc) / float64(int(1)<<len(d)); cdf[s] != want {
				t.Fatalf("T=%v: P(2W+ <= %d) = %v, brute force %v", T, s, cdf[s], want)
			}
		}
		// Cached: the same slice comes back.
		if again := tiedWCDF(T); &again[0] != &cdf[0] {
			t.Errorf("T=%v: not cached", T)
		}
	}
}

// With no ties the doubled distribution is wCDF on the even indices, at
// every size the exact test handles; and it is symmetric about n(n+1)/2.
func TestTiedWCDFUntiedAndSymmetric(t *testing.T) {
	for n := 1; n <= exactLimit; n++ {
		T := make([]int, n)
		for i := range T {
			T[i] = 1
		}
		cdf2, cdf := tiedWCDF(T), wCDF(n)
		top := n * (n + 1)
		for w := range cdf {
			if !near(cdf2[2*w], cdf[w], 1e-15) || (2*w+1 <= top && cdf2[2*w+1] != cdf2[2*w]) {
				t.Fatalf("n=%d: doubled cdf at %d = %v, %v; wCDF %v", n, 2*w, cdf2[2*w], cdf2[min(2*w+1, top)], cdf[w])
			}
		}
	}
	T := []int{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 6} // n = 50
	cdf := tiedWCDF(T)
	top := 50 * 51
	if cdf[top] != 1 || cdf[0] != math.Ldexp(1, -50) {
		t.Fatalf("n=50 ends: %v, %v", cdf[0], cdf[top])
	}
	for s := 0; s < top; s++ {
		// P(S <= s) = P(S >= top-s) = 1 - P(S <= top-s-1)
		if !near(cdf[s], 1-cdf[top-s-1], 1e-15) {
			t.Fatalf("n=50 tied: not symmetric at %d: %v vs %v", s, cdf[s], 1-cdf[top-s-1])
		}
	}
}

// Random data on coarse grids (many ties and zeros), raw and log scale:
// ComparePaired's P equals the brute force, and never beats 2^(1-nonzero).
func TestComparePairedTiedExact(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 23))
	for iter := range 400 {
		n := 1 + iter%14
		a, b := make([]float64, n), make([]float64, n)
		d := make([]float64, n)
		logScale := iter%2 == 1
		shift := r.IntN(3) - 1
		for i := range a {
			k := shift + r.IntN(5) - 2 // -3..3
			if logScale {
				a[i], b[i] = 100, 100+10*float64(k)
				d[i] = math.Log(b[i] / a[i])
			} else {
				a[i], b[i] = 0, float64(k) // a <= 0: raw differences
				d[i] = b[i]
			}
		}
		c := ComparePaired(a, b, 0.05)
		want := bruteTiedP(d)
		if !near(c.P, want, 1e-12) {
			t.Fatalf("d=%v: P = %v, brute force %v", d, c.P, want)
		}
		nz, _ := bruteMidranks(d)
		if len(nz) > 0 && c.P < math.Ldexp(1, 1-len(nz))-1e-15 {
			t.Fatalf("d=%v: P = %v below the floor 2^(1-%d)", d, c.P, len(nz))
		}
	}
}

// Hand-computed cases.
func TestComparePairedTiedKnown(t *testing.T) {
	for _, tc := range []struct {
		what string
		d    []float64
		p    float64
	}{
		// |d| all equal, all positive: only 1 of the 32 patterns reaches
		// W+ = 15, and 1 reaches 0.
		{"5 tied, all positive", []float64{2, 2, 2, 2, 2}, 2.0 / 32},
		// doubled midranks 2, 6, 6, 6; 2W+ = 18; 2W+ = 2a + 6k, a in
		// {0, 1}, k of 3: >= 18 only for k = 3 (2 of 16 patterns).
		{"2, 2, 2, -1", []float64{2, 2, 2, -1}, 2 * 2.0 / 16},
		// midranks 1.5, 1.5, 3, 5, 5, 5 all positive: the maximum, 1 of 64.
		{"1, 1, 2, 3, 3, 3", []float64{1, 1, 2, 3, 3, 3}, 2.0 / 64},
		// The zero is dropped; 1, 2, 3 untied and all positive: 2/8 (the
		// normal approximation used to say 0.18).
		{"0, 1, 2, 3", []float64{0, 1, 2, 3}, 2.0 / 8},
		// 2W+ of 1, -1: patterns give 0, 3, 3, 6; observed 3: p = 1.
		{"1, -1", []float64{1, -1}, 1},
		// Two zeros dropped, 2, 2, -2: doubled midranks 4, 4, 4, observed
		// 2W+ = 8; P(<= 8) = 7/8, P(>= 8) = 4/8: p = 1.
		{"0, 0, 2, 2, -2", []float64{0, 0, 2, 2, -2}, 1},
	} {
		a := make([]float64, len(tc.d)) // zeros: raw differences
		c := ComparePaired(a, tc.d, 0.05)
		if !near(c.P, tc.p, 1e-15) {
			t.Errorf("%s: P = %v, want %v", tc.what, c.P, tc.p)
		}
		if bp := bruteTiedP(tc.d); !near(bp, tc.p, 1e-15) {
			t.Errorf("%s: brute force %v, want %v", tc.what, bp, tc.p)
		}
	}
}

// TestTiedPairsStayAtTheExactFloor: with n nonzero pairs no sign-flip
// (permutation) test can give a two-sided p below 2^(1-n), the
// probability of all n signs agreeing. 5 pairs all slower by the same
// amount (|differences| tied, as timings printed with 2 decimals are) get
// exactly that floor, p=0.0625, like the same data with distinct |d|, and
// are not significant at 0.05. (A review found that signedRankP switched
// to the normal approximation on ties and reported p=0.037.)
func TestTiedPairsStayAtTheExactFloor(t *testing.T) {
	a := []float64{1, 1, 1, 1, 1}
	tied := []float64{1.1, 1.1, 1.1, 1.1, 1.1}
	distinct := []float64{1.1, 1.11, 1.12, 1.13, 1.14}
	floor := math.Ldexp(1, 1-len(a))
	pd := ComparePaired(a, distinct, 0.05).P
	ct := ComparePaired(a, tied, 0.05)
	if ct.P < floor-1e-12 {
		t.Errorf("5 tied pairs, all slower: p=%.4f (significant at 0.05: %v), below the exact floor %.4f; distinct pairs give p=%.4f", ct.P, ct.P < 0.05, floor, pd)
	}
	if ct.P != floor || pd != floor || ct.Significant {
		t.Errorf("p tied %v, distinct %v (significant %v), want both exactly %v, not significant", ct.P, pd, ct.Significant, floor)
	}
}

// enumerate calls f with every vector of n values drawn from vals, and its
// probability when vals have probabilities probs.
func enumerate(n int, vals, probs []float64, f func(d []float64, p float64)) {
	d := make([]float64, n)
	var rec func(i int, p float64)
	rec = func(i int, p float64) {
		if i == n {
			f(d, p)
			return
		}
		for j, v := range vals {
			d[i] = v
			rec(i+1, p*probs[j])
		}
	}
	rec(0, 1)
}

// Exact size of the test and coverage of the interval on discrete data
// (every tie and zero pattern, weighted by its probability): differences
// i.i.d. from a distribution symmetric about 0 on a small grid. The test
// must reject a true null at most alpha of the time, and the closed
// interval [A(k), A(M+1-k)], k from the untied distribution, must contain
// the true center 0 at least its reported confidence of the time (Noether,
// JASA 62, 1967).
func TestPairedTiesSizeAndCoverage(t *testing.T) {
	grids := []struct {
		vals, probs []float64
		ns          []int
	}{
		{[]float64{-1, 0, 1}, []float64{0.25, 0.5, 0.25}, []int{6, 8, 10}},
		{[]float64{-2, -1, 0, 1, 2}, []float64{0.2, 0.2, 0.2, 0.2, 0.2}, []int{6, 7}},
		{[]float64{-3, -1, 1, 3}, []float64{0.25, 0.25, 0.25, 0.25}, []int{8}},
		// All |d| tied: the normal approximation rejected 6.25 % at n=5
		// (every all-same-sign outcome got p=0.037).
		{[]float64{-1, 1}, []float64{0.5, 0.5}, []int{5, 9, 12}},
	}
	for _, g := range grids {
		for _, n := range g.ns {
			for _, alpha := range []float64{0.05, 0.1} {
				var size, cover, conf float64
				enumerate(n, g.vals, g.probs, func(d []float64, p float64) {
					pv, _ := signedRankP(append([]float64(nil), d...))
					if pv <= alpha {
						size += p
					}
					_, lo, hi, actual := walshCI(append([]float64(nil), d...), 1-alpha)
					conf = actual
					if lo <= 0 && 0 <= hi {
						cover += p
					}
				})
				t.Logf("grid %v n=%d alpha=%v: size %.4f, coverage %.4f (reported %.4f)", g.vals, n, alpha, size, cover, conf)
				if size > alpha+1e-12 {
					t.Errorf("grid %v n=%d: P(p <= %v) = %.4f under the null", g.vals, n, alpha, size)
				}
				if cover < conf-1e-12 {
					t.Errorf("grid %v n=%d: interval covers 0 with probability %.4f < reported %.4f", g.vals, n, cover, conf)
				}
			}
		}
	}
}

// Above exactLimit nonzero pairs: the normal approximation with the
// tie-corrected variance, zeros dropped. 30 |d| = 1 (midrank 15.5), 30
// |d| = 2 (midrank 45.5), plus 5 zeros; 20 and 25 of them positive:
// W+ = 20*15.5 + 25*45.5 = 1447.5, mean 60*61/4 = 915, variance
// 60*61*121/24 - 2*(30^3-30)/48.
func TestComparePairedTiedNormal(t *testing.T) {
	var d []float64
	for i := range 30 {
		one, two := 1.0, 2.0
		if i >= 20 {
			one = -1
		}
		if i >= 25 {
			two = -2
		}
		d = append(d, one, two)
	}
	d = append(d, 0, 0, 0, 0, 0)
	c := ComparePaired(make([]float64, len(d)), d, 0.05)
	v := 60*61*121/24.0 - 2*(30*30*30-30)/48.0
	want := math.Erfc((1447.5 - 915 - 0.5) / math.Sqrt(v) / math.Sqrt2)
	if !near(c.P, want, 1e-12) || c.N != 65 {
		t.Errorf("P = %v (N %d), want %v (N 65)", c.P, c.N, want)
	}
}
