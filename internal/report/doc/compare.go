// The JSON report of a comparison.

package doc

// Compare is the JSON report of perfbot compare (-f json): one table per
// atomic job (one for two benchmark files or a job without a params
// matrix), so the shape is the same whether or not the job has one.
// Regressions and Improvements count over every table.
type Compare struct {
	Version      int            `json:"version"`
	Regressions  int            `json:"regressions"`
	Improvements int            `json:"improvements"`
	Tables       []CompareTable `json:"tables"`
}

// The parts of a [Compare]. CompareTable's Job and JobKey name the atomic
// job; both are "" for a comparison of files.
type (
	CompareTable struct {
		Job       string `json:"job"`
		JobKey    string `json:"job_key"`
		Alpha     Num    `json:"alpha"`
		EffectPct Num    `json:"effect_pct"`
		// Verdict is the one-line verdict of a table in which no change
		// counts (omitted when one does).
		Verdict      string          `json:"verdict,omitempty"`
		Paired       bool            `json:"paired"`
		Regressions  int             `json:"regressions"`
		Improvements int             `json:"improvements"`
		Columns      []CompareColumn `json:"columns"`
		Metrics      []CompareMetric `json:"metrics"`
	}
	CompareColumn struct {
		ID      string `json:"id"`
		Subject string `json:"subject"`
		Variant string `json:"variant"`
		Runs    int    `json:"runs"`
		Failed  int    `json:"failed"`
		// Machines took the column's runs (omitted when not recorded).
		Machines []string `json:"machines,omitempty"`
		// Versions are the perfbot versions that took the column's runs
		// (omitted when not recorded).
		Versions []string `json:"versions,omitempty"`
		// Unchanged says why the column was not measured (0 runs): only
		// paths the job ignores changed (omitted when it was measured).
		Unchanged string `json:"unchanged,omitempty"`
		// Identical: the column's artifacts are byte-identical to the
		// base's, measured with one minimal look (omitted when false).
		Identical bool `json:"identical,omitempty"`
	}
	CompareMetric struct {
		Metric      string           `json:"metric"`
		Unit        string           `json:"unit"`
		Better      string           `json:"better"`
		KPI         bool             `json:"kpi"`
		Points      bool             `json:"points"`
		Changed     bool             `json:"changed"`
		Summaries   []CompareSummary `json:"summaries"`
		Comparisons []Comparison     `json:"comparisons"`
	}
	CompareSummary struct {
		N         int      `json:"n"`
		Mean      *Num     `json:"mean"`
		Median    *Num     `json:"median"`
		Stddev    *Num     `json:"stddev"`
		RelStddev *Num     `json:"rel_stddev"`
		Min       *Num     `json:"min"`
		Max       *Num     `json:"max"`
		CILo      *Num     `json:"ci_lo"`
		CIHi      *Num     `json:"ci_hi"`
		Samples   []Num    `json:"samples,omitempty"`
		Warnings  []string `json:"warnings,omitempty"`
	}
	Comparison struct {
		Column      int            `json:"column"`
		ColumnID    string         `json:"column_id"`
		Base        CompareSummary `json:"base"`
		New         CompareSummary `json:"new"`
		Change      *Num           `json:"change"`
		ChangeUnit  string         `json:"change_unit"`
		StatChange  *Num           `json:"stat_change"`
		CILo        *Num           `json:"ci_lo"`
		CIHi        *Num           `json:"ci_hi"`
		Confidence  *Num           `json:"confidence"`
		P           *Num           `json:"p"`
		Test        string         `json:"test"`
		N           int            `json:"n"`
		Significant bool           `json:"significant"`
		Regression  bool           `json:"regression"`
		Improvement bool           `json:"improvement"`
		LKPChanged  bool           `json:"lkp_changed"`
		// Small: a significant change under the table's effect_pct, not
		// counted in regressions (omitted when not).
		Small    bool     `json:"small,omitempty"`
		Warnings []string `json:"warnings"`
	}
)
