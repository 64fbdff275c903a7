package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/measure"
)

type workerFlags struct {
	db, class, machine, dir, cpu string
	heartbeat                    time.Duration
}

func newWorkerCmd(a *app) *cobra.Command {
	var f workerFlags
	cmd := &cobra.Command{
		Use:   "worker --db URL --class NAME [--machine ID]",
		Short: "take builds and runs of a fleet on this benchmark machine",
		Long: `Worker makes this machine a benchmark machine of a fleet (see docs/fleet.md):
it calibrates the CPUs and picks the quietest to pin runs to (--cpu),
registers the machine in the fleet's database (its class, CPU model,
kernel and compiler), then takes River jobs: the builds of its class
(queue class_NAME) and the rounds of comparisons pinned to it (queue
machine_ID), one at a time, under the machine's measuring lock, so that
nothing else perfbot does on the machine overlaps them. It sends a
heartbeat every --heartbeat; when the database stops answering it stops
measuring (the run in flight dies with everything it started) and
retries until the database is back.

Stop it with SIGINT or SIGTERM; a worker killed outright loses at most
the round or build in flight, which the fleet gives to another machine.

Exit status: 0 when stopped by SIGINT or SIGTERM, 2 on error (bad flags, a
database that cannot be reached at the start).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if f.db == "" || f.class == "" {
				return fmt.Errorf("--db and --class are required")
			}
			if f.machine == "" {
				f.machine = fleet.DefaultMachine()
			}
			var err error
			if f.dir, err = fleet.LocalDir(f.dir, "worker-"+f.machine); err != nil {
				return fmt.Errorf("--dir: %w", err)
			}
			pool, err := fleet.Connect(ctx, f.db)
			if err != nil {
				return err
			}
			defer pool.Close()
			results, err := fleet.OpenResults(ctx, f.db, filepath.Join(f.dir, "store"))
			if err != nil {
				return err
			}
			defer results.Close()
			var cal []string
			cpu, err := measure.ChooseCPU(ctx, f.cpu, 10, 5, func(format string, args ...any) {
				cal = append(cal, fmt.Sprintf(format, args...))
				a.logf(format, args...)
			})
			if err != nil {
				return err
			}
			w, err := fleet.NewWorker(ctx, fleet.WorkerConfig{Pool: pool, Results: results, Class: f.class, Machine: f.machine,
				Dir: f.dir, CPU: cpu, Calibration: strings.Join(cal, "; "), Heartbeat: f.heartbeat,
				Log: func(format string, args ...any) { a.logf("worker %s: "+format, append([]any{f.machine}, args...)...) }})
			if err != nil {
				return err
			}
			return w.Run(ctx)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.db, "db", "", "the fleet's PostgreSQL database (postgres://...)")
	fl.StringVar(&f.class, "class", "", "this machine's class: it takes the builds of the class and the rounds pinned to it")
	fl.StringVar(&f.machine, "machine", "", "this machine's name in the fleet (default: the hostname, lower case)")
	fl.StringVar(&f.dir, "dir", "", "workspace: clones, build cache, run logs (default: the user's cache folder)")
	fl.StringVar(&f.cpu, "cpu", "auto", "where runs are pinned: auto (calibrate, quietest CPU), none, or a CPU number")
	fl.DurationVar(&f.heartbeat, "heartbeat", 5*time.Second, "how often to tell the database this machine is alive")
	return cmd
}
