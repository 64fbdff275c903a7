package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
)

func newGCCmd(a *app) *cobra.Command {
	var storeDir, db string
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "gc JOB | gc --db URL",
		Short: "remove the job's build worktrees, keeping every result and cached artifact; or a fleet's unreferenced blobs",
		Long: `Gc removes the git worktrees perfbot keeps for each built commit and
variant (.perfbot/worktrees/), which for a kernel-sized repository are big.
Nothing measured is lost: the database, the run logs and the cached
artifacts (.perfbot/builds/) stay, and the next compare, triage or bisect
recreates a worktree from its commit and cached artifacts without building.
A worktree a build holds is left. perfbot watch does this by itself after
each cycle, within its watch file's gc budget (docs/watch.md, Disk).

With --db URL (and no JOB) it collects the fleet's blobs instead: it
removes the artifacts and logs in the fleet's database that no build
record, stored run, results-store build or unfinished job refers to and
that were stored or reused longer ago than --grace. A fleet server does
this by itself every hour (docs/fleet.md, Blobs).

Exit status: 0 success, 2 error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if db != "" {
				if len(args) > 0 {
					return fmt.Errorf("gc %s --db: give a JOB or --db, not both", args[0])
				}
				if grace <= 0 {
					return fmt.Errorf("--grace %v: want a positive duration", grace)
				}
				pool, err := fleet.Connect(ctx, db)
				if err != nil {
					return err
				}
				defer pool.Close()
				got, err := fleet.CollectBlobs(ctx, pool, grace)
				if err != nil {
					return fmt.Errorf("%s: %w", store.RedactURL(db), err)
				}
				a.logf("%s", got)
				return nil
			}
			if len(args) == 0 {
				return errors.New("gc: need a JOB (or --db URL for a fleet's blobs)")
			}
			jobs, err := job.Load(args[0])
			if err != nil {
				return err
			}
			s, err := a.open(ctx, jobs[0], storeDir)
			if err != nil {
				return err
			}
			defer s.Close()
			removed, dir, err := s.Builder.RemoveWorktrees(ctx)
			if err != nil {
				return err
			}
			a.logf("removed %d worktrees from %s; results and cached artifacts kept", removed, dir)
			return nil
		},
	}
	storeFlag(cmd.Flags(), &storeDir)
	cmd.Flags().StringVar(&db, "db", "", "a fleet's PostgreSQL URL: collect its unreferenced blobs")
	cmd.Flags().DurationVar(&grace, "grace", fleet.DefaultBlobGrace, "with --db: keep every blob stored or reused within this long")
	return cmd
}
