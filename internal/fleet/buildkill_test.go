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
)

// slowMakefile builds BenchC's bench.c after sleeping 3 s: a build long
// enough to kill its worker in the middle of it.
const slowMakefile = "bench: bench.c\n\tsleep 3\n\tgcc -O2 $(CFLAGS) -o bench bench.c\n"

// TestFleetBuildKilled: the worker building a commit is SIGKILLed in
// the middle of the build (its make is sleeping). The server finds its
// machine dead after DeadAfter (3 s here), not after the build's timeout
// (1 minute + River's 2-minute grace), and another worker builds the
// commit; the fleet keeps one build record of the key, another machine's;
// every round runs that record's artifacts; the comparison stores exactly
// the runs a single machine takes; and nothing the killed worker started
// (make, sleep, gcc, its supervisor) is left.
func TestFleetBuildKilled(t *testing.T) {
	const runs = 3
	f := newFixtureWith(t, runs, 300000, testutil.BenchMakefile, slowMakefile)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ws := map[string]*exec.Cmd{}
	for i, id := range []string{"m1", "m2", "m3"} {
		ws[id] = f.worker(t, id, i%2)
	}
	row, err := f.server.EnqueueCompare(ctx, fleet.CompareArgs{Job: f.spec, Class: "test", Commits: f.commits})
	if err != nil {
		t.Fatal(err)
	}
	slow := f.commits[1]

	// Kill the worker that River says is building the slow commit, while
	// its make sleeps.
	var killed string
	var first int64
	for killed == "" {
		if ctx.Err() != nil {
			t.Fatal("the slow build never ran")
		}
		for _, j := range jobs(t, f.server.River, "perfbot.build") {
			var a fleet.BuildArgs
			_ = json.Unmarshal(j.EncodedArgs, &a)
			if j.State != rivertype.JobStateRunning || a.Commit != slow || len(j.AttemptedBy) == 0 {
				continue
			}
			machine, instance := clientOf(t, j.AttemptedBy[len(j.AttemptedBy)-1])
			if w := ws[machine]; w == nil || serving(t, f, machine) != fmt.Sprint(w.Process.Pid, " ", instance) {
				t.Fatalf("build job %d attempted by %s: no such worker", j.ID, j.AttemptedBy)
			}
			if !named(procsUnder(filepath.Join(f.dir, machine)), "sleep") {
				continue
			}
			killed, first = machine, j.ID
			if err := ws[killed].Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			t.Logf("killed %s in the middle of build job %d", killed, j.ID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	killedAt := time.Now()

	// Nothing the killed worker started is left (its runs' supervisor
	// kills the build's process tree when the worker dies).
	var left []string
	for left = procsUnder(filepath.Join(f.dir, killed)); len(left) > 0 && time.Since(killedAt) < 10*time.Second; left = procsUnder(filepath.Join(f.dir, killed)) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("10 s after %s was killed its processes are still running: %v", killed, left)
	}

	out := awaitCompare(ctx, t, f.server.River, row.ID, 200*time.Millisecond)
	t.Logf("the comparison completed %.1fs after the kill", time.Since(killedAt).Seconds())
	if len(out.Rounds) != runs {
		t.Errorf("compare gave rounds %v, want %d", out.Rounds, runs)
	}

	// The build was moved: the killed worker's job abandoned, another
	// machine's job of the same build completed it.
	var finisher string
	var arts map[string]string
	for _, j := range jobs(t, f.server.River, "perfbot.build") {
		var a fleet.BuildArgs
		_ = json.Unmarshal(j.EncodedArgs, &a)
		if a.Commit != slow {
			continue
		}
		switch {
		case j.ID == first:
			if j.State == rivertype.JobStateCompleted {
				t.Errorf("the killed worker's build job %d completed", j.ID)
			}
		case j.State == rivertype.JobStateCompleted:
			var bo fleet.BuildOutput
			if err := json.Unmarshal(j.Output(), &bo); err != nil {
				t.Fatal(err)
			}
			if a.Move < 1 || finisher != "" {
				t.Errorf("build job %d (move %d) completed; want one, queued again after the kill (move 1)", j.ID, a.Move)
			}
			finisher, arts = bo.Machine, bo.Artifacts
		}
	}
	if finisher == "" || finisher == killed {
		t.Fatalf("the slow build was finished by %q, want another machine than the killed %s", finisher, killed)
	}

	// One build record of the key: the finisher's, whose artifacts every
	// round ran.
	var n int
	var machine string
	var recArts map[string]string
	if err := f.pool.QueryRow(ctx, `SELECT count(*), min(machine), (array_agg(artifacts))[1] FROM perfbot_fleet_builds WHERE commit_hash = $1`, slow).
		Scan(&n, &machine, &recArts); err != nil {
		t.Fatal(err)
	}
	if n != 1 || machine != finisher || recArts["bench"] == "" || recArts["bench"] != arts["bench"] {
		t.Errorf("%d build records of the slow commit, machine %s, bench %.12s; want 1, %s's, %.12s", n, machine, recArts["bench"], finisher, arts["bench"])
	}
	for _, j := range jobs(t, f.server.River, "perfbot.round") {
		var a fleet.RoundArgs
		_ = json.Unmarshal(j.EncodedArgs, &a)
		for _, s := range a.Slots {
			if s.Commit == slow && s.Artifacts["bench"] != recArts["bench"] {
				t.Errorf("round %d runs bench %.12s of the slow commit, the record has %.12s", a.Round, s.Artifacts["bench"], recArts["bench"])
			}
		}
	}

	// As many runs stored as a single-machine measurement takes.
	j, err := f.spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	fleetRuns := 0
	for _, c := range f.commits {
		recs, err := f.results.RunsWithoutValues(ctx, j.Key(), c, "")
		if err != nil {
			t.Fatal(err)
		}
		fleetRuns += len(recs)
	}
	if single := singleMachine(t, f); fleetRuns != single {
		t.Errorf("the fleet stored %d runs, a single machine %d", fleetRuns, single)
	}
}

// clientOf parses a worker's River client ID: worker.<machine>.<instance>.
func clientOf(t *testing.T, id string) (string, string) {
	rest, ok := strings.CutPrefix(id, "worker.")
	i := strings.LastIndexByte(rest, '.')
	if !ok || i < 0 {
		t.Fatalf("client %q is not a worker", id)
	}
	return rest[:i], rest[i+1:]
}

// serving says which process serves machine: "<pid> <instance>".
func serving(t *testing.T, f *fixture, machine string) string {
	ms, _, err := fleet.Machines(context.Background(), f.pool, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.ID == machine {
			return fmt.Sprint(m.PID, " ", m.Instance)
		}
	}
	return ""
}

// procsUnder lists the processes ("pid name") whose working directory is
// under dir.
func procsUnder(dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cwd, err := os.Readlink(filepath.Join(p, "cwd"))
		if err != nil || cwd != dir && !strings.HasPrefix(cwd, dir+"/") {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(p, "comm"))
		out = append(out, fmt.Sprintf("%s %s", filepath.Base(p), strings.TrimSpace(string(comm))))
	}
	return out
}

// named reports whether one of procs (procsUnder's) is named name.
func named(procs []string, name string) bool {
	for _, p := range procs {
		if strings.HasSuffix(p, " "+name) {
			return true
		}
	}
	return false
}
