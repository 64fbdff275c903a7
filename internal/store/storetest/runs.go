package storetest

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// The suite's cases for runs, their samples and metrics.

// sessionOf and machineOf are the session and machine of run idx made by
// run.
func sessionOf(idx int) string { return fmt.Sprintf("session-%d", idx%3) }
func machineOf(idx int) string { return fmt.Sprintf("bench-%d.example.org", idx%2) }

// versionOf is the perfbot version of run idx made by run.
func versionOf(idx int) string { return fmt.Sprintf("devel 0123456789a%d", idx%2) }

// run returns an OK run of job on commit whose values are named by names,
// all in ns, lower is better; value i of run idx is 1000*idx+i. Its session,
// machine and version are sessionOf(idx), machineOf(idx) and versionOf(idx).
func run(job, commit, variant string, idx int, names ...string) *store.RunRecord {
	r := &store.RunRecord{
		RunKey:     store.RunKey{Job: job, Commit: commit, Variant: variant, Index: idx},
		Status:     store.RunOK,
		CPU:        -1,
		Started:    when.Add(time.Duration(idx) * time.Minute),
		Usage:      metric.Usage{Wall: time.Duration(idx) * time.Second, User: 2*time.Second + 1, Sys: 3 * time.Millisecond, MaxRSSKiB: 1 << 30},
		StdoutPath: fmt.Sprintf("/r/%d/stdout", idx),
		StderrPath: fmt.Sprintf("/r/%d/stderr", idx),
		Session:    sessionOf(idx),
		Machine:    machineOf(idx),
		Version:    versionOf(idx),
	}
	for i, n := range names {
		r.Values = append(r.Values, metric.Value{Name: n, Unit: "ns", Better: metric.LowerIsBetter, Value: float64(1000*idx + i)})
	}
	return r
}

func checkRuns(t *testing.T, what string, got []store.RunRecord, want ...*store.RunRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d runs, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], *want[i]
		if !sameTime(g.Started, w.Started) {
			t.Errorf("%s: run %d Started = %v, want %v", what, i, g.Started, w.Started)
		}
		g.Started, w.Started = time.Time{}, time.Time{}
		if len(g.Values) == 0 && len(w.Values) == 0 {
			g.Values, w.Values = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: run %d =\n%+v\nwant\n%+v", what, i, g, w)
		}
	}
}

func testRunRoundTrip(t *testing.T, s Store) {
	ctx := t.Context()
	r1 := run("job", "c1", "", 1, "time", "rss")
	r1.CPU = 5
	// A metric with several values per run keeps their order; infinities
	// and negative values survive.
	r1.Values = append(r1.Values,
		metric.Value{Name: "ops", Unit: "ops/s", Better: metric.HigherIsBetter, Value: math.Inf(1)},
		metric.Value{Name: "time", Unit: "ns", Better: metric.LowerIsBetter, Value: -2.5},
		metric.Value{Name: "time", Unit: "ns", Better: metric.LowerIsBetter, Value: 1e-300})
	r2 := run("job", "c1", "", 2, "time")
	r2.Status, r2.Reason, r2.ExitCode, r2.Started = store.RunCrashed, "signal: segmentation fault", -1, time.Time{}
	r3 := run("job", "c1", "", 3, "time", "rss")
	// Runs are ordered by Index whatever the order they were put in; other
	// commits, variants and jobs are kept apart.
	for _, r := range []*store.RunRecord{r3, r1, r2,
		run("job", "c2", "", 1, "time"), run("job", "c1", "v", 1, "time"), run("job2", "c1", "", 1, "time")} {
		if err := s.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Runs(ctx, "job", "c1", "")
	if err != nil {
		t.Fatal(err)
	}
	checkRuns(t, "Runs", got, r1, r2, r3)

	got, err = s.RunsWithoutValues(ctx, "job", "c1", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*store.RunRecord{r1, r2, r3} {
		r.Values = nil
	}
	checkRuns(t, "RunsWithoutValues", got, r1, r2, r3)

	if got, err = s.Runs(ctx, "job", "nosuchcommit", ""); err != nil || len(got) != 0 {
		t.Errorf("Runs of an unknown commit = %v, %v; want none, nil", got, err)
	}
}

func testRunReplace(t *testing.T, s Store) {
	ctx := t.Context()
	old := run("job", "c1", "", 1, "a", "b", "c")
	if err := s.PutRun(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRun(ctx, run("job", "c1", "", 2, "a", "b", "c")); err != nil {
		t.Fatal(err)
	}
	repl := run("job", "c1", "", 1, "b")
	repl.Status, repl.Reason, repl.CPU = store.RunNoMetric, `metric "a" not found`, 7
	repl.Values[0].Value = 42
	if err := s.PutRun(ctx, repl); err != nil {
		t.Fatal(err)
	}
	got, err := s.Runs(ctx, "job", "c1", "")
	if err != nil {
		t.Fatal(err)
	}
	checkRuns(t, "Runs after replacing run 1", got, repl, run("job", "c1", "", 2, "a", "b", "c"))

	// The replaced run failed: its value is no sample any more.
	samples, err := s.Samples(ctx, "job", []string{"c1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]store.Sample{
		"a": {smp(2, 2000)},
		"b": {smp(2, 2001)},
		"c": {smp(2, 2002)},
	}
	if !reflect.DeepEqual(samples["c1"], want) {
		t.Errorf("Samples after replacing run 1 with a failed run = %v, want %v", samples["c1"], want)
	}
}

func testRunInvalid(t *testing.T, s Store) {
	ctx := t.Context()
	bad := map[string]func(r *store.RunRecord){
		"empty job":      func(r *store.RunRecord) { r.Job = "" },
		"empty commit":   func(r *store.RunRecord) { r.Commit = "" },
		"index 0":        func(r *store.RunRecord) { r.Index = 0 },
		"unknown status": func(r *store.RunRecord) { r.Status = "flaky" },
		"NaN value":      func(r *store.RunRecord) { r.Values[1].Value = math.NaN() },
		"no metric name": func(r *store.RunRecord) { r.Values[1].Name = "" },
	}
	for what, breakIt := range bad {
		r := run("job", "c1", "", 1, "a", "b")
		breakIt(r)
		if err := s.PutRun(ctx, r); err == nil {
			t.Errorf("PutRun with %s succeeded, want an error", what)
		}
	}
	if got, err := s.Runs(ctx, "job", "c1", ""); err != nil || len(got) != 0 {
		t.Errorf("after failed PutRuns, Runs = %v, %v; want none", got, err)
	}
}

// smp is the sample of value v of run made by run.
func smp(run int, v float64) store.Sample {
	return store.Sample{Run: run, Value: v, Session: sessionOf(run), Machine: machineOf(run)}
}

func testSamplesOKOnly(t *testing.T, s Store) {
	ctx := t.Context()
	var runs []*store.RunRecord
	for i := 1; i <= 5; i++ {
		r := run("job", "c1", "", i, "x", "y")
		switch i {
		case 2:
			r.Status = store.RunCrashed
		case 3:
			r.Status, r.Values = store.RunNoMetric, r.Values[:1]
		case 4:
			r.Status = store.RunTimeout
		}
		runs = append(runs, r)
	}
	// A run with two values of x (go test -count 2).
	r6 := run("job", "c1", "", 6, "x", "y", "x")
	runs = append(runs, r6,
		run("job", "c2", "", 1, "x", "y"),
		run("job", "c2", "v", 1, "x", "y"),
		run("job2", "c2", "", 1, "x", "y"))
	for _, r := range runs {
		if err := s.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Samples(ctx, "job", []string{"c1", "c2", "c1", "c3"}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string][]store.Sample{
		"c1": {
			"x": {smp(1, 1000), smp(5, 5000), smp(6, 6000), smp(6, 6002)},
			"y": {smp(1, 1001), smp(5, 5001), smp(6, 6001)},
		},
		"c2": {"x": {smp(1, 1000)}, "y": {smp(1, 1001)}},
		"c3": {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Samples =\n%v\nwant\n%v", got, want)
	}
	got, err = s.Samples(ctx, "job", []string{"c2"}, "v")
	if err != nil {
		t.Fatal(err)
	}
	if want := (map[string]map[string][]store.Sample{"c2": {"x": {smp(1, 1000)}, "y": {smp(1, 1001)}}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Samples of variant v = %v, want %v", got, want)
	}
}

// testMachineAndSession checks that a run's Machine and Session are
// stored, replaced with the run, and carried by each of its samples, so that
// a caller pairs the samples of two commits by (Machine, Session, Run)
// without reading the runs.
func testMachineAndSession(t *testing.T, s Store) {
	ctx := t.Context()
	origin := func(r *store.RunRecord, machine, session string) *store.RunRecord {
		r.Machine, r.Session = machine, session
		return r
	}
	// Run 1 as stored before machines and sessions were recorded; runs 2
	// and 3 of one session on two machines; run 4 with several values of
	// one metric.
	runs := []*store.RunRecord{
		origin(run("job", "c1", "", 1, "x"), "", ""),
		origin(run("job", "c1", "", 2, "x"), "bench-a", "s1"),
		origin(run("job", "c1", "", 3, "x"), "bench-b", "s1"),
		origin(run("job", "c1", "", 4, "x", "x"), "büro-maschine 2", "s2"),
		// The same index on another commit, variant and job, with other
		// machines and sessions, must not leak into c1's.
		origin(run("job", "c2", "", 2, "x"), "bench-z", "s9"),
		origin(run("job", "c1", "v", 2, "x"), "bench-y", "s8"),
		origin(run("job2", "c1", "", 2, "x"), "bench-x", "s7"),
	}
	for _, r := range runs {
		if err := s.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Runs(ctx, "job", "c1", "")
	if err != nil {
		t.Fatal(err)
	}
	checkRuns(t, "Runs", got, runs[:4]...)
	if got, err = s.RunsWithoutValues(ctx, "job", "c1", ""); err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if r.Machine != runs[i].Machine || r.Session != runs[i].Session {
			t.Errorf("RunsWithoutValues: run %d has machine %q, session %q; want %q, %q",
				r.Index, r.Machine, r.Session, runs[i].Machine, runs[i].Session)
		}
	}

	sample := func(run int, v float64, machine, session string) store.Sample {
		return store.Sample{Run: run, Value: v, Machine: machine, Session: session}
	}
	want := map[string]map[string][]store.Sample{
		"c1": {"x": {
			sample(1, 1000, "", ""),
			sample(2, 2000, "bench-a", "s1"),
			sample(3, 3000, "bench-b", "s1"),
			sample(4, 4000, "büro-maschine 2", "s2"),
			sample(4, 4001, "büro-maschine 2", "s2"),
		}},
		"c2": {"x": {sample(2, 2000, "bench-z", "s9")}},
	}
	samples, err := s.Samples(ctx, "job", []string{"c1", "c2"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(samples, want) {
		t.Errorf("Samples =\n%v\nwant\n%v", samples, want)
	}

	// Taking run 2 again on another machine in another session replaces
	// both; a failed run 3 takes its samples away.
	repl := origin(run("job", "c1", "", 2, "x"), "bench-c", "s3")
	failed := origin(run("job", "c1", "", 3, "x"), "bench-c", "s3")
	failed.Status, failed.Reason = store.RunCrashed, "exit status 1"
	for _, r := range []*store.RunRecord{repl, failed} {
		if err := s.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if got, err = s.Runs(ctx, "job", "c1", ""); err != nil {
		t.Fatal(err)
	}
	checkRuns(t, "Runs after replacing runs 2 and 3", got, runs[0], repl, failed, runs[3])
	if samples, err = s.Samples(ctx, "job", []string{"c1"}, ""); err != nil {
		t.Fatal(err)
	}
	want = map[string]map[string][]store.Sample{"c1": {"x": {
		sample(1, 1000, "", ""),
		sample(2, 2000, "bench-c", "s3"),
		sample(4, 4000, "büro-maschine 2", "s2"),
		sample(4, 4001, "büro-maschine 2", "s2"),
	}}}
	if !reflect.DeepEqual(samples, want) {
		t.Errorf("Samples after replacing runs 2 and 3 =\n%v\nwant\n%v", samples, want)
	}
}

func testMetrics(t *testing.T, s Store) {
	ctx := t.Context()
	r1 := run("job", "c1", "", 1, "zeta", "alpha")
	r2 := run("job", "c1", "", 2, "alpha", "mid", "zeta")
	r2.Values = append(r2.Values, metric.Value{Name: "ops", Unit: "ops/s", Better: metric.HigherIsBetter, Value: 1})
	for _, r := range []*store.RunRecord{r1, r2, run("job2", "c1", "", 1, "other")} {
		if err := s.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Metrics(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.MetricInfo{
		{Name: "zeta", Unit: "ns", Better: metric.LowerIsBetter},
		{Name: "alpha", Unit: "ns", Better: metric.LowerIsBetter},
		{Name: "mid", Unit: "ns", Better: metric.LowerIsBetter},
		{Name: "ops", Unit: "ops/s", Better: metric.HigherIsBetter},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Metrics = %v, want %v (first-seen order)", got, want)
	}

	// A value disagreeing with the metric's stored unit is refused, and
	// the whole run with it.
	r3 := run("job", "c1", "", 3, "new", "alpha")
	r3.Values[1].Unit = "ms"
	if err := s.PutRun(ctx, r3); err == nil {
		t.Error("PutRun with metric alpha in ms, stored in ns, succeeded")
	}
	r4 := run("job", "c1", "", 4, "ops")
	r4.Values[0].Unit = "ops/s"
	if err := s.PutRun(ctx, r4); err == nil {
		t.Error("PutRun with metric ops lower-is-better, stored higher-is-better, succeeded")
	}
	r5 := run("job", "c1", "", 5, "fresh", "fresh")
	r5.Values[1].Unit = "s"
	if err := s.PutRun(ctx, r5); err == nil {
		t.Error("PutRun with a new metric in two units succeeded")
	}
	runs, err := s.Runs(ctx, "job", "c1", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Errorf("after refused runs, %d runs stored, want 2", len(runs))
	}
	if got, err := s.Metrics(ctx, "job"); err != nil || !slices.Equal(got, want) {
		t.Errorf("after refused runs, Metrics = %v, %v; want %v", got, err, want)
	}
	if got, err := s.Metrics(ctx, "nosuchjob"); err != nil || len(got) != 0 {
		t.Errorf("Metrics(nosuchjob) = %v, %v; want none", got, err)
	}
}

// testConcurrentReaders checks that readers running while a writer puts
// runs always see whole runs: every run with all its values, every metric
// with as many samples as there are runs.
func testConcurrentReaders(t *testing.T, s Store) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const (
		nruns   = 30
		nvalues = 40
	)
	names := make([]string, nvalues)
	for i := range names {
		names[i] = fmt.Sprintf("m%02d", i)
	}
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	done := make(chan struct{})
	for range 3 {
		wg.Go(func() {
			seen, reads := 0, 0
			for {
				select {
				case <-done:
					if reads == 0 {
						errc <- fmt.Errorf("reader made no read")
					}
					return
				default:
				}
				reads++
				runs, err := s.Runs(ctx, "job", "c1", "")
				if err != nil {
					errc <- err
					return
				}
				if len(runs) < seen {
					errc <- fmt.Errorf("a reader saw %d runs, then %d", seen, len(runs))
					return
				}
				seen = len(runs)
				for _, r := range runs {
					if len(r.Values) != nvalues {
						errc <- fmt.Errorf("run %d read with %d values, want %d", r.Index, len(r.Values), nvalues)
						return
					}
				}
				samples, err := s.Samples(ctx, "job", []string{"c1"}, "")
				if err != nil {
					errc <- err
					return
				}
				n := -1
				for name, ss := range samples["c1"] {
					if n >= 0 && len(ss) != n {
						errc <- fmt.Errorf("metric %s has %d samples, another %d: a partial run was read", name, len(ss), n)
						return
					}
					n = len(ss)
				}
			}
		})
	}
	for i := 1; i <= nruns; i++ {
		if err := s.PutRun(ctx, run("job", "c1", "", i, names...)); err != nil {
			t.Error(err)
			break
		}
	}
	close(done)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	runs, err := s.Runs(ctx, "job", "c1", "")
	if err != nil || len(runs) != nruns {
		t.Errorf("after writing, Runs = %d runs, %v; want %d", len(runs), err, nruns)
	}
}

// testVersion checks that a run's Version is stored, read back by Runs and
// RunsWithoutValues, and replaced with the run; "" (a run of a perfbot
// that did not record it) is kept as "".
func testVersion(t *testing.T, s Store) {
	ctx := t.Context()
	old, cur := run("job", "c1", "", 1, "x"), run("job", "c1", "", 2, "x")
	old.Version, cur.Version = "", "v1.2.0"
	for _, r := range []*store.RunRecord{old, cur} {
		if err := s.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, read := range []func(context.Context, string, string, string) ([]store.RunRecord, error){s.Runs, s.RunsWithoutValues} {
		got, err := read(ctx, "job", "c1", "")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Version != "" || got[1].Version != "v1.2.0" {
			t.Fatalf("runs read back = %+v; want versions \"\" and \"v1.2.0\"", got)
		}
	}
	// Taken again by another perfbot: the new version replaces the old.
	cur.Version = "devel 0123456789ab+modified"
	if err := s.PutRun(ctx, cur); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunsWithoutValues(ctx, "job", "c1", "")
	if err != nil {
		t.Fatal(err)
	}
	if got[1].Version != cur.Version {
		t.Errorf("replaced run has version %q; want %q", got[1].Version, cur.Version)
	}
}
