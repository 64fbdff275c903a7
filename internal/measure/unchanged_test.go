package measure

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// progC prints its argument (default 100) as the metric.
const progC = `#include <stdio.h>
int main(int argc, char **argv) { printf("work_ms: %s\n", argc > 1 ? argv[1] : "100"); return 0; }
`

// ignoreProject is a gcc-built project whose job ignores *.md and counts
// its builds in a log outside the repository.
type ignoreProject struct {
	git  *testutil.GitRepo
	env  Env
	jobs []*job.Job
	log  string // one line per build
}

func newIgnoreProject(t *testing.T) *ignoreProject {
	t.Helper()
	testutil.NeedTool(t, "gcc")
	r := testutil.NewGitRepo(t)
	ctx := context.Background()
	repo, err := gitrev.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(r.Dir), ".perfbot")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := filepath.Join(filepath.Dir(r.Dir), "builds.log")
	jobs, err := job.Parse(filepath.Join(r.Dir, "job.yaml"), []byte(`repo: .
build: {command: "echo built >> `+log+` && gcc -O1 -o prog prog.c", artifacts: [prog]}
run: {command: "sh bench.sh", timeout: 5s}
runs: 4
ignore: ["*.md", "docs/**"]
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`))
	if err != nil {
		t.Fatal(err)
	}
	return &ignoreProject{git: r, log: log, jobs: jobs,
		env: Env{Store: st, Repo: repo, Builder: &build.Builder{Repo: repo, Store: st, Dir: dir}, CPU: "none"}}
}

func (p *ignoreProject) builds(t *testing.T) int {
	data, err := os.ReadFile(p.log)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "built\n")
}

// TestCompareIgnored: a README-only commit is not built or run (0 runs,
// the reason in its column), and a comparison of nothing else measures
// nothing; beside a relevant commit it keeps its place in the table.
func TestCompareIgnored(t *testing.T) {
	p := newIgnoreProject(t)
	ctx := context.Background()
	a := p.git.Commit("v1", map[string]string{"prog.c": progC, "bench.sh": "./prog 100\n", "README.md": "one\n"})
	b := p.git.Commit("readme", map[string]string{"README.md": "two\n", "docs/x.txt": "x\n"})
	cmp, err := Compare(ctx, CompareConfig{Env: p.env, Jobs: p.jobs, Revs: []string{a, b}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tab := cmp.Jobs[0].Table
	if n := p.builds(t); n != 0 {
		t.Errorf("%d builds, want none: only ignored paths changed", n)
	}
	if len(tab.Columns) != 2 || tab.Columns[1].Runs != 0 || tab.Columns[0].Runs != 0 || len(tab.Rows) != 0 {
		t.Fatalf("columns %+v, %d rows: want two unmeasured columns", tab.Columns, len(tab.Rows))
	}
	if got, want := tab.Columns[1].Unchanged, "only ignored paths changed: README.md, docs/x.txt"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	if cmp.Regressed() {
		t.Error("an unmeasured comparison regressed")
	}

	c := p.git.Commit("slower", map[string]string{"prog.c": strings.Replace(progC, `"100"`, `"130"`, 1), "bench.sh": "./prog\n"})
	cmp, err = Compare(ctx, CompareConfig{Env: p.env, Jobs: p.jobs, Revs: []string{a, b, c}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tab = cmp.Jobs[0].Table
	if len(tab.Columns) != 3 || tab.Columns[1].Unchanged == "" || tab.Columns[1].Runs != 0 || tab.Columns[2].Runs != 4 || tab.Columns[0].Runs != 4 {
		t.Fatalf("columns %+v: want base and c measured (4 runs), b unmeasured between them", tab.Columns)
	}
	if d := tab.Rows[0].Cells[2].Delta; d == nil || !d.Regression || tab.Rows[0].Cells[1].Delta != nil {
		t.Errorf("cells %+v: want c's 30 %% regression and no delta for b", tab.Rows[0].Cells)
	}
	if n := p.builds(t); n != 2 {
		t.Errorf("%d builds, want 2 (a and c, not b)", n)
	}
}

// TestCompareIdentical: a commit that changes a file the job does not
// ignore yet builds byte-identical artifacts is measured with one minimal
// look; when that look sees a change (a script outside the artifacts
// changed the metric) the full runs are taken.
func TestCompareIdentical(t *testing.T) {
	p := newIgnoreProject(t)
	ctx := context.Background()
	a := p.git.Commit("v1", map[string]string{"prog.c": progC, "bench.sh": "./prog 100\n", "data.txt": "1\n"})
	b := p.git.Commit("data", map[string]string{"data.txt": "2\n"})
	cmp, err := Compare(ctx, CompareConfig{Env: p.env, Jobs: p.jobs, Revs: []string{a, b}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tab := cmp.Jobs[0].Table
	if c := tab.Columns[1]; !c.Identical || c.Unchanged != "" || c.Runs != MinimalLook || tab.Columns[0].Runs != MinimalLook {
		t.Fatalf("columns %+v: want b identical, measured with one look of %d runs", tab.Columns, MinimalLook)
	}

	c := p.git.Commit("script", map[string]string{"bench.sh": "./prog 150\n"})
	cmp, err = Compare(ctx, CompareConfig{Env: p.env, Jobs: p.jobs, Revs: []string{a, c}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tab = cmp.Jobs[0].Table
	if col := tab.Columns[1]; !col.Identical || col.Runs != 4 {
		t.Fatalf("columns %+v: want c identical, yet measured to the job's 4 runs after the look saw the change", tab.Columns)
	}
	if !tab.Rows[0].Changed() {
		t.Errorf("row %+v: want the script's change", tab.Rows[0])
	}
}
