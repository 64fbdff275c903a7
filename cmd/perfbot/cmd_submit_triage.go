package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/triage"
)

// newSubmitTriageCmd is perfbot submit triage: f holds submit's own
// flags (--db, --class, --no-wait).
func newSubmitTriageCmd(a *app, f *submitFlags) *cobra.Command {
	var args fleet.TriageArgs
	var format report.Format
	cmd := &cobra.Command{
		Use:   "triage JOB BASE CHANGED",
		Short: "triage a change on one machine of a fleet's class and print the verdict, as perfbot triage does",
		Long: `Submit triage queues a triage of the change from BASE to CHANGED of JOB on
the fleet (see perfbot help triage for the experiments). The workers of
--class build the plain builds and every variant (forced alignment, the
sweep's layouts, the restore's padding and source patch); the server reads
the builds' layouts and writes the source patch from copies of their
artifacts. Every experiment's runs are taken on ONE machine of the class,
the one that took the same triage before while it lives, else the
quietest live one, and the report names it: a
verdict compares experiments, and an alignment effect differs from CPU to
CPU. When that machine dies, the triage starts again on another machine of
the class; the runs the dead machine took stay stored, under its name, and
are not mixed in.

Without --no-wait it waits and prints the report as perfbot triage does
(-f/--format); with --no-wait it prints the queued job's id.

Exit status: 0 not a real regression (no-change, an alignment artifact or a
real improvement; or queued, with --no-wait), 1 real regression, 2 error,
3 inconclusive.`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ctx := cmd.Context()
			j, spec, repo, err := submitJob(ctx, argv[0])
			if err != nil {
				return err
			}
			a2 := args
			a2.Job, a2.Class = spec, f.class
			for i, p := range []*string{&a2.Base, &a2.Changed} {
				c, err := repo.Resolve(ctx, argv[1+i])
				if err != nil {
					return fmt.Errorf("%s: %w", []string{"BASE", "CHANGED"}[i], err)
				}
				*p = c.Hash
			}
			if err := a2.Config(j).Check(); err != nil {
				return err
			}
			row, err := submitAndWait(ctx, a, *f, a2)
			if err != nil || row == nil {
				return err
			}
			var out fleet.TriageOutput
			if err := json.Unmarshal(row.Output(), &out); err != nil {
				return err
			}
			if out.Error != "" {
				return fmt.Errorf("triage on the fleet: %s", out.Error)
			}
			if format == report.FormatJSON && len(out.Document) > 0 {
				// The recorded document, whichever perfbot recorded it.
				if _, err := fmt.Fprintf(a.stdout, "%s\n", out.Document); err != nil {
					return err
				}
				return exitWith((&triage.Result{Verdict: out.Verdict}).ExitStatus())
			}
			res, err := out.Result()
			if err != nil {
				return err
			}
			a.logf("%s", res.Budget())
			set := map[string]string{"metric": res.Metric, "db": store.RedactURL(f.db)}
			ropt := report.TriageOptions{Format: format, Machine: res.Machine,
				Command: reproduce(cmd, []string{argv[0], res.Base.Short(), res.Changed.Short()}, set)}
			if err := report.WriteTriage(a.stdout, res, ropt); err != nil {
				return err
			}
			return exitWith(res.ExitStatus())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&args.Metric, "metric", "", "metric to triage (default: the job's first metric)")
	fl.StringVar(&args.Preset, "preset", triage.DefaultPreset, "layout knobs: "+strings.Join(knobs.Names(), ", "))
	formatFlag(fl, &format, report.TriageFormats)
	fl.IntVar(&args.MaxRuns, "max-runs", triage.DefaultMaxRuns, "most runs per build in one experiment (the 10 -> 20 -> 40 schedule stops there)")
	seedFlag(fl, &args.Seed)
	fl.Float64Var(&args.Alpha, "alpha", triage.DefaultAlpha, "level of each look of each sequential test (the triage looks several times, so lower than compare's 0.05)")
	effectFlag(fl, &args.EffectPct)
	fl.IntVar(&args.Layouts, "layouts", triage.DefaultLayouts, "layouts of the first sweep, the plain build included")
	fl.IntVar(&args.MaxLayouts, "max-layouts", triage.DefaultMaxLayouts, "most layouts the sweep grows to")
	return cmd
}
