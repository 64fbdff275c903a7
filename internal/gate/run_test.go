package gate

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/testutil"
)

// quiet is a noise sequence of about ±1 %: two builds of the same speed
// are shown within a 5 % threshold at the first look, and a 2x slowdown
// is beyond it.
var quiet = []float64{1.000, 1.012, 0.991, 1.007, 0.996, 1.015, 0.989, 1.004, 0.998, 1.010, 0.993}

// noisy is a sequence of about ±25 %: ten pairs cannot settle a 5 %
// threshold either way.
var noisy = []float64{1.0, 1.3, 0.75, 1.2, 0.8, 1.25, 0.7, 1.1, 0.9, 1.35, 0.85, 0.65, 1.15}

type gateRepo struct {
	repo *testutil.GitRepo
	base string
	job  *job.Job
	sess *measure.Session
}

// newGateRepo makes a repository whose base commit builds SeqBenchC at
// scale 100 and a job over it that runs it with the values of seq; extra
// is added to the job file.
func newGateRepo(t *testing.T, seq []float64, extra string) *gateRepo {
	t.Helper()
	testutil.NeedTool(t, "git", "gcc", "make")
	r := testutil.NewGitRepo(t)
	base := r.Commit("base", map[string]string{"bench.c": testutil.SeqBenchC(100), "Makefile": testutil.SeqBenchMakefile, "README.md": "bench\n"})
	dir := t.TempDir()
	file := filepath.Join(dir, "job.yaml")
	jobs, err := job.Parse(file, []byte(fmt.Sprintf(`repo: %s
build:
  command: make bench
  artifacts: [bench]
run:
  command: %s
  timeout: 30s
runs: 3
metrics:
  - name: work_ms
    regex: 'work_ms: (?P<value>[0-9.]+)'
    better: lower
%s`, r.Dir, testutil.SeqRunCommand(t, seq), extra)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := measure.Open(context.Background(), jobs[0], filepath.Join(dir, "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &gateRepo{repo: r, base: base, job: jobs[0], sess: s}
}

func (g *gateRepo) gate(t *testing.T, head string, mod func(*Config)) *Result {
	t.Helper()
	cfg := Config{Env: g.sess.Env("none", nil, t.Logf, nil), Job: g.job, Base: g.base, Head: head, NoTriage: true,
		// A fixed order: the pairs meet the sequence's values the same way
		// whatever the commits' hashes (the default seed derives from them).
		Seed: 1}
	if mod != nil {
		mod(&cfg)
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func runs(t *testing.T, g *gateRepo, rev string) int {
	t.Helper()
	c, err := g.sess.Repo.Resolve(context.Background(), rev)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := g.sess.Store.RunsWithoutValues(context.Background(), g.job.Key(), c.Hash, "")
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// TestGateSlowdown: a planted 2x slowdown fails at the first look (exit
// 1), its line naming the change and the threshold; a rerun takes no new
// run.
func TestGateSlowdown(t *testing.T) {
	g := newGateRepo(t, quiet, "")
	head := g.repo.Commit("slow", map[string]string{"bench.c": testutil.SeqBenchC(200)})
	res := g.gate(t, head, nil)
	if res.Outcome != Regression || res.Looks != 1 || res.Pairs != FirstLook {
		t.Fatalf("outcome %s after %d looks, %d pairs; want a regression at the first look of %d: %s", res.Outcome, res.Looks, res.Pairs, FirstLook, res.Line())
	}
	if code, _ := res.ExitStatus(); code != ExitRegression {
		t.Errorf("exit %d, want %d", code, ExitRegression)
	}
	m := res.Gated()[0]
	if m.Metric != "work_ms" || m.Change < 90 || m.Change > 110 || m.ThresholdPct != DefaultThresholdPct {
		t.Errorf("work_ms: change %+.1f %% threshold %g; want about +100 %% against %g", m.Change, m.ThresholdPct, DefaultThresholdPct)
	}
	if res.Identical {
		t.Error("different builds reported byte-identical")
	}
	if again := g.gate(t, head, nil); again.NewRuns != 0 || again.Outcome != Regression {
		t.Errorf("rerun: %d new runs, outcome %s; want the stored runs reused", again.NewRuns, again.Outcome)
	}
}

// TestGateNoOp: a change that does not touch the speed passes; the
// smallest detectable change is stated.
func TestGateNoOp(t *testing.T) {
	g := newGateRepo(t, quiet, "")
	head := g.repo.Commit("no-op", map[string]string{"bench.c": testutil.SeqBenchC(100) + "/* a comment */\nint unused_symbol = 3;\n"})
	res := g.gate(t, head, nil)
	if res.Outcome != Pass {
		t.Fatalf("outcome %s; want pass: %s", res.Outcome, res.Line())
	}
	if code, _ := res.ExitStatus(); code != ExitPass {
		t.Errorf("exit %d, want 0", code)
	}
	if d := res.Gated()[0].DetectablePct; !(d >= DefaultThresholdPct && d < 10) {
		t.Errorf("smallest detectable change %g %%; want from the threshold to 10 %% with ±1 %% noise", d)
	}
}

// TestGateIgnored: a README-only change under ignore: takes no run.
func TestGateIgnored(t *testing.T) {
	g := newGateRepo(t, quiet, "ignore: ['*.md']\n")
	head := g.repo.Commit("docs", map[string]string{"README.md": "more words\n"})
	res := g.gate(t, head, nil)
	if res.Outcome != Unchanged || res.Pairs != 0 || res.NewRuns != 0 {
		t.Fatalf("outcome %s, %d pairs, %d runs; want unchanged with none", res.Outcome, res.Pairs, res.NewRuns)
	}
	if want := "unchanged: only ignored paths changed: README.md (0 runs)"; res.Line() != want {
		t.Errorf("line %q, want %q", res.Line(), want)
	}
	if n := runs(t, g, head); n != 0 {
		t.Errorf("%d runs stored; want none", n)
	}
}

// TestGateIdentical: a change outside the artifacts (no ignore: globs)
// builds byte-identical artifacts and takes one look.
func TestGateIdentical(t *testing.T) {
	g := newGateRepo(t, quiet, "")
	head := g.repo.Commit("docs", map[string]string{"README.md": "more words\n"})
	res := g.gate(t, head, nil)
	if !res.Identical || res.Looks != 1 || res.Outcome != Unchanged {
		t.Fatalf("identical %v, %d looks, outcome %s; want identical, one look, unchanged: %s", res.Identical, res.Looks, res.Outcome, res.Line())
	}
	if n := runs(t, g, head); n != FirstLook {
		t.Errorf("%d runs of HEAD stored; want %d", n, FirstLook)
	}
}

// TestGateInconclusive: ±25 % noise and a budget of one look leave the
// gate undecided: exit 3 by default, 0 or 1 by gate.inconclusive.
func TestGateInconclusive(t *testing.T) {
	g := newGateRepo(t, noisy, "gate: {max_runs: 10}\n")
	head := g.repo.Commit("no-op", map[string]string{"bench.c": testutil.SeqBenchC(100) + "int unused_symbol = 2;\n"})
	res := g.gate(t, head, nil)
	if res.Identical || res.Outcome != Inconclusive || res.Pairs != 10 {
		t.Fatalf("outcome %s after %d pairs; want inconclusive after 10: %s", res.Outcome, res.Pairs, res.Line())
	}
	for p, want := range map[job.Policy]int{job.PolicyNeutral: ExitInconclusive, job.PolicyPass: ExitPass, job.PolicyFail: ExitRegression} {
		res.InconclusivePolicy = p
		if code, _ := res.ExitStatus(); code != want {
			t.Errorf("inconclusive under %q: exit %d, want %d", p, code, want)
		}
	}
}
