package compare

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/stats"
)

// DefaultAlpha is the significance level of the statistical tests.
const DefaultAlpha = 0.05

// Series is one metric's stored samples, one slice per column.
type Series struct {
	Metric string
	Unit   string
	Better metric.Better
	KPI    bool
	// Samples[c] are column c's samples, a run's samples adjacent. Several
	// samples of one run (a benchmark that prints a metric more than once
	// per process) are reduced to their median ([PerRun]): the run is the
	// unit of measurement.
	Samples [][]Sample
}

// Build makes the comparison table, one row per series, the job's own
// metrics (KPI) before perfbot's monitors. When paired is true, column samples
// with the same [Pair] were taken in the same round, and the test is
// the Wilcoxon signed-rank test on those pairs; otherwise Mann-Whitney U.
// alpha <= 0 means DefaultAlpha.
func Build(cols []Column, series []Series, paired bool, alpha float64) *Table {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	// lkp's order: the job's own metrics first, then the monitors, each in
	// the order given.
	series = slices.Clone(series)
	slices.SortStableFunc(series, func(a, b Series) int {
		switch {
		case a.KPI == b.KPI:
			return 0
		case a.KPI:
			return -1
		}
		return 1
	})
	t := &Table{Columns: cols, Paired: paired, Alpha: alpha, Rows: make([]Row, len(series))}
	// Rows are independent: spread them over the CPUs. Each worker writes
	// only its own rows, so the table is the same whatever the scheduling.
	workers := runtime.GOMAXPROCS(0)
	if len(series) < 64 {
		workers = 1
	}
	var wg sync.WaitGroup
	chunk := (len(series) + workers - 1) / max(workers, 1)
	for lo := 0; lo < len(series); lo += chunk {
		hi := min(lo+chunk, len(series))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				t.Rows[i] = buildRow(cols, series[i], paired, alpha)
			}
		}()
	}
	wg.Wait()
	return t
}

// buildRow summarises and compares one metric.
func buildRow(cols []Column, s Series, paired bool, alpha float64) Row {
	row := Row{
		Metric: s.Metric, Unit: s.Unit, Better: s.Better, KPI: s.KPI,
		Points: inPoints(s.Metric),
		Cells:  make([]Cell, len(cols)),
	}
	runs := make([][]RunValue, len(cols))
	for c := range cols {
		if c < len(s.Samples) {
			runs[c] = PerRun(s.Samples[c])
		}
		row.Cells[c].Samples = values(runs[c])
		row.Cells[c].Summary = stats.Summarize(row.Cells[c].Samples)
	}
	base := row.Cells[0].Samples
	for c := 1; c < len(cols); c++ {
		cur := row.Cells[c].Samples
		if len(base) == 0 || len(cur) == 0 {
			continue
		}
		d := &Delta{LKPChanged: stats.LKPChanged(base, cur, row.KPI)}
		bm, cm := row.Cells[0].Summary.Mean, row.Cells[c].Summary.Mean
		if bm != 0 {
			d.rel = 100 * (cm - bm) / bm
		}
		d.Change = d.rel
		if row.Points {
			d.Change = cm - bm
		}
		d.Stat = compareCells(runs[0], runs[c], base, cur, paired, alpha)
		d.decide(row.Better, len(base), len(cur), alpha)
		row.Cells[c].Delta = d
	}
	return row
}

// Regressions counts the significant regressions and improvements of the
// job's own metrics (KPI rows) at least EffectPct large. perfbot's builtin
// resource figures (lkp's monitors) are reported but do not count: a job
// names what it gates on; nor does a change smaller than the effect that
// counts ([Table.Small]).
func (t *Table) Regressions() (regressions, improvements int) {
	for _, r := range t.Rows {
		if !r.KPI {
			continue
		}
		for _, c := range r.Cells {
			if c.Delta == nil || t.Small(c.Delta) {
				continue
			}
			if c.Delta.Regression {
				regressions++
			}
			if c.Delta.Improvement {
				improvements++
			}
		}
	}
	return regressions, improvements
}

// decide sets Regression and Improvement from the test (Stat.Significant)
// and, when there are too few runs (nBase, nCur) for any distribution-free
// test to reach alpha, from the lkp rule, with a note.
func (d *Delta) decide(better metric.Better, nBase, nCur int, alpha float64) {
	d.Regression, d.Improvement = false, false
	switch {
	case d.Stat.Significant && !math.IsNaN(d.Stat.Change) && d.Stat.Change != 0:
		worse := (d.Stat.Change > 0) == (better == metric.LowerIsBetter)
		d.Regression, d.Improvement = worse, !worse
	case d.LKPChanged && d.Change != 0 && stats.MinUnpairedP(nBase, nCur) > alpha:
		// Too few runs for any distribution-free test to reach alpha:
		// the 0-day robot's rule decides, and the note says so.
		worse := (d.Change > 0) == (better == metric.LowerIsBetter)
		d.Regression, d.Improvement = worse, !worse
		d.Stat.Warnings = append(d.Stat.Warnings, fmt.Errorf("%d and %d runs are too few for a test at p < %g: decided by the lkp rule alone", nBase, nCur, alpha))
	}
}

// AdjustFDR controls the false discovery rate over the job's metrics (KPI
// rows), column by column, with the Benjamini-Hochberg procedure: each
// cell's P becomes its adjusted p-value, Significant and the regression
// decision follow it, and a note says so. Use it when a job has
// many metrics (a Go benchmark package): at alpha 0.05, 1,000 unchanged
// metrics give about 50 false alarms without it, as benchstat does.
func (t *Table) AdjustFDR() {
	for c := 1; c < len(t.Columns); c++ {
		var cells []*Delta
		var rows []*Row
		for i := range t.Rows {
			r := &t.Rows[i]
			if d := r.Cells[c].Delta; r.KPI && d != nil && d.Stat.Test != "" {
				cells = append(cells, d)
				rows = append(rows, r)
			}
		}
		ps := make([]float64, len(cells))
		for i, d := range cells {
			ps[i] = d.Stat.P
		}
		adj := stats.BenjaminiHochberg(ps)
		for i, d := range cells {
			raw := d.Stat.P
			d.Stat.P = adj[i]
			d.Stat.Significant = adj[i] < t.Alpha
			if adj[i] != raw {
				d.Stat.Warnings = append(d.Stat.Warnings, fmt.Errorf("p-values adjusted over %d metrics (Benjamini-Hochberg false discovery rate)", len(cells)))
			}
			d.decide(rows[i].Better, len(rows[i].Cells[0].Samples), len(rows[i].Cells[c].Samples), t.Alpha)
		}
	}
}

// compareCells runs the statistical test of one cell against the base: the
// signed-rank test on the interleaved pairs when the table is paired, most
// runs are pairs (runs taken in another session have other run numbers, see
// Series) and there are enough pairs for the test to reach alpha at all;
// otherwise Mann-Whitney U on all runs, with a warning that says why.
func compareCells(baseRuns, curRuns []RunValue, base, cur []float64, paired bool, alpha float64) stats.Comparison {
	if !paired {
		return stats.CompareUnpaired(base, cur, alpha)
	}
	a, b := pairs(baseRuns, curRuns)
	n := min(len(base), len(cur))
	var why error
	switch {
	case 5*len(a) < 4*n:
		if ms := machinesOf(baseRuns, curRuns); len(ms) > 1 {
			why = fmt.Errorf("only %d of %d runs are interleaved pairs (runs of different machines never pair: %s): compared unpaired (Mann-Whitney), exposed to the machines' different speeds", len(a), n, strings.Join(ms, ", "))
		} else {
			why = fmt.Errorf("only %d of %d runs are interleaved pairs (the others were taken in another session): compared unpaired (Mann-Whitney), exposed to drift between sessions", len(a), n)
		}
	case stats.MinPairedP(len(a)) > alpha:
		why = fmt.Errorf("%d pairs cannot reach p < %g with the signed-rank test (need %d): compared unpaired (Mann-Whitney)", len(a), alpha, stats.PairsNeeded(alpha))
	default:
		return stats.ComparePaired(a, b, alpha)
	}
	c := stats.CompareUnpaired(base, cur, alpha)
	c.Warnings = append([]error{why}, c.Warnings...)
	return c
}

// machinesOf returns the named machines that took the runs, sorted.
func machinesOf(runs ...[]RunValue) []string {
	var ms []string
	for _, rs := range runs {
		for _, r := range rs {
			ms = addMachine(ms, r.Pair.Machine)
		}
	}
	return ms
}

// addMachine adds machine m to the sorted set ms, unless it is "" (runs
// that do not say) or there already.
func addMachine(ms []string, m string) []string {
	i, found := slices.BinarySearch(ms, m)
	if m == "" || found {
		return ms
	}
	return slices.Insert(ms, i, m)
}
