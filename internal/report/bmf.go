package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/perfbot/perfbot/internal/compare"
)

// Bencher Metric Format (https://bencher.dev/docs/reference/bencher-metric-format/):
//
//	{"<benchmark>": {"<measure>": {"value": x, "lower_value": lo, "upper_value": hi}}}
//
// A comparison goes out as the head's figures, so that a Bencher
// dashboard tracking a branch keeps its history, and perfbot's decision
// beside them (docs/ci.md, "Bencher"). Every row goes out, changed or not
// (a dashboard tracks them all). For each row of the table and the last
// column (the head):
//
//   - <measure>: the head's median, lower/upper the bounds of its 95 %
//     confidence interval (benchstat's ±). Times go out in nanoseconds as
//     Bencher's built-in "latency" measure, "ops/s" as "throughput";
//     other units are a measure of their own name ("B/op", "allocs/op").
//   - <measure>-change-pct: the change of the head against the base in
//     percent (the test's Hodges-Lehmann estimate), lower/upper its
//     confidence interval at the table's alpha; the change of the means
//     when no test could run (too few runs).
//   - <measure>-regression: 1 when perfbot counts the change as a
//     regression (significant, at least --effect large, a job's own
//     metric), else 0: a Bencher static threshold with upper bound 0.5
//     alerts exactly when perfbot does.

// BMFRow is one measure of one benchmark: a neutral row that any report
// (a comparison, a gate) maps its figures to.
type BMFRow struct {
	Benchmark string
	Measure   string
	Unit      string // what Value is in (documentation; BMF has no unit field)
	Value     float64
	// Lo and Hi bound Value when Bounds is set.
	Lo, Hi float64
	Bounds bool
}

type bmfMetric struct {
	Value float64  `json:"value"`
	Lo    *float64 `json:"lower_value,omitempty"`
	Hi    *float64 `json:"upper_value,omitempty"`
}

// WriteBMF writes rows as one BMF document. A row whose value is not
// finite is left out (JSON has no NaN), and so are non-finite bounds; two
// rows of one benchmark and measure are an error.
func WriteBMF(w io.Writer, rows []BMFRow) error {
	doc := map[string]map[string]bmfMetric{}
	for _, r := range rows {
		if r.Benchmark == "" || r.Measure == "" {
			return fmt.Errorf("report bmf: a row without a benchmark or measure name (%q, %q)", r.Benchmark, r.Measure)
		}
		if !finite(r.Value) {
			continue
		}
		m := bmfMetric{Value: r.Value}
		if r.Bounds && finite(r.Lo) && finite(r.Hi) {
			lo, hi := r.Lo, r.Hi
			m.Lo, m.Hi = &lo, &hi
		}
		b := doc[r.Benchmark]
		if b == nil {
			b = map[string]bmfMetric{}
			doc[r.Benchmark] = b
		}
		if _, dup := b[r.Measure]; dup {
			return fmt.Errorf("report bmf: benchmark %q has measure %q twice", r.Benchmark, r.Measure)
		}
		b[r.Measure] = m
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc) // map keys come out sorted
}

// BMFRows maps a comparison table to BMF rows (see the package comment
// above for what goes out); prefix, when set, starts every benchmark name
// ("<prefix>/<metric>": the atomic job of a params matrix).
func BMFRows(t *compare.Table, prefix string) []BMFRow {
	var rows []BMFRow
	if t == nil || len(t.Columns) == 0 {
		return nil
	}
	// The table is checked (report.check): every row has a cell per column.
	head := len(t.Columns) - 1
	for _, r := range t.Rows {
		c := r.Cells[head]
		if c.Summary.N == 0 {
			continue
		}
		bench, measure, unit, scale := bmfName(r)
		if prefix != "" {
			bench = prefix + "/" + bench
		}
		s := c.Summary
		rows = append(rows, BMFRow{Benchmark: bench, Measure: measure, Unit: unit,
			Value: s.Median * scale, Lo: s.Lo * scale, Hi: s.Hi * scale, Bounds: s.N > 1})
		d := c.Delta
		if d == nil {
			continue
		}
		change := BMFRow{Benchmark: bench, Measure: measure + "-change-pct", Unit: "%", Value: d.Change}
		if d.Stat.Test != "" {
			change.Value, change.Lo, change.Hi, change.Bounds = d.Stat.Change, d.Stat.Lo, d.Stat.Hi, true
		}
		rows = append(rows, change)
		if r.KPI {
			reg := 0.0
			if d.Regression && !t.Small(d) {
				reg = 1
			}
			rows = append(rows, BMFRow{Benchmark: bench, Measure: measure + "-regression", Value: reg})
		}
	}
	return rows
}

// bmfTimes are the time units a row may be in, in nanoseconds.
var bmfTimes = map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "sec": 1e9,
	"ns/op": 1, "us/op": 1e3, "ms/op": 1e6, "sec/op": 1e9, "s/op": 1e9}

// bmfName splits a row into Bencher's benchmark and measure: the metric
// (less a trailing ".<unit>" or "_<unit>", as result files name rows) and
// its unit.
func bmfName(r compare.Row) (bench, measure, unit string, scale float64) {
	bench = r.Metric
	if r.Unit != "" {
		for _, sep := range []string{".", "_"} {
			if b, ok := strings.CutSuffix(r.Metric, sep+r.Unit); ok && b != "" {
				bench = b
				break
			}
		}
	}
	if ns, ok := bmfTimes[r.Unit]; ok {
		return bench, "latency", "ns", ns
	}
	switch r.Unit {
	case "ops/s":
		return bench, "throughput", "ops/s", 1
	case "":
		// A metric without a unit that names one ("work_ms", lkp's style).
		for _, u := range []string{"ns", "us", "ms", "s", "sec"} {
			if strings.HasSuffix(r.Metric, "_"+u) {
				return bench, "latency", "ns", bmfTimes[u]
			}
		}
		return bench, "value", "", 1
	}
	return bench, r.Unit, r.Unit, 1
}

// writeJobsBMF writes the tables of a comparison as one BMF document.
func writeJobsBMF(w io.Writer, jobs []JobTable) error {
	var rows []BMFRow
	for _, j := range jobs {
		if err := check(string(FormatBMF), j.Table); err != nil {
			return err
		}
		prefix := ""
		if len(jobs) > 1 {
			prefix = j.Name
		}
		rows = append(rows, BMFRows(j.Table, prefix)...)
	}
	return WriteBMF(w, rows)
}
