package measure

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/version"
)

// setup makes a repo with two commits whose "benchmark" is a shell script,
// and a store and builder for it.
func setup(t *testing.T, script string) (Options, []Target) {
	t.Helper()
	var commits []map[string]string
	for _, v := range []string{"1", "2"} {
		commits = append(commits, map[string]string{"bench.sh": strings.ReplaceAll(script, "VERSION", v)})
	}
	return setupFiles(t, commits)
}

func loadJob(t *testing.T, runs string) *job.Job {
	t.Helper()
	jobs, err := job.Parse("/x/job.yaml", []byte(`repo: .
build: {command: "true"}
run: {command: "sh bench.sh", timeout: 5s}
runs: `+runs+`
warmup: 1
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`))
	if err != nil {
		t.Fatal(err)
	}
	return jobs[0]
}

type countRuns struct{ order []string }

func (c *countRuns) Building(int, int, Target)                    {}
func (c *countRuns) Built(int, int, Target, *build.Result, error) {}
func (c *countRuns) Ran(_, _ int, t Target, r *store.RunRecord) {
	c.order = append(c.order, t.Commit.Hash)
}

func TestMeasureInterleavesAndResumes(t *testing.T) {
	opt, targets := setup(t, "echo work_ms: VERSION.5\n")
	j := loadJob(t, "4")
	prog := &countRuns{}
	opt.Progress = prog
	out, err := Measure(context.Background(), j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	if out.Taken != 8 || len(prog.order) != 8 {
		t.Fatalf("took %d runs, want 8", out.Taken)
	}
	// Interleaved: every round of two runs holds both commits.
	for i := 0; i < 8; i += 2 {
		if prog.order[i] == prog.order[i+1] {
			t.Errorf("runs %d and %d are both of %s: not interleaved (%v)", i, i+1, prog.order[i][:7], prog.order)
		}
	}
	for i, tgt := range out.Targets {
		if len(tgt.Runs) != 4 {
			t.Fatalf("target %d has %d stored runs", i, len(tgt.Runs))
		}
	}
	samples, err := opt.Store.Samples(context.Background(), j.Key(), []string{targets[0].Commit.Hash, targets[1].Commit.Hash}, "")
	if err != nil {
		t.Fatal(err)
	}
	if s := samples[targets[1].Commit.Hash]["work_ms"]; len(s) != 4 || s[0].Value != 2.5 {
		t.Errorf("commit 2 samples %v, want four of 2.5", s)
	}
	// Each stored run says which perfbot took it.
	recs, err := opt.Store.RunsWithoutValues(context.Background(), j.Key(), targets[0].Commit.Hash, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if want := version.Get().String(); r.Version != want {
			t.Errorf("run %d records version %q; want %q", r.Index, r.Version, want)
		}
	}
	// Again: nothing to take. With more runs: only the missing ones.
	out, err = Measure(context.Background(), j, targets, opt)
	if err != nil || out.Taken != 0 {
		t.Fatalf("second measure took %d runs (err %v), want 0", out.Taken, err)
	}
	opt.Runs = 6
	out, err = Measure(context.Background(), j, targets, opt)
	if err != nil || out.Taken != 4 {
		t.Fatalf("measure with 6 runs took %d (err %v), want the 4 missing", out.Taken, err)
	}
}

func TestMeasureFailedRuns(t *testing.T) {
	// Commit 1 crashes; commit 2 prints garbage instead of the metric.
	opt, targets := setup(t, `if [ VERSION = 1 ]; then echo boom >&2; exit 3; fi; echo work_ms: lots`+"\n")
	j := loadJob(t, "3")
	out, err := Measure(context.Background(), j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Targets[0].Runs {
		if r.Status != store.RunCrashed || !strings.Contains(r.Reason, "exit status 3") || !strings.Contains(r.Reason, "boom") {
			t.Errorf("crashing run: status %q reason %q", r.Status, r.Reason)
		}
	}
	for _, r := range out.Targets[1].Runs {
		if r.Status != store.RunNoMetric || !strings.Contains(r.Reason, "work_ms") {
			t.Errorf("garbage run: status %q reason %q", r.Status, r.Reason)
		}
	}
	samples, _ := opt.Store.Samples(context.Background(), j.Key(), []string{targets[0].Commit.Hash}, "")
	if n := len(samples[targets[0].Commit.Hash]["work_ms"]); n != 0 {
		t.Errorf("failed runs gave %d samples", n)
	}
}

// TestMeasureSessions: runs of one measurement share a session, a later
// measurement has another, so compare can tell interleaved pairs from runs
// taken apart (review finding 1).
func TestMeasureSessions(t *testing.T) {
	opt, targets := setup(t, "echo work_ms: VERSION.5\n")
	j := loadJob(t, "3")
	ctx := context.Background()
	if _, err := Measure(ctx, j, targets[:1], opt); err != nil {
		t.Fatal(err)
	}
	out, err := Measure(ctx, j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	a, b := out.Targets[0].Runs, out.Targets[1].Runs
	if a[0].Session == "" || a[0].Session != a[2].Session || a[0].Session == b[0].Session || b[0].Session != b[2].Session {
		t.Errorf("sessions: base %q %q, new %q %q; want one per measurement", a[0].Session, a[2].Session, b[0].Session, b[2].Session)
	}
}

// TestMeasureWholeRounds: with WholeRounds, a commit joining a comparison
// is measured interleaved with fresh runs of the others, under new run
// numbers, and the stored rounds are kept (review finding 1).
func TestMeasureWholeRounds(t *testing.T) {
	opt, targets := setup(t, "echo work_ms: VERSION.5\n")
	j := loadJob(t, "3")
	ctx := context.Background()
	opt.WholeRounds = true
	first, err := Measure(ctx, j, targets[:1], opt)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 2, 3}; !slices.Equal(first.Rounds, want) {
		t.Fatalf("first rounds %v, want %v", first.Rounds, want)
	}
	prog := &countRuns{}
	opt.Progress = prog
	out, err := Measure(ctx, j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{4, 5, 6}; out.Taken != 6 || !slices.Equal(out.Rounds, want) {
		t.Fatalf("second measure took %d runs in rounds %v; want 6 in %v", out.Taken, out.Rounds, want)
	}
	for i := 0; i < len(prog.order); i += 2 {
		if prog.order[i] == prog.order[i+1] {
			t.Errorf("runs %d and %d are of one commit: not interleaved", i, i+1)
		}
	}
	if n := len(out.Targets[0].Runs); n != 6 {
		t.Errorf("base has %d stored runs, want 6: the first session's are kept", n)
	}
	// Again: the complete rounds are reused, nothing is taken.
	out, err = Measure(ctx, j, targets, opt)
	if err != nil || out.Taken != 0 || !slices.Equal(out.Rounds, []int{4, 5, 6}) {
		t.Errorf("third measure: took %d, rounds %v, err %v", out.Taken, out.Rounds, err)
	}
}
