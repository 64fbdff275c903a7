package stats

import "testing"

// seq returns n values start, start+step, ...
func seq(start, step float64, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = start + step*float64(i)
	}
	return xs
}

func TestLKPChanged(t *testing.T) {
	// 31 values 100.0..103.0 plus an outlier: with 32 values lkp trims one
	// from each end (floor(32/32)), and the outlier goes.
	withOutlier := append(seq(100, 0.1, 31), 500)
	// New side of 64: two low outliers, then 200, 200.1, ...; floor(64/32)
	// is 2, but lkp trims the new side by at most 1 when the base has <= 3.
	lowOutliers := append([]float64{90, 95}, seq(200, 0.1, 62)...)
	tests := []struct {
		name    string
		a, b    []float64
		kpi     bool
		changed bool
	}{
		{"separated up 9.7%", seq(100, 1, 6), seq(110, 1, 6), false, true},
		{"separated up 9.7% kpi", seq(100, 1, 6), seq(110, 1, 6), true, true},
		{"separated down", seq(110, 1, 6), seq(100, 1, 6), false, true},
		{"ratio 1.03 kpi", seq(100, 0.1, 6), seq(103, 0.1, 6), true, true},
		{"ratio 1.03 monitor", seq(100, 0.1, 6), seq(103, 0.1, 6), false, false},
		{"ratio 1.006 kpi", seq(100, 0.1, 6), seq(100.6, 0.1, 6), true, false},
		// min_b 103 is not > median_a 103.
		{"min_b at median_a", seq(100, 1, 6), []float64{103, 110, 111, 112, 113, 114}, false, false},
		// min_b > median_a but median_b 107 is not > max_a 120.
		{"max_a above median_b", []float64{100, 101, 102, 103, 104, 120}, seq(104, 1, 6), false, false},
		// lkp's median of an even sample is the upper one: a[2] = 110, so
		// min_b 106 does not clear it (the usual median 105 would).
		{"upper median", []float64{100, 100, 110, 110}, []float64{106, 107, 111, 112}, true, false},
		{"upper median mirror", []float64{106, 107, 111, 112}, []float64{100, 100, 110, 110}, true, false},
		// The ratio is of lkp's medians (102/100), not of the means (1.097).
		{"median ratio 1.02 monitor", []float64{100, 100, 100, 100, 100, 100}, []float64{101, 101, 102, 102, 102, 150}, false, false},
		{"median ratio 1.02 kpi", []float64{100, 100, 100, 100, 100, 100}, []float64{101, 101, 102, 102, 102, 150}, true, true},
		{"outlier trimmed at n=32", withOutlier, seq(110, 0.1, 32), false, true},
		{"outlier kept at n=31", withOutlier[1:], seq(110, 0.1, 31), false, false},
		{"new side trim capped at 1 (base 3)", []float64{100, 101, 102}, lowOutliers, false, false},
		{"new side trimmed by 2 (base 4)", []float64{100, 101, 102, 103}, lowOutliers, false, true},
		{"both sides below 3", []float64{1, 2}, []float64{10, 11}, true, false},
		{"one side of 3 is enough", []float64{1, 1.1}, []float64{10, 11, 12}, false, true},
		{"nonpositive low side: ratio 5", []float64{-1, 0, 0.5}, []float64{5, 6, 7}, false, true},
		{"empty base", nil, []float64{1, 2, 3}, true, false},
		{"identical", seq(100, 1, 6), seq(100, 1, 6), true, false},
	}
	for _, tt := range tests {
		if got := LKPChanged(tt.a, tt.b, tt.kpi); got != tt.changed {
			t.Errorf("%s: LKPChanged(%v, %v, kpi=%v) = %v, want %v", tt.name, tt.a, tt.b, tt.kpi, got, tt.changed)
		}
	}
}
