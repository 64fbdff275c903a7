package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/report/doc"
)

// csvHeader names the CSV fields (see the package doc).
var csvHeader = []string{
	"metric", "unit", "better", "kpi", "points", "changed", "column", "column_id", "variant",
	"base_n", "base_mean", "base_median", "base_stddev", "base_rel_stddev", "base_min", "base_max", "base_ci_lo", "base_ci_hi",
	"new_n", "new_mean", "new_median", "new_stddev", "new_rel_stddev", "new_min", "new_max", "new_ci_lo", "new_ci_hi",
	"change", "change_unit", "stat_change", "ci_lo", "ci_hi", "confidence", "p", "test", "n",
	"significant", "regression", "improvement", "lkp_changed", "small", "unchanged", "identical",
}

// WriteCSV prints t as CSV: a header line, then one line per metric and
// non-base column (per metric when t has only a base column) with every
// row; opt.All is ignored.
func WriteCSV(w io.Writer, t *compare.Table, opt Options) error {
	if err := check("csv", t); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for k := range t.Rows {
		r := &t.Rows[k]
		cols := make([]int, 0, len(t.Columns))
		for i := 1; i < len(t.Columns); i++ {
			cols = append(cols, i)
		}
		if len(cols) == 0 {
			cols = append(cols, 0)
		}
		for _, i := range cols {
			var j doc.Comparison
			if i > 0 {
				j = newJSONComparison(t, r, i)
			} else {
				j = doc.Comparison{ColumnID: t.Columns[0].ID, Base: newJSONSummary(r.Cells[0].Summary), ChangeUnit: changeUnit(r)}
			}
			rec := []string{
				r.Metric, r.Unit, r.Better.String(), fbool(r.KPI), fbool(r.Points), fbool(r.Changed()),
				strconv.Itoa(i), t.Columns[i].ID, t.Columns[i].Variant,
			}
			rec = append(rec, csvSummary(j.Base)...)
			if i > 0 {
				rec = append(rec, csvSummary(j.New)...)
			} else {
				rec = append(rec, make([]string, 9)...)
			}
			test, n := j.Test, ""
			if test != "" {
				n = strconv.Itoa(j.N)
			}
			rec = append(rec,
				csvNum(j.Change), j.ChangeUnit, csvNum(j.StatChange), csvNum(j.CILo), csvNum(j.CIHi),
				csvNum(j.Confidence), csvNum(j.P), test, n,
				fbool(j.Significant), fbool(j.Regression), fbool(j.Improvement), fbool(j.LKPChanged),
				fbool(j.Small), t.Columns[i].Unchanged, fbool(t.Columns[i].Identical),
			)
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvSummary(s doc.CompareSummary) []string {
	return []string{
		strconv.Itoa(s.N), csvNum(s.Mean), csvNum(s.Median), csvNum(s.Stddev), csvNum(s.RelStddev),
		csvNum(s.Min), csvNum(s.Max), csvNum(s.CILo), csvNum(s.CIHi),
	}
}

func fbool(b bool) string { return strconv.FormatBool(b) }
