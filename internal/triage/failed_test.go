package triage

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/verdict"
)

// scriptRepo is a git repository whose benchmark is bench.sh, with one
// commit per script, and a job for it: the build writes the layout knobs
// of the env preset into layout.txt, the only artifact, so that layout
// builds differ from the plain build while the script is not an
// artifact. Each (commit, variant) counts its runs in a file, which the
// script reads as $N.
type scriptRepo struct {
	job     *job.Job
	store   *store.Store
	builder *build.Builder
	commits []gitrev.Commit
	dir     string
}

func newScriptRepo(t *testing.T, scripts ...string) *scriptRepo {
	t.Helper()
	testutil.NeedTool(t, "sh")
	g := testutil.NewGitRepo(t)
	dir := filepath.Dir(g.Dir) // the job file and the store go beside the repository
	counts := filepath.Join(dir, "counts")
	if err := os.MkdirAll(counts, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := &scriptRepo{dir: dir}
	prelude := "f=\"$COUNTS/$PERFBOT_COMMIT-$PERFBOT_VARIANT\"\nN=$(( $(cat \"$f\" 2>/dev/null || echo 0) + 1 ))\necho $N > \"$f\"\n"
	var hashes []string
	for i, sc := range scripts {
		hashes = append(hashes, g.Commit("v"+string(rune('1'+i)), map[string]string{"bench.sh": prelude + sc}))
	}
	repo, err := gitrev.Open(ctx, g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hashes {
		c, err := repo.Resolve(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		s.commits = append(s.commits, c)
	}
	jobs, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(`repo: repo
build:
  command: echo "$PERFBOT_FUNC_ALIGN $PERFBOT_TEXT_PAD $PERFBOT_DATA_PAD $PERFBOT_LAYOUT_SEED" > layout.txt
  artifacts: [layout.txt]
run:
  command: sh bench.sh
  timeout: 10s
  env: {COUNTS: "`+counts+`"}
runs: 3
metrics:
  - {name: t_ms, regex: 't_ms: (?P<value>[0-9.]+)', better: lower}
`))
	if err != nil {
		t.Fatal(err)
	}
	s.job = jobs[0]
	storeDir := filepath.Join(dir, ".perfbot")
	if s.store, err = store.Open(storeDir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.store.Close() })
	s.builder = &build.Builder{Repo: repo, Store: s.store, Dir: storeDir}
	return s
}

func (s *scriptRepo) triage(t *testing.T) *Result {
	t.Helper()
	var log strings.Builder
	res, err := Run(context.Background(), Config{Env: measure.Env{Store: s.store, Repo: s.builder.Repo, Builder: s.builder, CPU: "none"},
		Job: s.job, Base: s.commits[0].Hash, Changed: s.commits[1].Hash, Preset: "env", Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Logf("%s: %s\nnotes: %q\n%s", res.Verdict, res.Sentence, res.Notes, log.String())
	return res
}

// steady prints 100, 101, 102 ms in turn; slow twice that.
const (
	steady = "echo \"t_ms: $((100 + N % 3))\"\n"
	slow   = "echo \"t_ms: $((200 + N % 3))\"\n"
)

// TestChangeOutsideArtifacts: the job's only artifact is byte-identical in
// both commits, but the benchmark script doubles the time. The triage
// must not answer "no change" from the identical artifacts; it goes on and
// the layout sweep shows the change.
func TestChangeOutsideArtifacts(t *testing.T) {
	s := newScriptRepo(t, steady, slow)
	res := s.triage(t)
	if !res.Identical {
		t.Errorf("Identical = false: layout.txt is the same in both commits")
	}
	if res.Verdict == verdict.NoChange {
		t.Fatalf("verdict no-change although every run of the changed commit is twice as slow: %s", res.Sentence)
	}
	if res.Verdict != verdict.RealRegression {
		t.Errorf("verdict %s, want real-regression (the sweep of 4 layouts shows +100%%)", res.Verdict)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "outside build.artifacts") {
		t.Errorf("notes do not say the change lives outside the artifacts: %q", res.Notes)
	}
	if strings.Contains(res.Sentence, "byte-identical") {
		t.Errorf("the sentence rests on the identical builds: %q", res.Sentence)
	}
}

// TestIdenticalBuildsNoChange: the same benchmark in both commits (only a
// comment differs) with identical artifacts is no change after one look.
func TestIdenticalBuildsNoChange(t *testing.T) {
	s := newScriptRepo(t, steady, steady+"# a comment\n")
	res := s.triage(t)
	if res.Verdict != verdict.NoChange || !res.Identical || len(res.Experiments) != 1 || res.Runs != 20 {
		t.Errorf("verdict %s, identical %v, %d experiments, %d runs; want no-change from identical builds after 10 pairs",
			res.Verdict, res.Identical, len(res.Experiments), res.Runs)
	}
}

// TestCrashingChangeIsNotNoChange: the changed commit crashes in every
// third run and times like the base in the others. The fail row must be
// in the table, the notes must say so, and the verdict is not no-change.
func TestCrashingChangeIsNotNoChange(t *testing.T) {
	s := newScriptRepo(t, steady, "if [ $((N % 3)) -eq 0 ]; then echo boom >&2; exit 3; fi\n"+steady)
	res := s.triage(t)
	if res.Verdict == verdict.NoChange {
		t.Fatalf("verdict no-change although the changed commit crashes in a third of its runs: %s", res.Sentence)
	}
	if res.Verdict != verdict.Inconclusive {
		t.Errorf("verdict %s, want inconclusive", res.Verdict)
	}
	plain := res.Experiments[0]
	if plain.Name != "plain" || plain.Table == nil {
		t.Fatalf("first experiment %q has no table", plain.Name)
	}
	base, changed := plain.Table.Columns[0], plain.Table.Columns[1]
	if base.Failed != 0 || changed.Failed == 0 || changed.Runs != plain.Columns[1].N+changed.Failed || changed.Runs != plain.Runs {
		t.Errorf("table columns base %+v, changed %+v (triage column %+v, %d runs): want the changed commit's failed runs counted",
			base, changed, plain.Columns[1], plain.Runs)
	}
	if plain.Columns[1].Failed != changed.Failed {
		t.Errorf("triage column says %d failed, the table %d", plain.Columns[1].Failed, changed.Failed)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "changed fails in") || !strings.Contains(notes, "exit status 3") {
		t.Errorf("notes do not name the changed commit's failed runs and why: %q", res.Notes)
	}
	if !strings.Contains(res.Sentence, "fail at different rates") {
		t.Errorf("sentence does not say the commits fail at different rates: %q", res.Sentence)
	}
}

// TestMostRunsFail: the changed commit crashes in three runs of four; the
// triage stops as inconclusive, naming the build and the reason, and
// keeps the failed experiment with its table.
func TestMostRunsFail(t *testing.T) {
	s := newScriptRepo(t, steady, "if [ $((N % 4)) -ne 0 ]; then echo segfault >&2; exit 139; fi\n"+steady)
	res := s.triage(t)
	if res.Verdict != verdict.Inconclusive {
		t.Fatalf("verdict %s, want inconclusive", res.Verdict)
	}
	if !strings.Contains(res.Sentence, "runs of changed failed") || !strings.Contains(res.Sentence, "exit status 139") {
		t.Errorf("sentence does not name the failing build and why: %q", res.Sentence)
	}
	if len(res.Experiments) != 1 || res.Experiments[0].Outcome != "failed" {
		t.Fatalf("experiments %+v: want the plain comparison, failed", res.Experiments)
	}
	if c := res.Experiments[0].Table.Columns[1]; c.Failed < 6 || c.Runs != 10 {
		t.Errorf("changed column %+v: want most of 10 runs failed", c)
	}
	if !math.IsNaN(res.Change) {
		t.Errorf("Change = %v: no estimate should be given", res.Change)
	}
}

// TestSimulatedFailures runs the decision procedure on benchmarks whose
// runs fail.
func TestSimulatedFailures(t *testing.T) {
	quiet := simModel{noise: 0.01, baseText: 1, baseData: 0, aligned: 0}

	t.Run("changed crashes in some runs: not no-change", func(t *testing.T) {
		for seed := range int64(20) {
			m := quiet
			m.failChanged = 0.3
			res, _ := simTriage(t, m, seed)
			if res.Verdict == verdict.NoChange {
				t.Fatalf("seed %d: no-change although the changed commit crashes in 30%% of its runs: %s %q", seed, res.Sentence, res.Notes)
			}
			tab := res.Experiments[0].Table
			if tab.Columns[0].Failed != 0 || tab.Columns[1].Failed == 0 || tab.Columns[1].Runs != res.Experiments[0].Runs {
				t.Fatalf("seed %d: plain table columns %+v: want the changed commit's failed runs", seed, tab.Columns)
			}
		}
	})

	t.Run("identical artifacts, changed crashes: more runs, then not no-change", func(t *testing.T) {
		m := quiet
		m.artifactsIdentical = true
		m.failChanged = 0.3
		res, lab := simTriage(t, m, 7)
		if res.Verdict != verdict.Inconclusive || lab.taken <= 20 {
			t.Errorf("verdict %s after %d runs (%s): want inconclusive, after more than one look", res.Verdict, lab.taken, res.Sentence)
		}
	})

	t.Run("both commits equally flaky: no change", func(t *testing.T) {
		noChange := 0
		for seed := range int64(20) {
			m := quiet
			m.failBase, m.failChanged = 0.1, 0.1
			res, _ := simTriage(t, m, 100+seed)
			if res.Verdict == verdict.NoChange {
				noChange++
			}
		}
		if noChange < 17 {
			t.Errorf("no-change in %d of 20 triages of equally flaky commits, want >= 17", noChange)
		}
	})

	t.Run("most runs of changed fail: inconclusive, saying why", func(t *testing.T) {
		m := quiet
		m.code = math.Log(1.3)
		m.failChanged = 0.8
		res, _ := simTriage(t, m, 8)
		if res.Verdict != verdict.Inconclusive || !strings.Contains(res.Sentence, "runs of changed failed (first: crashed: killed by signal SIGSEGV)") {
			t.Errorf("verdict %s, sentence %q: want inconclusive naming the failed runs", res.Verdict, res.Sentence)
		}
		if len(res.Experiments) != 1 || res.Experiments[0].Outcome != "failed" || len(res.Notes) == 0 {
			t.Errorf("experiments %d (outcome %q), notes %q", len(res.Experiments), res.Experiments[0].Outcome, res.Notes)
		}
	})

	t.Run("identical artifacts but the runs differ: not no-change", func(t *testing.T) {
		m := quiet
		m.artifactsIdentical = true
		m.code = math.Log(1.3)
		res, _ := simTriage(t, m, 9)
		if res.Verdict != verdict.RealRegression || !res.Identical || !strings.Contains(strings.Join(res.Notes, "\n"), "outside build.artifacts") {
			t.Errorf("verdict %s, identical %v, notes %q: want a real regression with a note that the change is outside the artifacts", res.Verdict, res.Identical, res.Notes)
		}
	})
}

// TestFisherGreater checks the one-sided test against hand-computed
// hypergeometric tails.
func TestFisherGreater(t *testing.T) {
	for _, c := range []struct {
		fa, na, fb, nb int
		want           float64
	}{
		{3, 10, 0, 10, 120.0 / 1140}, // C(10,3)/C(20,3)
		{2, 10, 0, 10, 45.0 / 190},   // C(10,2)/C(20,2)
		{1, 10, 0, 10, 0.5},
		{0, 10, 3, 10, 1},            // the other direction
		{4, 10, 0, 10, 210.0 / 4845}, // C(10,4)/C(20,4)
		{2, 4, 1, 4, 35.0 / 70},      // 1 - (C(5,4) + 3*C(5,3))/C(8,4)
	} {
		got := fisherGreater(c.fa, c.na, c.fb, c.nb)
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("fisherGreater(%d/%d vs %d/%d) = %v, want %v", c.fa, c.na, c.fb, c.nb, got, c.want)
		}
	}
}
