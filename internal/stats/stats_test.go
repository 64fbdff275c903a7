package stats

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func hasWarning(ws []error, sub string) bool {
	for _, w := range ws {
		if strings.Contains(w.Error(), sub) {
			return true
		}
	}
	return false
}

func TestSummarize(t *testing.T) {
	// 10, 1, 9, ..., shuffled 1..10: mean 5.5, population variance
	// (n^2-1)/12 = 8.25, median 5.5, 95 % median interval by order
	// statistics: P(Bin(10, 1/2) <= 1) = 11/1024, so x(2)..x(9) covers
	// 1-22/1024 = 97.9 % while x(3)..x(8) covers only 89.1 %.
	xs := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	orig := slices.Clone(xs)
	s := Summarize(xs)
	want := Summary{N: 10, Mean: 5.5, Stddev: math.Sqrt(8.25), RelStddev: 100 * math.Sqrt(8.25) / 5.5,
		Median: 5.5, Min: 1, Max: 10, Lo: 2, Hi: 9}
	if s.N != want.N || !near(s.Mean, want.Mean, 1e-12) || !near(s.Stddev, want.Stddev, 1e-12) ||
		!near(s.RelStddev, want.RelStddev, 1e-12) || s.Median != want.Median ||
		s.Min != want.Min || s.Max != want.Max || s.Lo != want.Lo || s.Hi != want.Hi {
		t.Errorf("Summarize = %+v, want %+v", s, want)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings %v, want none", s.Warnings)
	}
	if !slices.Equal(xs, orig) {
		t.Errorf("Summarize modified its input: %v", xs)
	}

	// Odd n, negative mean; too few samples for a 95 % interval.
	s = Summarize([]float64{-3, -1, -2, math.NaN(), math.Inf(1)})
	if s.N != 3 || s.Mean != -2 || !near(s.Stddev, math.Sqrt(2.0/3), 1e-12) ||
		!near(s.RelStddev, 100*math.Sqrt(2.0/3)/2, 1e-12) || s.Median != -2 ||
		s.Min != -3 || s.Max != -1 || s.Lo != -2 || s.Hi != -2 {
		t.Errorf("Summarize(-3,-1,-2,NaN,Inf) = %+v", s)
	}
	if !hasWarning(s.Warnings, "dropped 2 non-finite") || !hasWarning(s.Warnings, "need >= 6 samples") {
		t.Errorf("warnings %v, want dropped values and too few samples", s.Warnings)
	}

	if s := Summarize(nil); s.N != 0 || len(s.Warnings) == 0 {
		t.Errorf("Summarize(nil) = %+v, want N 0 with a warning", s)
	}
	if s := Summarize([]float64{0, 0, 0}); s.RelStddev != 0 || s.Mean != 0 {
		t.Errorf("Summarize(0,0,0) = %+v, want RelStddev 0", s)
	}
}
