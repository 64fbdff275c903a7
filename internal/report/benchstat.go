package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/stats"
)

// minCISamples is how many samples benchmath needs for a 95 % confidence
// interval of the median; with fewer, benchstat prints "∞".
const minCISamples = 6

// WriteBenchstat prints t as benchstat's text output: one table per unit
// (see the package doc). It prints every row; opt.All is ignored.
func WriteBenchstat(w io.Writer, t *compare.Table, opt Options) error {
	if err := check("benchstat", t); err != nil {
		return err
	}
	// Group the rows by tidied unit, in order of appearance.
	type unitRows struct {
		unit    string
		rows    []*compare.Row
		factors []float64
	}
	var units []*unitRows
	index := make(map[string]*unitRows)
	for i := range t.Rows {
		r := &t.Rows[i]
		factor, unit := benchunit.Tidy(1, r.Unit)
		u := index[unit]
		if u == nil {
			u = &unitRows{unit: unit}
			index[unit] = u
			units = append(units, u)
		}
		u.rows = append(u.rows, r)
		u.factors = append(u.factors, factor)
	}
	var b bytes.Buffer
	for i, u := range units {
		if i > 0 {
			b.WriteString("\n")
		}
		writeBenchTable(&b, t, u.unit, u.rows, u.factors)
	}
	if msg := versionsNote(t); msg != "" {
		b.WriteString("\nnote: " + msg + "\n")
	}
	if len(t.Columns) > 1 {
		for _, msg := range columnNotes(t) {
			b.WriteString("\nnote: " + msg + "\n")
		}
	}

	_, err := w.Write(b.Bytes())
	return err
}

// writeBenchTable prints one unit's table as benchstat's Table.ToText lays
// it out: per column a center group (median, "± range", footnotes) and,
// after the base, a delta group (change, "(p=… n=…)", footnotes).
func writeBenchTable(b *bytes.Buffer, t *compare.Table, unit string, rows []*compare.Row, factors []float64) {
	const centerCols, deltaCols = 3, 3
	start := func(col int) int {
		if col == 0 {
			return 1
		}
		return 1 + centerCols + (col-1)*(centerCols+deltaCols)
	}
	g := grid{shrink: make(map[int]bool)}
	var notes []string
	noteIndex := make(map[string]int)
	note := func(row, col int, errs ...[]error) {
		var marks []string
		for _, es := range errs {
			for _, e := range es {
				if e == nil {
					continue
				}
				s := e.Error()
				i, ok := noteIndex[s]
				if !ok {
					i = len(notes)
					noteIndex[s] = i
					notes = append(notes, s)
				}
				marks = append(marks, superscript(i+1))
			}
		}
		g.put(row, col, 1, strings.Join(marks, " "), 'l')
	}

	// Header: column names, then the unit and "vs base".
	n := len(t.Columns)
	for i, c := range t.Columns {
		l, r := start(i), start(i+1)
		g.put(0, l, r-l, shortID(c), 'c', " │ ")
	}
	g.put(0, start(n), 1, "", 'l', " │")
	for i := range t.Columns {
		l := start(i)
		g.put(1, l, centerCols, unit, 'c', " │ ")
		end := l + centerCols
		if i > 0 {
			g.put(1, end, deltaCols, "vs base", 'l', "  ")
			end += deltaCols
		}
		for j := l + 1; j < end; j++ {
			g.shrink[j] = true
		}
	}
	g.put(1, start(n), 1, "", 'l', " │")

	class := benchunit.ClassOf(unit)
	row := 2
	for k, r := range rows {
		g.put(row, 0, 1, r.Metric, 'l')
		var centers []float64
		for _, c := range r.Cells {
			if c.Summary.N > 0 {
				centers = append(centers, c.Summary.Median*factors[k])
			}
		}
		scaler := benchunit.CommonScale(centers, class)
		base := r.Cells[0].Summary
		for i, c := range r.Cells {
			if c.Summary.N == 0 {
				continue
			}
			l := start(i)
			g.put(row, l, 1, scaler.Format(c.Summary.Median*factors[k]), 'r')
			g.put(row, l+1, 1, pctRange(c.Summary), 'r', " ± ")
			note(row, l+2, c.Summary.Warnings)
			if i > 0 && base.N > 0 && c.Delta != nil {
				g.put(row, l+3, 1, benchDelta(c.Delta.Stat, base.Median, c.Summary.Median), 'r')
				g.put(row, l+4, 1, "("+benchTest(c.Delta.Stat, base.N, c.Summary.N)+")", 'l')
				note(row, l+5, c.Delta.Stat.Warnings)
			}
		}
		row++
	}

	if len(rows) > 1 {
		g.put(row, 0, 1, "geomean", 'l')
		nBase := 0
		for _, r := range rows {
			if r.Cells[0].Summary.N > 0 {
				nBase++
			}
		}
		for i := range t.Columns {
			var warns []error
			var centers, ratios []float64
			badRatio := false
			for k, r := range rows {
				c := r.Cells[i]
				if c.Summary.N == 0 {
					continue
				}
				centers = append(centers, c.Summary.Median*factors[k])
				if base := r.Cells[0].Summary; i > 0 && base.N > 0 {
					switch x, y := c.Summary.Median, base.Median; {
					case x == y:
						ratios = append(ratios, 1)
					case y == 0:
						badRatio = true
						ratios = append(ratios, 0)
					default:
						ratios = append(ratios, x/y)
					}
				}
			}
			if i > 0 && nBase != len(ratios) {
				warns = append(warns, fmt.Errorf("benchmark set differs from baseline; geomeans may not be comparable"))
			}
			if gm := geomean(centers); math.IsNaN(gm) {
				warns = append(warns, fmt.Errorf("summaries must be >0 to compute geomean"))
			} else {
				g.put(row, start(i), 1, benchunit.Scale(gm, class), 'r')
			}
			if i > 0 {
				gm := geomean(ratios)
				switch {
				case !badRatio && math.IsNaN(gm):
					warns = append(warns, fmt.Errorf("ratios must be >0 to compute geomean"))
					fallthrough
				case badRatio:
					g.put(row, start(i)+centerCols, 1, "?", 'l')
				default:
					g.put(row, start(i)+centerCols, 1, fmt.Sprintf("%+.2f%%", (gm-1)*100), 'r')
				}
			}
			note(row, start(i+1)-1, warns)
		}
	}

	g.write(b)
	for i, s := range notes {
		fmt.Fprintf(b, "%s %s\n", superscript(i+1), s)
	}
}

// pctRange is benchstat's "± N%": the larger distance from the median to
// an end of its confidence interval, "∞" when there is no interval.
func pctRange(s stats.Summary) string {
	if s.Lo == s.Hi && s.N < minCISamples {
		return "∞"
	}
	if s.Median < 0 && s.Lo < 0 && s.Hi < 0 {
		// benchmath's formula turns negative for a negative center
		// ("± -5%"); its mirror image gives the intended distance.
		return benchmath.Summary{Center: -s.Median, Lo: -s.Hi, Hi: -s.Lo}.PctRangeString()
	}
	return benchmath.Summary{Center: s.Median, Lo: s.Lo, Hi: s.Hi}.PctRangeString()
}

// benchDelta is benchstat's change of medians, "~" when not significant.
func benchDelta(c stats.Comparison, old, new float64) string {
	if !c.Significant {
		return "~"
	}
	return benchmath.Comparison{Alpha: 1}.FormatDelta(old, new)
}

// benchTest is benchstat's "p=0.002 n=10" (or "n=5+6").
func benchTest(c stats.Comparison, n1, n2 int) string {
	p := c.P
	if c.Test == "" || !finite(p) {
		p = 0 // benchmath omits p=0
	}
	return benchmath.Comparison{P: p, N1: n1, N2: n2}.String()
}

// geomean is the geometric mean of xs, NaN when xs is empty or has a value
// <= 0; it averages logs incrementally, as benchstat does.
func geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	m := 0.0
	for i, x := range xs {
		if !(x > 0) {
			return math.NaN()
		}
		m += (math.Log(x) - m) / float64(i+1)
	}
	return math.Exp(m)
}

// superscript writes i with superscript digits: ¹, ², ¹⁰.
func superscript(i int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	d := []rune(digits)
	var out []rune
	for _, c := range fmt.Sprint(i) {
		out = append(out, d[c-'0'])
	}
	return string(out)
}
