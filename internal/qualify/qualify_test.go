package qualify

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	runner "github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestMain lets the tests run commands (see run.Main).
func TestMain(m *testing.M) {
	runner.Main()
	os.Exit(m.Run())
}

// bench prints t_ms from a fixed seeded sequence, one value per run of
// each variant (a counter file per variant), times $FACTOR: its runs are
// real processes whose values are known in advance.
const bench = `c="$COUNTER_DIR/n-$PERFBOT_VARIANT"
n=$(cat "$c" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$c"
v=$(sed -n "${n}p" "$VALUES")
awk -v v="$v" -v f="${FACTOR:-1}" 'BEGIN { printf "t_ms: %.6f\n", v*f }'
`

// setup is a repository with bench.sh, a job over it with the slowdown
// variant "slow" (x1.10) and a store; values are the sequence.
func setup(t *testing.T, values []float64, extra string) (Config, *store.Store) {
	t.Helper()
	r := testutil.NewGitRepo(t)
	r.Commit("bench", map[string]string{"bench.sh": bench})
	tmp := t.TempDir()
	var sb strings.Builder
	for _, v := range values {
		fmt.Fprintf(&sb, "%.6f\n", v)
	}
	if err := os.WriteFile(filepath.Join(tmp, "values"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs, err := job.Parse(filepath.Join(r.Dir, "job.yaml"), []byte(fmt.Sprintf(`repo: .
build: {command: "true"}
run: {command: "sh bench.sh", timeout: 10s, cpu: none, env: {VALUES: %s/values, COUNTER_DIR: %s}}
runs: 3
metrics:
  - {name: t_ms, regex: 't_ms: (?P<value>[0-9.]+)', better: lower}
variants: {slow: {env: {FACTOR: "1.10"}}}
gate: {threshold: 5, max_runs: 20}
%s`, tmp, tmp, extra)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repo, err := gitrev.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, ".perfbot")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	env := measure.Env{Store: st, Repo: repo, Builder: &build.Builder{Repo: repo, Store: st, Dir: dir}, CPU: "none"}
	// A fixed seed: the job key holds the temporary paths, and the run order
	// (which plain runs share a position in their rounds) follows the seed.
	return Config{Env: env, Job: jobs[0], MaxRuns: 20, Gates: 100, Seed: 1}, st
}

// TestRunPlantedSlowdown measures 20 runs of the plain build beside 20 of
// the variant that prints every value x1.10: the A/A gates over 1 %
// noise never fail a 5 % threshold, the slowdown measures exactly +10 %
// (each round's two runs print the same value, one x1.10) and fails every
// gate, and the qualification is stored and quoted.
func TestRunPlantedSlowdown(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	var values []float64
	for range 100 {
		values = append(values, 100*math.Exp(0.01*r.NormFloat64()))
	}
	cfg, st := setup(t, values, "qualify: {slowdown: {variant: slow}}")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics[0]
	t.Logf("%d runs, FP %d/%d, noise %.2f%%, detectable %.2f%%, budget %s", res.Runs, res.FalsePositives, res.Gates, m.NoisePct, m.DetectablePct, res.Budget)
	if res.Runs != 20 || res.Pairs != 10 || res.BudgetPairs != 20 || res.Gates != 100 || res.FalsePositives != 0 || !res.Fit || res.TimeUp {
		t.Errorf("%+v: want 20 runs, 10 pairs, 0/100 false positives, fit", res)
	}
	if len(res.Metrics) != 1 || m.Name != "t_ms" || !(m.NoisePct > 0.2 && m.NoisePct < 3) || !(m.DetectablePct >= 5 && m.DetectablePct < 8) {
		t.Errorf("metrics %+v", res.Metrics)
	}
	s := res.Slowdown
	if s == nil || s.Name != "slow" || s.Rounds != 20 || len(s.Sizes) != 1 || math.Abs(s.Sizes[0].Change-10) > 0.01 || s.Detected != s.Gates {
		t.Errorf("slowdown %+v: want 20 rounds of exactly +10%%, detected by every gate", s)
	}
	q, err := Latest(context.Background(), st, cfg.Job.Key(), "")
	if err != nil || q == nil || q.FalsePositives != 0 || q.Gates != 100 || q.Runs != 20 || q.Slowdown == nil || q.Runner.NProc < 1 || q.Runner.Hostname == "" {
		t.Fatalf("Latest = %+v, %v", q, err)
	}
	if got := Quote(q); !strings.HasPrefix(got, "runner qualified ") || !strings.Contains(got, "false positives 0/100 at alpha 0.05; detectable ") {
		t.Errorf("Quote = %q", got)
	}
}

// TestRunPeriodic: the runner's values go 100, 110, 110, 100, ...: the
// gate fails every A/A gate: the order effect is found, the runner is not fit (exit 1), with
// advice. A second qualification takes fresh runs, after the stored
// ones.
func TestRunPeriodic(t *testing.T) {
	var values []float64
	for i := range 100 {
		values = append(values, []float64{100, 110, 110, 100}[i%4])
	}
	cfg, st := setup(t, values, "")
	var res *Result
	for range 2 {
		var err error
		if res, err = Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	runs, _ := st.RunsWithoutValues(context.Background(), cfg.Job.Key(), res.Commit.Hash, "")
	if len(runs) != 40 || res.Runs != 20 {
		t.Errorf("%d runs stored after two qualifications of %d, want 40", len(runs), res.Runs)
	}
	if qs, _ := st.Qualifications(context.Background(), cfg.Job.Key(), "", 5); len(qs) != 2 || qs[0].Fit {
		t.Errorf("qualifications stored: %+v", qs)
	}
	if res.Fit || len(res.OrderEffect) != 1 || !strings.HasPrefix(res.OrderEffect[0], "t_ms +10.0 %") || len(res.Advice) == 0 || res.Slowdown != nil {
		t.Errorf("%+v: want the order effect found, not fit, advice", res)
	}
	if code, _ := res.ExitStatus(); code != 1 {
		t.Errorf("exit %d", code)
	}
}

func TestCheck(t *testing.T) {
	j := &job.Job{File: "/x/job.yaml", Run: job.Run{Env: map[string]string{"WORK": "1"}}, Qualify: job.Qualify{Slowdown: &job.Slowdown{Env: map[string]string{"WORK": "9"}}}}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no job"},
		{Config{Job: &job.Job{}, MaxRuns: 5}, "--max-runs 5: need at least 20 runs"},
		{Config{Job: &job.Job{}, MaxTime: -1}, "--max-time -1ns"},
		{Config{Job: &job.Job{}, Gates: 3}, "--gates 3"},
		{Config{Job: &job.Job{}, Env: measure.Env{CPU: "fast"}}, `--cpu "fast"`},
		{Config{Job: j}, "/x/job.yaml: qualify.slowdown.env.WORK: run.env sets WORK too"},
		{Config{Job: &job.Job{}}, ""},
	} {
		err := c.cfg.Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: Check() = %v, want %q", c.cfg, err, c.want)
		}
	}
}
