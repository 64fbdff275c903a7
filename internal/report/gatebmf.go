package report

import (
	"bytes"
	"math"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gate"
)

// gateBMFRows are a gate's metrics in Bencher Metric Format, as a
// comparison's (BMFRows): the head's median, the change against the base
// with the gate's interval (named as compare names them, without the
// job), and, for a gated metric, "-regression" 1 when
// the gate failed on it (an alignment artifact that passes is 0).
func gateBMFRows(r *gate.Result) []BMFRow {
	var rows []BMFRow
	code, _ := r.ExitStatus()
	failed := code == 1
	for _, m := range r.Metrics {
		bench, measure, unit, scale := bmfName(compare.Row{Metric: m.Metric, Unit: m.Unit})
		if !math.IsNaN(m.HeadMedian) {
			rows = append(rows, BMFRow{Benchmark: bench, Measure: measure, Unit: unit, Value: m.HeadMedian * scale})
		}
		change := BMFRow{Benchmark: bench, Measure: measure + "-change-pct", Unit: "%", Value: m.Change}
		if !math.IsNaN(m.Lo) && !math.IsNaN(m.Hi) {
			change.Lo, change.Hi, change.Bounds = m.Lo, m.Hi, true
		}
		rows = append(rows, change)
		if m.Gated {
			reg := 0.0
			if failed && m.Call == gate.Regressed {
				reg = 1
			}
			rows = append(rows, BMFRow{Benchmark: bench, Measure: measure + "-regression", Value: reg})
		}
	}
	return rows
}

func writeGateBMF(b *bytes.Buffer, r *gate.Result) error { return WriteBMF(b, gateBMFRows(r)) }
