package watch

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
)

// TestWatchPinsPerJobAndCycle: without --cpu, watch pins a job's runs as
// its run.cpu says (auto: the quietest CPU), as perfbot compare does, and
// calibrates again in each cycle that measures; a cycle with nothing to
// measure calibrates nothing. Real git, gcc and runs.
func TestWatchPinsPerJobAndCycle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C benchmark over three watch cycles")
	}
	bw := newBenchWatch(t, 3, "200000", "cpu: auto", "jobs: [bench.yaml]\nbranches: [main]\n")
	r, dir, jobFile, cfg := bw.repo, bw.dir, bw.jobFile, bw.cfg
	var mu sync.Mutex
	calibrations := 0
	w := &Watcher{Config: cfg, Logf: func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		if strings.Contains(line, "pinning runs to CPU") || strings.Contains(line, "CPU calibration failed") {
			mu.Lock()
			calibrations++
			mu.Unlock()
		}
		t.Log(line)
	}}
	ctx := context.Background()
	for i, want := range []int{1, 2, 2} {
		if i == 1 {
			r.Commit("docs", map[string]string{"README": "x\n"})
		}
		if rep, err := w.Cycle(ctx); err != nil || len(rep.Errors) > 0 {
			t.Fatalf("cycle %d: %v %v", i+1, err, rep.Errors)
		}
		if calibrations != want {
			t.Errorf("after cycle %d: %d calibrations, want %d (one per cycle that measures)", i+1, calibrations, want)
		}
	}
	st, err := store.Open(filepath.Join(dir, ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	jobs, _ := job.Load(jobFile)
	tested, err := st.TestedCommits(ctx, jobs[0].Key(), "")
	if err != nil || len(tested) != 2 {
		t.Fatalf("tested %v, %v; want 2 commits", tested, err)
	}
	for c := range tested {
		runs, err := st.RunsWithoutValues(ctx, jobs[0].Key(), c, "")
		if err != nil || len(runs) == 0 {
			t.Fatalf("runs of %s: %v", c[:12], err)
		}
		for _, run := range runs {
			if run.CPU < 0 {
				t.Errorf("run %d of %s was not pinned (run.cpu: auto)", run.Index, c[:12])
			}
		}
	}
}
