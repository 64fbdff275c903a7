package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
)

type submitFlags struct {
	db, class         string
	compareFormat     report.Format
	bisectFormat      report.Format
	noWait            bool
	runs              int
	good, bad, metric string
	parallel          int
	improvement       bool
	robust, preset    string
	layouts           int
	noTriage          bool
}

func newSubmitCmd(a *app) *cobra.Command {
	var f submitFlags
	cmd := &cobra.Command{
		Use:   "submit compare|bisect|triage ...",
		Short: "queue a comparison, a bisection or a triage on a fleet and print its report",
		Long: `Submit queues work on a fleet (see docs/fleet.md): the server (perfbot serve
--db) orchestrates it, and the workers of the class (perfbot worker) build
and measure. Revisions are resolved here, in the job's repository, which
every machine of the fleet must reach at the same path (or URL).

  perfbot submit compare --db URL --class C JOB REV1 REV2 [REV...]
  perfbot submit bisect  --db URL --class C JOB --good REV --bad REV --metric M [--parallel K]
                         [--layout-robust forced|sweep [--preset P] [--layouts N]]
  perfbot submit triage  --db URL --class C JOB BASE CHANGED [--metric M]
  perfbot submit watch   --db URL [--class C] WATCHFILE --once
  perfbot submit sensitivity --db URL --class C JOB REV

Without --no-wait it waits and prints the report as perfbot compare,
perfbot bisect and perfbot triage do; the exit status is theirs.

Exit status: that of the sub-command (see perfbot help submit compare,
perfbot help submit bisect, perfbot help submit triage); 2 on a missing or
unknown one.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.db, "db", "", "the fleet's PostgreSQL database (postgres://...)")
	pf.StringVar(&f.class, "class", "", "the machine class to measure on")
	pf.BoolVar(&f.noWait, "no-wait", false, "queue the job, print its id and return")

	cmp := &cobra.Command{
		Use:   "compare JOB REV1 REV2 [REV...]",
		Short: "compare revisions on a fleet's machines and print the table, as perfbot compare does",
		Long: `Submit compare queues a comparison of the revisions of JOB on the machines of
--class: the server builds each revision on them and takes --runs runs of
each revision, in whole rounds (one round: a run of every revision, on one
machine, its runs paired within it). Without --no-wait it waits for the
comparison and prints its table, as perfbot compare does (-f/--format);
with --no-wait it prints the queued job's id.

Exit status: 0 no significant regression of the job's metrics (or queued,
with --no-wait), 1 a significant regression of one of them, 2 error.`,
		Args: cobra.MinimumNArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			j, spec, repo, err := submitJob(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			a2 := fleet.CompareArgs{Job: spec, Class: f.class, Runs: f.runs}
			for _, rev := range args[1:] {
				c, err := repo.Resolve(cmd.Context(), rev)
				if err != nil {
					return err
				}
				a2.Commits = append(a2.Commits, c.Hash)
			}
			row, err := submitAndWait(cmd.Context(), a, f, a2)
			if err != nil || row == nil {
				return err
			}
			var out fleet.CompareOutput
			if err := json.Unmarshal(row.Output(), &out); err != nil {
				return err
			}
			dir, err := fleet.LocalDir("", "submit")
			if err != nil {
				return err
			}
			st, err := fleet.OpenResults(cmd.Context(), f.db, dir)
			if err != nil {
				return err
			}
			defer st.Close()
			t, err := out.Table(cmd.Context(), st, a2, compare.DefaultAlpha)
			if err != nil {
				return err
			}
			if err := report.WriteJobs(a.stdout, []report.JobTable{{Name: j.Name, Key: j.Key(), Table: t}}, report.Options{Format: f.compareFormat}); err != nil {
				return err
			}
			if r, _ := t.Regressions(); r > 0 {
				return errRegression
			}
			return nil
		},
	}
	cmp.Flags().IntVar(&f.runs, "runs", 0, "runs of each revision, in whole rounds (default: the job's runs)")
	formatFlag(cmp.Flags(), &f.compareFormat, report.Formats)

	bis := &cobra.Command{
		Use:   "bisect JOB --good REV --bad REV --metric M",
		Short: "bisect a change on a fleet's machines and print the report, as perfbot bisect does",
		Long: `Submit bisect queues a bisection of --metric between --good and --bad on
the machines of --class: the server measures --parallel candidates at once
(a k-ary search; default: as many as the class has live machines). As
perfbot bisect does, --layout-robust forced|sweep builds every commit under
forced alignment or a layout sweep (--preset, --layouts; the workers build
the variants), and a plain bisection triages each culprit against its
parent (unless --no-triage), each triage on one machine of the class, as
perfbot submit triage does. Without --no-wait it waits and prints the
report, as perfbot bisect does (-f/--format); with --no-wait it prints the
queued job's id.

Exit status: 0 a culprit was found and confirmed (or queued, with
--no-wait); 1 no confirmed culprit, or the bisection failed on the fleet;
2 bad input or an error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			j, spec, repo, err := submitJob(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			good, err := repo.Resolve(cmd.Context(), f.good)
			if err != nil {
				return err
			}
			bad, err := repo.Resolve(cmd.Context(), f.bad)
			if err != nil {
				return err
			}
			row, err := submitAndWait(cmd.Context(), a, f, fleet.BisectArgs{Job: spec, Class: f.class, Good: good.Hash, Bad: bad.Hash,
				Metric: f.metric, Improvement: f.improvement, Parallel: f.parallel,
				Mode: f.robust, Preset: f.preset, Layouts: f.layouts, NoTriage: f.noTriage})
			if err != nil || row == nil {
				return err
			}
			var out fleet.BisectOutput
			if err := json.Unmarshal(row.Output(), &out); err != nil {
				return err
			}
			if out.Error != "" {
				return exitCodeError{code: exitNoCulprit, msg: "bisect: " + out.Error}
			}
			res, err := out.Decode()
			if err != nil {
				return err
			}
			if res.Table != nil {
				_ = report.WriteFailures(a.stderr, res.Table)
			}
			r := &report.BisectReport{Result: res, Job: j.Name, Repo: j.Repo, Params: j.Params, Mode: string(res.Mode), ModeDetail: res.ModeDetail, Table: res.Table,
				Command: reproduce(cmd, []string{args[0]}, map[string]string{"good": res.Good.Short(), "bad": res.Bad.Short(), "metric": res.Metric, "db": store.RedactURL(f.db)})}
			if err := report.WriteBisect(a.stdout, r, f.bisectFormat); err != nil {
				return err
			}
			return exitWith(res.ExitStatus())
		},
	}
	bf := bis.Flags()
	bf.StringVar(&f.good, "good", "", "a commit without the change")
	bf.StringVar(&f.bad, "bad", "", "a commit with the change")
	bf.StringVar(&f.metric, "metric", "", "the metric to bisect")
	bf.IntVar(&f.parallel, "parallel", 0, "candidates measured at once (k-ary search; default: the live machines of the class)")
	bf.BoolVar(&f.improvement, "improvement", false, "search for the commit that made the metric better")
	bf.StringVar(&f.robust, "layout-robust", "", "measure every commit under forced alignment (forced) or a layout sweep (sweep)")
	bf.StringVar(&f.preset, "preset", bisect.DefaultPreset, "layout knobs of --layout-robust and of the triage: "+strings.Join(knobs.Names(), ", "))
	bf.IntVar(&f.layouts, "layouts", bisect.DefaultLayouts, "layouts of --layout-robust sweep")
	bf.BoolVar(&f.noTriage, "no-triage", false, "do not triage the culprits")
	formatFlag(bf, &f.bisectFormat, report.BisectFormats)
	cmd.AddCommand(cmp, bis, newSubmitTriageCmd(a, &f))
	cmd.AddCommand(newSubmitWatchCmd(a, &f))
	cmd.AddCommand(newSubmitSensitivityCmd(a, &f))
	needSubcommand(cmd)
	return cmd
}

// submitJob loads a job file (one atomic job) and opens its repository.
func submitJob(ctx context.Context, path string) (*job.Job, fleet.JobSpec, *gitrev.Repo, error) {
	j, err := pickJob(path, "")
	if err != nil {
		return nil, fleet.JobSpec{}, nil, err
	}
	data, err := os.ReadFile(j.File)
	if err != nil {
		return nil, fleet.JobSpec{}, nil, err
	}
	repo, err := gitrev.Open(ctx, j.Repo)
	if err != nil {
		return nil, fleet.JobSpec{}, nil, err
	}
	return j, fleet.SpecOf(j, data), repo, nil
}

// submitAndWait queues args and, unless --no-wait, waits for the job.
func submitAndWait(ctx context.Context, a *app, f submitFlags, args river.JobArgs) (*rivertype.JobRow, error) {
	if f.db == "" || f.class == "" {
		return nil, fmt.Errorf("--db and --class are required")
	}
	pool, err := fleet.Connect(ctx, f.db)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	c, err := fleet.InsertOnly(pool)
	if err != nil {
		return nil, err
	}
	row, err := fleet.Submit(ctx, c, args)
	if err != nil {
		return nil, err
	}
	if f.noWait {
		fmt.Fprintf(a.stdout, "%d\n", row.ID)
		return nil, nil
	}
	a.logf("queued %s job %d; waiting for it (interrupting leaves it queued)", row.Kind, row.ID)
	if note, err := fleet.Absent(ctx, pool, f.class, 0); err == nil && note != "" {
		a.logf("warning: %s", note)
	}
	return fleet.Await(ctx, c, row.ID, time.Second)
}
