package compare

import (
	"github.com/perfbot/perfbot/internal/stats"
)

// Pair says which run a sample came from, as far as pairing is concerned:
// samples of two columns with the same Pair were taken together (the same
// round of one measuring session on one machine, and the same layout where
// a column pools several), so the table may compare them as pairs. Within
// one column a Pair names one run.
type Pair struct {
	Machine string // the benchmark machine ("" when not recorded)
	Session string // the measuring session ("" when not recorded)
	Round   int    // the round within the session (or the run number)
	Layout  int    // the layout, where a column pools several; else 0
}

// Sample is one value of one metric of one run.
type Sample struct {
	Pair  Pair
	Value float64
}

// RunValue is one run's figure for a metric.
type RunValue struct {
	Pair  Pair
	Value float64
}

// PerRun reduces samples to one figure per run, the median of the run's
// values (a benchmark may print a metric more than once per process: the
// run is the unit of measurement), in the order of the runs' first
// samples. A run's samples must be adjacent, as the store returns them.
// It is perfbot's one per-run reducer: compare, triage and bisect use it.
func PerRun(samples []Sample) []RunValue {
	out := make([]RunValue, 0, len(samples))
	for i := 0; i < len(samples); {
		j := i + 1
		for j < len(samples) && samples[j].Pair == samples[i].Pair {
			j++
		}
		v := samples[i].Value
		if j-i > 1 {
			xs := make([]float64, j-i)
			for k := i; k < j; k++ {
				xs[k-i] = samples[k].Value
			}
			v = stats.Median(xs)
		}
		out = append(out, RunValue{Pair: samples[i].Pair, Value: v})
		i = j
	}
	return out
}

func values(rs []RunValue) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.Value
	}
	return out
}

// pairs returns the figures of runs present on both sides, matched by Pair.
func pairs(a, b []RunValue) (x, y []float64) {
	// The common case, the same runs on both sides in the same order,
	// needs no map.
	if len(a) == len(b) {
		same := true
		for i := range a {
			if a[i].Pair != b[i].Pair {
				same = false
				break
			}
		}
		if same {
			return values(a), values(b)
		}
	}
	bi := make(map[Pair]float64, len(b))
	for _, r := range b {
		bi[r.Pair] = r.Value
	}
	for _, r := range a {
		if v, ok := bi[r.Pair]; ok {
			x = append(x, r.Value)
			y = append(y, v)
		}
	}
	return x, y
}
