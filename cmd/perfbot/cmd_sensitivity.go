package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/sensitivity"
)

func newSensitivityCmd(a *app) *cobra.Command {
	var preset, cpu, storeDir, jobName string
	var format report.Format
	var layouts, runs int
	cmd := &cobra.Command{
		Use:   "sensitivity JOB REV",
		Short: "measure how much each metric moves under forced alignment and across layouts, and the size cost",
		Long: `Sensitivity rebuilds REV plain, with forced alignment (functions and loops
on 64-byte lines) and under --layouts layouts that move code, data and stack
(the plain build is the first), measures all of them in whole interleaved
rounds, and prints per metric the change under forced alignment with its
interval and the range of changes across the layouts, and the size cost of
forced alignment (sections and file) — the tables of the seed RFC
("hackbench: [-1.8%, +0.5%]"). A later change of a metric inside its ranges
is suspect as an alignment artifact.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			j, err := pickJob(args[0], jobName)
			if err != nil {
				return err
			}
			s, err := a.open(ctx, j, storeDir)
			if err != nil {
				return err
			}
			defer s.Close()
			commits, err := s.Resolve(ctx, args[1:])
			if err != nil {
				return err
			}
			p, err := knobs.LookupIn(preset, filepath.Join(s.Store.Dir(), "knobs"))
			if err != nil {
				return fmt.Errorf("--preset: %w", err)
			}
			pin, err := measure.ChooseCPU(ctx, cpuMode(cpu, j), max(runs, j.Runs), 5, a.logf)
			if err != nil {
				return err
			}
			res, err := sensitivity.Measure(ctx, j, commits[0], sensitivity.Options{Session: s, Preset: p, Layouts: layouts,
				Runs: runs, CPU: pin, Progress: progress.New(a.stderr, a.stderrTTY), Wait: a.waitf})
			if err != nil {
				return err
			}
			return report.WriteSensitivity(a.stdout, res, format)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&preset, "preset", "c", "layout knobs: "+strings.Join(knobs.Names(), ", "))
	fl.IntVar(&layouts, "layouts", 4, "layouts, the plain build included")
	fl.IntVar(&runs, "runs", 0, "rounds (default: the job's runs)")
	formatFlag(fl, &format, report.SensitivityFormats)
	fl.StringVar(&cpu, "cpu", "", "auto, none, or a CPU number (default: the job's run.cpu)")
	fl.StringVar(&storeDir, "store", "", "results store folder (default: .perfbot next to the job file)")
	fl.StringVar(&jobName, "job", "", "the atomic job when the job file has a params matrix")
	return cmd
}
