package compare

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
)

func samples(vals ...float64) []Sample {
	out := make([]Sample, len(vals))
	for i, v := range vals {
		out[i] = Sample{Pair: Pair{Round: i + 1}, Value: v}
	}
	return out
}

// noisy returns n samples around mean with relative noise cv.
func noisy(rng *rand.Rand, n int, mean, cv float64) []Sample {
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = mean * math.Exp(rng.NormFloat64()*cv)
	}
	return samples(vals...)
}

func cols(n int) []Column {
	c := make([]Column, n)
	for i := range c {
		c[i] = Column{ID: string(rune('a' + i))}
	}
	return c
}

// TestBuildDirections checks the regression/improvement decision against
// known truth in both directions of "better" (issue 2: exit status 1 must
// mean a real regression).
func TestBuildDirections(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	base := noisy(rng, 10, 100, 0.01)
	slower := noisy(rng, 10, 130, 0.01)
	same := noisy(rng, 10, 100, 0.01)
	for _, paired := range []bool{true, false} {
		tab := Build(cols(3), []Series{
			{Metric: "ms", Better: metric.LowerIsBetter, KPI: true, Samples: [][]Sample{base, slower, same}},
			{Metric: "ops", Better: metric.HigherIsBetter, KPI: true, Samples: [][]Sample{base, slower, same}},
		}, paired, 0.01)
		ms, ops := tab.Rows[0], tab.Rows[1]
		if d := ms.Cells[1].Delta; !d.Regression || d.Improvement || !d.LKPChanged || math.Abs(d.Change-30) > 3 {
			t.Errorf("paired=%v: 30%% slower time: %+v, want a regression of about +30%%", paired, d)
		}
		if d := ops.Cells[1].Delta; d.Regression || !d.Improvement {
			t.Errorf("paired=%v: 30%% more ops: %+v, want an improvement", paired, d)
		}
		if d := ms.Cells[2].Delta; d.Regression || d.Improvement {
			t.Errorf("paired=%v: unchanged column: %+v, want neither", paired, d)
		}
		if ms.Cells[0].Delta != nil {
			t.Errorf("base column has a delta")
		}
		if reg, imp := tab.Regressions(); reg != 1 || imp != 1 {
			t.Errorf("paired=%v: Regressions() = %d, %d; want 1, 1", paired, reg, imp)
		}
		// Monitors (builtin resource figures) are reported, not counted.
		tab.Rows[0].KPI = false
		if reg, imp := tab.Regressions(); reg != 0 || imp != 1 {
			t.Errorf("paired=%v: with the time row a monitor, Regressions() = %d, %d; want 0, 1", paired, reg, imp)
		}
		wantTest := map[bool]string{true: "wilcoxon", false: "mann-whitney"}[paired]
		if got := ms.Cells[1].Delta.Stat.Test; got != wantTest {
			t.Errorf("paired=%v: test %q, want %q", paired, got, wantTest)
		}
	}
}

// TestBuildPerRunAndPairs checks that several values of one run count as
// one sample (their median) and that pairs are matched by run number, with
// runs missing on one side left out of the paired test.
func TestBuildPerRunAndPairs(t *testing.T) {
	a := []Sample{{Pair: Pair{Round: 1}, Value: 10}, {Pair: Pair{Round: 1}, Value: 30}, {Pair: Pair{Round: 1}, Value: 20}, {Pair: Pair{Round: 2}, Value: 11}, {Pair: Pair{Round: 3}, Value: 12}, {Pair: Pair{Round: 4}, Value: 13}, {Pair: Pair{Round: 5}, Value: 14}, {Pair: Pair{Round: 6}, Value: 15}}
	b := []Sample{{Pair: Pair{Round: 2}, Value: 22}, {Pair: Pair{Round: 3}, Value: 24}, {Pair: Pair{Round: 4}, Value: 26}, {Pair: Pair{Round: 5}, Value: 28}, {Pair: Pair{Round: 6}, Value: 30}, {Pair: Pair{Round: 7}, Value: 99}}
	tab := Build(cols(2), []Series{{Metric: "x", KPI: true, Samples: [][]Sample{a, b}}}, true, 0.1)
	c0, c1 := tab.Rows[0].Cells[0], tab.Rows[0].Cells[1]
	if want := []float64{20, 11, 12, 13, 14, 15}; !equal(c0.Samples, want) {
		t.Errorf("base samples %v, want %v (run 1 reduced to its median)", c0.Samples, want)
	}
	if c1.Delta.Stat.Test != "wilcoxon" || c1.Delta.Stat.N != 5 {
		t.Errorf("test %q on %d pairs, want wilcoxon on 5 (runs 2-6 are on both sides)", c1.Delta.Stat.Test, c1.Delta.Stat.N)
	}
}

// TestBuildUnpairedFallbacks: runs that are mostly not pairs (another
// session took them), or too few pairs for the signed-rank test to reach
// alpha, are compared unpaired, with a warning that says why; with too few
// runs for any test, the lkp rule decides and says so (review finding 2).
func TestBuildUnpairedFallbacks(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	base := noisy(rng, 10, 100, 0.01)
	other := noisy(rng, 10, 150, 0.01)
	for i := range other {
		other[i].Pair.Round += 1000 // another session: no run number in common
	}
	five := noisy(rng, 5, 150, 0.01)
	for _, tc := range []struct {
		name string
		cur  []Sample
		warn string
	}{
		{"other session", other, "interleaved pairs"},
		{"five pairs", five, "cannot reach"},
	} {
		tab := Build(cols(2), []Series{{Metric: "ms", KPI: true, Better: metric.LowerIsBetter, Samples: [][]Sample{base, tc.cur}}}, true, 0.05)
		d := tab.Rows[0].Cells[1].Delta
		if d.Stat.Test != "mann-whitney" || !d.Regression || len(d.Stat.Warnings) == 0 || !strings.Contains(d.Stat.Warnings[0].Error(), tc.warn) {
			t.Errorf("%s: test %q regression=%v warnings %v; want a Mann-Whitney regression warning %q (%+v)", tc.name, d.Stat.Test, d.Regression, d.Stat.Warnings, tc.warn, d.Stat)
		}
	}
	// Three runs a side: no test can reach 0.05; the lkp rule decides.
	tab := Build(cols(2), []Series{{Metric: "ms", KPI: true, Better: metric.LowerIsBetter, Samples: [][]Sample{samples(10, 10.1, 10.2), samples(20, 20.1, 20.3)}}}, true, 0.05)
	d := tab.Rows[0].Cells[1].Delta
	if !d.Regression || !d.LKPChanged || d.Stat.Significant {
		t.Errorf("3 runs, 2x slower: regression=%v lkp=%v significant=%v; want a regression by the lkp rule", d.Regression, d.LKPChanged, d.Stat.Significant)
	}
	if tab2 := Build(cols(2), []Series{{Metric: "ms", KPI: true, Better: metric.LowerIsBetter, Samples: [][]Sample{samples(10, 10.1, 10.2), samples(10.1, 10, 10.2)}}}, true, 0.05); tab2.Rows[0].Cells[1].Delta.Regression {
		t.Errorf("3 runs, unchanged: a regression")
	}
}

// TestBuildPoints checks lkp's rule for stats ending in %: the change is the
// difference in points.
func TestBuildPoints(t *testing.T) {
	tab := Build(cols(2), []Series{{Metric: "miss-rate%", Samples: [][]Sample{samples(1, 1, 1), samples(3, 3, 3)}}}, false, 0.05)
	row := tab.Rows[0]
	if !row.Points || row.Cells[1].Delta.Change != 2 {
		t.Errorf("points row: Points=%v change=%v, want true and 2", row.Points, row.Cells[1].Delta.Change)
	}
}

// TestBuildEmptyColumn: a column without samples has no delta and no panic.
func TestBuildEmptyColumn(t *testing.T) {
	tab := Build(cols(2), []Series{{Metric: "x", Samples: [][]Sample{samples(1, 2, 3), nil}}}, true, 0)
	if tab.Rows[0].Cells[1].Delta != nil || tab.Alpha != DefaultAlpha {
		t.Errorf("empty column: delta %+v alpha %v", tab.Rows[0].Cells[1].Delta, tab.Alpha)
	}
}

// TestBuildManyRowsDeterministic checks that spreading rows over CPUs keeps
// every row in its place.
func TestBuildManyRowsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var series []Series
	for i := 0; i < 500; i++ {
		series = append(series, Series{Metric: string(rune('A'+i%26)) + string(rune('0'+i%10)), KPI: true,
			Samples: [][]Sample{noisy(rng, 6, float64(i+1), 0.02), noisy(rng, 6, float64(i+1), 0.02)}})
	}
	tab := Build(cols(2), series, false, 0.05)
	for i, r := range tab.Rows {
		if r.Metric != series[i].Metric || math.Abs(r.Cells[0].Summary.Mean/float64(i+1)-1) > 0.1 {
			t.Fatalf("row %d is %q with mean %v: rows out of place", i, r.Metric, r.Cells[0].Summary.Mean)
		}
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAdjustFDR: 1,000 unchanged metrics and 50 that are 20 % slower, 10
// unpaired runs each. Without the adjustment about alpha of the unchanged
// ones are called regressions; with it, false discoveries stay near or
// below alpha of the discoveries, and the real changes are still found.
func TestAdjustFDR(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	var series []Series
	for i := 0; i < 1050; i++ {
		shift := 1.0
		if i < 50 {
			shift = 1.2
		}
		series = append(series, Series{Metric: fmt.Sprintf("m%d", i), Better: metric.LowerIsBetter, KPI: true,
			Samples: [][]Sample{noisy(rng, 10, 100, 0.03), noisy(rng, 10, 100*shift, 0.03)}})
	}
	count := func(tab *Table) (trueHits, falseHits int) {
		for i, r := range tab.Rows {
			if r.Cells[1].Delta.Regression {
				if i < 50 {
					trueHits++
				} else {
					falseHits++
				}
			}
		}
		return
	}
	tab := Build(cols(2), series, false, 0.05)
	rawTrue, rawFalse := count(tab)
	tab.AdjustFDR()
	fdrTrue, fdrFalse := count(tab)
	t.Logf("raw: %d true, %d false regressions; BH: %d true, %d false", rawTrue, rawFalse, fdrTrue, fdrFalse)
	if rawFalse < 5 {
		t.Errorf("raw tests gave only %d false alarms over 1,000 null metrics: the setup does not show the problem", rawFalse)
	}
	if fdrTrue < 45 {
		t.Errorf("with BH only %d of 50 real changes found", fdrTrue)
	}
	if fdrFalse > 5 {
		t.Errorf("with BH %d false discoveries among %d: more than the 5 %% rate allows", fdrFalse, fdrTrue+fdrFalse)
	}
}

// TestBuildKPIsFirst: the job's metrics come before the monitors, each
// group in the order given (lkp's layout).
func TestBuildKPIsFirst(t *testing.T) {
	s := func(name string, kpi bool) Series {
		return Series{Metric: name, KPI: kpi, Samples: [][]Sample{samples(1, 2, 3), samples(1, 2, 3)}}
	}
	tab := Build(cols(2), []Series{s("time.a", false), s("k1", true), s("time.b", false), s("k2", true)}, true, 0.05)
	var got []string
	for _, r := range tab.Rows {
		got = append(got, r.Metric)
	}
	if want := []string{"k1", "k2", "time.a", "time.b"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("row order %v, want %v", got, want)
	}
}
