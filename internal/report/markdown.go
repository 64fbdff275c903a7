package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/stats"
)

// WriteMarkdown prints t as a GitHub-flavoured Markdown comment: a summary
// line, then per compared column a table of the changed rows (all rows
// with opt.All).
func WriteMarkdown(w io.Writer, t *compare.Table, opt Options) error {
	if err := check("markdown", t); err != nil {
		return err
	}
	var b bytes.Buffer
	base := t.Columns[0]
	reg, imp := Summary(t)
	other, small, total := 0, 0, 0
	for _, r := range t.Rows {
		for i, c := range r.Cells {
			if i == 0 {
				continue
			}
			total++
			switch d := c.Delta; {
			case t.Small(d) && r.KPI:
				small++
			case d != nil && d.Stat.Significant && !d.Regression && !d.Improvement:
				other++
			}
		}
	}
	regs := plural(reg, "regression", "regressions")
	if reg > 0 {
		regs = "**" + regs + "**"
	}
	fmt.Fprintf(&b, "%s, %s, %d unchanged", regs, plural(imp, "improvement", "improvements"), total-reg-imp-other-small)
	if small > 0 {
		fmt.Fprintf(&b, ", %s under %g%%", plural(small, "small change", "small changes"), t.EffectPct)
	}
	if other > 0 {
		fmt.Fprintf(&b, ", %s", plural(other, "other significant change", "other significant changes"))
	}
	if finite(t.Alpha) && t.Alpha > 0 {
		fmt.Fprintf(&b, " (p < %g)", t.Alpha)
	}
	b.WriteString("\n")

	if hasFailures(t) {
		b.WriteString("\nFailed runs:")
		for i, c := range t.Columns {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(&b, "%s %s %d of %d", sep, code(shortID(c)), c.Failed, c.Runs)
		}
		b.WriteString(".\n")
	}

	rows := shown(t, opt)
	switch {
	case len(rows) == 0:
		b.WriteString("\nNo metric changed.\n")
	case len(t.Columns) == 1:
		fmt.Fprintf(&b, "\n%s:\n\n| metric | %s |\n| --- | ---: |\n", columnTitle(base), code(shortID(base)))
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s |\n", code(r.Metric), mdValue(r.Cells[0].Summary))
		}
	default:
		header := ciLevel(stats.Comparison{}, t.Alpha)
		for i := 1; i < len(t.Columns); i++ {
			fmt.Fprintf(&b, "\n%s vs base %s:\n\n", columnTitle(t.Columns[i]), code(shortID(base)))
			fmt.Fprintf(&b, "| metric | base | new | change | %s | p |\n", header)
			b.WriteString("| --- | ---: | ---: | ---: | --- | ---: |\n")
			for _, r := range rows {
				writeMarkdownRow(&b, t, r, i, header)
			}
		}
	}
	if hidden := len(t.Rows) - len(rows); hidden > 0 && len(rows) > 0 {
		fmt.Fprintf(&b, "\n%s not shown.\n", plural(hidden, "unchanged metric", "unchanged metrics"))
	}
	if msg := versionsNote(t); msg != "" {
		b.WriteString("\nNote: " + mdEscape(msg) + ".\n")
	}
	if len(t.Columns) > 1 {
		for _, msg := range columnNotes(t) {
			b.WriteString("\nNote: " + mdEscape(msg) + ".\n")
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func writeMarkdownRow(b *bytes.Buffer, t *compare.Table, r *compare.Row, i int, header string) {
	c := r.Cells[i]
	d := c.Delta
	metric, change, ci, p := code(r.Metric), "-", "-", "-"
	if d != nil {
		change = strings.TrimSpace(lkpChange(d.Change, r.Points))
		switch {
		case t.Small(d):
			change += " small " + kind(d)
		case d.Regression:
			metric = "**" + metric + "**"
			change = "**" + change + "** regression"
		case d.Improvement:
			change += " improvement"
		case d.Stat.Significant:
			change += " significant"
		}
		if s := d.Stat; s.Test != "" {
			ci = fmt.Sprintf("[%s, %s]", pct(s.Lo), pct(s.Hi))
			if l := ciLevel(s, t.Alpha); l != header {
				ci += " (" + l + ")"
			}
			p = strings.TrimPrefix(pValue(s.P), "p=")
		}
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", metric, mdValue(r.Cells[0].Summary), mdValue(c.Summary), change, ci, p)
}

// mdValue is a mean as lkp prints it, with " ±N%" above 2 %.
func mdValue(s stats.Summary) string {
	if s.N == 0 {
		return "-"
	}
	v := strings.TrimSpace(lkpValue(s.Mean))
	if sd, ok := relStddev(s); ok {
		v += fmt.Sprintf(" ±%d%%", sd)
	}
	return v
}

// columnTitle names a column for a heading: its id and subject.
func columnTitle(c compare.Column) string {
	s := code(shortID(c))
	if c.Subject != "" {
		s += " (" + mdEscape(c.Subject) + ")"
	}
	return s
}

// code returns s as a Markdown code span usable in a table cell.
func code(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + strings.ReplaceAll(s, "|", `\|`) + fence
}

// mdEscape backslash-escapes the punctuation Markdown could act on.
func mdEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune("\\`*_[]<>|#&!~", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
