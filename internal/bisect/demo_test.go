package bisect

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/demo"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/knobs"
	"github.com/perfbot/perfbot/internal/metric"
	runner "github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/textfx"
)

// These tests use the real measurer: demo histories of real C code, gcc
// builds, real runs and a real SQLite store.

type demoSetup struct {
	repo  *demo.Repo
	job   *job.Job
	store *store.Store
	git   *gitrev.Repo
	path  []gitrev.Commit
	good  gitrev.Commit
}

func newDemoSetup(t testing.TB, commits int, seed uint64) *demoSetup {
	t.Helper()
	testutil.NeedTool(t, "git", "gcc", "make")
	dir := t.TempDir()
	// The alignment-only commit is placed for this CPU: where an offset
	// matters here it costs real time, which forced alignment must undo.
	r, err := demo.Create(filepath.Join(dir, "repo"), demo.Options{History: demo.HistoryBisect, Commits: commits, Seed: seed, Text: textfx.Placement(t)})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := job.Load(r.JobFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	g, err := gitrev.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	good, err := g.Resolve(ctx, r.Commits[0].Hash)
	if err != nil {
		t.Fatal(err)
	}
	path, err := g.FirstParentPath(ctx, good.Hash, r.Commits[len(r.Commits)-1].Hash)
	if err != nil {
		t.Fatal(err)
	}
	return &demoSetup{repo: r, job: jobs[0], store: st, git: g, path: path, good: good}
}

func (d *demoSetup) measurer(t testing.TB, variants []job.Variant, cpu int) *StoreMeasurer {
	return &StoreMeasurer{Job: d.job, Store: d.store, Repo: d.git, Metric: demo.MetricText, Variants: variants, CPU: cpu,
		Builder: &build.Builder{Repo: d.git, Store: d.store, Dir: d.store.Dir()}}
}

func forced(t testing.TB, d *demoSetup) []job.Variant {
	p, err := knobs.LookupIn("c", filepath.Join(d.store.Dir(), "knobs"))
	if err != nil {
		t.Fatal(err)
	}
	return []job.Variant{p.ForcedAlignment()}
}

// TestStoreMeasurer: builds and runs are real, stored, and never taken
// twice; a broken commit reports its build error; runs are interleaved as
// measure.Spread orders them; Prefetch builds in the background.
func TestStoreMeasurer(t *testing.T) {
	d := newDemoSetup(t, 8, 2)
	ctx := context.Background()
	m := d.measurer(t, nil, -1)
	broken := d.repo.ByLabel(demo.EffectBuildFailure)
	var brokenCommit gitrev.Commit
	for _, c := range d.path {
		if c.Hash == broken.Hash {
			brokenCommit = c
		}
	}
	reqs := []Request{{Commit: d.good, Runs: 4}, {Commit: d.path[len(d.path)-1], Runs: 2}, {Commit: brokenCommit, Runs: 3}}
	b, err := m.Measure(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if b.Taken != 6 || b.Built != 3 || b.Better != metric.LowerIsBetter {
		t.Errorf("took %d runs and %d builds (better %v); want 6, 3 and lower", b.Taken, b.Built, b.Better)
	}
	if got := b.Samples[0].runs(); got != 4 || len(b.Samples[0].replicates()) != 4 {
		t.Errorf("good has %d runs, %d values; want 4", got, len(b.Samples[0].replicates()))
	}
	if err := b.Samples[2].BuildErr; !errors.Is(err, build.ErrFailed) {
		t.Errorf("broken commit: build error %v", err)
	}
	// Again: everything is stored, nothing is built or run.
	b, err = m.Measure(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if b.Taken != 0 || b.Built != 0 {
		t.Errorf("second Measure took %d runs, %d builds; want none", b.Taken, b.Built)
	}
	// Runs 0 only reads what is stored (the landing step before the
	// check); From asks for fresh runs after the stored ones.
	b, err = m.Measure(ctx, []Request{{Commit: d.good}, {Commit: d.path[len(d.path)-1]}})
	if err != nil || b.Taken != 0 || b.Samples[0].runs() != 4 {
		t.Errorf("read-only Measure took %d runs (err %v), good has %d; want none taken and 4", b.Taken, err, b.Samples[0].runs())
	}
	b, err = m.Measure(ctx, []Request{{Commit: d.good, Runs: 6, From: 4}, {Commit: d.path[len(d.path)-1], Runs: 4, From: 2}})
	if err != nil || b.Taken != 4 || b.Samples[0].maxIndex() != 6 || b.Samples[1].maxIndex() != 4 {
		t.Errorf("fresh runs: took %d (err %v), highest runs %d and %d; want 4, 6 and 4", b.Taken, err, b.Samples[0].maxIndex(), b.Samples[1].maxIndex())
	}
	// Prefetch builds ahead; Measure then finds the build cached.
	m.Prefetch(ctx, []gitrev.Commit{d.path[2]})
	m.Wait()
	b, err = m.Measure(ctx, []Request{{Commit: d.path[2], Runs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Built != 1 || b.Taken != 1 {
		t.Errorf("after Prefetch: %d builds booked, %d runs; want the prefetched build and 1 run", b.Built, b.Taken)
	}
	if merge, err := m.IsMerge(ctx, d.path[2]); err != nil || merge {
		t.Errorf("IsMerge = %v, %v", merge, err)
	}
	// A metric the job does not produce.
	m2 := d.measurer(t, nil, -1)
	m2.Metric = "nope_ms"
	if _, err := m2.Measure(ctx, []Request{{Commit: d.good, Runs: 1}}); !errors.Is(err, ErrNoMetric) {
		t.Errorf("unknown metric: err = %v, want ErrNoMetric", err)
	}
}

func quietCPU(t testing.TB) int {
	cal, err := runner.Calibrate(context.Background(), runner.Allowed(), runner.CalibrateOptions{})
	if err != nil {
		return -1
	}
	return cal.Quietest()
}

// TestDemoForced bisects a 16-commit demo history under forced alignment
// with the real measurer: the real regression is named and the check
// confirms it (one retry, for the shared machine's bursts of load).
func TestDemoForced(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a 16-commit history")
	}
	d := newDemoSetup(t, 16, 4)
	real := d.repo.ByLabel(demo.EffectRealRegression).Hash
	cpu := quietCPU(t)
	for attempt := 1; ; attempt++ {
		r, err := search(context.Background(), options{Measurer: d.measurer(t, forced(t, d), cpu), Metric: demo.MetricText}, d.good, d.path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Found() {
			if r.Culprit.Hash != real {
				t.Fatalf("confirmed culprit %s, want the real regression %s", r.Culprit.Short(), gitrev.Short(real))
			}
			return
		}
		if attempt == 2 {
			t.Fatalf("no confirmed culprit twice: %+v", r.Check)
		}
	}
}

// BenchmarkDemo is the benchmark: builds and runs spent to find
// the culprit of a 64-commit demo history (the real 30 % regression, an
// alignment-only shift, a broken build), for the statistical bisection and
// for the plain "git bisect run" scheme with 6 runs per commit, both on
// forced-alignment builds (so that the real regression is the only
// change), each on a fresh store. Iteration i bisects the history of seed
// i+1.
//
//	go test ./internal/bisect -run '^$' -bench Demo -benchtime 3x
func BenchmarkDemo(b *testing.B) {
	cpu := quietCPU(b)
	for _, sc := range []struct {
		name string
		opt  options
	}{{"statistical", options{}}, {"fixed6", options{Fixed: 6}}} {
		b.Run(sc.name, func(b *testing.B) {
			var runs, check, builds, wrong, skipped int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				d := newDemoSetup(b, 64, uint64(i+1))
				real := d.repo.ByLabel(demo.EffectRealRegression).Hash
				b.StartTimer()
				opt := sc.opt
				opt.Measurer, opt.Metric = d.measurer(b, forced(b, d), cpu), demo.MetricText
				r, err := search(context.Background(), opt, d.good, d.path)
				if err != nil {
					b.Fatal(err)
				}
				runs += r.Runs - r.CheckRuns
				check += r.CheckRuns
				builds += r.Builds
				skipped += len(r.Skipped())
				if !r.Found() || r.Culprit.Hash != real {
					wrong++
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(runs)/n, "find-runs/op")
			b.ReportMetric(float64(check)/n, "check-runs/op")
			b.ReportMetric(float64(builds)/n, "builds/op")
			b.ReportMetric(float64(skipped)/n, "skips/op")
			b.ReportMetric(100*float64(wrong)/n, "%wrong")
		})
	}
}
