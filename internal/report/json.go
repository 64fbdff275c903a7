package report

import (
	"encoding/json"
	"io"
	"strconv"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/report/doc"
	"github.com/perfbot/perfbot/internal/stats"
)

func newJSONSummary(s stats.Summary) doc.CompareSummary {
	j := doc.CompareSummary{N: s.N}
	for _, e := range s.Warnings {
		if e != nil {
			j.Warnings = append(j.Warnings, e.Error())
		}
	}
	if s.N == 0 {
		return j
	}
	j.Mean, j.Median, j.Stddev, j.RelStddev = doc.PNum(s.Mean), doc.PNum(s.Median), doc.PNum(s.Stddev), doc.PNum(s.RelStddev)
	j.Min, j.Max, j.CILo, j.CIHi = doc.PNum(s.Min), doc.PNum(s.Max), doc.PNum(s.Lo), doc.PNum(s.Hi)
	return j
}

func newJSONComparison(t *compare.Table, r *compare.Row, i int) doc.Comparison {
	c := r.Cells[i]
	j := doc.Comparison{
		Column:     i,
		ColumnID:   t.Columns[i].ID,
		Base:       newJSONSummary(r.Cells[0].Summary),
		New:        newJSONSummary(c.Summary),
		ChangeUnit: changeUnit(r),
		Warnings:   []string{},
	}
	if d := c.Delta; d != nil {
		s := d.Stat
		j.Change = doc.PNum(d.Change)
		if s.Test != "" {
			j.StatChange, j.CILo, j.CIHi, j.P = doc.PNum(s.Change), doc.PNum(s.Lo), doc.PNum(s.Hi), doc.PNum(s.P)
			if s.Confidence > 0 {
				j.Confidence = doc.PNum(s.Confidence)
			}
		}
		j.Test, j.N = s.Test, s.N
		j.Significant, j.Regression, j.Improvement, j.LKPChanged = s.Significant, d.Regression, d.Improvement, d.LKPChanged
		j.Small = t.Small(d)
		for _, e := range s.Warnings {
			if e != nil {
				j.Warnings = append(j.Warnings, e.Error())
			}
		}
	}
	return j
}

func changeUnit(r *compare.Row) string {
	if r.Points {
		return "points"
	}
	return "%"
}

// WriteJSON prints t as a [doc.Compare] of one table (job "": a
// comparison of files, or of one job's revisions where the caller does not
// name it; [WriteJobs] does), with every row; opt.All is ignored.
func WriteJSON(w io.Writer, t *compare.Table, opt Options) error {
	return writeCompareJSON(w, []JobTable{{Table: t}})
}

// writeCompareJSON prints the tables as one [doc.Compare].
func writeCompareJSON(w io.Writer, jobs []JobTable) error {
	out := doc.Compare{Version: doc.CompareVersion, Tables: []doc.CompareTable{}}
	for _, j := range jobs {
		t, err := compareTable(j)
		if err != nil {
			return err
		}
		out.Regressions += t.Regressions
		out.Improvements += t.Improvements
		out.Tables = append(out.Tables, t)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// compareTable is one table of a [doc.Compare], every row.
func compareTable(j JobTable) (doc.CompareTable, error) {
	t := j.Table
	if err := check("json", t); err != nil {
		return doc.CompareTable{}, err
	}
	reg, imp := Summary(t)
	out := doc.CompareTable{
		Job:          j.Name,
		JobKey:       j.Key,
		Alpha:        doc.Num(t.Alpha),
		EffectPct:    doc.Num(t.EffectPct),
		Verdict:      NoChange(t),
		Paired:       t.Paired,
		Regressions:  reg,
		Improvements: imp,
		Columns:      []doc.CompareColumn{},
		Metrics:      []doc.CompareMetric{},
	}
	for _, c := range t.Columns {
		out.Columns = append(out.Columns, doc.CompareColumn{ID: c.ID, Subject: c.Subject, Variant: c.Variant, Runs: c.Runs, Failed: c.Failed, Machines: c.Machines, Versions: c.Versions,
			Unchanged: c.Unchanged, Identical: c.Identical})
	}
	for k := range t.Rows {
		r := &t.Rows[k]
		m := doc.CompareMetric{
			Metric:      r.Metric,
			Unit:        r.Unit,
			Better:      r.Better.String(),
			KPI:         r.KPI,
			Points:      r.Points,
			Changed:     r.Changed(),
			Summaries:   []doc.CompareSummary{},
			Comparisons: []doc.Comparison{},
		}
		for i, c := range r.Cells {
			s := newJSONSummary(c.Summary)
			s.Samples = make([]doc.Num, len(c.Samples))
			for k, x := range c.Samples {
				s.Samples[k] = doc.Num(x)
			}
			m.Summaries = append(m.Summaries, s)
			if i > 0 {
				m.Comparisons = append(m.Comparisons, newJSONComparison(t, r, i))
			}
		}
		out.Metrics = append(out.Metrics, m)
	}
	return out, nil
}

// csvNum formats a number for CSV: shortest exact form, "" for NaN and
// undefined values, "+Inf" and "-Inf".
func csvNum(x *doc.Num) string {
	if x == nil {
		return ""
	}
	f := float64(*x)
	switch {
	case f != f:
		return ""
	case !finite(f):
		return nonFinite(f, true)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
