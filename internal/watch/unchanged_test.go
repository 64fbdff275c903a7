package watch

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestWatchIgnored: a README-only commit is recorded as tested with 0
// runs (never built or run, no finding), is never a reference, and the
// next relevant commit is measured against the last measured one.
func TestWatchIgnored(t *testing.T) {
	testutil.NeedTool(t, "git", "gcc")
	r := testutil.NewGitRepo(t)
	prog := `#include <stdio.h>
int main(void) { printf("work_ms: 100\n"); return 0; }
`
	first := r.Commit("base", map[string]string{"prog.c": prog, "README.md": "one\n"})
	dir := filepath.Dir(r.Dir)
	jobFile := filepath.Join(dir, "bench.yaml")
	write(t, jobFile, fmt.Sprintf(`repo: %s
build: {command: "gcc -O1 -o prog prog.c", artifacts: [prog]}
run: {command: ./prog, timeout: 10s}
runs: 3
ignore: ["*.md", "docs/**"]
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`, r.Dir))
	watchFile := filepath.Join(dir, "watch.yaml")
	write(t, watchFile, "jobs:\n  - {file: bench.yaml}\nbranches: [main]\n")
	cfg, err := Load(watchFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w := &Watcher{Config: cfg, CPUMode: "none", Logf: t.Logf}
	if rep, err := w.Cycle(ctx); err != nil || len(rep.Errors) > 0 || len(rep.Tested) != 1 {
		t.Fatalf("cycle 1: %v %v, tested %+v", err, rep.Errors, rep.Tested)
	}

	readme := r.Commit("docs", map[string]string{"README.md": "two\n", "docs/x.txt": "x\n"})
	rep, err := w.Cycle(ctx)
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("cycle 2: %v %v", err, rep.Errors)
	}
	if len(rep.Tested) != 1 || rep.Tested[0].Commit.Hash != readme || rep.Tested[0].Unchanged != "only ignored paths changed: README.md, docs/x.txt" ||
		rep.Tested[0].Ref != first || len(rep.Findings) != 0 {
		t.Fatalf("cycle 2 tested %+v, findings %v: want the README commit unchanged, the same as %s", rep.Tested, rep.Findings, first[:12])
	}
	st, err := store.Open(filepath.Join(dir, ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	jobs, err := job.Load(jobFile)
	if err != nil {
		t.Fatal(err)
	}
	tested, err := st.TestedCommits(ctx, jobs[0].Key(), "")
	if err != nil {
		t.Fatal(err)
	}
	if rec, ok := tested[readme]; !ok || !Unchanged(rec) || rec.Ref != first {
		t.Fatalf("tested record of the README commit %+v (found %v): want unchanged, 0 runs, the same as the base", rec, ok)
	}
	if runs, err := st.RunsWithoutValues(ctx, jobs[0].Key(), readme, ""); err != nil || len(runs) != 0 {
		t.Fatalf("%d runs of the README commit (%v), want none", len(runs), err)
	}

	code := r.Commit("code", map[string]string{"prog.c": prog + "/* same work */\n"})
	if rep, err = w.Cycle(ctx); err != nil || len(rep.Errors) > 0 {
		t.Fatalf("cycle 3: %v %v", err, rep.Errors)
	}
	if len(rep.Tested) != 1 || rep.Tested[0].Commit.Hash != code || rep.Tested[0].Unchanged != "" || rep.Tested[0].Ref != first {
		t.Fatalf("cycle 3 tested %+v: want the code commit measured against %s, the last measured commit", rep.Tested, first[:12])
	}
}
