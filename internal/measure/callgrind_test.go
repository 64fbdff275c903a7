package measure

import (
	"bytes"
	"context"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// instrSource is a small C benchmark; built with -DEXTRA=N it also runs a
// planted loop of exactly 2 instructions (dec, jnz) per iteration, N times.
const instrSource = `#include <stdio.h>
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void work(long n) {
	unsigned long x = 1;
	for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}
#ifdef EXTRA
__attribute__((noinline)) static void extra(void) {
	long n = EXTRA;
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n));
}
#endif
int main(int argc, char **argv) {
	work(argc > 1 ? atol(argv[1]) : 20000);
#ifdef EXTRA
	extra();
#endif
	printf("done %lu\n", sink);
	return 0;
}
`

// plantedLoop is the planted loop's iterations (2 instructions each).
const plantedLoop = 50000

// TestCallgrindInstructions: with counter callgrind, each build's
// instructions are counted in runs of their own, stored under the
// build's callgrind variant, deterministic (every run the same count);
// every timed run carries its build's count, so the table has an
// ordinary "instructions" row; a planted loop of N iterations of 2
// instructions adds 2N (and a call's few more); a layout-only change
// (-falign-functions=64 -falign-loops=64: other bytes) leaves the count
// within 0.01 %.
func TestCallgrindInstructions(t *testing.T) {
	testutil.NeedTool(t, "gcc", "valgrind")
	if runtime.GOARCH != "amd64" {
		testutil.SkipIncapable(t, "the planted loop is x86-64 assembly, this is %s", runtime.GOARCH)
	}
	ctx := context.Background()
	opt, targets := setupFiles(t, []map[string]string{
		{"b.c": instrSource, "build.sh": "gcc -O2 -o b b.c\n"},
		{"b.c": instrSource, "build.sh": "gcc -O2 -DEXTRA=" + strconv.Itoa(plantedLoop) + " -o b b.c\n"},
		{"b.c": instrSource, "build.sh": "gcc -O2 -falign-functions=64 -falign-loops=64 -o b b.c\n"},
	})
	jobs, err := job.Parse("/x/job.yaml", []byte(`repo: .
build: {command: "sh build.sh", artifacts: [b]}
run: {command: "./b 20000", timeout: 10s}
runs: 3
metrics:
  - {builtin: instructions, counter: callgrind}
`))
	if err != nil {
		t.Fatal(err)
	}
	j := jobs[0]
	// The base's count from two runs (checked to agree), the others' from
	// one each: callgrind is slow, and the base shows determinism.
	opt.Runs, opt.WholeRounds, opt.CallgrindRuns = 3, true, 2
	if _, err := Measure(ctx, j, targets[:1], opt); err != nil {
		t.Fatal(err)
	}
	opt.CallgrindRuns = 1
	out, err := Measure(ctx, j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.BuildErrors(); err != nil {
		t.Fatal(err)
	}
	counts := make([]float64, len(targets))
	for i, tg := range out.Targets {
		cg, err := opt.Store.Runs(ctx, j.Key(), tg.Target.Commit.Hash, CallgrindVariant(""))
		if err != nil {
			t.Fatal(err)
		}
		if want := min(2, 2-i); len(cg) != max(want, 1) {
			t.Fatalf("%s: %d callgrind runs stored, want %d", tg.Target, len(cg), max(want, 1))
		}
		var seen []float64
		for _, r := range cg {
			if r.Status != store.RunOK || len(r.Values) != 1 || r.Values[0].Name != metric.Instructions {
				t.Fatalf("%s: callgrind run %d: %s %s, values %+v; want ok with the count alone", tg.Target, r.Index, r.Status, r.Reason, r.Values)
			}
			seen = append(seen, r.Values[0].Value)
		}
		if !CallgrindAgree(slices.Min(seen), slices.Max(seen)) {
			t.Errorf("%s: callgrind counts %v differ: not deterministic", tg.Target, seen)
		}
		slices.Sort(seen)
		counts[i] = seen[len(seen)/2]
		timed := 0
		runs, err := opt.Store.Runs(ctx, j.Key(), tg.Target.Commit.Hash, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Status != store.RunOK {
				continue
			}
			timed++
			got := math.NaN()
			for _, v := range r.Values {
				if v.Name == metric.Instructions {
					got = v.Value
				}
			}
			if got != counts[i] {
				t.Errorf("%s: timed run %d has instructions %v, want the build's count %v", tg.Target, r.Index, got, counts[i])
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(r.StdoutPath), CallgrindDir)); err == nil {
				t.Errorf("%s: timed run %d ran under callgrind", tg.Target, r.Index)
			}
		}
		if want := map[bool]int{true: 6, false: 3}[i == 0]; timed != want {
			t.Errorf("%s: %d successful timed runs, want %d (the callgrind runs are not among them)", tg.Target, timed, want)
		}
	}
	base, extra, aligned := counts[0], counts[1], counts[2]
	t.Logf("instructions: base %.0f, planted loop %.0f (%+.0f), aligned %.0f (%+.0f)", base, extra, extra-base, aligned, aligned-base)
	// A process's start varies by some hundreds of instructions
	// (CallgrindSlack): the planted work is 100 000.
	if d := extra - base; d < 2*plantedLoop-CallgrindSlack || d > 2*plantedLoop+64+CallgrindSlack {
		t.Errorf("the planted loop of %d iterations changed the count by %.0f; want %d plus a call's few instructions (± the start's %d)", plantedLoop, d, 2*plantedLoop, CallgrindSlack)
	}
	if d := math.Abs(aligned - base); d > CallgrindSlack {
		t.Errorf("the layout-only change moved the count by %.0f instructions; want no more than the start's %d", d, CallgrindSlack)
	}
	a0, _ := os.ReadFile(filepath.Join(out.Targets[0].Build.Worktree, "b"))
	a2, _ := os.ReadFile(filepath.Join(out.Targets[2].Build.Worktree, "b"))
	if len(a0) == 0 || bytes.Equal(a0, a2) {
		t.Fatal("the aligned build is byte-identical to the base: the layout change is not tested")
	}

	// The comparison sees an ordinary metric: one row, in instructions,
	// three pairs per column, the change of the planted loop.
	tab, err := out.Table(ctx, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, row := range tab.Rows {
		if row.Metric != metric.Instructions {
			continue
		}
		found = true
		if row.Unit != metric.UnitInstructions || !row.KPI || row.Cells[1].Summary.N != 3 {
			t.Errorf("instructions row: unit %q, KPI %v, %d runs; want instructions, a KPI, 3 runs", row.Unit, row.KPI, row.Cells[1].Summary.N)
		}
	}
	if !found {
		t.Error("the table has no instructions row")
	}

	// A second measurement reuses the stored counts: no callgrind run.
	before, _ := opt.Store.Runs(ctx, j.Key(), out.Targets[0].Target.Commit.Hash, CallgrindVariant(""))
	if _, err := Measure(ctx, j, targets, opt); err != nil {
		t.Fatal(err)
	}
	after, _ := opt.Store.Runs(ctx, j.Key(), out.Targets[0].Target.Commit.Hash, CallgrindVariant(""))
	if len(after) != len(before) || !after[0].Started.Equal(before[0].Started) {
		t.Error("the second measurement took the callgrind runs again")
	}
}

// setupFiles commits one commit per file set in a fresh repository and
// returns the options of a store and builder for it, with the commits as
// targets.
func setupFiles(t *testing.T, commits []map[string]string) (Options, []Target) {
	t.Helper()
	r := testutil.NewGitRepo(t)
	ctx := context.Background()
	repo, err := gitrev.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var targets []Target
	for i, files := range commits {
		c, err := repo.Resolve(ctx, r.Commit("commit "+strconv.Itoa(i+1), files))
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, Target{Commit: c})
	}
	dir := filepath.Dir(r.Dir)
	st, err := store.Open(filepath.Join(dir, ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return Options{Store: st, Builder: &build.Builder{Repo: repo, Store: st, Dir: filepath.Join(dir, ".perfbot")}, CPU: -1,
		Rand: rand.New(rand.NewSource(1))}, targets
}
