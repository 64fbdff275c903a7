package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/stats"
)

// Options selects what Write prints.
type Options struct {
	// All prints unchanged rows too (ncompare and markdown; the other
	// formats always print every row).
	All bool
	// Format is one of Formats; "" means FormatNCompare.
	Format Format
}

// Write prints t in the format opt.Format. The text reports of a
// comparison in which no change counts (ncompare, markdown) start with
// its one-line verdict ([NoChange]), so that a quiet table is not read as
// an empty one; the tables embedded in other reports (triage, bisect) do
// not, as those carry their own verdict.
func Write(w io.Writer, t *compare.Table, opt Options) error {
	switch opt.Format {
	case "", "ncompare", "markdown":
		if line := NoChange(t); line != "" {
			if opt.Format == "markdown" {
				line = "**" + mdEscape(line) + "**"
			}
			if _, err := io.WriteString(w, line+"\n\n"); err != nil {
				return err
			}
		}
	}
	switch opt.Format {
	case "", "ncompare":
		return WriteNCompare(w, t, opt)
	case "benchstat":
		return WriteBenchstat(w, t, opt)
	case "json":
		return WriteJSON(w, t, opt)
	case "csv":
		return WriteCSV(w, t, opt)
	case "markdown":
		return WriteMarkdown(w, t, opt)
	case FormatBMF:
		return writeJobsBMF(w, []JobTable{{Table: t}})
	}
	return fmt.Errorf("report: unknown format %q (valid: %s)", opt.Format, JoinFormats(Formats))
}

// Summary counts the significant regressions and improvements of t, over
// every metric and every non-base column.
func Summary(t *compare.Table) (regressions, improvements int) {
	if t == nil {
		return 0, 0
	}
	return t.Regressions()
}

// check rejects tables the writers cannot lay out.
func check(format string, t *compare.Table) error {
	if t == nil {
		return fmt.Errorf("report %s: no table", format)
	}
	if len(t.Columns) == 0 {
		return fmt.Errorf("report %s: table has no columns", format)
	}
	for i, r := range t.Rows {
		if len(r.Cells) != len(t.Columns) {
			return fmt.Errorf("report %s: row %d (%q) has %d cells for %d columns", format, i+1, r.Metric, len(r.Cells), len(t.Columns))
		}
	}
	return nil
}

// shown returns the rows to print: the changed ones, or all with opt.All.
func shown(t *compare.Table, opt Options) []*compare.Row {
	var rows []*compare.Row
	for i := range t.Rows {
		if r := &t.Rows[i]; opt.All || r.Changed() {
			rows = append(rows, r)
		}
	}
	return rows
}

// shortID returns a column's label for prose: a commit hash cut to 12
// digits (file names stay whole), with "/variant" for build variants.
func shortID(c compare.Column) string {
	id := c.ID
	if len(id) > 12 && isHex(id) {
		id = id[:12]
	}
	if c.Variant != "" {
		id += "/" + c.Variant
	}
	return id
}

// cutLabel returns a column's header label of at most width characters,
// lkp's commit id cut to width; a variant keeps its place at the end.
func cutLabel(c compare.Column, width int) string {
	if c.Variant == "" {
		return cut(c.ID, width)
	}
	suffix := "/" + c.Variant
	keep := max(width-len([]rune(suffix)), 7)
	return cut(cut(c.ID, keep)+suffix, width)
}

// cut returns s cut to n characters.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// nonFinite names NaN and the infinities; plus asks for "+Inf".
func nonFinite(x float64, plus bool) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case x > 0 && plus:
		return "+Inf"
	case x > 0:
		return "Inf"
	}
	return "-Inf"
}

// relStddev returns the " ±NN%" figure lkp prints for s, and whether lkp
// prints it: with two or more runs and above 2 %.
func relStddev(s stats.Summary) (int64, bool) {
	rel := s.RelStddev
	if s.N < 2 || !(rel > 2) || rel >= math.MaxInt64 {
		return 0, false
	}
	return int64(rel), true
}

// ciLevel returns the label of c's interval: the nominal level 1-alpha,
// or the actual coverage when too few samples made it lower.
func ciLevel(c stats.Comparison, alpha float64) string {
	level := 1 - alpha
	if !(alpha > 0 && alpha < 1) {
		level = 0
	}
	if c.Confidence > 0 && (level == 0 || c.Confidence < level-1e-9) {
		level = c.Confidence
	}
	if level == 0 {
		return "CI"
	}
	return fmt.Sprintf("%s%% CI", trimFloat(100*level))
}

// trimFloat prints x with at most one decimal, without a trailing ".0".
func trimFloat(x float64) string {
	s := fmt.Sprintf("%.1f", x)
	return strings.TrimSuffix(s, ".0")
}

// pct formats a signed percentage with one decimal: "-7.9%".
func pct(x float64) string {
	if !finite(x) {
		return nonFinite(x, true) + "%"
	}
	return fmt.Sprintf("%+.1f%%", x)
}

// pValue formats a p-value for prose: "p=0.002", "p<0.001".
func pValue(p float64) string {
	switch {
	case !finite(p):
		return "p=" + nonFinite(p, false)
	case p < 0.001:
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.3f", p)
}

// testName describes the test of c: "wilcoxon n=10", or "" when none ran.
func testName(c stats.Comparison) string {
	if c.Test == "" {
		return ""
	}
	return fmt.Sprintf("%s n=%d", c.Test, c.N)
}

// kind names a significant delta.
func kind(d *compare.Delta) string {
	switch {
	case d.Regression:
		return "regression"
	case d.Improvement:
		return "improvement"
	}
	return "change"
}
