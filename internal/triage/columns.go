// Experiment tables: each build's column, and helpers over values keyed
// by pair key.

package triage

import (
	"math"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/stats"
)

// columns summarises each target's runs and builds the 0-day table, with
// its failed runs (lkp's fail:runs row).
func (e *engine) columns(ts []target, labels []string, vals []runVals, failed []runFails) ([]Column, *compare.Table) {
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
		cols[i] = Column{Label: labels[i], Commit: commit.Hash, Variant: t.variant.Name, N: len(v), Failed: len(failed[i]), Median: stats.Median(v), Values: v}
		if i > 0 {
			cols[i].Change = pctChange(cols[0].Median, cols[i].Median)
		}
		tcols[i] = compare.Column{ID: commit.Hash, Subject: commit.Subject, Variant: t.variant.Name,
			Runs: len(v) + len(failed[i]), Failed: len(failed[i])}
		switch t.setup {
		case restoreSetup:
			tcols[i].Variant = "padding"
		case patchSetup:
			tcols[i].Variant = "patch"
		case controlSetup:
			tcols[i].Variant = ""
		}
		series.Samples[i] = samples(vals[i])
	}
	return cols, compare.Build(tcols, []compare.Series{series}, true, e.opt.Alpha)
}

// runVals are one build's runs' values, and runFails its failed runs'
// reasons, each keyed by the run's pair key: the machine and session that
// took it, its run number and the layout it was built under. Two builds'
// runs with equal keys ran in one round of one session.
type (
	runVals  = map[compare.Pair]float64
	runFails = map[compare.Pair]string
)

// pairKeyLess orders pair keys by run number, then session, machine and
// layout.
func pairKeyLess(a, b compare.Pair) int {
	switch {
	case a.Round != b.Round:
		return a.Round - b.Round
	case a.Session != b.Session:
		return strings.Compare(a.Session, b.Session)
	case a.Machine != b.Machine:
		return strings.Compare(a.Machine, b.Machine)
	}
	return a.Layout - b.Layout
}

// pairs returns the values of the runs both sides have under one pair key
// (the same round of one session on one machine), in run order.
func pairs(a, b runVals) (x, y []float64) {
	for _, k := range sortedKeys(a) {
		if v, ok := b[k]; ok {
			x = append(x, a[k])
			y = append(y, v)
		}
	}
	return x, y
}

// upTo returns the values of runs 1..n, in run order.
func upTo(m runVals, n int) []float64 {
	var out []float64
	for _, k := range sortedKeys(m) {
		if k.Round <= n {
			out = append(out, m[k])
		}
	}
	return out
}

func sortedKeys[V any](m map[compare.Pair]V) []compare.Pair {
	keys := make([]compare.Pair, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, pairKeyLess)
	return keys
}

func sortedValues(m runVals) []float64 {
	out := make([]float64, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}

// samples returns a build's runs as the samples of a comparison table,
// under their pair keys.
func samples(m runVals) []compare.Sample {
	out := make([]compare.Sample, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, compare.Sample{Pair: k, Value: m[k]})
	}
	return out
}

func pctChange(base, x float64) float64 {
	if base == 0 {
		return math.NaN()
	}
	return 100 * (x - base) / base
}
