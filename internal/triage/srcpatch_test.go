package triage

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/layout"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/verdict"
)

// alignBenchCase commits two versions of testutil.AlignBench, base and
// changed, in a new repository and triages the change; it returns the
// result, the repository and a function that triages it again with the
// same store.
func alignBenchCase(t *testing.T, base, changed testutil.AlignBench) (*Result, *testutil.GitRepo, func() *Result) {
	t.Helper()
	testutil.NeedTool(t, "git", "gcc", "make")
	// The project's layout depends on the toolchain: put base's hot_x
	// (and hot_fn) on a 32-byte boundary first, so that the 16 bytes a
	// commit drops move it off, with a 16-byte object (function) before
	// the others when needed.
	if off := hotOffset(t, base, "hot_x"); off%32 != 0 {
		base.Data = append([]string{"char lead[16];"}, base.Data...)
		changed.Data = append([]string{"char lead[16];"}, changed.Data...)
	}
	if base.Code != nil && hotOffset(t, base, "hot_fn")%32 != 0 {
		lead := "long lead_fn(long x) { return x - 1; }"
		base.Code, changed.Code = append([]string{lead}, base.Code...), append([]string{lead}, changed.Code...)
	}
	for _, sym := range []string{"hot_x", "hot_fn"} {
		if off := hotOffset(t, base, sym); off%32 != 0 && (sym == "hot_x" || base.Code != nil) {
			t.Fatalf("%s is at %d mod 32 in the base build: the test project needs fixing", sym, off)
		}
	}
	repo := testutil.NewGitRepo(t)
	repo.Commit("base", base.Files())
	b := repo.Git("rev-parse", "HEAD")
	repo.Commit("changed", changed.Files())
	c := repo.Git("rev-parse", "HEAD")

	ctx := context.Background()
	jobs, err := job.Load(filepath.Join(repo.Dir, testutil.AlignBenchJob))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(repo.Dir), "perfbot")
	run := func() *Result {
		st, err := store.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		g, err := gitrev.Open(ctx, repo.Dir)
		if err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		res, err := Run(ctx, Config{Env: measure.Env{Store: st, Repo: g, Builder: &build.Builder{Repo: g, Store: st, Dir: dir}, CPU: "none"},
			Job: jobs[0], Base: b, Changed: c, Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s after %d runs (%d new; fixed design %d), %d builds (%d new): %s\nnotes: %q\n%s", res.Verdict, res.Runs, res.NewRuns, res.FixedRuns, res.Builds, res.NewBuilds, res.Sentence, res.Notes, log.String())
		return res
	}
	return run(), repo, run
}

// hotOffset builds the project in a scratch folder and returns sym's
// address mod 64.
func hotOffset(t *testing.T, p testutil.AlignBench, sym string) uint64 {
	t.Helper()
	dir := t.TempDir()
	for name, content := range p.Files() {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("make", "-s", "bench")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	bin, err := layout.Open(filepath.Join(dir, "bench"))
	if err != nil {
		t.Fatal(err)
	}
	s := bin.Lookup(sym)
	if len(s) != 1 {
		if sym != "hot_x" {
			return 0 // no such function in this project
		}
		t.Fatalf("no %s in the build", sym)
	}
	return s[0].Off(layout.LineSize)
}

// restoreOf returns the triage's restore experiment, failing the test
// when there is none.
func restoreOf(t *testing.T, res *Result) Experiment {
	t.Helper()
	for _, x := range res.Experiments {
		if x.Name == RestoreExperiment {
			return x
		}
	}
	t.Fatalf("no restore experiment in %v", res.Experiments)
	return Experiment{}
}

func labelsOf(x Experiment) []string {
	var out []string
	for _, c := range x.Columns {
		out = append(out, c.Label)
	}
	return out
}

// TestSourcePatchColumn is the seed's proof, measured: a commit drops a
// 16-byte global, which moves hot_x off its 32-byte boundary (1.3 times
// slower). Triage makes the source patch that puts 16 bytes back where
// the global was, builds it in its own worktree, checks that the
// addresses came back, and measures it as the third column beside base
// and changed: the change vanishes there, a data alignment artifact. The
// patch applies to the changed commit with git apply; the user's checkout
// is left as it was.
func TestSourcePatchColumn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and measures a generated C project")
	}
	base := testutil.AlignBench{Data: []string{"long counter[2];", "double data_range[2];"}}
	changed := testutil.AlignBench{Data: []string{"long counter[2];"}}
	res, repo, again := alignBenchCase(t, base, changed)
	head := repo.Git("rev-parse", "HEAD")
	if res.Verdict != verdict.DataAlignment || !slices.Equal(res.DecidedBy, []ExperimentName{PlainExperiment, RestoreExperiment}) {
		t.Fatalf("verdict %s decided by %v, want data-alignment from the plain comparison and the restore", res.Verdict, res.DecidedBy)
	}
	r := restoreOf(t, res)
	if !slices.Equal(labelsOf(r), []string{"base", "changed", "changed+patch"}) || r.Columns[2].Variant != patchName || r.Outcome != OutcomeSame {
		t.Errorf("restore columns %v (third variant %q), outcome %s: want base, changed and changed+patch, the same as base", labelsOf(r), r.Columns[2].Variant, r.Outcome)
	}
	if r.Table == nil || len(r.Table.Columns) != 3 || r.Table.Columns[2].Variant != "patch" {
		t.Errorf("the restore's 0-day table does not have the three columns")
	}
	// One table, one round each: the three builds ran interleaved.
	if r.Columns[0].N != r.Columns[2].N || r.Columns[1].N != r.Columns[2].N {
		t.Errorf("columns have %d, %d and %d runs: want them measured in the same rounds", r.Columns[0].N, r.Columns[1].N, r.Columns[2].N)
	}
	sp := res.SourcePatch
	if sp == nil || !sp.Restored || sp.Root != "removed data_range (.bss)" || sp.File != "data.c" || sp.Bytes != 16 || !sp.Exact {
		t.Fatalf("source patch %+v: want the 16 bytes of data_range put back in data.c, restored", sp)
	}
	if !strings.Contains(sp.Check, "hot_x is back") || !strings.Contains(res.Sentence, "the source patch that puts back 16 bytes at data.c:") {
		t.Errorf("check %q, sentence %q: want hot_x back, and the patch named as the evidence", sp.Check, res.Sentence)
	}
	if 2*res.Runs > res.FixedRuns {
		t.Errorf("%d runs, more than half of the fixed design's %d", res.Runs, res.FixedRuns)
	}
	// The user's checkout: untouched.
	if st := repo.Git("status", "--porcelain"); st != "" || repo.Git("rev-parse", "HEAD") != head {
		t.Errorf("the user's checkout changed: %q", st)
	}
	if src, _ := os.ReadFile(filepath.Join(repo.Dir, "data.c")); strings.Contains(string(src), "__perfbot_pad_") {
		t.Error("the patch was applied to the user's checkout")
	}
	// The report's patch applies to the changed commit as it is.
	patch := filepath.Join(t.TempDir(), "fix.diff")
	if err := os.WriteFile(patch, []byte(sp.Diff), 0o644); err != nil {
		t.Fatal(err)
	}
	repo.Git("apply", "--check", patch)
	// Triaged again, everything comes from the store: the same patch
	// (the -g builds, the patched build and its runs are cached).
	res2 := again()
	if res2.NewRuns != 0 || res2.NewBuilds != 0 || res2.Verdict != res.Verdict || res2.SourcePatch == nil || res2.SourcePatch.Diff != sp.Diff {
		t.Errorf("second triage: %s, %d new runs, %d new builds, patch %v: want the same verdict and patch from the store alone", res2.Verdict, res2.NewRuns, res2.NewBuilds, res2.SourcePatch != nil)
	}
}

// TestSourcePatchNotRestored: a commit that drops a 32-byte global and
// grows the one before it by 16 bytes. The root change the layout diff
// names is the dropped global; its patch puts 32 bytes back, so hot_x
// ends 16 bytes from its base address. The check says so, the patch is
// reported and not measured, and the restore pads the section instead.
func TestSourcePatchNotRestored(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and measures a generated C project")
	}
	base := testutil.AlignBench{Data: []string{"long counter[2];", "double data_range[4];"}}
	changed := testutil.AlignBench{Data: []string{"long counter[4];"}}
	res, _, _ := alignBenchCase(t, base, changed)
	sp := res.SourcePatch
	if sp == nil || sp.Restored || sp.Root != "removed data_range (.bss)" || !strings.Contains(sp.Check, "not restored") {
		t.Fatalf("source patch %+v: want the patch for data_range, not restored", sp)
	}
	if !strings.Contains(strings.Join(sp.Notes, "\n"), "counter, just before the spot, moved or changed size too") {
		t.Errorf("the patch's notes do not name the resized neighbour: %q", sp.Notes)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "was not measured: the patched build does not have the base's layout back (not restored: .bss:") ||
		!strings.Contains(notes, "the restore pads the section instead") {
		t.Errorf("notes do not say why the patch was not measured:\n%s", notes)
	}
	r := restoreOf(t, res)
	if !slices.Equal(labelsOf(r), []string{"base", "changed", "changed+padding"}) {
		t.Errorf("restore columns %v: want the padding, not the patch", labelsOf(r))
	}
	if res.Verdict != verdict.DataAlignment || strings.Contains(res.Sentence, "source patch") {
		t.Errorf("verdict %s (%s): want data-alignment from the padding", res.Verdict, res.Sentence)
	}
}

// TestSourcePatchKeepsRealChange: the commit drops the global and makes
// the code 1.3 times slower. With the layout given back by the source
// patch the change stays: a real regression, weighed with the sweep.
func TestSourcePatchKeepsRealChange(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and measures a generated C project")
	}
	base := testutil.AlignBench{Data: []string{"long counter[2];", "double data_range[2];"}}
	changed := testutil.AlignBench{Data: []string{"long counter[2];"}, Work: 130}
	res, _, _ := alignBenchCase(t, base, changed)
	if res.Verdict != verdict.RealRegression || !slices.Equal(res.DecidedBy, []ExperimentName{RestoreExperiment, SweepExperiment}) {
		t.Fatalf("verdict %s decided by %v: want a real regression from the patched build, with the sweep agreeing", res.Verdict, res.DecidedBy)
	}
	if sp := res.SourcePatch; sp == nil || !sp.Restored {
		t.Fatalf("source patch %+v: want it restored", sp)
	}
	if r := restoreOf(t, res); r.Outcome != OutcomeDifferent || r.Change < 20 {
		t.Errorf("restore %s %+.1f%%: want the +30%% kept", r.Outcome, r.Change)
	}
	if !strings.Contains(res.Sentence, "offset restored (the source patch at data.c:") {
		t.Errorf("sentence %q does not name the patch", res.Sentence)
	}
}

// TestSourcePatchText: a commit drops a function before hot_fn, whose
// loop then starts off its 32-byte boundary (1.3 times slower), in a
// build that the layout knobs cannot reach: its Makefile calls the
// compiler by absolute path (and builds with -g itself). Forced alignment
// and the layout sweep change nothing in it, and the preset's padding
// cannot be linked in; the source patch, which changes the source, puts
// the function's bytes back where it was, and the change vanishes: a text
// alignment artifact.
func TestSourcePatchText(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and measures a generated C project")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.NeedTool(t, "gcc")
	}
	if gcc, err = filepath.Abs(gcc); err != nil {
		t.Fatal(err)
	}
	base := testutil.AlignBench{Code: []string{"long one(long x) { return x + 1; }"}, CC: gcc, Flags: "-g"}
	changed := testutil.AlignBench{Code: []string{}, CC: gcc, Flags: "-g"}
	res, _, _ := alignBenchCase(t, base, changed)
	sp := res.SourcePatch
	if sp == nil || !sp.Restored || sp.Root != "removed one (.text)" || sp.File != "bench.c" {
		t.Fatalf("source patch %+v: want the function one put back in bench.c, restored", sp)
	}
	if res.Verdict != verdict.TextAlignment || !slices.Equal(res.DecidedBy, []ExperimentName{PlainExperiment, RestoreExperiment}) {
		t.Fatalf("verdict %s decided by %v, want text-alignment from the plain comparison and the patched build", res.Verdict, res.DecidedBy)
	}
	if r := restoreOf(t, res); !slices.Equal(labelsOf(r), []string{"base", "changed", "changed+patch"}) {
		t.Errorf("restore columns %v, want the patch", labelsOf(r))
	}
	if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, "the build ignores the preset's knobs") {
		t.Errorf("notes do not say the knobs did not reach the build:\n%s", notes)
	}
}
