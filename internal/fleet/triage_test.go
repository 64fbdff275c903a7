package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/triage"
	"github.com/perfbot/perfbot/internal/verdict"
)

// triageArgs is a triage of base -> changed on the fixture's class, with
// the smallest sweep (two layouts, the plain build one of them) to keep
// the tests short.
func triageArgs(f *fixture, base, changed string) fleet.TriageArgs {
	return fleet.TriageArgs{Job: f.spec, Class: "test", Base: base, Changed: changed, Metric: "work_ms", Layouts: 2, MaxLayouts: 2}
}

// fleetTriage queues a triage of base -> changed on the fixture's class
// and returns its result.
func fleetTriage(t *testing.T, f *fixture, base, changed string) *triage.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	row, err := f.server.EnqueueTriage(ctx, triageArgs(f, base, changed))
	if err != nil {
		t.Fatal(err)
	}
	done, err := fleet.Await(ctx, f.server.River, row.ID, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var out fleet.TriageOutput
	if err := json.Unmarshal(done.Output(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Error != "" {
		t.Fatalf("triage failed on the fleet: %s", out.Error)
	}
	res, err := out.Result()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var machineRE = regexp.MustCompile(`^fleet machine (m[12]) \(class test\)`)

// oneMachine checks that the result names one machine of the class and
// that every run of the triage's experiments was taken there, stored
// under that machine's own job key, none under the plain job's.
func oneMachine(t *testing.T, f *fixture, res *triage.Result) string {
	t.Helper()
	m := machineRE.FindStringSubmatch(res.Machine)
	if m == nil {
		t.Fatalf("result's machine %q: want one fleet machine of class test named", res.Machine)
	}
	ctx := context.Background()
	bound := f.spec
	bound.Bound = m[1]
	jb, err := bound.Load()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := f.spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range res.Experiments {
		for _, c := range e.Columns {
			// The sweep's columns name no variant: its runs are counted
			// under the plain build only.
			variant := ""
			if c.Variant != "" {
				continue
			}
			recs, err := f.results.RunsWithoutValues(ctx, jb.Key(), c.Commit, variant)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				n++
				if r.Machine != m[1] {
					t.Errorf("run %d of %.12s under %s's key was taken on %s", r.Index, c.Commit, m[1], r.Machine)
				}
			}
			if other, _ := f.results.RunsWithoutValues(ctx, plain.Key(), c.Commit, variant); len(other) > 0 {
				t.Errorf("%d runs of %.12s stored under the unbound job's key", len(other), c.Commit)
			}
		}
	}
	if n == 0 {
		t.Errorf("no run of the plain builds stored under machine %s's key", m[1])
	}
	return m[1]
}

// TestFleetTriage: on two real workers, a triage of a planted 2x slowdown
// is a real regression; it names one machine, which took every run of
// its experiments.
func TestFleetTriage(t *testing.T) {
	f := newFixture(t, 6, 300000)
	slow := f.repo.Commit("twice the work", map[string]string{"bench.c": testutil.BenchC(18, "v")})
	for i, id := range []string{"m1", "m2"} {
		f.worker(t, id, i%2)
	}
	start := time.Now()
	res := fleetTriage(t, f, f.commits[1], slow)
	t.Logf("2x slowdown: %s in %v (%d runs, %d builds): %s", res.Verdict, time.Since(start).Round(time.Second), res.Runs, res.Builds, res.Sentence)
	if res.Verdict != verdict.RealRegression {
		t.Errorf("verdict %s, want %s: %s", res.Verdict, verdict.RealRegression, res.Sentence)
	}
	if code, _ := res.ExitStatus(); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	oneMachine(t, f, res)
}

// TestFleetTriageNoChange: a triage of a change to a comment (the builds
// are byte-identical) is no change, on one machine.
func TestFleetTriageNoChange(t *testing.T) {
	f := newFixture(t, 6, 300000)
	noop := f.repo.Commit("a comment", map[string]string{"bench.c": testutil.BenchC(9, "a comment changed")})
	for i, id := range []string{"m1", "m2"} {
		f.worker(t, id, i%2)
	}
	start := time.Now()
	res := fleetTriage(t, f, f.commits[1], noop)
	t.Logf("no-op: %s in %v (%d runs): %s", res.Verdict, time.Since(start).Round(time.Second), res.Runs, res.Sentence)
	if res.Verdict != verdict.NoChange || !res.Identical {
		t.Errorf("verdict %s (identical builds %v), want %s: %s", res.Verdict, res.Identical, verdict.NoChange, res.Sentence)
	}
	oneMachine(t, f, res)
}

// TestFleetTriageMachineDies: the machine a triage is bound to is
// SIGKILLed in the middle of its experiments; the triage starts again on
// the other machine, which takes every run of the verdict, and says so.
func TestFleetTriageMachineDies(t *testing.T) {
	if testing.Short() {
		t.Skip("a triage, a dead machine and the triage again on the other one")
	}
	f := newFixture(t, 6, 300000)
	slow := f.repo.Commit("twice the work", map[string]string{"bench.c": testutil.BenchC(18, "v")})
	ws := map[string]*exec.Cmd{}
	for i, id := range []string{"m1", "m2"} {
		ws[id] = f.worker(t, id, i%2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	row, err := f.server.EnqueueTriage(ctx, triageArgs(f, f.commits[1], slow))
	if err != nil {
		t.Fatal(err)
	}
	// Kill the machine of the first round job with runs stored.
	killed := ""
	for killed == "" && ctx.Err() == nil {
		for _, j := range jobs(t, f.server.River, "perfbot.round") {
			var a fleet.RoundArgs
			_ = json.Unmarshal(j.EncodedArgs, &a)
			if a.Round >= 3 && a.Job.Bound != "" {
				killed = a.Machine
				_ = ws[killed].Process.Kill()
				t.Logf("killed %s at round %d", killed, a.Round)
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	done, err := fleet.Await(ctx, f.server.River, row.ID, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var out fleet.TriageOutput
	if err := json.Unmarshal(done.Output(), &out); err != nil || out.Error != "" {
		t.Fatalf("triage: %v %s", err, out.Error)
	}
	res, err := out.Result()
	if err != nil {
		t.Fatal(err)
	}
	m := oneMachine(t, f, res)
	if m == killed {
		t.Errorf("the verdict rests on the killed machine %s", killed)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), fmt.Sprintf("machine [%s] stopped answering", killed)) {
		t.Errorf("notes %q: want the restart said", res.Notes)
	}
	if res.Verdict != verdict.RealRegression {
		t.Errorf("verdict %s, want %s: %s", res.Verdict, verdict.RealRegression, res.Sentence)
	}
}

// robustHistory adds three commits after the fixture's first, the second
// of them doubling the work, and bisects them on two workers as args
// says; it returns the result and the planted culprit.
func robustHistory(t *testing.T, a fleet.BisectArgs) (*fixture, *bisect.Result, string) {
	t.Helper()
	f := newFixture(t, 6, 300000)
	var want, bad string
	for i, passes := range []int{6, 12, 12} {
		bad = f.repo.Commit(fmt.Sprintf("c%d", i+1), map[string]string{"bench.c": testutil.BenchC(passes, fmt.Sprint("c", i+1))})
		if i == 1 {
			want = bad
		}
	}
	for i, id := range []string{"m1", "m2"} {
		f.worker(t, id, i%2)
	}
	a.Job, a.Class, a.Good, a.Bad, a.Metric, a.Parallel, a.MaxCulprits = f.spec, "test", f.commits[0], bad, "work_ms", 2, 1
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	row, err := f.server.EnqueueBisect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	done, err := fleet.Await(ctx, f.server.River, row.ID, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var out fleet.BisectOutput
	if err := json.Unmarshal(done.Output(), &out); err != nil {
		t.Fatal(err)
	}
	res, err := out.Decode()
	if err != nil || out.Error != "" || res == nil || res.Culprit == nil {
		t.Fatalf("bisection found no culprit: %v %s", err, out.Error)
	}
	if res.Culprit.Hash != want {
		t.Errorf("culprit %.12s, want %.12s", res.Culprit.Hash, want)
	}
	return f, res, want
}

// TestFleetBisectForced: a bisection with --layout-robust forced on the
// fleet builds every commit with the forced-alignment wrappers on the
// workers (the wrappers travel with the builds) and names the culprit.
func TestFleetBisectForced(t *testing.T) {
	f, res, _ := robustHistory(t, fleet.BisectArgs{Mode: string(bisect.Forced)})
	if res.Mode != bisect.Forced || res.Table == nil {
		t.Errorf("mode %q, check table %v: want forced, with its table", res.Mode, res.Table != nil)
	}
	n := 0
	for _, j := range jobs(t, f.server.River, "perfbot.build") {
		var a fleet.BuildArgs
		_ = json.Unmarshal(j.EncodedArgs, &a)
		if a.Variant.Name == "" {
			t.Errorf("build job %d of %.12s: plain, want every commit built with forced alignment", j.ID, a.Commit)
			continue
		}
		if a.Knobs == nil || len(a.Knobs.Files) == 0 {
			t.Errorf("build job %d (%s): carries no wrapper files", j.ID, a.Variant.Name)
		}
		n++
	}
	if n == 0 {
		t.Error("no build job")
	}
}

// TestFleetBisectTriage: a plain bisection on the fleet triages its
// culprit, on one machine, as perfbot bisect does.
func TestFleetBisectTriage(t *testing.T) {
	if testing.Short() {
		t.Skip("a bisection and the triage of its culprit")
	}
	_, res, _ := robustHistory(t, fleet.BisectArgs{})
	var tr *bisect.Triage
	if len(res.Culprits) > 0 {
		tr = res.Culprits[0].Triage
	}
	if tr == nil || tr.Verdict != verdict.RealRegression {
		t.Fatalf("culprit's triage %+v, want a real regression", tr)
	}
}
