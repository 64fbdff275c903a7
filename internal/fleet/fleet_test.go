package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/fleet"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

func TestMain(m *testing.M) {
	run.Main() // the workers' runs re-execute this binary
	os.Exit(testutil.RunWithPostgres(m))
}

// perfbotBinary builds the real perfbot once per test binary.
var perfbotBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "perfbot-fleet-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "perfbot")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/perfbot").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// fixture is a fleet on this host: a database, a results store, a
// server in the test process, and a job on a small C benchmark.
type fixture struct {
	url     string
	pool    *pgxpool.Pool
	results *store.Store
	server  *fleet.Server
	spec    fleet.JobSpec
	commits []string
	dir     string
	repo    *testutil.GitRepo
}

// fixtureDeadAfter is the fixture server's DeadAfter: short, so that the
// tests of dead machines are quick (no test here runs in parallel, so one
// may change it for its own fixture).
var fixtureDeadAfter = 3 * time.Second

func newFixture(t testing.TB, runs, size int) *fixture {
	t.Helper()
	return newFixtureWith(t, runs, size, testutil.BenchMakefile, testutil.BenchMakefile)
}

// newFixtureWith is newFixture with the Makefile of each of the two
// commits.
func newFixtureWith(t testing.TB, runs, size int, makefiles ...string) *fixture {
	t.Helper()
	testutil.NeedTool(t, "gcc")
	testutil.NeedTool(t, "make")
	f := &fixture{url: testutil.Postgres(t), dir: t.TempDir()}
	ctx := context.Background()
	r := testutil.NewGitRepo(t)
	f.repo = r
	for i, passes := range []int{6, 9} {
		f.commits = append(f.commits, r.Commit(fmt.Sprintf("v%d", i), map[string]string{
			"bench.c": testutil.BenchC(passes, "v"), "Makefile": makefiles[i]}))
	}
	jobFile := filepath.Join(r.Dir, "..", "job.yaml")
	data := []byte(fmt.Sprintf(`repo: %s
build: {command: make bench, artifacts: [bench], timeout: 1m}
run: {command: ./bench %d, timeout: 20s}
runs: %d
warmup: 1
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`, filepath.Base(r.Dir), size, runs))
	if err := os.WriteFile(jobFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(jobFile)
	f.spec = fleet.JobSpec{File: abs, Data: data, Name: "job"}
	var err error
	if f.pool, err = fleet.Connect(ctx, f.url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.pool.Close)
	if f.results, err = fleet.OpenResults(ctx, f.url, filepath.Join(f.dir, "server-store")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.results.Close() })
	f.server, err = fleet.NewServer(ctx, fleet.ServerConfig{Pool: f.pool, Results: f.results, Dir: filepath.Join(f.dir, "server"),
		DeadAfter: fixtureDeadAfter, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.server.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f.server.Stop(stop)
	})
	return f
}

// worker starts `perfbot worker` as machine id, pinned to cpu.
func (f *fixture) worker(t testing.TB, id string, cpu int) *exec.Cmd {
	t.Helper()
	bin, err := perfbotBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "worker", "--db", f.url, "--class", "test", "--machine", id,
		"--dir", filepath.Join(f.dir, id), "--cpu", fmt.Sprint(cpu), "--heartbeat", "500ms")
	cmd.Env = append(os.Environ(), measure.MachineLockEnv+"="+filepath.Join(f.dir, id+".lock"))
	// A test process killed outright takes its workers with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	log, err := os.Create(filepath.Join(f.dir, id+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			data, _ := os.ReadFile(log.Name())
			t.Logf("%s's log:\n%s", id, data)
		}
	})
	return cmd
}

// jobs lists the fleet's River jobs of kind.
func jobs(t testing.TB, c *river.Client[pgx.Tx], kind string) []*rivertype.JobRow {
	t.Helper()
	res, err := c.JobList(context.Background(), river.NewJobListParams().Kinds(kind).First(1000))
	if err != nil {
		t.Fatal(err)
	}
	return res.Jobs
}

// TestFleetWorkerKilled: three real workers (distinct machines on this
// host) take a comparison's builds and rounds; the one measuring is
// SIGKILLed in the middle of a run. Its unfinished rounds go to another
// machine, every round is done exactly once, nothing it started is left
// running, and the store holds exactly as many runs as a single-machine
// measurement of the same comparison.
func TestFleetWorkerKilled(t *testing.T) {
	const runs = 6
	f := newFixture(t, runs, 4000000)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ws := map[string]*exec.Cmd{}
	for i, id := range []string{"m1", "m2", "m3"} {
		ws[id] = f.worker(t, id, i%2)
	}
	row, err := f.server.EnqueueCompare(ctx, fleet.CompareArgs{Job: f.spec, Class: "test", Commits: f.commits})
	if err != nil {
		t.Fatal(err)
	}

	// Kill the machine that takes the rounds while it runs its third one.
	var killed string
	for killed == "" {
		if ctx.Err() != nil {
			t.Fatal("no round ran")
		}
		for id, w := range ws {
			if w.ProcessState != nil || w.Process.Signal(syscall.Signal(0)) != nil {
				t.Fatalf("worker %s ended", id)
			}
		}
		for _, j := range jobs(t, f.server.River, "perfbot.round") {
			var a fleet.RoundArgs
			_ = json.Unmarshal(j.EncodedArgs, &a)
			if j.State == rivertype.JobStateRunning && a.Round == 2 && benchRunning(filepath.Join(f.dir, a.Machine)) {
				killed = a.Machine
				if err := ws[killed].Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				t.Logf("killed %s in the middle of round %d", killed, a.Round)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}

	out := awaitCompare(ctx, t, f.server.River, row.ID, 200*time.Millisecond)
	if len(out.Rounds) != runs {
		t.Errorf("compare gave rounds %v, want %d", out.Rounds, runs)
	}

	// Every round done exactly once: by one completed job, or stored
	// whole by the killed machine before River heard of it; and every
	// round's runs from one machine.
	j, err := f.spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	machineOf := map[int]map[string]bool{} // run number -> machines
	for _, c := range f.commits {
		recs, err := f.results.RunsWithoutValues(ctx, j.Key(), c, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if machineOf[r.Index] == nil {
				machineOf[r.Index] = map[string]bool{}
			}
			machineOf[r.Index][r.Machine] = true
		}
	}
	completed := map[int]int{} // run number -> completed round jobs
	moved := 0
	for _, jr := range jobs(t, f.server.River, "perfbot.round") {
		var a fleet.RoundArgs
		_ = json.Unmarshal(jr.EncodedArgs, &a)
		if jr.State == rivertype.JobStateCompleted {
			completed[a.Slots[len(a.Slots)-1].Index]++
			if a.Machine != killed {
				moved++
			}
		}
	}
	for idx, ms := range machineOf {
		if len(ms) != 1 {
			t.Errorf("round %d was taken on machines %v: want one", idx, ms)
		}
		if n := completed[idx]; n > 1 || n == 0 && !ms[killed] {
			t.Errorf("round %d: completed by %d jobs (machines %v)", idx, n, ms)
		}
	}
	if moved == 0 {
		t.Errorf("no round was finished by another machine than the killed %s", killed)
	}
	if benchRunning(filepath.Join(f.dir, killed)) {
		t.Errorf("a benchmark of the killed worker %s is still running", killed)
	}

	// As many runs stored as a single-machine measurement takes.
	fleetRuns := 0
	for _, c := range f.commits {
		recs, err := f.results.RunsWithoutValues(ctx, j.Key(), c, "")
		if err != nil {
			t.Fatal(err)
		}
		fleetRuns += len(recs)
		for _, r := range recs {
			if r.Machine == "" || r.Status != store.RunOK || !strings.HasPrefix(r.StdoutPath, fleet.BlobPrefix) {
				t.Errorf("run %s: machine %q status %s stdout %s", r.RunKey, r.Machine, r.Status, r.StdoutPath)
			}
			if r.Version == "" {
				t.Errorf("run %s records no perfbot version: its worker's must be", r.RunKey)
			}
		}
	}
	if single := singleMachine(t, f); fleetRuns != single {
		t.Errorf("the fleet stored %d runs, a single machine %d", fleetRuns, single)
	}
}

// singleMachine measures the same comparison in-process on this machine,
// in a store of its own, and returns the runs it stored.
func singleMachine(t *testing.T, f *fixture) int {
	ctx := context.Background()
	j, err := f.spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(f.dir, "single"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	repo, err := gitrev.Open(ctx, j.Repo)
	if err != nil {
		t.Fatal(err)
	}
	var targets []measure.Target
	for _, c := range f.commits {
		targets = append(targets, measure.Target{Commit: gitrev.Commit{Hash: c}})
	}
	out, err := measure.Measure(ctx, j, targets, measure.Options{Store: st, Builder: &build.Builder{Repo: repo, Store: st, Dir: st.Dir()},
		CPU: -1, WholeRounds: true, Retry: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tg := range out.Targets {
		n += len(tg.Runs)
	}
	return n
}

// benchRunning reports whether a ./bench process runs in a worktree under
// dir.
func benchRunning(dir string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cwd, err := os.Readlink(filepath.Join(p, "cwd"))
		if err != nil || !strings.HasPrefix(cwd, dir+"/") {
			continue
		}
		if comm, _ := os.ReadFile(filepath.Join(p, "comm")); strings.TrimSpace(string(comm)) == "bench" {
			return true
		}
	}
	return false
}

// bisectHistory adds commits to a fresh fixture's repository: n commits
// after the base, the one at bad (1-based) making the benchmark slower.
func bisectHistory(t *testing.T, workers, n, culprit int) (*fixture, *bisect.Result, string) {
	f := newFixture(t, 6, 1500000)
	r := f.repo
	passes := 6
	good := f.commits[0]
	var bad, want string
	for i := 1; i <= n; i++ {
		if i == culprit {
			passes = 9
		}
		bad = r.Commit(fmt.Sprintf("c%d", i), map[string]string{"bench.c": testutil.BenchC(passes, fmt.Sprint("c", i))})
		if i == culprit {
			want = bad
		}
	}
	for i := range workers {
		f.worker(t, fmt.Sprintf("b%d", i+1), i%2)
	}
	row, err := f.server.EnqueueBisect(context.Background(), fleet.BisectArgs{Job: f.spec, Class: "test", Good: good, Bad: bad,
		Metric: "work_ms", Parallel: workers, MaxCulprits: 1, NoTriage: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	done, err := fleet.Await(ctx, f.server.River, row.ID, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var out fleet.BisectOutput
	if err := json.Unmarshal(done.Output(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Error != "" || out.Result == nil || out.Result.Culprit == nil {
		t.Fatalf("bisection found no culprit: %s", out.Error)
	}
	return f, out.Result, want
}

// TestFleetBisect: a k-ary bisection on two real workers builds and
// measures two candidates at once and names the planted culprit.
func TestFleetBisect(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and measures an 8-commit history on two workers")
	}
	f, res, want := bisectHistory(t, 2, 8, 5)
	if res.Culprit.Hash != want {
		t.Errorf("culprit %.12s, want %.12s", res.Culprit.Hash, want)
	}
	// The candidates of a wave are built at once, on both machines.
	builds := jobs(t, f.server.River, "perfbot.build")
	overlap := false
	for i, a := range builds {
		for _, b := range builds[i+1:] {
			if a.AttemptedAt != nil && b.AttemptedAt != nil && a.FinalizedAt != nil && b.FinalizedAt != nil &&
				a.AttemptedAt.Before(*b.FinalizedAt) && b.AttemptedAt.Before(*a.FinalizedAt) {
				overlap = true
			}
		}
	}
	if !overlap {
		t.Errorf("no two of the %d builds were in flight at once", len(builds))
	}
}

// TestFleetBisectFigures times one bisection of a 16-commit history with
// 1, 2 and 4 workers, PERFBOT_FLEET_FIGURES times each (docs/fleet.md):
//
//	PERFBOT_FLEET_FIGURES=3 go test -run TestFleetBisectFigures -v ./internal/fleet
func TestFleetBisectFigures(t *testing.T) {
	reps, _ := strconv.Atoi(os.Getenv("PERFBOT_FLEET_FIGURES"))
	if reps <= 0 {
		t.Skip("set PERFBOT_FLEET_FIGURES=N to time N bisections each with 1, 2 and 4 workers")
	}
	for rep := range reps {
		for _, k := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%d/%d", k, rep), func(t *testing.T) {
				start := time.Now()
				_, res, want := bisectHistory(t, k, 16, 11)
				t.Logf("%d workers: %.1fs, culprit right: %v, %d steps, %d runs (%d in the check), %d builds",
					k, time.Since(start).Seconds(), res.Culprit.Hash == want, len(res.Steps), res.Runs, res.CheckRuns, res.Builds)
			})
		}
	}
}

// awaitCompare waits for comparison job id, polling every poll, and
// returns its output; a failed job or a wait past ctx fails the test.
func awaitCompare(ctx context.Context, t *testing.T, c *river.Client[pgx.Tx], id int64, poll time.Duration) fleet.CompareOutput {
	t.Helper()
	done, err := fleet.Await(ctx, c, id, poll)
	if err != nil {
		t.Fatal(err)
	}
	var out fleet.CompareOutput
	if err := json.Unmarshal(done.Output(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
