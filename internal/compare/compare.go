// Package compare turns stored samples of several commits into a comparison:
// for each metric, a summary per commit and, against the first commit, the
// change with both the lkp "changed" rule and a statistical test. It makes
// decisions (changed, significant, regression) and leaves the printing to
// package report.
package compare

import (
	"math"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
)

// Table is a comparison of several commits (columns) over many metrics (rows).
// Column 0 is the base.
type Table struct {
	Columns []Column
	Rows    []Row
	// Paired is true when column samples are interleaved pairs (run i of
	// every commit ran in the same round), which allows the signed-rank test.
	Paired bool
	Alpha  float64
	// EffectPct is the smallest change, in percent, that counts: a
	// significant change smaller than it is shown and marked ([Table.Small])
	// but is no change for [Table.Regressions]. 0 counts every significant
	// change.
	EffectPct float64
}

// Column is one commit (or one file, for Go benchmark result files).
type Column struct {
	ID      string // full commit hash, or the file name
	Subject string // commit subject, "" for files
	Variant string // build variant, "" for the plain build
	Runs    int    // runs attempted
	Failed  int    // runs that failed (crash, timeout, missing metric)
	// Failures groups the failed runs by status (tables read from the
	// store; see FromStore).
	Failures []Failure
	// Machines are the machines that took the column's runs, sorted
	// (tables read from the store; "" for runs that do not say).
	Machines []string
	// Versions are the perfbot versions that took the column's runs,
	// sorted (tables read from the store; "" for runs that do not say).
	Versions []string
	// Unchanged, when not "", says why the column was not measured (0
	// runs, no samples): its diff from the base touches only paths the
	// job ignores ("only ignored paths changed: README.md").
	Unchanged string
	// Identical is true when the column's build artifacts load the same
	// bytes as the base's although its diff touches other paths: it was
	// measured with one minimal look, which a script or data file outside
	// the artifacts can still change.
	Identical bool
}

// Versions returns the perfbot versions that took the table's runs,
// sorted: more than one means the runs were not all measured the same
// way, and a change may be perfbot's.
func (t *Table) Versions() []string {
	var vs []string
	for _, c := range t.Columns {
		for _, v := range c.Versions {
			vs = addMachine(vs, v)
		}
	}
	return vs
}

// Machines returns the machines that took the table's runs, sorted: more
// than one means runs pair only within a machine (the machine is a
// block), and unpaired runs differ by machine speed as well as by commit.
func (t *Table) Machines() []string {
	var ms []string
	for _, c := range t.Columns {
		for _, m := range c.Machines {
			ms = addMachine(ms, m)
		}
	}
	return ms
}

// Row is one metric across all columns.
type Row struct {
	Metric string
	Unit   string
	Better metric.Better
	// KPI is true for the job's own metrics, false for perfbot's builtin
	// resource metrics (lkp's "monitors"); it selects the 1.01 vs 1.05
	// ratio threshold of the lkp rule.
	KPI bool
	// Points is true for metrics whose name ends in "%", and for the
	// perf-profile monitor's shares of a profile (as lkp shows them):
	// changes are absolute differences in points, not percent.
	Points bool
	Cells  []Cell // one per column
}

// Cell is one metric of one column.
type Cell struct {
	Samples []float64 // in run order; for paired tables Samples[i] is round i
	Summary stats.Summary
	// Delta is the comparison with column 0; nil in column 0 and where a
	// side has no samples.
	Delta *Delta
}

// Delta is one column's change against the base.
type Delta struct {
	// Change is 100*(mean-baseMean)/baseMean, or the difference of means in
	// points when Row.Points (lkp's %change column).
	Change float64
	// LKPChanged is lkp's "the samples separate" rule.
	LKPChanged bool
	// Stat is the statistical test (Wilcoxon signed-rank on pairs when the
	// table is paired, Mann-Whitney U otherwise).
	Stat stats.Comparison
	// Regression and Improvement are set when the change is significant
	// (Stat.Significant) in the bad or good direction of Row.Better.
	Regression, Improvement bool
	// rel is the change of the means in percent of the base's mean, also
	// on a Points row (for Table.EffectPct).
	rel float64
}

// Effect is the size of the change that decided d, in percent: the
// test's estimate when the test is significant, else (the lkp rule
// decided) the change of the means.
func (d *Delta) Effect() float64 {
	if d.Stat.Significant {
		return d.Stat.Change
	}
	return d.rel
}

// Small reports whether d is a significant regression or improvement
// smaller than the table's EffectPct: shown, but no change.
func (t *Table) Small(d *Delta) bool {
	if d == nil || t.EffectPct <= 0 || !(d.Regression || d.Improvement) {
		return false
	}
	return math.Abs(d.Effect()) < t.EffectPct
}

// Changed reports whether any non-base cell of the row changed, by the lkp
// rule or by the statistical test.
func (r *Row) Changed() bool {
	for _, c := range r.Cells {
		if c.Delta != nil && (c.Delta.LKPChanged || c.Delta.Stat.Significant) {
			return true
		}
	}
	return false
}

// Failure is a kind of failed run of a column.
type Failure struct {
	Status  string   // the store's status of these runs: crashed, timeout, no-metric or error
	Count   int      // runs that failed so
	Reasons []string // their distinct reasons, in run order
	LogDir  string   // where their logs are
}

// AddMachine adds machine m (a run's) to the column's sorted set of
// machines, unless m is "" or there already.
func (c *Column) AddMachine(m string) { c.Machines = addMachine(c.Machines, m) }

// AddVersion adds perfbot version v (a run's) to the column's sorted set
// of versions, unless v is "" or there already.
func (c *Column) AddVersion(v string) { c.Versions = addMachine(c.Versions, v) }
