package watch

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// lookBench is a benchmark whose work is read from passes.txt, a file of
// the repository that no build artifact holds: a commit that changes it
// builds byte-identical artifacts and still does more work. Its figure
// is the work it did (a count, as instructions are: the same in every
// run), so that what the look sees is known: nothing for the same
// passes, three times as much for three times the passes.
const lookBench = `#include <stdio.h>
/* %s */
int main(void) {
	int passes = 1;
	FILE *f = fopen("passes.txt", "r");
	if (!f || fscanf(f, "%%d", &passes) != 1) return 2;
	fclose(f);
	unsigned h = 2166136261u;
	for (int p = 0; p < passes; p++)
		for (unsigned i = 0; i < 1000000; i++)
			h = (h ^ i) * 16777619u;
	printf("work: %%d\nsink: %%u\n", passes * 1000, h);
	return 0;
}
`

// TestWatchIdenticalLook: a commit that changes only a comment of the
// benchmark's source (not an ignored path) builds byte-identical
// artifacts: the cycle measures it with one minimal look (3 runs each,
// not the job's 6), says so, and records it as tested. A commit that
// changes a data file outside the artifacts (three times the work) also
// builds identical artifacts, but its look sees the change: the full runs
// are taken, and it is no identical commit. Real git, gcc and runs.
func TestWatchIdenticalLook(t *testing.T) {
	testutil.NeedTool(t, "git", "gcc")
	r := testutil.NewGitRepo(t)
	first := r.Commit("base", map[string]string{"bench.c": fmt.Sprintf(lookBench, "base"), "passes.txt": "1\n"})
	dir := filepath.Dir(r.Dir)
	jobFile := filepath.Join(dir, "bench.yaml")
	write(t, jobFile, fmt.Sprintf(`repo: %s
build: {command: "gcc -O2 -o bench bench.c", artifacts: [bench]}
run: {command: ./bench, timeout: 30s}
runs: 6
metrics:
  - {name: work, regex: 'work: (?P<value>[0-9]+)', better: lower}
`, r.Dir))
	watchFile := filepath.Join(dir, "watch.yaml")
	write(t, watchFile, "jobs:\n  - {file: bench.yaml}\nbranches: [main]\n")
	cfg, err := Load(watchFile)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log strings.Builder
	ctx := context.Background()
	w := &Watcher{Config: cfg, CPUMode: "none", Logf: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&log, format+"\n", args...)
		t.Logf(format, args...)
	}}
	if rep, err := w.Cycle(ctx); err != nil || len(rep.Errors) > 0 || len(rep.Tested) != 1 || rep.Tested[0].Identical {
		t.Fatalf("cycle 1: %v %v, tested %+v", err, rep.Errors, rep.Tested)
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
	runsOf := func(commit string) int {
		t.Helper()
		runs, err := st.RunsWithoutValues(ctx, jobs[0].Key(), commit, "")
		if err != nil {
			t.Fatal(err)
		}
		return len(runs)
	}

	comment := r.Commit("comment", map[string]string{"bench.c": fmt.Sprintf(lookBench, "the same work, said otherwise")})
	rep, err := w.Cycle(ctx)
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("cycle 2: %v %v", err, rep.Errors)
	}
	if len(rep.Tested) != 1 || rep.Tested[0].Commit.Hash != comment || !rep.Tested[0].Identical || rep.Tested[0].Ref != first || len(rep.Findings) != 0 {
		t.Fatalf("cycle 2 tested %+v, findings %v: want the comment commit measured with one look against %s", rep.Tested, rep.Findings, first[:12])
	}
	if n := runsOf(comment); n != measure.MinimalLook {
		t.Errorf("the comment commit has %d runs, want one look of %d", n, measure.MinimalLook)
	}
	if !strings.Contains(log.String(), measure.IdenticalNote) {
		t.Errorf("the cycle's log does not say the artifacts are identical:\n%s", log.String())
	}

	data := r.Commit("data", map[string]string{"passes.txt": "3\n"})
	if rep, err = w.Cycle(ctx); err != nil || len(rep.Errors) > 0 {
		t.Fatalf("cycle 3: %v %v", err, rep.Errors)
	}
	if len(rep.Tested) != 1 || rep.Tested[0].Commit.Hash != data || rep.Tested[0].Identical || rep.Tested[0].Ref != comment {
		t.Fatalf("cycle 3 tested %+v: want the data commit measured in full against %s", rep.Tested, comment[:12])
	}
	if len(rep.Findings) != 1 || rep.Findings[0] != data {
		t.Errorf("cycle 3 findings %v, want the data commit %s", rep.Findings, data[:12])
	}
	if n := runsOf(data); n < jobs[0].Runs {
		t.Errorf("the data commit has %d runs, want the job's %d: its look saw the 3x change", n, jobs[0].Runs)
	}
	if !strings.Contains(log.String(), "the look sees a change the artifacts do not") {
		t.Errorf("the cycle's log does not say the look saw a change:\n%s", log.String())
	}
}
