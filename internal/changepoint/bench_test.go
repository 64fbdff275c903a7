package changepoint

import (
	"math/rand/v2"
	"testing"
)

// benchSeries returns m simulated histories of n commits with steps, as
// values (E-divisive) or as a chain (step tests).
func benchSeries(m, n int, f form) []Series {
	ss := make([]Series, m)
	for k := range ss {
		r := rand.New(rand.NewPCG(3, uint64(k)))
		mu := make([]float64, n)
		for i := 0; i < n; i += simPoints {
			lv, _ := stepLevels(r, min(simPoints, n-i), k+i)
			copy(mu[i:], lv)
		}
		ss[k] = history(r, mu, f, noises[1], nil)
	}
	return ss
}

// BenchmarkSeries10000x50 is the change-point pass of perfbot watch over
// 10,000 commits x 50 metrics (issue 8's goal: under 1 s), on one
// goroutine. One op is all 50 series: "values" runs E-divisive (ratios to
// an anchor), "chain" the step tests (a chain of steps), both at CV 2 %.
func BenchmarkSeries10000x50(b *testing.B) {
	for _, f := range []form{anchored, chain} {
		ss := benchSeries(50, 10000, f)
		b.Run(map[form]string{anchored: "values", chain: "chain"}[f], func(b *testing.B) {
			n := 0
			for b.Loop() {
				n = 0
				for _, s := range ss {
					n += len(Detect(s, Options{}))
				}
			}
			b.ReportMetric(float64(n), "changepoints")
		})
	}
}
