package report

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/report/doc"
)

// WriteFindingList prints perfbot findings' listing: text (a table, one
// finding a line, then each job's counts) or json (the document itself,
// docs/json.md).
func WriteFindingList(w io.Writer, l *doc.FindingList, format Format) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(l)
	case "", FormatText:
	default:
		return fmt.Errorf("findings: %w", CheckFormat(format, ListFormats))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "culprit\tverdict\tchange\tmetric\tstate\tlayout cause\tsubject")
	for _, e := range l.Findings {
		f, err := finding.Decode(e.Finding)
		if err != nil {
			return fmt.Errorf("finding %s in %s: %w", gitrev.Short(e.Culprit), e.Store, err)
		}
		state := e.State
		if e.Withdrawn {
			state += " (withdrawn)"
		}
		if e.Reason != "" {
			state += ": " + e.Reason
		}
		cause := f.LayoutCause
		if cause == "" {
			cause = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%+.1f%%\t%s\t%s\t%s\t%s\n", gitrev.Short(e.Culprit), f.Verdict, f.Change, f.Metric, state, cause, f.Subject)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, j := range l.Jobs {
		if _, err := fmt.Fprintf(w, "job %s: %d findings, %d dismissed\n", j.Job, j.Findings, j.Dismissed); err != nil {
			return err
		}
	}
	return nil
}
