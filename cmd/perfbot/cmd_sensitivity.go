package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/sensitivity"
)

func newSensitivityCmd(a *app) *cobra.Command {
	var cfg sensitivity.Config
	var storeDir, jobName string
	var format report.Format
	cmd := &cobra.Command{
		Use:   "sensitivity JOB REV",
		Short: "measure how much each metric moves under forced alignment and across layouts, and the size cost",
		Long: `Sensitivity rebuilds REV plain, with forced alignment (functions and loops
on 64-byte lines) and under --layouts layouts that move code, data and stack
(the plain build is the first), measures all of them in whole interleaved
rounds, and prints per metric the change under forced alignment with its
interval and the range of changes across the layouts, and the size cost of
forced alignment (sections and file). A later change of a metric inside its
ranges is suspect as an alignment artifact.

Exit status: 0 measured and printed, 2 error.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			j, err := pickJob(args[0], jobName)
			if err != nil {
				return err
			}
			cfg.Job, cfg.Rev = j, args[1]
			if err := cfg.Check(); err != nil {
				return err
			}
			s, err := a.open(ctx, j, storeDir)
			if err != nil {
				return err
			}
			defer s.Close()
			cfg.Env = s.Env(cfg.Env.CPU, progress.New(a.stderr, a.stderrTTY), a.logf, a.waitf)
			res, err := sensitivity.Run(ctx, cfg)
			if err != nil {
				return err
			}
			return report.WriteSensitivity(a.stdout, res, format)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Preset, "preset", sensitivity.DefaultPreset, "layout-knob preset: "+strings.Join(knobs.Names(), ", "))
	fl.IntVar(&cfg.Layouts, "layouts", sensitivity.DefaultLayouts, "layouts, the plain build included")
	fl.IntVar(&cfg.Runs, "runs", 0, "runs of each build, in whole rounds (default: the job's runs)")
	fl.Float64Var(&cfg.Alpha, "alpha", sensitivity.DefaultAlpha, "level of the forced-alignment change's interval (1-alpha coverage)")
	formatFlag(fl, &format, report.SensitivityFormats)
	cpuFlag(fl, &cfg.Env.CPU)
	storeFlag(fl, &storeDir)
	jobFlag(fl, &jobName)
	return cmd
}
