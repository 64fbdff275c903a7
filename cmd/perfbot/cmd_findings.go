package main

import (
	"fmt"

	"github.com/spf13/cobra"

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
	l, err := cfg.FindingList(cmd.Context())
	if err != nil {
		return err
	}
	return report.WriteFindingList(a.stdout, l, format)
}
