package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/job"
)

func init() { commands = append(commands, newGCCmd) }

func newGCCmd(a *app) *cobra.Command {
	var storeDir string
	cmd := &cobra.Command{
		Use:   "gc JOB",
		Short: "remove the job's build worktrees, keeping every result and cached artifact",
		Long: `Gc removes the git worktrees perfbot keeps for each built commit and
variant (.perfbot/worktrees/), which for a kernel-sized repository are big.
Nothing measured is lost: the database, the run logs and the cached
artifacts (.perfbot/builds/) stay, and the next compare, triage or bisect
recreates a worktree from its commit and cached artifacts without building.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			jobs, err := job.Load(args[0])
			if err != nil {
				return err
			}
			s, err := openSession(cmd.Context(), jobs[0], storeDir)
			if err != nil {
				return err
			}
			defer s.close()
			dir := filepath.Join(s.store.Dir(), "worktrees")
			entries, err := os.ReadDir(dir)
			if err != nil && !os.IsNotExist(err) {
				return err
			}
			removed := 0
			for _, e := range entries {
				if !e.IsDir() {
					continue
				}
				if err := s.repo.RemoveWorktree(cmd.Context(), filepath.Join(dir, e.Name())); err != nil {
					return err
				}
				removed++
			}
			fmt.Fprintf(a.stderr, "perfbot: removed %d worktrees from %s; results and cached artifacts kept\n", removed, dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&storeDir, "store", "", "results store folder (default: .perfbot next to the job file)")
	return cmd
}
