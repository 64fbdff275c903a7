package report

import (
	"fmt"
	"io"

	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
)

// WriteFailures writes one line per kind of failed run of each column of
// a table read from the store: how many of the column's runs failed so,
// the first reason, and where the logs are. The lines are diagnostics,
// for stderr.
func WriteFailures(w io.Writer, t *compare.Table) error {
	for _, c := range t.Columns {
		name := gitrev.Short(c.ID)
		if c.Variant != "" {
			name += "+" + c.Variant
		}
		for _, f := range c.Failures {
			reason := f.Reasons[0]
			switch n := len(f.Reasons) - 1; {
			case n == 1:
				reason += " (and 1 other reason)"
			case n > 1:
				reason += fmt.Sprintf(" (and %d other reasons)", n)
			}
			if _, err := fmt.Fprintf(w, "perfbot: %s: %d of %d runs failed (%s): %s (logs under %s)\n",
				name, f.Count, c.Runs, f.Status, reason, f.LogDir); err != nil {
				return err
			}
		}
	}
	return nil
}
