package watch

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/measure"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// panicOn is a measure.Progress that panics when a build of commit
// starts: a bug in one job's cycle.
type panicOn struct{ commit string }

func (p panicOn) Building(i, n int, t measure.Target) {
	if t.Commit.Hash == p.commit {
		panic("planted bug in the cycle of " + p.commit[:12])
	}
}
func (panicOn) Built(int, int, measure.Target, *build.Result, error) {}
func (panicOn) Ran(int, int, measure.Target, *store.RunRecord)       {}

// TestCyclePanicRecorded: a panic in one job's cycle (real repositories,
// real gcc builds) is caught, recorded in that job's store as a panicked
// cycle, sends the failure notice (notice_after: 1) by mail through a
// real SMTP server, and the other job's cycle goes on; the next cycle of
// the job that panicked runs (its locks were released) and its recovery
// is told.
func TestCyclePanicRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C benchmark in two repositories")
	}
	testutil.NeedTool(t, "git", "gcc", "make")
	var jobs, heads []string
	for _, name := range []string{"alpha", "beta"} {
		r := testutil.NewGitRepo(t)
		heads = append(heads, r.Commit("base", map[string]string{"bench.c": testutil.BenchC(1, name), "Makefile": testutil.BenchMakefile}))
		jobFile := filepath.Join(filepath.Dir(r.Dir), name+".yaml")
		write(t, jobFile, fmt.Sprintf(`name: %s
repo: %s
build: {command: make bench, artifacts: [bench]}
run: {command: ./bench 100000, timeout: 60s}
runs: 3
metrics:
  - {name: work_ms, regex: 'work_ms: (?P<value>[0-9.]+)', better: lower}
`, name, r.Dir))
		jobs = append(jobs, jobFile)
	}
	box := testutil.StartSMTPServer(t, testutil.SMTPOptions{TLS: "starttls"})
	watchFile := filepath.Join(t.TempDir(), "watch.yaml")
	write(t, watchFile, fmt.Sprintf(`jobs: [%s, %s]
branches: [main]
notice_after: 1
gc: off
report:
  smtp: {addr: %q, ca_file: %q, from: perfbot@localhost, to: [perf@example.org]}
`, jobs[0], jobs[1], box.Addr, box.CA.File))
	cfg, err := Load(watchFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var log strings.Builder
	w := &Watcher{Config: cfg, CPUMode: "none", Progress: panicOn{heads[0]},
		Logf: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...); t.Logf(f, a...) }}

	rep, err := w.Cycle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Error(), "panic: planted bug") {
		t.Fatalf("cycle errors %v; want the one panic", rep.Errors)
	}
	if len(rep.Tested) != 1 || rep.Tested[0].Job != "beta" {
		t.Fatalf("tested %+v; want beta's head: the other job goes on", rep.Tested)
	}
	alpha := jobCycles(t, jobs[0])
	if len(alpha) != 1 || !alpha[0].Panicked || !strings.Contains(alpha[0].Error, "planted bug") || !alpha[0].Noticed {
		t.Fatalf("alpha's recorded cycle %+v; want a panicked cycle with its notice", alpha)
	}
	if beta := jobCycles(t, jobs[1]); len(beta) != 1 || beta[0].Failed() || beta[0].Tested != 1 {
		t.Fatalf("beta's recorded cycle %+v; want one that tested its head", beta)
	}
	msgs := box.Messages()
	if len(msgs) != 1 || !strings.Contains(msgs[0].Data, "Subject: [perfbot] alpha: 1 failed watch cycles in a row") ||
		!strings.Contains(msgs[0].Data, "planted bug") {
		t.Fatalf("mails %+v; want the failure notice of alpha", msgs)
	}

	// The bug is gone: alpha's cycle runs (the panic released its locks).
	w.Progress = nil
	rep, err = w.Cycle(ctx)
	if err != nil || len(rep.Errors) > 0 || len(rep.Tested) != 1 || rep.Tested[0].Job != "alpha" {
		t.Fatalf("second cycle: %v, %v, tested %+v; want alpha's head", err, rep.Errors, rep.Tested)
	}
	if !strings.Contains(log.String(), "alpha: its cycle went through again after 1 failed cycles") {
		t.Errorf("the recovery was not logged:\n%s", log.String())
	}
	if msgs := box.Messages(); len(msgs) != 2 || !strings.Contains(msgs[1].Data, "watch cycles go through again") {
		t.Errorf("mails after the recovery: %d; want the recovery notice second", len(msgs))
	}
}

func jobCycles(t *testing.T, jobFile string) []store.CycleRecord {
	t.Helper()
	st, err := store.Open(filepath.Join(filepath.Dir(jobFile), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cs, err := st.Cycles(context.Background(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
