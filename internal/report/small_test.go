package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// smallTable: 12 interleaved rounds of a metric 2 % slower in the second
// column, with 0.1 % noise: significant, and under a 5 % effect small.
func smallTable(effect float64) *compare.Table {
	var base, slower []compare.Sample
	for i := range 12 {
		wiggle := float64(i%3-1) * 0.1
		base = append(base, compare.Sample{Pair: compare.Pair{Round: i + 1}, Value: 100 + wiggle})
		slower = append(slower, compare.Sample{Pair: compare.Pair{Round: i + 1}, Value: 102 - wiggle})
	}
	t := compare.Build([]compare.Column{{ID: "aaaaaaaaaaaa"}, {ID: "bbbbbbbbbbbb"}}, []compare.Series{
		{Metric: "work_ms", Better: metric.LowerIsBetter, KPI: true, Samples: [][]compare.Sample{base, slower}},
	}, true, 0.05)
	t.EffectPct = effect
	return t
}

// TestSmallChange: a significant change under EffectPct is shown, marked
// small in ncompare, markdown and json, and not counted; with a smaller
// effect the same table has a regression and no mark.
func TestSmallChange(t *testing.T) {
	for _, c := range []struct {
		effect float64
		small  bool
	}{{5, true}, {1, false}} {
		tab := smallTable(c.effect)
		if d := tab.Rows[0].Cells[1].Delta; !d.Regression || !d.Stat.Significant {
			t.Fatalf("2%% slower: %+v: want a significant regression", d)
		}
		write := func(f Format) string {
			var b bytes.Buffer
			if err := Write(&b, tab, Options{Format: f}); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		nc, md := write("ncompare"), write("markdown")
		if got := strings.Contains(nc, "small regression") && strings.Contains(nc, "under the 5% change that counts"); got != c.small {
			t.Errorf("effect %g: ncompare marks a small change: %v, want %v:\n%s", c.effect, got, c.small, nc)
		}
		if !strings.Contains(nc, "work_ms") {
			t.Errorf("effect %g: ncompare does not show the changed row:\n%s", c.effect, nc)
		}
		wantMD := "**1 regression**, 0 improvements, 0 unchanged"
		if c.small {
			wantMD = "0 regressions, 0 improvements, 0 unchanged, 1 small change under 5%"
		}
		if !strings.Contains(md, wantMD) || strings.Contains(md, "small regression") != c.small {
			t.Errorf("effect %g: markdown summary and mark, want %q:\n%s", c.effect, wantMD, md)
		}
		var doc struct {
			Regressions int `json:"regressions"`
			Tables      []struct {
				EffectPct float64 `json:"effect_pct"`
				Metrics   []struct {
					Comparisons []struct {
						Regression bool `json:"regression"`
						Small      bool `json:"small"`
					} `json:"comparisons"`
				} `json:"metrics"`
			} `json:"tables"`
		}
		js := write("json")
		schematest.ValidateJSON(t, "compare", []byte(js))
		if err := json.Unmarshal([]byte(js), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Tables[0].EffectPct != c.effect {
			t.Errorf("effect %g: json effect_pct %g", c.effect, doc.Tables[0].EffectPct)
		}
		cmp := doc.Tables[0].Metrics[0].Comparisons[0]
		if cmp.Small != c.small || !cmp.Regression || (doc.Regressions == 0) != c.small {
			t.Errorf("effect %g: json regressions %d, comparison %+v; want small %v", c.effect, doc.Regressions, cmp, c.small)
		}
	}
}
