package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/sensitivity"
	"github.com/perfbot/perfbot/internal/watch"
)

// newSubmitWatchCmd is perfbot submit watch: one watch cycle on a fleet.
func newSubmitWatchCmd(a *app, f *submitFlags) *cobra.Command {
	var once bool
	cmd := &cobra.Command{
		Use:   "watch WATCHFILE --once",
		Short: "run one watch cycle on a fleet's machines, as perfbot watch --once does",
		Long: `Submit watch queues one cycle of the watch file (docs/watch.md) on the fleet's
server, as perfbot watch --once runs it here: each job file's jobs are
measured, bisected and triaged on the machines of its class (the watch
file's class:, else --class), their history, findings and mail state are
kept in the fleet's database, and the findings are written into the watch
file's report folder by the server. The server reads the watch file, its job
files and the jobs' repositories at the paths given here. A cycle of the
same file already queued or running (perfbot serve --watch schedules them)
is the one waited for. Without --no-wait it waits and prints what perfbot
watch --once prints. To watch on the fleet without end, run perfbot serve
--db URL --watch WATCHFILE.

Exit status: that of perfbot watch --once: 0 the cycle ran and found no new
real regression (or queued, with --no-wait); 1 it found a new real
regression; 2 error (a job or branch of the cycle failed, bad input).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !once {
				return errors.New("submit watch runs one cycle: give --once (perfbot serve --db URL --watch WATCHFILE watches without end)")
			}
			file, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			cfg, err := watch.Load(file)
			if err != nil {
				return err
			}
			g := *f
			for _, jc := range cfg.Jobs {
				if jc.Class == "" && g.class == "" {
					return fmt.Errorf("--class: required: the watch file gives %s no class:", jc.File)
				}
			}
			if g.class == "" {
				g.class = cfg.Jobs[0].Class // for the warning of a class without machines
			}
			row, err := submitAndWait(cmd.Context(), a, g, fleet.WatchArgs{File: file, Class: f.class})
			if err != nil || row == nil {
				return err
			}
			var out fleet.WatchOutput
			if err := json.Unmarshal(row.Output(), &out); err != nil {
				return err
			}
			for _, line := range out.Log {
				a.logf("%s", line)
			}
			switch out.Status {
			case 2:
				return fmt.Errorf("watch: %s", strings.Join(out.Errors, "\n"))
			case 1:
				a.logf("watch: new real regressions: %s", strings.Join(shortHashes(out.Regressions), ", "))
				return errRegression
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "run one cycle (required: perfbot serve --watch runs them without end)")
	return cmd
}

// newSubmitSensitivityCmd is perfbot submit sensitivity.
func newSubmitSensitivityCmd(a *app, f *submitFlags) *cobra.Command {
	var args fleet.SensitivityArgs
	cmd := &cobra.Command{
		Use:   "sensitivity JOB REV",
		Short: "measure a commit's sensitivity to layout on a fleet's machines, as perfbot sensitivity does",
		Long: `Submit sensitivity queues perfbot sensitivity of REV on the machines of --class:
the server builds REV plain, with forced alignment and under --layouts
layouts on them, measures every build in whole rounds on one machine, and
reports per metric the change under forced alignment and the range across
the layouts, and the size cost of forced alignment. Without --no-wait it
waits and prints the report, as perfbot sensitivity does (-f/--format).

Exit status: 0 measured and printed (or queued, with --no-wait), 2 error.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, argv []string) error {
			_, spec, repo, err := submitJob(cmd.Context(), argv[0])
			if err != nil {
				return err
			}
			c, err := repo.Resolve(cmd.Context(), argv[1])
			if err != nil {
				return err
			}
			args.Job, args.Class, args.Commit = spec, f.class, c.Hash
			row, err := submitAndWait(cmd.Context(), a, *f, args)
			if err != nil || row == nil {
				return err
			}
			var out fleet.SensitivityOutput
			if err := json.Unmarshal(row.Output(), &out); err != nil {
				return err
			}
			_, err = fmt.Fprint(a.stdout, out.Report)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&args.Preset, "preset", sensitivity.DefaultPreset, "layout-knob preset: "+strings.Join(knobs.Names(), ", "))
	fl.IntVar(&args.Layouts, "layouts", sensitivity.DefaultLayouts, "layouts, the plain build included")
	fl.IntVar(&args.Runs, "runs", 0, "runs of each build, in whole rounds (default: the job's runs)")
	fl.Float64Var(&args.Alpha, "alpha", sensitivity.DefaultAlpha, "level of the forced-alignment change's interval (1-alpha coverage)")
	formatFlag(fl, &args.Format, report.SensitivityFormats)
	return cmd
}
