package measure

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

func TestCompareCheck(t *testing.T) {
	j3 := loadJob(t, "3")
	revs := []string{"a", "b"}
	for _, c := range []struct {
		name string
		cfg  CompareConfig
		want string
	}{
		{"ok", CompareConfig{Jobs: []*job.Job{j3}, Revs: revs}, ""},
		{"one revision", CompareConfig{Jobs: []*job.Job{j3}, Revs: revs[:1]}, "need at least two revisions"},
		{"--runs 2", CompareConfig{Jobs: []*job.Job{j3}, Revs: revs, Runs: 2}, "--runs 2: need at least 3 runs per revision"},
		{"--runs -1", CompareConfig{Jobs: []*job.Job{j3}, Revs: revs, Runs: -1}, "--runs -1: need at least 3 runs per revision"},
		{"variant", CompareConfig{Jobs: []*job.Job{j3}, Revs: revs, Variant: "nope"}, `--variant "nope": job /x/job.yaml declares no such variant`},
		{"alpha", CompareConfig{Jobs: []*job.Job{j3}, Revs: revs, Alpha: 1.5}, "--alpha 1.5: want a level between 0 and 1"},
		{"effect", CompareConfig{Jobs: []*job.Job{j3}, Revs: revs, EffectPct: -1}, "--effect -1"},
		{"cpu", CompareConfig{Env: Env{CPU: "fast"}, Jobs: []*job.Job{j3}, Revs: revs}, `--cpu "fast"`},
	} {
		err := c.cfg.Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Check() = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestCompare measures two commits of a matrix job (two atomic jobs)
// through one Env: one table each. The second commit is 2 % slower in
// every run: a significant regression that counts with a 1 % effect and
// is small (shown, not counted) with the default 5 %.
func TestCompare(t *testing.T) {
	r := testutil.NewGitRepo(t)
	ctx := context.Background()
	repo, err := gitrev.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	a := r.Commit("v1", map[string]string{"bench.sh": "echo work_ms: 100\n"})
	b := r.Commit("v2", map[string]string{"bench.sh": "echo work_ms: 102\n"})
	dir := filepath.Join(filepath.Dir(r.Dir), ".perfbot")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	jobs, err := job.Parse(filepath.Join(r.Dir, "job.yaml"), []byte(`repo: .
build: {command: "true"}
run: {command: "sh bench.sh", timeout: 5s}
runs: 6
params: {k: [1, 2]}
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`))
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Store: st, Repo: repo, Builder: &build.Builder{Repo: repo, Store: st, Dir: dir}, CPU: "none"}
	cfg := CompareConfig{Env: env, Jobs: jobs, Revs: []string{a, b}, Seed: 1}
	cmp, err := Compare(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Jobs) != 2 || cmp.Jobs[0].Name == cmp.Jobs[1].Name || cmp.Jobs[0].Key != jobs[0].Key() {
		t.Fatalf("jobs %+v: want one table per atomic job", cmp.Jobs)
	}
	for _, jc := range cmp.Jobs {
		tab := jc.Table
		d := tab.Rows[0].Cells[1].Delta
		if !d.Regression || !d.Stat.Significant || tab.EffectPct != 5 || !tab.Small(d) {
			t.Errorf("%s: %+v (effect %g): want a significant regression, small under the default 5%%", jc.Name, d, tab.EffectPct)
		}
		if got := tab.Columns[0].Runs; got != 6 {
			t.Errorf("%s: %d runs of the base, want the job's 6", jc.Name, got)
		}
	}
	if cmp.Regressed() {
		t.Errorf("a 2%% regression counts under a 5%% effect")
	}
	cfg.EffectPct = 1
	if cmp, err = Compare(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if got := cmp.Regressions(); got != 2 {
		t.Errorf("effect 1%%: %d regressions, want 2 (one per atomic job)", got)
	}
}
