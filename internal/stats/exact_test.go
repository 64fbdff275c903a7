package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/perf/benchmath"
)

// This file checks p-values, Hodges-Lehmann estimates and interval orders
// against brute-force enumeration written independently of the package:
// every sign pattern (signed-rank) or every split of the pooled sample
// (Mann-Whitney), and the interval bounds by inverting the test.

// bruteSignedRank returns W+ of d (no ties, no zeros) and the number of
// sign patterns with W+ <= w and >= w, over all 2^n.
func bruteSignedRank(d []float64, w float64) (le, ge, total int) {
	n := len(d)
	abs := make([]float64, n)
	for i, x := range d {
		abs[i] = math.Abs(x)
	}
	rank := make([]float64, n) // rank of |d[i]|, 1-based
	for i := range abs {
		r := 1
		for j := range abs {
			if abs[j] < abs[i] {
				r++
			}
		}
		rank[i] = float64(r)
	}
	for mask := 0; mask < 1<<n; mask++ {
		s := 0.0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += rank[i]
			}
		}
		if s <= w {
			le++
		}
		if s >= w {
			ge++
		}
	}
	return le, ge, 1 << n
}

// wplus is the sum of ranks of |d| for the positive d (no ties, no zeros).
func wplus(d []float64) float64 {
	s := 0.0
	for i, x := range d {
		if x <= 0 {
			continue
		}
		r := 1
		for j := range d {
			if math.Abs(d[j]) < math.Abs(d[i]) {
				r++
			}
		}
		s += float64(r)
	}
	return s
}

func bruteSignedRankP(d []float64) float64 {
	le, ge, total := bruteSignedRank(d, wplus(d))
	return math.Min(1, 2*float64(min(le, ge))/float64(total))
}

// uStat is #{(i, j): x[i] > y[j]}.
func uStat(x, y []float64) int {
	u := 0
	for _, a := range x {
		for _, b := range y {
			if a > b {
				u++
			}
		}
	}
	return u
}

// bruteU counts the splits of x∪y into groups of len(x) and len(y) with U
// <= u and >= u.
func bruteU(x, y []float64, u int) (le, ge, total int) {
	all := append(slices.Clone(x), y...)
	m, N := len(x), len(all)
	var gx, gy []float64
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == N {
			if left == 0 {
				v := uStat(gx, gy)
				if v <= u {
					le++
				}
				if v >= u {
					ge++
				}
				total++
			}
			return
		}
		if left > 0 {
			gx = append(gx, all[i])
			rec(i+1, left-1)
			gx = gx[:len(gx)-1]
		}
		if N-i > left {
			gy = append(gy, all[i])
			rec(i+1, left)
			gy = gy[:len(gy)-1]
		}
	}
	rec(0, m)
	return
}

func bruteMWP(x, y []float64) float64 {
	le, ge, total := bruteU(x, y, uStat(x, y))
	return math.Min(1, 2*float64(min(le, ge))/float64(total))
}

func medianOf(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// Hollander & Wolfe (1973), p. 29: Hamilton depression scale, first (x) and
// second (y) visit; R's wilcox.test(x, y, paired = TRUE, alternative =
// "greater") gives V = 40, p-value = 0.01953, so two-sided 0.0390625
// (= 20/512).
var hwX = []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
var hwY = []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}

func TestComparePairedTextbook(t *testing.T) {
	// Shift both sides by -2: differences are unchanged, values <= 0 force
	// raw differences, the textbook's scale.
	a, b := make([]float64, 9), make([]float64, 9)
	for i := range hwX {
		a[i], b[i] = hwX[i]-2, hwY[i]-2
	}
	c := ComparePaired(a, b, 0.05)
	if c.Test != "wilcoxon" || c.N != 9 || !near(c.P, 20.0/512, 1e-12) || !c.Significant {
		t.Errorf("ComparePaired(H&W) = %+v, want wilcoxon n=9 p=0.0390625 significant", c)
	}
	// Hodges-Lehmann: median of the 45 Walsh averages of y-x, brute force,
	// in percent of |median(x-2)|.
	var walsh []float64
	for i := range a {
		for j := i; j < len(a); j++ {
			walsh = append(walsh, ((b[i]-a[i])+(b[j]-a[j]))/2)
		}
	}
	want := 100 * medianOf(walsh) / math.Abs(medianOf(a))
	if !near(c.Change, want, 1e-12) {
		t.Errorf("Change = %v, want %v", c.Change, want)
	}
	if !hasWarning(c.Warnings, "raw values") {
		t.Errorf("warnings %v, want raw-values note", c.Warnings)
	}
}

func TestComparePairedExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 200 {
		n := 3 + iter%12 // 3..14 pairs
		a, b := make([]float64, n), make([]float64, n)
		shift := r.NormFloat64() * 0.05
		for i := range a {
			a[i] = 100 * math.Exp(0.03*r.NormFloat64())
			b[i] = a[i] * math.Exp(shift+0.03*r.NormFloat64())
		}
		c := ComparePaired(a, b, 0.05)
		d := make([]float64, n)
		for i := range d {
			d[i] = math.Log(b[i] / a[i])
		}
		if p := bruteSignedRankP(d); !near(c.P, p, 1e-12) {
			t.Fatalf("n=%d: P = %v, brute force %v (d=%v)", n, c.P, p, d)
		}
		var walsh []float64
		for i := range d {
			for j := i; j < n; j++ {
				walsh = append(walsh, (d[i]+d[j])/2)
			}
		}
		if want := 100 * math.Expm1(medianOf(walsh)); !near(c.Change, want, 1e-12) {
			t.Fatalf("n=%d: Change = %v, want %v", n, c.Change, want)
		}
		if n < 6 {
			// 2^(1-n) > 0.05: no 95 % interval exists; the whole range is given.
			if c.Confidence >= 0.95 || !hasWarning(c.Warnings, "need >= 6 pairs") {
				t.Fatalf("n=%d: confidence %v, warnings %v", n, c.Confidence, c.Warnings)
			}
			continue
		}
		// Invert the test by brute force: just outside [Lo, Hi] the
		// one-sided exact test rejects at alpha/2, just inside it does not.
		lo, hi := math.Log1p(c.Lo/100), math.Log1p(c.Hi/100)
		const eps = 1e-9
		check := func(delta float64, upper bool, reject bool) {
			dd := make([]float64, n)
			for i := range d {
				dd[i] = d[i] - delta
			}
			le, ge, total := bruteSignedRank(dd, wplus(dd))
			tail := float64(ge) / float64(total)
			if upper {
				tail = float64(le) / float64(total)
			}
			if (tail <= 0.025) != reject {
				t.Fatalf("n=%d: at delta %v (interval [%v, %v]) one-sided tail %v, want reject=%v", n, delta, lo, hi, tail, reject)
			}
		}
		check(lo-eps, false, true)
		check(lo+eps, false, false)
		check(hi+eps, true, true)
		check(hi-eps, true, false)
	}
}

func TestComparePairedTiesAndZeros(t *testing.T) {
	// d = 0, 1, 2, 3 (raw): the zero is dropped, ranks 1, 2, 3 are all
	// positive, W+ = 6: exact over the 2^3 sign patterns of the nonzero
	// differences, 2/8 (the normal approximation said 0.18, below that floor).
	a := []float64{0, 0, 0, 0}
	b := []float64{0, 1, 2, 3}
	c := ComparePaired(a, b, 0.05)
	if !near(c.P, 0.25, 1e-15) {
		t.Errorf("P = %v, want 0.25", c.P)
	}
	// Ties: |d| = 1, 1, 2, 3, 3, 3 all positive; average ranks 1.5, 1.5,
	// 3, 5, 5, 5: W+ = 21, the maximum, reached by 1 of the 64 patterns.
	// Log scale: log(1.1), log(1.2), log(1.3) keep the tie pattern.
	a = []float64{10, 10, 10, 10, 10, 10}
	b = []float64{11, 11, 12, 13, 13, 13}
	c = ComparePaired(a, b, 0.05)
	if !near(c.P, 2.0/64, 1e-15) {
		t.Errorf("tied P = %v, want %v", c.P, 2.0/64)
	}
	// All zero differences.
	c = ComparePaired([]float64{1, 2, 3}, []float64{1, 2, 3}, 0.05)
	if c.P != 1 || c.Change != 0 || !hasWarning(c.Warnings, "all 3 differences are zero") {
		t.Errorf("equal pairs: %+v", c)
	}
	// Unequal lengths use the common prefix.
	c = ComparePaired([]float64{1, 2, 3, 4, 5, 6, 7}, []float64{2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.05)
	if c.N != 7 || !hasWarning(c.Warnings, "using the first 7 pairs") {
		t.Errorf("unequal lengths: %+v", c)
	}
	// Non-finite pairs are dropped.
	c = ComparePaired([]float64{1, math.NaN(), 3}, []float64{2, 3, math.Inf(1)}, 0.05)
	if c.N != 1 || !hasWarning(c.Warnings, "dropped 2 pair(s)") {
		t.Errorf("non-finite pairs: %+v", c)
	}
	if c := ComparePaired(nil, nil, 0.05); c.Test != "" || c.P != 1 || c.Significant {
		t.Errorf("no pairs: %+v", c)
	}
}

// R's wilcox.test example: x <- c(0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91,
// 1.64, 0.73, 1.46); y <- c(1.15, 0.88, 0.90, 0.74, 1.21); W = 35,
// one-sided p-value = 0.1272, so two-sided 0.2544.
var rX = []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
var rY = []float64{1.15, 0.88, 0.90, 0.74, 1.21}

func TestCompareUnpairedTextbook(t *testing.T) {
	c := CompareUnpaired(rX, rY, 0.05)
	if c.Test != "mann-whitney" || c.N != 5 || math.Abs(c.P-0.2544) > 5e-5 || c.Significant {
		t.Errorf("CompareUnpaired(R example) = %+v, want p 0.2544", c)
	}
	if p := bruteMWP(rX, rY); !near(c.P, p, 1e-12) {
		t.Errorf("P = %v, brute force %v", c.P, p)
	}
}

func TestCompareUnpairedExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 60 {
		m, n := 2+iter%6, 3+(iter/6)%5 // up to 7+7: 3432 splits
		a, b := make([]float64, m), make([]float64, n)
		shift := r.NormFloat64() * 0.05
		for i := range a {
			a[i] = 100 * math.Exp(0.03*r.NormFloat64())
		}
		for j := range b {
			b[j] = 100 * math.Exp(shift+0.03*r.NormFloat64())
		}
		c := CompareUnpaired(a, b, 0.05)
		if p := bruteMWP(a, b); !near(c.P, p, 1e-9) {
			t.Fatalf("%d+%d: P = %v, brute force %v", m, n, c.P, p)
		}
		la, lb := logs(a), logs(b)
		var diffs []float64
		for _, y := range lb {
			for _, x := range la {
				diffs = append(diffs, y-x)
			}
		}
		if want := 100 * math.Expm1(medianOf(diffs)); !near(c.Change, want, 1e-12) {
			t.Fatalf("%d+%d: Change = %v, want %v", m, n, c.Change, want)
		}
		if c.Confidence < 0.95 {
			if !hasWarning(c.Warnings, "need >= 4 samples a side") {
				t.Fatalf("%d+%d: confidence %v without warning: %v", m, n, c.Confidence, c.Warnings)
			}
			continue
		}
		// Invert: shifting b by -delta, U' = #{x > y-delta}; outside the
		// interval the one-sided exact test rejects at alpha/2.
		lo, hi := math.Log1p(c.Lo/100), math.Log1p(c.Hi/100)
		const eps = 1e-9
		check := func(delta float64, lowTail, reject bool) {
			sb := make([]float64, n)
			for j := range lb {
				sb[j] = lb[j] - delta
			}
			u := uStat(la, sb)
			le, ge, total := bruteU(la, sb, u)
			tail := float64(le) / float64(total)
			if !lowTail {
				tail = float64(ge) / float64(total)
			}
			if (tail <= 0.025) != reject {
				t.Fatalf("%d+%d: delta %v (interval [%v, %v]) tail %v, want reject=%v", m, n, delta, lo, hi, tail, reject)
			}
		}
		// U' = #{D < delta}: just below D(k) it is k-1, in the lower
		// alpha/2 tail; just above the upper bound, in the upper tail.
		check(lo-eps, true, true)
		check(lo+eps, true, false)
		check(hi+eps, false, true)
		check(hi-eps, false, false)
	}
}

func TestCompareUnpairedWarnings(t *testing.T) {
	c := CompareUnpaired([]float64{1, 2, 3}, []float64{4, 5, 6}, 0.05)
	if !hasWarning(c.Warnings, "need >= 4 samples to detect a difference") {
		t.Errorf("3+3 warnings = %v, want benchmath's too-few-samples", c.Warnings)
	}
	c = CompareUnpaired(nil, []float64{1}, 0.05)
	if c.Test != "" || c.P != 1 || c.Significant || !hasWarning(c.Warnings, "both sides") {
		t.Errorf("empty base: %+v", c)
	}
	// Values <= 0: raw differences in percent of |median(a)| = 2.
	c = CompareUnpaired([]float64{1, 2, 3, -1, 4}, []float64{3, 4, 5, 6, 7}, 0.05)
	var diffs []float64
	for _, y := range []float64{3, 4, 5, 6, 7} {
		for _, x := range []float64{1, 2, 3, -1, 4} {
			diffs = append(diffs, y-x)
		}
	}
	if want := 100 * medianOf(diffs) / 2; !near(c.Change, want, 1e-12) || !hasWarning(c.Warnings, "raw values") {
		t.Errorf("raw Change = %v, want %v (%v)", c.Change, want, c.Warnings)
	}
	c = CompareUnpaired([]float64{1, 2, 3, 4}, []float64{2, 3, 4, 5}, 7)
	if c.Alpha != 0.05 || !hasWarning(c.Warnings, "alpha 7") {
		t.Errorf("bad alpha: %+v", c)
	}
}

// TestExactDistributions checks the cached null distributions against
// enumeration and known values.
func TestExactDistributions(t *testing.T) {
	// W+ for n = 9: P(W+ <= 5) = 10/512 (H&W example above).
	if got := wCDF(9)[5]; !near(got, 10.0/512, 1e-15) {
		t.Errorf("wCDF(9)[5] = %v, want %v", got, 10.0/512)
	}
	// U for 3+4: P(U <= u) = count/35; counts of U = 0..12 are the
	// coefficients of the Gaussian binomial [7 choose 3]:
	// 1 1 2 3 4 4 5 4 4 3 2 1 1.
	counts := []float64{1, 1, 2, 3, 4, 4, 5, 4, 4, 3, 2, 1, 1}
	cum := 0.0
	for u, k := range counts {
		cum += k
		if got := uCDF(3, 4)[u]; !near(got, cum/35, 1e-14) {
			t.Errorf("uCDF(3,4)[%d] = %v, want %v", u, got, cum/35)
		}
	}
	if a, b := uCDF(5, 9), uCDF(9, 5); &a[0] != &b[0] {
		t.Errorf("uCDF(5,9) and uCDF(9,5) are not the same cached table")
	}
	// Larger sizes stay normalized and symmetric.
	c := uCDF(50, 50)
	for _, u := range []int{0, 700, 1000, 1249} {
		// P(U <= u) = P(U >= 2500-u) = 1 - P(U <= 2499-u).
		if !near(c[u], 1-c[2499-u], 1e-9) {
			t.Errorf("uCDF(50,50) not symmetric at %d: %v vs %v", u, c[u], 1-c[2499-u])
		}
	}
	if !near(c[0], 1/binom(100, 50), 1e-9) {
		t.Errorf("uCDF(50,50)[0] = %v, want 1/C(100,50)", c[0])
	}
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

func TestFastUTestMatchesBenchmath(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 150 {
		m, n := 10+r.IntN(41), 10+r.IntN(41)
		if iter < 20 {
			m, n = 10+iter%5, 10+iter/5 // the smallest sizes
		}
		shift := r.NormFloat64() * 0.02
		a, b := samples(r, m, 0, 0.03), samples(r, n, shift, 0.03)
		slices.Sort(a)
		slices.Sort(b)
		p, ok := fastUTest(a, b, 0.05)
		if !ok {
			t.Fatalf("%d+%d: fast path refused untied samples", m, n)
		}
		th := &benchmath.Thresholds{CompareAlpha: 0.05}
		want := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), th), benchmath.NewSample(slices.Clone(b), th))
		if !near(p, want.P, 1e-9) || len(want.Warnings) != 0 {
			t.Fatalf("%d+%d: fast p %v, benchmath %v (%v)", m, n, p, want.P, want.Warnings)
		}
		if c := CompareUnpaired(a, b, 0.05); c.P != p {
			t.Fatalf("CompareUnpaired P %v, fast path %v", c.P, p)
		}
	}
	// Ties within or across samples, too few samples, too many: benchmath.
	a := seq(1, 1, 12)
	for _, tc := range []struct {
		name string
		a, b []float64
	}{
		{"tie across", a, seq(5, 1, 12)},
		{"tie within base", append(seq(1, 1, 11), 11), seq(0.5, 1, 12)},
		{"tie within new", seq(0.5, 1, 12), append(seq(1, 1, 11), 11)},
		{"tie at end of new", seq(0.5, 1, 12), append(seq(100, 1, 11), 110)},
		{"9 a side", seq(1, 1, 9), seq(1.5, 1, 9)},
		{"51 a side", seq(1, 1, 51), seq(1.5, 1, 51)},
	} {
		if _, ok := fastUTest(tc.a, tc.b, 0.05); ok {
			t.Errorf("%s: fast path taken", tc.name)
		}
	}
}

func TestHLOrderStats(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for iter := range 400 {
		M := 1 + r.IntN(300)
		d := make([]float64, M)
		for i := range d {
			switch iter % 4 {
			case 0:
				d[i] = r.NormFloat64()
			case 1:
				d[i] = float64(r.IntN(5)) // many ties
			case 2:
				d[i] = float64(M - i) // descending
			case 3:
				d[i] = float64(i % 17) // saw tooth
			}
		}
		sorted := slices.Sorted(slices.Values(d))
		k := 1 + r.IntN((M+1)/2)
		lo, med, hi := hlOrderStats(slices.Clone(d), k)
		if lo != sorted[k-1] || hi != sorted[M-k] || med != medianOf(d) {
			t.Fatalf("M=%d k=%d pattern %d: got %v %v %v, want %v %v %v", M, k, iter%4, lo, med, hi, sorted[k-1], medianOf(d), sorted[M-k])
		}
	}
}

// TestCachesConcurrent fills the distribution caches from several
// goroutines (run with -race) and checks every caller sees the same table.
func TestCachesConcurrent(t *testing.T) {
	const workers = 4
	got := make([][2][]float64, workers)
	done := make(chan int)
	for w := range workers {
		go func() {
			got[w] = [2][]float64{uCDF(37, 23), wCDF(41)}
			done <- w
		}()
	}
	for range workers {
		<-done
	}
	for w := 1; w < workers; w++ {
		if &got[w][0][0] != &got[0][0][0] && !slices.Equal(got[w][0], got[0][0]) ||
			&got[w][1][0] != &got[0][1][0] && !slices.Equal(got[w][1], got[0][1]) {
			t.Errorf("worker %d saw different tables", w)
		}
	}
	if uCDF(23, 37)[37*23] != 1 || wCDF(41)[41*42/2] != 1 {
		t.Errorf("tables do not end at 1")
	}
}

// TestFastUTestTiedMatchesBenchmath checks the cached tied distribution
// against benchmath (go-moremath's memoised recursion) on random samples
// with ties of every shape, sizes 10 to 25 a side.
func TestFastUTestTiedMatchesBenchmath(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	taken := 0
	for iter := range 300 {
		m, n := 10+r.IntN(16), 10+r.IntN(16)
		// Coarse values make ties: 1 to 3 decimals of resolution.
		q := []float64{1, 10, 100}[iter%3]
		draw := func(k int, shift float64) []float64 {
			xs := make([]float64, k)
			for i := range xs {
				xs[i] = math.Round((1+shift+0.03*r.NormFloat64())*q) / q
			}
			slices.Sort(xs)
			return xs
		}
		a, b := draw(m, 0), draw(n, r.NormFloat64()*0.02)
		p, ok := fastUTestTied(a, b, 0.05)
		if !ok {
			continue
		}
		taken++
		th := &benchmath.Thresholds{CompareAlpha: 0.05}
		want := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), th), benchmath.NewSample(slices.Clone(b), th))
		if !near(p, math.Min(want.P, 1), 1e-9) || len(want.Warnings) != 0 {
			t.Fatalf("q=%v %d+%d %v %v: tied p %v, benchmath %v (%v)", q, m, n, a, b, p, want.P, want.Warnings)
		}
		if c := CompareUnpaired(a, b, 0.05); c.P != p {
			t.Fatalf("CompareUnpaired P %v, tied path %v", c.P, p)
		}
	}
	if taken < 180 {
		t.Fatalf("tied path taken %d times of 300, want most", taken)
	}
	// Outside 10..25 a side, benchmath decides.
	if _, ok := fastUTestTied(seq(1, 1, 26), append(seq(1, 1, 25), 1), 0.05); ok {
		t.Errorf("26 a side: tied fast path taken")
	}
}
