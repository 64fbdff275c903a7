package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkCompare10000 is the statistics of one `perfbot compare` of
// 10,000 metrics with 20 runs for each of 2 commits (benchstat takes 4.3 s
// on such data). One op is all 10,000 metrics; sub-benchmarks split it.
func BenchmarkCompare10000(b *testing.B) {
	const metrics, runs = 10000, 20
	r := rand.New(rand.NewPCG(20, 21))
	base, changed := make([][]float64, metrics), make([][]float64, metrics)
	for m := range metrics {
		scale := math.Exp(10 * r.Float64()) // metrics of all magnitudes
		shift := 0.0
		if m%10 == 0 {
			shift = 0.05 // a tenth of them changed by 5 %
		}
		base[m], changed[m] = make([]float64, runs), make([]float64, runs)
		for i := range runs {
			base[m][i] = scale * math.Exp(0.02*r.NormFloat64())
			changed[m][i] = scale * math.Exp(shift+0.02*r.NormFloat64())
		}
	}
	run := func(name string, f func(a, c []float64) bool) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = 0
				for m := range metrics {
					if f(base[m], changed[m]) {
						n++
					}
				}
			}
			b.ReportMetric(float64(n), "changed")
		})
	}
	run("all", func(a, c []float64) bool {
		sa, sc := Summarize(a), Summarize(c)
		lkp := LKPChanged(a, c, true)
		u := CompareUnpaired(a, c, 0.05)
		p := ComparePaired(a, c, 0.05)
		return sa.N == sc.N && (lkp || u.Significant || p.Significant)
	})
	run("Summarize", func(a, c []float64) bool { return Summarize(a).Mean < Summarize(c).Mean })
	run("LKPChanged", func(a, c []float64) bool { return LKPChanged(a, c, true) })
	run("CompareUnpaired", func(a, c []float64) bool { return CompareUnpaired(a, c, 0.05).Significant })
	run("ComparePaired", func(a, c []float64) bool { return ComparePaired(a, c, 0.05).Significant })
}
