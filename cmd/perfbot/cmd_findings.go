package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/watch"
)

func newFindingsCmd(a *app) *cobra.Command {
	var reason string
	var format report.Format
	cmd := &cobra.Command{
		Use:   "findings WATCHFILE [ack|dismiss|reopen COMMIT]",
		Short: "list perfbot watch's findings, or set one's state",
		Long: `Findings lists the findings perfbot watch recorded in the stores of the watch
file's jobs: one per culprit commit, newest first, with its verdict, state
(untriaged, acknowledged, dismissed) and whether later cycles withdrew it.

  perfbot findings watch.yaml                         list
  perfbot findings watch.yaml ack 3f2a1c9             acknowledge
  perfbot findings watch.yaml dismiss 3f2a1c9 --reason "known alignment bump"
  perfbot findings watch.yaml reopen 3f2a1c9          back to untriaged

-f json prints the list as one JSON document: {"version": 1, "findings":
[...]}, each entry the culprit, its store, state, reason, whether it was
withdrawn, when it was found, and the finding as perfbot watch stored it
(docs/json.md).

Exit status: 0 success, 2 error (an unknown commit or state, a bad watch
file or store).`,
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := watch.Load(args[0])
			if err != nil {
				return err
			}
			if len(args) == 1 {
				return listFindings(cmd, a, cfg, format)
			}
			if len(args) != 3 {
				return fmt.Errorf("%s: want a commit after it", args[1])
			}
			state := map[string]store.FindingState{"ack": store.Acknowledged, "dismiss": store.Dismissed, "reopen": store.Untriaged}[args[1]]
			if state == "" {
				return fmt.Errorf("%q: want ack, dismiss or reopen", args[1])
			}
			culprit, err := cfg.SetState(cmd.Context(), args[2], state, reason)
			if err != nil {
				return err
			}
			a.logf("finding %s is %s", gitrev.Short(culprit), state)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why a finding is dismissed (required with dismiss)")
	formatFlag(cmd.Flags(), &format, report.ListFormats)
	return cmd
}

func listFindings(cmd *cobra.Command, a *app, cfg *watch.Config, format report.Format) error {
	fs, err := cfg.Findings(cmd.Context())
	if err != nil {
		return err
	}
	// Findings that share a layout cause are listed together, under it.
	decoded := make([]*finding.Finding, len(fs))
	for i, r := range fs {
		if decoded[i], err = finding.Decode(r.Data); err != nil {
			return err
		}
	}
	order := finding.GroupByCause(decoded)
	if format == report.FormatJSON {
		return writeFindingsJSON(a.stdout, fs, order)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "culprit\tverdict\tchange\tmetric\tstate\tlayout cause\tsubject")
	for _, i := range order {
		r, f := fs[i], decoded[i]
		state := string(r.State)
		if r.Withdrawn {
			state += " (withdrawn)"
		}
		if r.Reason != "" {
			state += ": " + r.Reason
		}
		cause := f.LayoutCause
		if cause == "" {
			cause = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%+.1f%%\t%s\t%s\t%s\t%s\n", gitrev.Short(r.Culprit), f.Verdict, f.Change, f.Metric, state, cause, f.Subject)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	stats := watch.JobStats(fs)
	jobs := make([]string, 0, len(stats))
	for j := range stats {
		jobs = append(jobs, j)
	}
	sort.Strings(jobs)
	for _, j := range jobs {
		fmt.Fprintf(a.stdout, "job %s: %d findings, %d dismissed\n", j, stats[j][0], stats[j][1])
	}
	return nil
}

// findingsJSON is findings -f json: version 1 of the listing.
type findingsJSON struct {
	Version  int                `json:"version"`
	Findings []findingJSONEntry `json:"findings"`
}

type findingJSONEntry struct {
	Culprit   string          `json:"culprit"`
	Store     string          `json:"store"`
	State     string          `json:"state"`
	Reason    string          `json:"reason,omitempty"`
	Withdrawn bool            `json:"withdrawn"`
	Found     time.Time       `json:"found"`
	Finding   json.RawMessage `json:"finding"`
}

// writeFindingsJSON prints the findings fs in the listing's order.
func writeFindingsJSON(w io.Writer, fs []watch.Listed, order []int) error {
	doc := findingsJSON{Version: 1, Findings: []findingJSONEntry{}}
	for _, i := range order {
		r := fs[i]
		doc.Findings = append(doc.Findings, findingJSONEntry{Culprit: r.Culprit, Store: r.Store, State: string(r.State),
			Reason: r.Reason, Withdrawn: r.Withdrawn, Found: r.Created, Finding: r.Data})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
