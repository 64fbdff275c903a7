package bisect_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/bisect"
	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/testutil/schematest"
)

// TestBisectIgnored: over a range whose commits around a 50 % slowdown
// change only documentation, the steps at documentation commits are
// decided by their diff from a classified neighbour, with no run and no
// build, and the culprit is still the slowdown; the ranges left beside
// it, whose ends differ only in documentation, are not measured.
func TestBisectIgnored(t *testing.T) {
	testutil.NeedTool(t, "git", "gcc")
	r := testutil.NewGitRepo(t)
	prog := func(ms string) string {
		return "#include <stdio.h>\nint main(void) { printf(\"work_ms: " + ms + "\\n\"); return 0; }\n"
	}
	good := r.Commit("base", map[string]string{"prog.c": prog("100"), "README.md": "0\n"})
	doc1 := r.Commit("doc 1", map[string]string{"README.md": "1\n"})
	doc2 := r.Commit("doc 2", map[string]string{"docs/a.md": "2\n"})
	slow := r.Commit("slower", map[string]string{"prog.c": prog("150")})
	doc3 := r.Commit("doc 3", map[string]string{"README.md": "3\n"})
	bad := r.Commit("doc 4", map[string]string{"docs/b.txt": "4\n"})
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
	defer st.Close()
	jobs, err := job.Parse(filepath.Join(r.Dir, "job.yaml"), []byte(`repo: .
build: {command: "gcc -O1 -o prog prog.c", artifacts: [prog]}
run: {command: ./prog, timeout: 10s}
ignore: ["*.md", "docs/**"]
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`))
	if err != nil {
		t.Fatal(err)
	}
	env := measure.Env{Store: st, Repo: repo, Builder: &build.Builder{Repo: repo, Store: st, Dir: dir}, CPU: "none", Logf: t.Logf}
	res, err := bisect.Run(ctx, bisect.Config{Env: env, Job: jobs[0], Good: good, Bad: bad, NoTriage: true, Speculate: bisect.SpeculateNone, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Culprit == nil || res.Culprit.Hash != slow || res.Parent == nil || res.Parent.Hash != doc2 {
		t.Fatalf("culprit %+v, want the slowdown %s", res.Culprit, slow[:12])
	}
	if n := res.UnchangedSteps(); n < 2 {
		t.Errorf("%d steps decided by the diff, want at least 2 (steps %+v)", n, res.Steps)
	}
	for _, s := range res.Steps {
		if s.Unchanged && (s.Runs != 0 || !strings.Contains(s.Reason, "only ignored paths changed")) {
			t.Errorf("step %+v: decided by its diff, want 0 runs and the reason", s)
		}
	}
	for _, rg := range res.Ranges[1:] {
		if rg.Status != bisect.RangeSame || rg.Ends != nil || !strings.Contains(rg.Note, "only ignored paths changed") {
			t.Errorf("range %+v: its ends differ only in ignored paths: want same, not measured", rg)
		}
	}
	var text, js bytes.Buffer
	if err := report.WriteBisect(&text, &report.BisectReport{Result: res}, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "2 steps decided by the diff from a classified neighbour") || !strings.Contains(text.String(), "(by its diff)") {
		t.Errorf("the report does not count the steps decided by their diff:\n%s", text.String())
	}
	if err := report.WriteBisect(&js, &report.BisectReport{Result: res}, "json"); err != nil {
		t.Fatal(err)
	}
	schematest.ValidateJSON(t, "bisect", js.Bytes())
	// doc 2 is the culprit's parent: the check measures it.
	for _, h := range []string{doc1, doc3} {
		if runs, err := st.RunsWithoutValues(ctx, jobs[0].Key(), h, ""); err != nil || len(runs) != 0 {
			t.Errorf("%s: %d runs (%v), want none: only ignored paths changed", h[:12], len(runs), err)
		}
	}
}
