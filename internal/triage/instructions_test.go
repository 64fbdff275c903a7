package triage

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
	"github.com/perfbot/perfbot/internal/verdict"
)

// TestJudgeInstructions: a time that changed while the instructions did
// not supports alignment; instructions that changed as much, in the worse
// direction, support a real change; in between supports neither; a
// throughput's worse direction is down.
func TestJudgeInstructions(t *testing.T) {
	for _, tc := range []struct {
		name          string
		better        metric.Better
		base, changed float64
		metricPct     float64
		want          Support
		text          string
	}{
		{"same count", metric.LowerIsBetter, 459972, 459972, 30, SupportsAlignment, "t_ms changed +30.0%, instructions did not (+0.000%"},
		{"a tenth", metric.LowerIsBetter, 1e9, 1.003e9, 30, SupportsAlignment, "blind to alignment"},
		{"as much", metric.LowerIsBetter, 1e9, 1.25e9, 30, SupportsReal, "the work itself changed"},
		{"less", metric.LowerIsBetter, 1e9, 1.05e9, 30, SupportsNeither, "alignment may add to a real change"},
		{"the other way", metric.LowerIsBetter, 1e9, 0.7e9, 30, SupportsNeither, ""},
		{"throughput down, work up", metric.HigherIsBetter, 1e9, 1.3e9, -25, SupportsReal, ""},
	} {
		ev := judgeInstructions("instructions", "t_ms", tc.better, tc.base, tc.changed, tc.metricPct)
		if ev.Supports != tc.want || !strings.Contains(ev.Text, tc.text) {
			t.Errorf("%s: supports %s: %s; want %s, %q", tc.name, ev.Supports, ev.Text, tc.want, tc.text)
		}
	}
}

// TestInstructionEvidence: the generated project whose commit moves its
// hot array off a 32-byte boundary (a data alignment artifact, +30 %),
// triaged with instructions counted by callgrind: the report says the
// time changed and the instructions did not, and only the two plain
// builds were run under callgrind (the layout experiments' builds not).
func TestInstructionEvidence(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, measures and runs under callgrind a generated C project")
	}
	testutil.NeedTool(t, "git", "gcc", "make", "valgrind")
	base := testutil.AlignBench{Data: []string{"long counter[2];", "double data_range[2];"}}
	changed := testutil.AlignBench{Data: []string{"long counter[2];"}}
	if off := hotOffset(t, base, "hot_x"); off%32 != 0 {
		base.Data = append([]string{"char lead[16];"}, base.Data...)
		changed.Data = append([]string{"char lead[16];"}, changed.Data...)
	}
	withCount := func(files map[string]string) map[string]string {
		files[testutil.AlignBenchJob] += "  - {builtin: instructions, counter: callgrind}\n"
		return files
	}
	repo := testutil.NewGitRepo(t)
	b := repo.Commit("base", withCount(base.Files()))
	c := repo.Commit("changed", withCount(changed.Files()))
	ctx := context.Background()
	jobs, err := job.Load(filepath.Join(repo.Dir, testutil.AlignBenchJob))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(repo.Dir), "perfbot")
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
		Job: jobs[0], Base: b, Changed: c, Metric: "t_ms", Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s after %d runs, %d builds: %s\n%s", res.Verdict, res.Runs, res.Builds, res.Sentence, log.String())
	if res.Verdict != verdict.DataAlignment {
		t.Fatalf("verdict %s, want data-alignment", res.Verdict)
	}
	ev := res.Instructions
	if ev == nil {
		t.Fatal("no instruction evidence")
	}
	if ev.Supports != SupportsAlignment || !strings.Contains(ev.Text, "instructions did not") || !(ev.Base > 0) {
		t.Errorf("evidence %+v: want the time changed, the instructions not", ev)
	}
	t.Logf("instructions: %s", ev.Text)

	// Only the plain comparison's two builds ran under callgrind, each
	// CallgrindRuns times.
	jobDir := filepath.Dir(filepath.Dir(filepath.Dir(st.RunDir(store.RunKey{Job: jobs[0].Key(), Commit: b, Index: 1}))))
	cg, _ := filepath.Glob(filepath.Join(jobDir, "*", "*"+measure.CallgrindSuffix, "[0-9]*"))
	if len(cg) != 2*measure.CallgrindRuns {
		t.Errorf("%d callgrind runs, want %d of the 2 plain builds: %v", len(cg), 2*measure.CallgrindRuns, cg)
	}
}
