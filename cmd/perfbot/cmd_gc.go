package main

import (
	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/job"
)

func newGCCmd(a *app) *cobra.Command {
	var storeDir string
	cmd := &cobra.Command{
		Use:   "gc JOB",
		Short: "remove the job's build worktrees, keeping every result and cached artifact",
		Long: `Gc removes the git worktrees perfbot keeps for each built commit and
variant (.perfbot/worktrees/), which for a kernel-sized repository are big.
Nothing measured is lost: the database, the run logs and the cached
artifacts (.perfbot/builds/) stay, and the next compare, triage or bisect
recreates a worktree from its commit and cached artifacts without building.
A worktree a build holds is left. perfbot watch does this by itself after
each cycle, within its watch file's gc budget (docs/watch.md, Disk).

Exit status: 0 success, 2 error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			jobs, err := job.Load(args[0])
			if err != nil {
				return err
			}
			s, err := a.open(cmd.Context(), jobs[0], storeDir)
			if err != nil {
				return err
			}
			defer s.Close()
			removed, dir, err := s.Builder.RemoveWorktrees(cmd.Context())
			if err != nil {
				return err
			}
			a.logf("removed %d worktrees from %s; results and cached artifacts kept", removed, dir)
			return nil
		},
	}
	storeFlag(cmd.Flags(), &storeDir)
	return cmd
}
