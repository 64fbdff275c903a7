package compare

import (
	"testing"

	"github.com/perfbot/perfbot/internal/metric"
)

// TestTwoXSlowdownWithTooFewRunsIsRegression: the smallest two-sided p of
// the paired Wilcoxon test with n pairs is 2^(1-n), so with the job
// minimum of 3 runs (p >= 0.25), or the default 6 runs when a single run of
// either side failed (5 pairs, p >= 0.0625), no test can reach alpha 0.05.
// A 2x slowdown must still count as a regression (exit status 1): with too
// few runs the lkp rule decides. (A review found that it used to be no
// regression, exit status 0, while the lkp rule marked the row changed.)
func TestTwoXSlowdownWithTooFewRunsIsRegression(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, next []Sample
	}{
		{"runs: 3 (the allowed minimum)", seq(1, 3, 1.0, 0.001), seq(1, 3, 2.0, 0.003)},
		{"runs: 6, run 4 of the new commit failed", seq(1, 6, 1.0, 0.001), append(seq(1, 3, 2.0, 0.003), seq(5, 6, 2.0, 0.003)...)},
	} {
		s := Series{Metric: "text_ms", Better: metric.LowerIsBetter, KPI: true, Samples: [][]Sample{tc.base, tc.next}}
		tab := Build([]Column{{ID: "a"}, {ID: "b"}}, []Series{s}, true, 0)
		d := tab.Rows[0].Cells[1].Delta
		if r, _ := tab.Regressions(); r == 0 {
			t.Errorf("%s: +%.0f%% (lkp changed=%v) is not a regression: p=%.3f, exit status would be 0", tc.name, d.Change, d.LKPChanged, d.Stat.P)
		}
	}
}

// seq returns runs from..to, run r with value v*(1+k*r): distinct
// differences between two such series, so the exact test applies.
func seq(from, to int, v, k float64) []Sample {
	var out []Sample
	for r := from; r <= to; r++ {
		out = append(out, Sample{Pair: Pair{Round: r}, Value: v * (1 + k*float64(r))})
	}
	return out
}
