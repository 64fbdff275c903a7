package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/finding"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// TestWatchChangeBehindBrokenBuild: a branch goes base -> a commit that
// does not build -> its fix, which also makes the benchmark 2x slower,
// with one watch cycle after each step (real git, real gcc builds). The
// broken commit is built once more in the next cycle, then passed over
// and reported with its log; the fix is measured against the base, the
// last commit that built, and the finding names the fix and the skipped
// commit, triaged against the base. Then a commit whose first build
// fails for a reason of the machine's (a full disk, simulated by its
// Makefile) is built once more and tested: no hole.
func TestWatchChangeBehindBrokenBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C benchmark over several watch cycles")
	}
	bw := newBenchWatch(t, 6, "1000000", "", "jobs: [bench.yaml]\nbranches: [main]\nreport: {dir: reports}\n")
	r, dir, jobFile, cfg, base := bw.repo, bw.dir, bw.jobFile, bw.cfg, bw.base
	ctx := context.Background()
	w := &Watcher{Config: cfg, CPUMode: "none", Logf: t.Logf}
	cycle := func(name string) *CycleReport {
		t.Helper()
		rep, err := w.Cycle(ctx)
		if err != nil || len(rep.Errors) > 0 {
			t.Fatalf("%s: %v %v", name, err, rep.Errors)
		}
		return rep
	}
	jobs, err := job.Load(jobFile)
	if err != nil {
		t.Fatal(err)
	}
	broken := func() map[string]store.BrokenBuild {
		t.Helper()
		st, err := store.Open(filepath.Join(dir, ".perfbot"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		bb, err := st.BrokenBuilds(ctx, jobs[0].Key(), "")
		if err != nil {
			t.Fatal(err)
		}
		return bb
	}

	if rep := cycle("base"); len(rep.Tested) != 1 {
		t.Fatalf("base: tested %d, want the head", len(rep.Tested))
	}

	bad := r.Commit("half a change", map[string]string{"bench.c": "this is not C\n"})
	rep := cycle("broken")
	if len(rep.Tested) != 0 || len(rep.Broken) != 0 {
		t.Fatalf("broken head: tested %v, broken %v; want neither (one failure is not final)", rep.Tested, rep.Broken)
	}
	if b := broken()[bad]; b.Failures != 1 || b.Final {
		t.Fatalf("after one failed build: %+v; want 1 failure, not final", b)
	}

	fix := r.Commit("fix the build, hash twice", map[string]string{"bench.c": testutil.BenchC(2, "fixed")})
	rep = cycle("fix")
	if len(rep.Tested) != 1 || rep.Tested[0].Commit.Hash != fix || rep.Tested[0].Ref != base {
		t.Fatalf("fix: tested %+v; want the fix against the base, the last commit that built", rep.Tested)
	}
	if b := broken()[bad]; b.Failures != 2 || !b.Final || !strings.Contains(b.Error, "build failed") {
		t.Errorf("after the second failed build: %+v; want 2 failures, final", b)
	}
	if len(rep.Broken) != 1 || rep.Broken[0].Commit.Hash != bad || rep.Broken[0].File == "" {
		t.Fatalf("broken builds reported %+v; want %s", rep.Broken, bad[:12])
	}
	var br map[string]string
	if data, err := os.ReadFile(rep.Broken[0].File); err != nil || json.Unmarshal(data, &br) != nil ||
		br["commit"] != bad || !strings.Contains(br["error"], "this is not C") || br["log"] == "" {
		t.Errorf("broken build report %s: %v %v", rep.Broken[0].File, br, err)
	}
	if _, err := os.Stat(br["log"]); err != nil {
		t.Errorf("the broken build's log: %v", err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0] != fix {
		t.Fatalf("findings %v; want the fix %s", rep.Findings, fix[:12])
	}
	data, err := os.ReadFile(filepath.Join(dir, "reports", fix[:12]+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f finding.Finding
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if f.Culprit != fix || f.Parent != base || !slices.Equal(f.Skipped, []string{bad}) || f.Verdict != "real-regression" || f.Change < 50 ||
		!strings.Contains(f.Bisect, "do not build") {
		t.Errorf("finding culprit %s parent %s skipped %v verdict %s %+.1f%%, %q; want the fix against the base, %s skipped, real-regression",
			f.Culprit[:12], f.Parent[:12], f.Skipped, f.Verdict, f.Change, f.Bisect, bad[:12])
	}
	if rep := cycle("again"); len(rep.Tested) != 0 || len(rep.Findings) != 0 || len(rep.Broken) != 0 {
		t.Errorf("a repeated cycle tested %d, found %v, broken %v; want nothing", len(rep.Tested), rep.Findings, rep.Broken)
	}

	// A failure of the machine's: the first build of this commit fails
	// (its Makefile fails while a marker is missing, as a full disk
	// would), the second builds.
	mark := filepath.Join(dir, "disk-freed")
	flaky := r.Commit("flaky build", map[string]string{"Makefile": fmt.Sprintf(
		"bench: bench.c\n\t@test -e %s || { touch %s; echo 'No space left on device' >&2; exit 1; }\n\tgcc -O2 $(CFLAGS) -o bench bench.c\n", mark, mark)})
	if rep := cycle("flaky"); len(rep.Tested) != 0 {
		t.Fatalf("flaky: tested %v; want its first build to fail", rep.Tested)
	}
	rep = cycle("flaky again")
	if len(rep.Tested) != 1 || rep.Tested[0].Commit.Hash != flaky || rep.Tested[0].Ref != fix || len(rep.Broken) != 0 {
		t.Fatalf("flaky, once more: tested %+v, broken %v; want it built and tested against the fix", rep.Tested, rep.Broken)
	}
}
