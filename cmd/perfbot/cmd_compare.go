package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/compare"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/progress"
	"github.com/perfbot/perfbot/internal/report"
	runner "github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
)

func init() { commands = append(commands, newCompareCmd) }

// compareFlags are the flags of perfbot compare.
type compareFlags struct {
	all      bool
	format   string
	runs     int
	variant  string
	cpu      string
	seed     int64
	alpha    float64
	effect   float64
	storeDir string
	fdr      bool
}

func newCompareCmd(a *app) *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare JOB REV1 REV2 [REV...] | compare OLD.txt NEW.txt [MORE.txt...]",
		Short: "measure commits of a job and print the 0-day comparison table",
		Long: `Compare builds every revision of the job (each in its own git worktree,
cached by commit and build variant), runs the benchmark the job's number of
times per revision, interleaved in randomised balanced order (A B B A ...),
pinned to the quietest CPU, and prints the comparison in the layout of the
0-day robot's reports (lkp ncompare), first revision as the base.

Every finished run is committed to the results store (.perfbot/ next to the
job file) at once: an interrupted compare resumes where it stopped when run
again, and a second compare of the same revisions builds and runs nothing.

Each changed row is judged twice: by the lkp rule (the samples separate and
the means differ by more than 1%, 5% for resource figures) and by a real
statistical test with a confidence interval of the change (Wilcoxon
signed-rank on the interleaved pairs, or Mann-Whitney U for unpaired
samples). Rows the test calls significant are marked and listed under the
table. Only changed rows are printed unless --all.

With Go benchmark result files instead of a job (any arguments not ending
in .yaml or .yml), compare reads them like benchstat and compares them
unpaired, without running anything.

With many metrics (a Go benchmark package), --fdr adjusts the p-values
with the Benjamini-Hochberg procedure, so that about alpha of the reported
changes, not alpha of all metrics, are false alarms.

Exit status: 0 no significant regression of the job's metrics, 1 a significant
regression of one of them (perfbot's own resource figures, time.*, are shown
but do not count), 2 error.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if isJobFile(args[0]) {
				if len(args) < 3 {
					return fmt.Errorf("compare %s: need at least two revisions", args[0])
				}
				return compareJob(cmd.Context(), a, f, args[0], args[1:])
			}
			return compareFiles(a, f, args)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.all, "all", "a", false, "print every metric, not only the changed ones")
	fl.StringVarP(&f.format, "format", "f", "ncompare", "output format: ncompare, benchstat, json, csv, markdown")
	fl.IntVar(&f.runs, "runs", 0, "runs per revision (default: the job's runs)")
	fl.StringVar(&f.variant, "variant", "", "build every revision with this build variant of the job")
	fl.StringVar(&f.cpu, "cpu", "", "auto (pin to the quietest CPU), none, or a CPU number (default: the job's run.cpu)")
	fl.Int64Var(&f.seed, "seed", 0, "seed of the run order (default: derived from the job)")
	fl.Float64Var(&f.alpha, "alpha", compare.DefaultAlpha, "significance level of the statistical tests")
	fl.Float64Var(&f.effect, "effect", 5, "smallest change in percent you care about: warn when the machine is too noisy to see it")
	fl.StringVar(&f.storeDir, "store", "", "results store folder (default: .perfbot next to the job file)")
	fl.BoolVar(&f.fdr, "fdr", false, "adjust p-values over the metrics (Benjamini-Hochberg false discovery rate): use with many metrics, e.g. a Go benchmark package")
	return cmd
}

func isJobFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// session is what measuring a job needs: the store, the repository, the
// builder and the CPU to pin to.
type session struct {
	store   *store.Store
	repo    *gitrev.Repo
	builder *build.Builder
	release func() // the store's measuring lock
}

// close releases the lock and closes the store.
func (s *session) close() {
	s.release()
	s.store.Close()
}

// openSession opens the store and the repository of an atomic job and
// takes the store's measuring lock; close it with session.close.
func openSession(ctx context.Context, j *job.Job, storeDir string) (*session, error) {
	if storeDir == "" {
		storeDir = filepath.Join(filepath.Dir(j.File), ".perfbot")
	}
	st, err := store.Open(storeDir)
	if err != nil {
		return nil, fmt.Errorf("opening results store: %w", err)
	}
	repo, err := gitrev.Open(ctx, j.Repo)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("%s: repo: %w", j.File, err)
	}
	release, err := st.Lock()
	if err != nil {
		st.Close()
		return nil, err
	}
	return &session{store: st, repo: repo, builder: &build.Builder{Repo: repo, Store: st, Dir: storeDir}, release: release}, nil
}

// pickJob loads a job file and returns its atomic job named name, or its
// only one when name is "" (triage and bisect work on one atomic job).
func pickJob(path, name string) (*job.Job, error) {
	jobs, err := job.Load(path)
	if err != nil {
		return nil, err
	}
	if name == "" && len(jobs) == 1 {
		return jobs[0], nil
	}
	var names []string
	for _, j := range jobs {
		if j.Name == name {
			return j, nil
		}
		names = append(names, j.Name)
	}
	if name == "" {
		return nil, fmt.Errorf("%s expands into %d atomic jobs; pick one with --job: %s", path, len(jobs), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("--job %q: %s has no such atomic job; it has: %s", name, path, strings.Join(names, ", "))
}

// resolve turns revision arguments into commits, naming every unknown one.
func (s *session) resolve(ctx context.Context, revs []string) ([]gitrev.Commit, error) {
	var commits []gitrev.Commit
	var errs []error
	for _, r := range revs {
		c, err := s.repo.Resolve(ctx, r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		commits = append(commits, c)
	}
	return commits, errors.Join(errs...)
}

// chooseCPU decides where runs are pinned: the flag, else the job's run.cpu;
// "auto" calibrates and picks the quietest CPU, warning when the machine is
// too noisy for the effect asked for.
func chooseCPU(ctx context.Context, a *app, j *job.Job, flag string, runs int, effect float64) (int, error) {
	mode := flag
	if mode == "" {
		mode = j.Run.CPU
	}
	switch mode {
	case "", "auto":
		cal, err := runner.Calibrate(ctx, runner.Allowed(), runner.CalibrateOptions{})
		if err != nil {
			fmt.Fprintf(a.stderr, "perfbot: CPU calibration failed (%v); not pinning\n", err)
			return -1, nil
		}
		cpu := cal.Quietest()
		cv := cal.CV(cpu)
		fmt.Fprintf(a.stderr, "perfbot: %s; pinning runs to CPU %d\n", cal, cpu)
		if mde := 100 * runner.MinDetectableEffect(cv, runs); effect > 0 && mde > effect {
			fmt.Fprintf(a.stderr, "perfbot: warning: machine too noisy for a %.3g%% effect with %d runs (CV %.1f%% on CPU %d): the smallest detectable change is about %.3g%%; need about %d runs\n",
				effect, runs, 100*cv, cpu, mde, runner.RunsNeeded(cv, effect/100))
		}
		return cpu, nil
	case "none":
		return -1, nil
	default:
		n, err := strconv.Atoi(mode)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("--cpu %q: want auto, none or a CPU number", mode)
		}
		return n, nil
	}
}

func compareJob(ctx context.Context, a *app, f compareFlags, jobFile string, revs []string) error {
	jobs, err := job.Load(jobFile)
	if err != nil {
		return err
	}
	// A params matrix gives one table per atomic job. Text formats print
	// them one after another under a "job:" line; json becomes one document
	// with a jobs array and csv gets a leading job column, so that machines
	// can still read the output as one.
	regressions := 0
	var docs []json.RawMessage
	for i, j := range jobs {
		t, err := measureTable(ctx, a, f, j, revs)
		if err != nil {
			return err
		}
		r, _ := t.Regressions()
		regressions += r
		var buf bytes.Buffer
		if err := report.Write(&buf, t, report.Options{All: f.all, Format: f.format}); err != nil {
			return err
		}
		switch {
		case len(jobs) == 1:
			_, err = a.stdout.Write(buf.Bytes())
		case f.format == "json":
			doc, _ := json.Marshal(map[string]any{"job": j.Name, "job_key": j.Key(), "comparison": json.RawMessage(buf.Bytes())})
			docs = append(docs, doc)
		case f.format == "csv":
			err = writeCSVWithJob(a.stdout, buf.Bytes(), j.Name, i == 0)
		default:
			fmt.Fprintf(a.stdout, "job: %s\n\n", j.Name)
			_, err = a.stdout.Write(buf.Bytes())
			fmt.Fprintln(a.stdout)
		}
		if err != nil {
			return err
		}
	}
	if docs != nil {
		out, err := json.MarshalIndent(map[string]any{"jobs": docs}, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "%s\n", out)
	}
	if regressions > 0 {
		return errRegression
	}
	return nil
}

// writeCSVWithJob copies a CSV report with a leading "job" column; the
// header line is written only for the first job.
func writeCSVWithJob(w io.Writer, data []byte, name string, header bool) error {
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	for i, rec := range recs {
		if i == 0 && !header {
			continue
		}
		first := name
		if i == 0 {
			first = "job"
		}
		if err := cw.Write(append([]string{first}, rec...)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// measureTable measures revs of one atomic job and builds the table.
func measureTable(ctx context.Context, a *app, f compareFlags, j *job.Job, revs []string) (*compare.Table, error) {
	s, err := openSession(ctx, j, f.storeDir)
	if err != nil {
		return nil, err
	}
	defer s.close()
	commits, err := s.resolve(ctx, revs)
	if err != nil {
		return nil, err
	}
	var v job.Variant
	if f.variant != "" {
		var ok bool
		if v, ok = j.Variant(f.variant); !ok {
			return nil, fmt.Errorf("--variant %q: job %s declares no such variant", f.variant, j.File)
		}
	}
	runs := j.Runs
	if f.runs > 0 {
		runs = f.runs
	}
	if runs < 3 {
		return nil, fmt.Errorf("--runs %d: need at least 3 runs per revision", runs)
	}
	cpu, err := chooseCPU(ctx, a, j, f.cpu, runs, f.effect)
	if err != nil {
		return nil, err
	}
	targets := make([]measure.Target, len(commits))
	for i, c := range commits {
		targets[i] = measure.Target{Commit: c, Variant: v}
	}
	opt := measure.Options{Store: s.store, Builder: s.builder, Runs: runs, CPU: cpu, WholeRounds: true,
		Progress: progress.New(a.stderr, a.stderrTTY)}
	if f.seed != 0 {
		opt.Rand = rand.New(rand.NewSource(f.seed))
	}
	out, err := measure.Measure(ctx, j, targets, opt)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted (%v): every finished run is stored in %s; run the same command again to resume", ctx.Err(), s.store.Dir())
		}
		return nil, err
	}
	var buildErrs []error
	for _, t := range out.Targets {
		if t.BuildErr != nil {
			buildErrs = append(buildErrs, t.BuildErr)
		}
	}
	if err := errors.Join(buildErrs...); err != nil {
		return nil, err
	}
	t, err := tableFromStore(ctx, a, s.store, j, out, f.alpha)
	if err == nil && f.fdr {
		t.AdjustFDR()
	}
	return t, err
}

// tableFromStore reads the stored samples of a measurement's rounds (see
// measure.Options.WholeRounds) into a comparison table.
func tableFromStore(ctx context.Context, a *app, st *store.Store, j *job.Job, out *measure.Outcome, alpha float64) (*compare.Table, error) {
	inRounds := map[int]bool{}
	for _, r := range out.Rounds {
		inRounds[r] = true
	}
	cols := make([]compare.Column, len(out.Targets))
	commits := make([]string, len(out.Targets))
	for i, t := range out.Targets {
		cols[i] = compare.Column{ID: t.Target.Commit.Hash, Subject: t.Target.Commit.Subject, Variant: t.Target.Variant.Name}
		commits[i] = t.Target.Commit.Hash
		reasons := map[string]int{}
		for _, r := range t.Runs {
			if !inRounds[r.Index] {
				continue
			}
			cols[i].Runs++
			if r.Status != store.RunOK {
				cols[i].Failed++
				reasons[string(r.Status)+": "+r.Reason]++
			}
		}
		for reason, n := range reasons {
			fmt.Fprintf(a.stderr, "perfbot: %s: %d of %d runs failed: %s (logs under %s)\n",
				t.Target, n, cols[i].Runs, reason, filepath.Dir(st.RunDir(store.RunKey{Job: j.Key(), Commit: t.Target.Commit.Hash, Variant: measure.VariantID(t.Target.Variant), Index: 1})))
		}
	}
	var none []string
	for i, c := range cols {
		if c.Runs-c.Failed == 0 {
			none = append(none, out.Targets[i].Target.String())
		}
	}
	if len(none) > 0 {
		return nil, fmt.Errorf("no run succeeded for %s: nothing to compare (see the failures above)", strings.Join(none, ", "))
	}
	variant := measure.VariantID(out.Targets[0].Target.Variant)
	samples, err := st.Samples(ctx, j.Key(), commits, variant)
	if err != nil {
		return nil, err
	}
	infos, err := st.Metrics(ctx, j.Key())
	if err != nil {
		return nil, err
	}
	// Runs of two commits are interleaved pairs only when one session took
	// both: number each (session, run) so that compare pairs only those.
	sessions := make([]map[int]string, len(out.Targets))
	for i, t := range out.Targets {
		sessions[i] = map[int]string{}
		for _, r := range t.Runs {
			sessions[i][r.Index] = r.Session
		}
	}
	sessionIDs := map[string]int{}
	pairKey := func(session string, run int) int {
		id, ok := sessionIDs[session]
		if !ok {
			id = len(sessionIDs)
			sessionIDs[session] = id
		}
		return id*1_000_000 + run
	}
	series := make([]compare.Series, 0, len(infos))
	for _, m := range infos {
		s := compare.Series{Metric: m.Name, Unit: m.Unit, Better: m.Better, KPI: !metric.IsBuiltin(m.Name),
			Samples: make([][]store.Sample, len(commits))}
		for c, h := range commits {
			for _, x := range samples[h][m.Name] {
				if inRounds[x.Run] {
					s.Samples[c] = append(s.Samples[c], store.Sample{Run: pairKey(sessions[c][x.Run], x.Run), Value: x.Value})
				}
			}
		}
		series = append(series, s)
	}
	return compare.Build(cols, series, true, alpha), nil
}

// compareFiles compares Go benchmark result files, like benchstat.
func compareFiles(a *app, f compareFlags, paths []string) error {
	// Read the files in parallel: parsing is most of the work.
	files := make([]*metric.BenchFile, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			files[i], errs[i] = metric.ReadGoBenchFile(p)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var cols []compare.Column
	index := map[string]int{}
	var series []compare.Series
	for c, bf := range files {
		for _, w := range bf.Warnings {
			fmt.Fprintf(a.stderr, "perfbot: warning: %v\n", w)
		}
		cols = append(cols, compare.Column{ID: paths[c]})
		for _, m := range bf.Series {
			key := m.Config + "\x00" + m.Name + "\x00" + m.Unit
			i, ok := index[key]
			if !ok {
				i = len(series)
				index[key] = i
				series = append(series, compare.Series{Metric: m.Name, Unit: m.Unit, Better: m.Better, KPI: true,
					Samples: make([][]store.Sample, len(paths))})
			}
			ss := make([]store.Sample, len(m.Values))
			for k, v := range m.Values {
				ss[k] = store.Sample{Run: k + 1, Value: v}
			}
			series[i].Samples[c] = ss
			cols[c].Runs = max(cols[c].Runs, len(m.Values))
		}
		files[c] = nil // the series hold the values now: let the parse go
	}
	t := compare.Build(cols, series, false, f.alpha)
	if f.fdr {
		t.AdjustFDR()
	}
	if err := report.Write(a.stdout, t, report.Options{All: f.all, Format: f.format}); err != nil {
		return err
	}
	if r, _ := t.Regressions(); r > 0 {
		return errRegression
	}
	return nil
}
