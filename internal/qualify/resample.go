package qualify

import (
	"math"
	"math/rand"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/perfbot/perfbot/internal/gate"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
)

// The statistics of a qualification, pure functions of the measured
// pools.
//
// A/A pairs: the plain build's OK runs in run order, cut into consecutive
// pairs (runs 1-2, 3-4, ...), pair k's two runs taking the base and head
// roles in balanced order (A B | B A: the first run is the base in even
// pairs, the head in odd ones), as the gate's interleaved rounds do.
//
// A resampled gate draws the gate's budget of pairs (Design's last look)
// with replacement from the pool (a bootstrap; the same draw for every
// metric, so that their correlation is kept) and runs the gate's own
// adaptive procedure on them (gate.Design.Simulate: every look, every
// metric, stopping at the first decided look). An A/A gate that ends
// Regressed is a false positive. The resampled gates share one pool, so
// they are not independent: their binomial interval is the interval of a
// rate over these runs, narrower than over fresh runs of this runner; more
// runs (a larger pool) make it honest.

// pool is the pairs of one comparison: base[m][k] and head[m][k] are
// metric m's values in pair k.
type pool struct {
	base, head [][]float64
}

func (p pool) pairs() int {
	if len(p.base) == 0 {
		return 0
	}
	return len(p.base[0])
}

// aaPool pairs consecutive runs in balanced order; runs[i][m] is run i's
// value of metric m.
func aaPool(runs [][]float64, metrics int) pool {
	p := pool{base: make([][]float64, metrics), head: make([][]float64, metrics)}
	for k := 0; 2*k+1 < len(runs); k++ {
		a, b := runs[2*k], runs[2*k+1]
		if k%2 == 1 {
			a, b = b, a
		}
		for m := range metrics {
			p.base[m] = append(p.base[m], a[m])
			p.head[m] = append(p.head[m], b[m])
		}
	}
	return p
}

// draws are the resampled gates' pair indices: gates draws of n indices
// into a pool of size pairs. With swap (an A/A pool), each drawn pair's
// two runs change roles at random (index k drawn as -(k+1)): the pool is
// then symmetric about no change, as an A/A pool's truth is, and its own
// chance offset (one pool's estimate is never exactly 0) is not replayed
// in every gate, which would inflate the false-positive rate.
func draws(rng *rand.Rand, gates, n, pairs int, swap bool) [][]int {
	out := make([][]int, gates)
	for g := range out {
		out[g] = make([]int, n)
		for i := range out[g] {
			k := rng.Intn(pairs)
			if swap && rng.Intn(2) == 1 {
				k = -(k + 1)
			}
			out[g][i] = k
		}
	}
	return out
}

// shift is a planted change of one metric: its head values made worse by
// pct percent (multiplied by 1+pct/100 for a lower-is-better metric,
// divided for a higher-is-better one). metric -1: none.
type shift struct {
	metric int
	pct    float64
}

// simulate runs one resampled gate and returns its decisions.
func simulate(d gate.Design, rules []gate.Rule, p pool, idx []int, s shift) []gate.Decision {
	base := make([][]float64, len(rules))
	head := make([][]float64, len(rules))
	for m, r := range rules {
		base[m], head[m] = make([]float64, len(idx)), make([]float64, len(idx))
		f := 1.0
		if m == s.metric {
			f = 1 + s.pct/100
			if r.Better == metric.HigherIsBetter {
				f = 1 / f
			}
		}
		for i, k := range idx {
			b, h := p.base[m], p.head[m]
			if k < 0 { // swapped (draws)
				k, b, h = -k-1, h, b
			}
			base[m][i], head[m][i] = b[k], f*h[k]
		}
	}
	return d.Simulate(rules, base, head)
}

// gateCounts are the outcomes of resampled gates.
type gateCounts struct {
	Gates, Failed, Undecided int
	Pairs                    float64 // mean pairs at the deciding look
	ByMetric                 []int   // gates in which each metric regressed
}

func run(d gate.Design, rules []gate.Rule, p pool, ds [][]int, s shift) gateCounts {
	c := gateCounts{Gates: len(ds), ByMetric: make([]int, len(rules))}
	for _, idx := range ds {
		dec := simulate(d, rules, p, idx, s)
		switch gate.Overall(dec) {
		case gate.Regressed:
			c.Failed++
		case gate.Undecided:
			c.Undecided++
		}
		for m, x := range dec {
			if x.Call == gate.Regressed {
				c.ByMetric[m]++
			}
		}
		if len(dec) > 0 {
			c.Pairs += float64(dec[0].Pairs) / float64(len(ds))
		}
	}
	return c
}

// detectable searches the smallest planted shift of metric m, in percent,
// that the resampled gates catch (metric m Regressed) at gate.Power: the
// shift is doubled from the threshold until caught, then bisected to
// 0.05 % + 1 % of its size. The same draws serve every shift (common
// random numbers), so the power rises with the shift as it does in truth.
// NaN when even 1000 % is not caught (a metric the gate cannot decide).
func detectable(d gate.Design, rules []gate.Rule, p pool, ds [][]int, m int) float64 {
	power := func(pct float64) float64 {
		return float64(run(d, rules, p, ds, shift{m, pct}).ByMetric[m]) / float64(len(ds))
	}
	hi := max(rules[m].ThresholdPct, 0.5)
	for power(hi) < gate.Power {
		if hi *= 2; hi > 1000 {
			return math.NaN()
		}
	}
	lo := 0.0
	for hi-lo > 0.05+0.01*hi {
		mid := (lo + hi) / 2
		if power(mid) >= gate.Power {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// noisePct is the robust standard deviation (1.4826 MAD) of the pairs'
// log ratios, in percent (100 times the log ratio's); NaN with fewer than
// 3 usable pairs.
func noisePct(base, head []float64) float64 {
	var logs []float64
	for i := range min(len(base), len(head)) {
		if base[i] > 0 && head[i] > 0 && !math.IsInf(base[i], 0) && !math.IsInf(head[i], 0) {
			logs = append(logs, math.Log(head[i]/base[i]))
		}
	}
	if len(logs) < 3 {
		return math.NaN()
	}
	med := stats.Median(logs)
	dev := make([]float64, len(logs))
	for i, x := range logs {
		dev[i] = math.Abs(x - med)
	}
	return 100 * 1.4826 * stats.Median(dev)
}

// binomialInterval is the Clopper-Pearson interval of k successes in n at
// confidence 1-a.
func binomialInterval(k, n int, a float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	lo, hi = 0, 1
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(a / 2)
	}
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a/2)
	}
	return lo, hi
}
