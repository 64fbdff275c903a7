package bisect

import (
	"context"
	"errors"
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
)

// configJob is a job of two metrics over a real repository of four
// commits, with the store beside it.
func configJob(t *testing.T) (*job.Job, measure.Env, []string) {
	t.Helper()
	g := testutil.NewGitRepo(t)
	var hashes []string
	for _, m := range []string{"one", "two", "three", "four"} {
		hashes = append(hashes, g.Commit(m, map[string]string{"bench.sh": "echo 't_ms: 1'\necho '" + m + "'\n"}))
	}
	dir := filepath.Dir(g.Dir)
	jobs, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(`repo: repo
build:
  command: "true"
run:
  command: sh bench.sh
runs: 3
metrics:
  - {name: t_ms, regex: 't_ms: (?P<value>[0-9.]+)', better: lower}
  - {name: u_ms, regex: 'u_ms: (?P<value>[0-9.]+)', better: lower}
`))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	repo, err := gitrev.Open(context.Background(), g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	env := measure.Env{Store: st, Repo: repo, Builder: &build.Builder{Repo: repo, Store: st, Dir: st.Dir()}, CPU: "none"}
	return jobs[0], env, hashes
}

// TestConfigCheck: every value bisect cannot work with is refused before
// anything is resolved or built, naming the flag as perfbot bisect spells
// it; the defaults pass.
func TestConfigCheck(t *testing.T) {
	j, _, _ := configJob(t)
	good := Config{Job: j, Good: "main~3", Bad: "main"}
	if err := good.Check(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		edit func(c *Config)
		want string
	}{
		{func(c *Config) { c.Good = "" }, "--good is required"},
		{func(c *Config) { c.Bad = "" }, "--bad is required"},
		{func(c *Config) { c.Metric = "v_ms" }, `--metric "v_ms"`},
		{func(c *Config) { c.Mode = "always" }, `--layout-robust "always"`},
		{func(c *Config) { c.Preset = "fortran" }, `--preset "fortran"`},
		{func(c *Config) { c.Mode, c.Layouts = Sweep, 1 }, "--layouts 1: want 2 to 16"},
		{func(c *Config) { c.Speculate = "always" }, `--speculate "always"`},
		{func(c *Config) { c.Runs = 2 }, "--runs 2: want at least 3"},
		{func(c *Config) { c.MaxRuns = 5 }, "--max-runs 5: below the first look (9 runs of each end"},
		{func(c *Config) { c.StepRuns = 101 }, "--step-runs 101"},
		{func(c *Config) { c.CheckRuns = 3 }, "--check-runs 3: want at least 5"},
		{func(c *Config) { c.Alpha = 0.7 }, "--alpha 0.7"},
		{func(c *Config) { c.EffectPct = -1 }, "--effect -1"},
		{func(c *Config) { c.Fixed = -1 }, "--fixed -1"},
		{func(c *Config) { c.MaxCulprits = -1 }, "--max-culprits -1"},
		{func(c *Config) { c.ExtraRuns = -1 }, "--extra-runs -1"},
	} {
		c := good
		tc.edit(&c)
		if err := c.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", c, err, tc.want)
		}
	}
	// A plain bisection that does not triage needs no preset.
	c := good
	c.Preset, c.NoTriage = "fortran", true
	if err := c.Check(); err != nil {
		t.Errorf("plain, no triage, unknown preset: %v", err)
	}
}

// TestRunRevisions: revisions that do not make a first-parent range fail
// with the flag named, before any build.
func TestRunRevisions(t *testing.T) {
	j, env, h := configJob(t)
	for _, tc := range []struct {
		good, bad string
		want      string
	}{
		{"no-such-rev", h[3], `--good: unknown revision "no-such-rev"`},
		{h[0], "HEAD~99", `--bad: unknown revision "HEAD~99"`},
		{h[3], h[0], "the revisions are swapped; --good must be the older commit"},
		{h[1], h[1], "are the same commit"},
	} {
		_, err := Run(context.Background(), Config{Env: env, Job: j, Good: tc.good, Bad: tc.bad})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--good %s --bad %s: err = %v, want %q", tc.good, tc.bad, err, tc.want)
		}
	}
	if _, err := Run(context.Background(), Config{Job: j, Good: h[0], Bad: h[3]}); !errors.Is(err, errNoEnv) {
		t.Errorf("no Env: err = %v, want %v", err, errNoEnv)
	}
	if _, err := os.Stat(filepath.Join(env.Store.Dir(), "builds")); err == nil {
		t.Errorf("bad revisions started builds")
	}
}

// TestSettingsKey: a bisection asked for with the defaults left zero (the
// fleet) and spelled out (perfbot bisect's flags) is saved under one
// key, the key perfbot bisect has always used.
func TestSettingsKey(t *testing.T) {
	zero := Config{}.settings()
	spelled := Config{Alpha: DefaultAlpha, EffectPct: DefaultEffectPct, StepRuns: DefaultStepRuns, MaxRuns: DefaultMaxRuns}.settings()
	if zero != spelled {
		t.Errorf("settings %+v and %+v differ", zero, spelled)
	}
	if got, want := zero.String(), "improvement false alpha 0.01 effect 5 runs 0 3 40 0 fixed 0"; got != want {
		t.Errorf("settings key %q, want %q (saved bisections are found by it)", got, want)
	}
}
