package main

import (
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/watch"
)

func newFindingsCmd(a *app) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "findings WATCHFILE [ack|dismiss|reopen COMMIT]",
		Short: "list perfbot watch's findings, or set one's state",
		Long: `Findings lists the findings perfbot watch recorded in the stores of the watch
file's jobs: one per culprit commit, newest first, with its verdict, state
(untriaged, acknowledged, dismissed) and whether later cycles withdrew it.

  perfbot findings watch.yaml                         list
  perfbot findings watch.yaml ack 3f2a1c9             acknowledge
  perfbot findings watch.yaml dismiss 3f2a1c9 --reason "known alignment bump"
  perfbot findings watch.yaml reopen 3f2a1c9          back to untriaged`,
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := watch.Load(args[0])
			if err != nil {
				return err
			}
			if len(args) == 1 {
				return listFindings(cmd, a, cfg)
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
	return cmd
}

func listFindings(cmd *cobra.Command, a *app, cfg *watch.Config) error {
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
