// Experiment tables: each build's column, and helpers over values keyed
// by run number.

package triage

import (
	"math"
	"sort"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/stats"
)

// columns summarises each target's runs and builds the 0-day table, with
// its failed runs (lkp's fail:runs row).
func (e *engine) columns(ts []target, labels []string, vals []map[int]float64, failed []map[int]string) ([]Column, *compare.Table) {
	cols := make([]Column, len(ts))
	tcols := make([]compare.Column, len(ts))
	series := compare.Series{Metric: e.metricName(), KPI: true, Samples: make([][]compare.Sample, len(ts))}
	_, series.Unit, series.Better = e.lab.metricInfo()
	for i, t := range ts {
		commit := e.res.Base
		if t.changed {
			commit = e.res.Changed
		}
		v := sortedValues(vals[i])
		cols[i] = Column{Label: labels[i], Commit: commit.Hash, Variant: t.variant.Name, N: len(v), Failed: len(failed[i]), Median: stats.Median(v)}
		if i > 0 {
			cols[i].Change = pctChange(cols[0].Median, cols[i].Median)
		}
		tcols[i] = compare.Column{ID: commit.Hash, Subject: commit.Subject, Variant: t.variant.Name,
			Runs: len(v) + len(failed[i]), Failed: len(failed[i])}
		if t.setup == restoreSetup {
			tcols[i].Variant = "padding"
		} else if t.setup == controlSetup {
			tcols[i].Variant = ""
		}
		series.Samples[i] = samples(vals[i])
	}
	return cols, compare.Build(tcols, []compare.Series{series}, true, e.opt.Alpha)
}

// pairs returns the values of the runs both sides have, by run number.
func pairs(a, b map[int]float64) (x, y []float64) {
	runs := make([]int, 0, len(a))
	for r := range a {
		if _, ok := b[r]; ok {
			runs = append(runs, r)
		}
	}
	sort.Ints(runs)
	for _, r := range runs {
		x = append(x, a[r])
		y = append(y, b[r])
	}
	return x, y
}

func upTo(m map[int]float64, n int) []float64 {
	var out []float64
	for _, r := range sortedRuns(m) {
		if r <= n {
			out = append(out, m[r])
		}
	}
	return out
}

func sortedRuns(m map[int]float64) []int {
	runs := make([]int, 0, len(m))
	for r := range m {
		runs = append(runs, r)
	}
	sort.Ints(runs)
	return runs
}

func sortedValues(m map[int]float64) []float64 {
	var out []float64
	for _, r := range sortedRuns(m) {
		out = append(out, m[r])
	}
	return out
}

func samples(m map[int]float64) []compare.Sample {
	var out []compare.Sample
	for _, r := range sortedRuns(m) {
		out = append(out, compare.Sample{Pair: compare.Pair{Round: r}, Value: m[r]})
	}
	return out
}

func pctChange(base, x float64) float64 {
	if base == 0 {
		return math.NaN()
	}
	return 100 * (x - base) / base
}
