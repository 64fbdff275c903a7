package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/verdict"
)

// awaitGone waits up to 10 s for every process whose working directory
// is under the killed worker's folder to end, and fails the test naming
// those left.
func awaitGone(t *testing.T, dir string) {
	t.Helper()
	start := time.Now()
	left := procsUnder(dir)
	for ; len(left) > 0 && time.Since(start) < 10*time.Second; left = procsUnder(dir) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("10 s after its worker was killed these processes under %s still run: %v", dir, left)
	}
}

// TestFleetWatchWorkerKilled: a watch cycle (submit watch --once, the
// real binary; two real workers of the class) tests a planted 4x slowdown
// (4x, not 2x: the cycle's 8 runs a commit must find it whatever the
// host's load)
// from its start commit; the worker measuring a round of the cycle is
// SIGKILLed while its benchmark runs. The cycle completes on the other
// machine with the regression found (exit 1), every run of the
// measurement is stored once, from one machine, by at most one completed
// round job, and nothing the killed worker started is left.
func TestFleetWatchWorkerKilled(t *testing.T) {
	f := newFixture(t, 8, 400000)
	slow := f.repo.Commit("four times the work", map[string]string{"bench.c": testutil.BenchC(36, "v")})
	ws := map[string]*exec.Cmd{"w1": f.worker(t, "w1", 0), "w2": f.worker(t, "w2", 1)}
	dir := filepath.Dir(f.spec.File)
	watchFile := filepath.Join(dir, "watch.yaml")
	if err := os.WriteFile(watchFile, []byte(fmt.Sprintf("class: test\njobs: [%s]\nbranches: [main]\nstart: %s\nreport: {dir: reports}\n",
		filepath.Base(f.spec.File), f.commits[1])), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		code int
		log  string
	}
	done := make(chan result, 1)
	go func() {
		code, log := submitWatch(t, f, watchFile)
		done <- result{code, log}
	}()

	// Kill the machine of a running measuring round (not the triage's,
	// bound to one machine) of the cycle, while its benchmark runs.
	var killed string
	for deadline := time.Now().Add(2 * time.Minute); killed == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no round of the watch cycle ran within 2 minutes")
		}
		for _, j := range jobs(t, f.server.River, "perfbot.round") {
			var a fleet.RoundArgs
			_ = json.Unmarshal(j.EncodedArgs, &a)
			if j.State == rivertype.JobStateRunning && a.Job.Bound == "" && a.Round >= 1 && benchRunning(filepath.Join(f.dir, a.Machine)) {
				killed = a.Machine
				if err := ws[killed].Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				t.Logf("killed %s in the middle of the cycle's round %d", killed, a.Round)
				break
			}
		}
	}
	awaitGone(t, filepath.Join(f.dir, killed))

	var r result
	select {
	case r = <-done:
	case <-time.After(4 * time.Minute):
		t.Fatal("the watch cycle did not end within 4 minutes of the kill")
	}
	if r.code != 1 || !strings.Contains(r.log, "new real regressions: "+slow[:12]+"\n") {
		t.Fatalf("cycle: exit %d, want 1 and %.12s a new real regression:\n%s", r.code, slow, r.log)
	}
	if reports, _ := filepath.Glob(filepath.Join(dir, "reports", "*.json")); len(reports) != 1 {
		t.Errorf("report folder: %v, want the one finding", reports)
	}

	// Every run of the plain measurement once, from one machine, and by
	// at most one completed round job; some finished on the other one.
	j, err := f.spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []string{f.commits[1], slow} {
		recs, err := f.results.RunsWithoutValues(ctx, j.Key(), c, "")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]string{}
		for _, rec := range recs {
			if m, ok := seen[rec.Index]; ok {
				t.Errorf("run %d of %.12s stored twice (%s, %s)", rec.Index, c, m, rec.Machine)
			}
			seen[rec.Index] = rec.Machine
		}
		if len(recs) == 0 {
			t.Errorf("no run of %.12s stored", c)
		}
	}
	completed := map[string]int{} // commit/run -> completed round jobs
	moved := 0
	for _, jr := range jobs(t, f.server.River, "perfbot.round") {
		var a fleet.RoundArgs
		_ = json.Unmarshal(jr.EncodedArgs, &a)
		if jr.State != rivertype.JobStateCompleted || a.Job.Bound != "" {
			continue
		}
		if a.Machine != killed {
			moved++
		}
		for _, s := range a.Slots {
			if s.Index > 0 {
				completed[fmt.Sprintf("%.12s/%d", s.Commit, s.Index)]++
			}
		}
	}
	for k, n := range completed {
		if n > 1 {
			t.Errorf("run %s completed by %d round jobs", k, n)
		}
	}
	if moved == 0 {
		t.Errorf("no measuring round finished on another machine than the killed %s", killed)
	}
	if ws := jobs(t, f.server.River, "perfbot.watch"); len(ws) != 1 {
		t.Errorf("%d watch jobs, want the one cycle", len(ws))
	}
}

// TestFleetVariantBuildKilled: a triage on two real workers (every build
// sleeps 3 s in make) of a planted 2x slowdown; the worker building one
// of its variants (a forced-alignment or sweep build) is SIGKILLed while
// make sleeps. The variant is built once more, by the other machine, one
// build record of its key is kept, the triage still says real regression
// on one machine, and nothing the killed worker started is left.
func TestFleetVariantBuildKilled(t *testing.T) {
	f := newFixtureWith(t, 6, 300000, testutil.BenchMakefile, slowMakefile)
	slow := f.repo.Commit("twice the work", map[string]string{"bench.c": testutil.BenchC(18, "v")})
	ws := map[string]*exec.Cmd{"m1": f.worker(t, "m1", 0), "m2": f.worker(t, "m2", 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	row, err := f.server.EnqueueTriage(ctx, triageArgs(f, f.commits[1], slow))
	if err != nil {
		t.Fatal(err)
	}

	var killed string
	var first int64
	var target fleet.BuildArgs
	for killed == "" {
		if ctx.Err() != nil {
			t.Fatal("no variant build ran")
		}
		for _, j := range jobs(t, f.server.River, "perfbot.build") {
			var a fleet.BuildArgs
			_ = json.Unmarshal(j.EncodedArgs, &a)
			if j.State != rivertype.JobStateRunning || a.Variant.Name == "" || len(j.AttemptedBy) == 0 {
				continue
			}
			machine, _ := clientOf(t, j.AttemptedBy[len(j.AttemptedBy)-1])
			if ws[machine] == nil || !named(procsUnder(filepath.Join(f.dir, machine)), "sleep") {
				continue
			}
			killed, first, target = machine, j.ID, a
			if err := ws[killed].Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			t.Logf("killed %s while it built %.12s (%s), job %d", killed, a.Commit, a.Variant.Name, j.ID)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	awaitGone(t, filepath.Join(f.dir, killed))

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
	if res.Verdict != verdict.RealRegression {
		t.Errorf("verdict %s, want %s: %s", res.Verdict, verdict.RealRegression, res.Sentence)
	}
	if m := oneMachine(t, f, res); m == killed {
		t.Errorf("the verdict rests on the killed machine %s", killed)
	}

	// The variant was built again by the other machine: the killed job
	// never completed, one later job (moved) did.
	finisher, key := "", ""
	for _, j := range jobs(t, f.server.River, "perfbot.build") {
		var a fleet.BuildArgs
		_ = json.Unmarshal(j.EncodedArgs, &a)
		if a.Commit != target.Commit || a.Variant.Name != target.Variant.Name {
			continue
		}
		switch {
		case j.ID == first && j.State == rivertype.JobStateCompleted:
			t.Errorf("the killed worker's build job %d completed", j.ID)
		case j.ID != first && j.State == rivertype.JobStateCompleted:
			var bo fleet.BuildOutput
			if err := json.Unmarshal(j.Output(), &bo); err != nil {
				t.Fatal(err)
			}
			if finisher != "" {
				t.Errorf("variant %s of %.12s completed by two jobs (%s, %s)", target.Variant.Name, target.Commit, finisher, bo.Machine)
			}
			finisher, key = bo.Machine, bo.Key
		}
	}
	if finisher == "" || finisher == killed {
		t.Errorf("the variant build was finished by %q, want another machine than the killed %s", finisher, killed)
	}
	var machine, status string
	if err := f.pool.QueryRow(ctx, `SELECT machine, status FROM perfbot_fleet_builds WHERE key = $1`, key).Scan(&machine, &status); err != nil {
		t.Fatalf("the variant's build record %s: %v", key, err)
	}
	if machine != finisher || status != "ok" {
		t.Errorf("the variant's build record: machine %s, status %s; want %s's, ok", machine, status, finisher)
	}
}
