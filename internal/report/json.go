package report

import (
	"encoding/json"
	"io"
	"strconv"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/stats"
)

// num is a float64 that marshals NaN and ±Inf as null.
type num float64

func (x num) MarshalJSON() ([]byte, error) {
	if !finite(float64(x)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

// The JSON document; field names are documented in the package doc and
// must stay stable.
type (
	jsonReport struct {
		Version      int          `json:"version"`
		Alpha        num          `json:"alpha"`
		Paired       bool         `json:"paired"`
		Regressions  int          `json:"regressions"`
		Improvements int          `json:"improvements"`
		Columns      []jsonColumn `json:"columns"`
		Metrics      []jsonMetric `json:"metrics"`
	}
	jsonColumn struct {
		ID      string `json:"id"`
		Subject string `json:"subject"`
		Variant string `json:"variant"`
		Runs    int    `json:"runs"`
		Failed  int    `json:"failed"`
		// Machines took the column's runs (omitted when not recorded).
		Machines []string `json:"machines,omitempty"`
	}
	jsonMetric struct {
		Metric      string           `json:"metric"`
		Unit        string           `json:"unit"`
		Better      string           `json:"better"`
		KPI         bool             `json:"kpi"`
		Points      bool             `json:"points"`
		Changed     bool             `json:"changed"`
		Summaries   []jsonSummary    `json:"summaries"`
		Comparisons []jsonComparison `json:"comparisons"`
	}
	jsonSummary struct {
		N         int      `json:"n"`
		Mean      *num     `json:"mean"`
		Median    *num     `json:"median"`
		Stddev    *num     `json:"stddev"`
		RelStddev *num     `json:"rel_stddev"`
		Min       *num     `json:"min"`
		Max       *num     `json:"max"`
		CILo      *num     `json:"ci_lo"`
		CIHi      *num     `json:"ci_hi"`
		Samples   []num    `json:"samples,omitempty"`
		Warnings  []string `json:"warnings,omitempty"`
	}
	jsonComparison struct {
		Column      int         `json:"column"`
		ColumnID    string      `json:"column_id"`
		Base        jsonSummary `json:"base"`
		New         jsonSummary `json:"new"`
		Change      *num        `json:"change"`
		ChangeUnit  string      `json:"change_unit"`
		StatChange  *num        `json:"stat_change"`
		CILo        *num        `json:"ci_lo"`
		CIHi        *num        `json:"ci_hi"`
		Confidence  *num        `json:"confidence"`
		P           *num        `json:"p"`
		Test        string      `json:"test"`
		N           int         `json:"n"`
		Significant bool        `json:"significant"`
		Regression  bool        `json:"regression"`
		Improvement bool        `json:"improvement"`
		LKPChanged  bool        `json:"lkp_changed"`
		// Small: a significant change under the table's EffectPct, not
		// counted in regressions (omitted when not).
		Small    bool     `json:"small,omitempty"`
		Warnings []string `json:"warnings"`
	}
)

func pnum(x float64) *num {
	n := num(x)
	return &n
}

func newJSONSummary(s stats.Summary) jsonSummary {
	j := jsonSummary{N: s.N}
	for _, e := range s.Warnings {
		if e != nil {
			j.Warnings = append(j.Warnings, e.Error())
		}
	}
	if s.N == 0 {
		return j
	}
	j.Mean, j.Median, j.Stddev, j.RelStddev = pnum(s.Mean), pnum(s.Median), pnum(s.Stddev), pnum(s.RelStddev)
	j.Min, j.Max, j.CILo, j.CIHi = pnum(s.Min), pnum(s.Max), pnum(s.Lo), pnum(s.Hi)
	return j
}

func newJSONComparison(t *compare.Table, r *compare.Row, i int) jsonComparison {
	c := r.Cells[i]
	j := jsonComparison{
		Column:     i,
		ColumnID:   t.Columns[i].ID,
		Base:       newJSONSummary(r.Cells[0].Summary),
		New:        newJSONSummary(c.Summary),
		ChangeUnit: changeUnit(r),
		Warnings:   []string{},
	}
	if d := c.Delta; d != nil {
		s := d.Stat
		j.Change = pnum(d.Change)
		if s.Test != "" {
			j.StatChange, j.CILo, j.CIHi, j.P = pnum(s.Change), pnum(s.Lo), pnum(s.Hi), pnum(s.P)
			if s.Confidence > 0 {
				j.Confidence = pnum(s.Confidence)
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

// WriteJSON prints t as one JSON object with every row (see the package
// doc for the fields); opt.All is ignored.
func WriteJSON(w io.Writer, t *compare.Table, opt Options) error {
	if err := check("json", t); err != nil {
		return err
	}
	reg, imp := Summary(t)
	doc := jsonReport{
		Version:      1,
		Alpha:        num(t.Alpha),
		Paired:       t.Paired,
		Regressions:  reg,
		Improvements: imp,
		Columns:      []jsonColumn{},
		Metrics:      []jsonMetric{},
	}
	for _, c := range t.Columns {
		doc.Columns = append(doc.Columns, jsonColumn{c.ID, c.Subject, c.Variant, c.Runs, c.Failed, c.Machines})
	}
	for k := range t.Rows {
		r := &t.Rows[k]
		m := jsonMetric{
			Metric:      r.Metric,
			Unit:        r.Unit,
			Better:      r.Better.String(),
			KPI:         r.KPI,
			Points:      r.Points,
			Changed:     r.Changed(),
			Summaries:   []jsonSummary{},
			Comparisons: []jsonComparison{},
		}
		for i, c := range r.Cells {
			s := newJSONSummary(c.Summary)
			s.Samples = make([]num, len(c.Samples))
			for k, x := range c.Samples {
				s.Samples[k] = num(x)
			}
			m.Summaries = append(m.Summaries, s)
			if i > 0 {
				m.Comparisons = append(m.Comparisons, newJSONComparison(t, r, i))
			}
		}
		doc.Metrics = append(doc.Metrics, m)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// csvNum formats a number for CSV: shortest exact form, "" for NaN and
// undefined values, "+Inf" and "-Inf".
func csvNum(x *num) string {
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
