package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/perfbot/perfbot/internal/compare"
)

// Field widths of lkp's Compare module (lib/compare.rb).
const (
	absWidth = 10 // a value
	relWidth = 10 // a change
	errWidth = 6  // " ±NN%"
)

// FailedRunsStat is the name of the failure row printed by WriteNCompare
// when a column has failed runs, after lkp's "<program>.<stat>" names.
const FailedRunsStat = "perfbot.failed_runs"

// WriteNCompare prints t as lkp's ncompare table (see the package doc),
// followed by the list of significant tests.
func WriteNCompare(w io.Writer, t *compare.Table, opt Options) error {
	if err := check("ncompare", t); err != nil {
		return err
	}
	var b bytes.Buffer
	n := len(t.Columns) - 1

	// Commit header: ids right-aligned, cut to the column width.
	first := absWidth + errWidth
	width := first + relWidth + 1
	fmt.Fprintf(&b, "%*s ", first, cutLabel(t.Columns[0], first))
	for _, c := range t.Columns[1:] {
		fmt.Fprintf(&b, "%*s ", width, cutLabel(c, width))
	}
	b.WriteString("\n")
	b.WriteString(strings.Repeat("-", first) + " ")
	for range n {
		b.WriteString(strings.Repeat("-", width) + " ")
	}
	b.WriteString("\n")

	if hasFailures(t) {
		b.WriteString("       fail:runs" + strings.Repeat("  %reproduction    fail:runs", n) + "\n")
		b.WriteString("           |    " + strings.Repeat("         |             |    ", n) + "\n")
		writeFailureRow(&b, t)
	}

	rows := shown(t, opt)
	if len(rows) > 0 {
		b.WriteString("         %stddev" + strings.Repeat("     %change         %stddev", n) + "\n")
		b.WriteString("             \\  " + strings.Repeat("        |                \\  ", n) + "\n")
		for _, r := range rows {
			writePerfRow(&b, r)
		}
	}

	writeSignificant(&b, t, rows)
	writeNotes(&b, t, rows)
	_, err := w.Write(b.Bytes())
	return err
}

// writeNotes lists, once each, the statistical tests' warnings about the
// shown rows of the job's own metrics (too few runs to reach alpha, runs
// that were not interleaved), so that a quiet table is not mistaken for a
// clean bill.
func writeNotes(b *bytes.Buffer, t *compare.Table, rows []*compare.Row) {
	seen := map[string]int{}
	var order []string
	for _, r := range rows {
		if !r.KPI {
			continue
		}
		for i, c := range r.Cells {
			if i == 0 || c.Delta == nil {
				continue
			}
			for _, w := range c.Delta.Stat.Warnings {
				msg := shortID(t.Columns[i]) + ": " + w.Error()
				if seen[msg] == 0 {
					order = append(order, msg)
				}
				seen[msg]++
			}
		}
	}
	if ms := t.Machines(); len(ms) > 1 {
		msg := fmt.Sprintf("runs from %d machines (%s): runs pair only within a machine (the machine is a block); medians mix the machines' speeds", len(ms), strings.Join(ms, ", "))
		order = append([]string{msg}, order...)
		seen[msg] = 1
	}
	if msg := versionsNote(t); msg != "" {
		order, seen[msg] = append([]string{msg}, order...), 1
	}
	for _, msg := range columnNotes(t) {
		order, seen[msg] = append(order, msg), 1
	}
	if len(order) == 0 {
		return
	}
	b.WriteString("\nnotes:\n")
	for _, msg := range order {
		if n := seen[msg]; n > 1 {
			fmt.Fprintf(b, "  %s (%d metrics)\n", msg, n)
		} else {
			fmt.Fprintf(b, "  %s\n", msg)
		}
	}
}

func hasFailures(t *compare.Table) bool {
	for _, c := range t.Columns {
		if c.Failed > 0 {
			return true
		}
	}
	return false
}

// writeFailureRow prints lkp's "fail:runs  %reproduction  fail:runs" row
// for the failed runs of each column.
func writeFailureRow(b *bytes.Buffer, t *compare.Table) {
	base := t.Columns[0]
	for i, c := range t.Columns {
		if i > 0 {
			if base.Runs > 0 && c.Runs > 0 {
				p := 100 * (float64(c.Failed)/float64(c.Runs) - float64(base.Failed)/float64(base.Runs))
				fmt.Fprintf(b, "%*.0f%% ", relWidth, p)
			} else {
				fmt.Fprintf(b, "%*s  ", relWidth, "-")
			}
		}
		if c.Failed == 0 {
			fmt.Fprintf(b, "%*s", absWidth+1, "")
		} else {
			fmt.Fprintf(b, "%*d", absWidth+1, c.Failed)
		}
		fmt.Fprintf(b, ":%-*d", errWidth-2, c.Runs)
	}
	fmt.Fprintf(b, "  %s\n", FailedRunsStat)
}

// writePerfRow prints one metric the way lkp's show_perf_change does.
func writePerfRow(b *bytes.Buffer, r *compare.Row) {
	for i, c := range r.Cells {
		if i > 0 {
			if c.Delta == nil {
				b.WriteString(strings.Repeat(" ", relWidth+2))
			} else {
				b.WriteString(lkpChange(c.Delta.Change, r.Points))
			}
		}
		if c.Summary.N == 0 {
			fmt.Fprintf(b, "%*s", absWidth, "-")
		} else {
			b.WriteString(lkpValue(c.Summary.Mean))
		}
		if sd, ok := relStddev(c.Summary); ok {
			fmt.Fprintf(b, " ±%*d%%", errWidth-3, sd)
		} else {
			b.WriteString(strings.Repeat(" ", errWidth))
		}
	}
	fmt.Fprintf(b, "  %s\n", r.Metric)
}

// lkpValue formats a mean in lkp's 10-character value field: "%.2f" when
// |x| < 1000, "%.4g" when |x| > 1e8, otherwise the integer part (Ruby's
// "%d" of a Float truncates toward zero).
func lkpValue(x float64) string {
	a := math.Abs(x)
	switch {
	case !finite(x):
		return fmt.Sprintf("%*s", absWidth, nonFinite(x, false))
	case a < 1000:
		return fmt.Sprintf("%*.2f", absWidth, x)
	case a > 1e8:
		return fmt.Sprintf("%*.4g", absWidth, x)
	}
	return fmt.Sprintf("%*d", absWidth, int64(x))
}

// lkpChange formats a change in lkp's 12-character change field:
// "%+.1f%% " (or "%+.2g" from 100000 on), and points without "%".
func lkpChange(p float64, points bool) string {
	var s string
	switch {
	case !finite(p):
		s = fmt.Sprintf("%*s", relWidth, nonFinite(p, true))
	case math.Abs(p) < 100000:
		s = fmt.Sprintf("%+*.1f", relWidth, p)
	default:
		s = fmt.Sprintf("%+*.2g", relWidth, p)
	}
	if points {
		return s + "  "
	}
	return s + "% "
}

// writeSignificant lists the significant tests of the printed rows below
// the table, keeping the table lines exactly lkp's.
func writeSignificant(b *bytes.Buffer, t *compare.Table, rows []*compare.Row) {
	type line struct{ id, kind, detail, metric string }
	var lines []line
	small := false
	for _, r := range rows {
		for i, c := range r.Cells {
			if i == 0 || c.Delta == nil || !c.Delta.Stat.Significant {
				continue
			}
			s := c.Delta.Stat
			detail := fmt.Sprintf("%s, %s [%s, %s], %s", pct(s.Change), ciLevel(s, t.Alpha), pct(s.Lo), pct(s.Hi), pValue(s.P))
			if tn := testName(s); tn != "" {
				detail += ", " + tn
			}
			k := kind(c.Delta)
			if t.Small(c.Delta) {
				k, small = "small "+k, true
			}
			lines = append(lines, line{shortID(t.Columns[i]), k, detail, r.Metric})
		}
	}
	if len(lines) == 0 {
		return
	}
	var wid, wkind, wdetail int
	for _, l := range lines {
		wid = max(wid, len([]rune(l.id)))
		wkind = max(wkind, len(l.kind))
		wdetail = max(wdetail, len([]rune(l.detail)))
	}
	if finite(t.Alpha) && t.Alpha > 0 {
		fmt.Fprintf(b, "\nsignificant changes (p < %g):\n", t.Alpha)
	} else {
		b.WriteString("\nsignificant changes:\n")
	}
	for _, l := range lines {
		fmt.Fprintf(b, "  %-*s  %-*s  %-*s  %s\n", wid, l.id, wkind, l.kind, wdetail, l.detail, l.metric)
	}
	if small {
		fmt.Fprintf(b, "  (%s)\n", smallNote(t))
	}
}

// smallNote says what a small change is.
func smallNote(t *compare.Table) string {
	return fmt.Sprintf("small: under the %g%% change that counts; no change, not counted as a regression", t.EffectPct)
}

// NoChange is the one-line verdict of a comparison in which no change
// counts ("no change: 4 metrics within noise; smallest change that counts
// 5 %"), so that a quiet table is not read as an empty one; "" when a
// regression or improvement counts. Revisions not measured because only
// ignored paths changed are named with their reason.
func NoChange(t *compare.Table) string {
	if t == nil || len(t.Columns) < 2 {
		return ""
	}
	if counted(t) {
		return ""
	}
	var skipped []string
	measured := 0
	for _, c := range t.Columns[1:] {
		if c.Unchanged != "" {
			skipped = append(skipped, shortID(c)+" ("+c.Unchanged+")")
		} else {
			measured++
		}
	}
	if measured == 0 {
		return "no change: not measured, 0 runs: " + strings.Join(skipped, "; ")
	}
	kpi, all, changed := 0, 0, 0
	for i := range t.Rows {
		r := &t.Rows[i]
		all++
		if r.KPI {
			kpi++
			if r.Changed() {
				changed++
			}
		}
	}
	n := kpi
	if n == 0 {
		n = all
	}
	line := "no change: " + plural(n, "metric", "metrics") + " within noise"
	if changed > 0 {
		line = fmt.Sprintf("no change that counts: %s, %d shown as changed but not significant", plural(n, "metric", "metrics"), changed)
		if finite(t.EffectPct) && t.EffectPct > 0 {
			line += fmt.Sprintf(" beyond %g %%", t.EffectPct)
		}
	} else if finite(t.EffectPct) && t.EffectPct > 0 {
		line += fmt.Sprintf("; smallest change that counts %g %%", t.EffectPct)
	}
	if len(skipped) > 0 {
		line += "; not measured, 0 runs: " + strings.Join(skipped, "; ")
	}
	return line
}

// columnNotes says which columns were not measured (only ignored paths
// changed) and which were measured with one minimal look because their
// build artifacts are byte-identical to the base's.
func columnNotes(t *compare.Table) []string {
	var notes []string
	for _, c := range t.Columns[1:] {
		switch {
		case c.Unchanged != "":
			notes = append(notes, fmt.Sprintf("%s: unchanged, 0 runs: %s", shortID(c), c.Unchanged))
		case c.Identical:
			notes = append(notes, fmt.Sprintf("%s: the builds' artifacts are byte-identical; a script or data file outside them may still matter (measured with %s)", shortID(c), plural(c.Runs, "run", "runs")))
		}
	}
	return notes
}

// counted reports whether a change of the job's own metrics counts: a
// significant one (of any direction) not smaller than the effect that
// counts, or a regression or improvement the lkp rule decided.
func counted(t *compare.Table) bool {
	for i := range t.Rows {
		r := &t.Rows[i]
		if !r.KPI {
			continue
		}
		for _, c := range r.Cells {
			if d := c.Delta; d != nil && (d.Regression || d.Improvement || d.Stat.Significant) && !t.Small(d) {
				return true
			}
		}
	}
	return false
}
