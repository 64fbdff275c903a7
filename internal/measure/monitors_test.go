package measure

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/compare/stored"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/monitor"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

type notes struct {
	countRuns
	got []string
}

func (n *notes) Note(msg string) { n.got = append(n.got, msg) }

// TestMonitorsMeasured: a job's monitors run with its measured runs; their
// figures are stored with each run, the profile stays in the run's log
// folder for triage, and warm-ups are profiled but not read.
func TestMonitorsMeasured(t *testing.T) {
	testutil.NeedTool(t, "perf")
	ms := []job.Monitor{{Name: "perf-profile", Event: "cpu-clock"}, {Name: "vmstat"}, {Name: "meminfo"}, {Name: "interrupts"}}
	if _, err := monitor.Prepare(ms); err != nil {
		if errors.Is(err, monitor.ErrNoPerf) {
			t.Fatal(err)
		}
		testutil.SkipIncapable(t, "%v", err)
	}
	opt, targets := setup(t, "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; echo work_ms: VERSION.5\n")
	j := loadJob(t, "3")
	plainKey := j.Key()
	j.Monitors = ms
	if j.Key() == plainKey {
		t.Fatal("perf-profile does not change the job key")
	}
	prog := &notes{}
	opt.Progress = prog
	out, err := Measure(context.Background(), j, targets, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tgt := range out.Targets {
		for _, r := range tgt.Runs {
			if r.Status != store.RunOK {
				t.Fatalf("run %s: %s %s", r.RunKey, r.Status, r.Reason)
			}
		}
	}
	ctx := context.Background()
	key := out.Targets[0].Runs[0].RunKey
	recs, err := opt.Store.Runs(ctx, key.Job, key.Commit, key.Variant)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, v := range recs[0].Values {
		count[strings.SplitN(v.Name, ".", 2)[0]]++
	}
	for _, m := range []string{"perf-profile", "vmstat", "meminfo", "interrupts", "time", "work_ms"} {
		if count[m] == 0 {
			t.Errorf("no %s figures stored: %v", m, count)
		}
	}
	h, err := monitor.Profile(opt.Store, key)
	if err != nil {
		t.Fatal(err)
	}
	if h.Unit != "cpu-clock" || h.Total <= 0 || len(h.Funcs) == 0 {
		t.Errorf("profile of run %s: %+v", key, h)
	}
	merged, n, err := monitor.CommitProfile(ctx, opt.Store, key.Job, key.Commit, key.Variant)
	if err != nil || n != 3 || len(merged.Funcs) == 0 {
		t.Errorf("commit profile: %d runs, %v", n, err)
	}
	// The warm-up was profiled (the same command as the measured runs)
	// but not read.
	warm, _ := filepath.Glob(filepath.Join(opt.Store.Dir(), "warmup", "*", monitor.PerfData))
	report, _ := filepath.Glob(filepath.Join(opt.Store.Dir(), "warmup", "*", monitor.ProfileFile))
	if len(warm) == 0 || len(report) != 0 {
		t.Errorf("warm-ups: %v profiled, %v read", warm, report)
	}

	tab, err := stored.Table(ctx, opt.Store, key.Job, []stored.Source{
		{Commit: targets[0].Commit, Round: stored.InRounds([]int{1, 2, 3})},
		{Commit: targets[1].Commit, Round: stored.InRounds([]int{1, 2, 3})},
	}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if r := tab.Rows[0]; r.Metric != "work_ms" || !r.KPI {
		t.Errorf("first row %s (KPI %v), want the job's work_ms", r.Metric, r.KPI)
	}
	for _, r := range tab.Rows[1:] {
		if r.KPI {
			t.Errorf("%s counts as one of the job's metrics", r.Metric)
		}
	}
	// A run without perf-profile has no profile.
	if _, err := monitor.Profile(opt.Store, store.RunKey{Job: plainKey, Commit: key.Commit, Index: 1}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("profile of a run without perf-profile: %v", err)
	}
}

// prep is a Local that prepares with fixed notes or error.
type prep struct {
	Local
	notes []string
	err   error
}

func (p prep) Prepare(*job.Job) ([]string, error) { return p.notes, p.err }

type building struct {
	notes
	builds int
}

func (b *building) Building(int, int, Target) { b.builds++ }

// TestPrepare: an executor that cannot take the job's runs stops the
// measurement before anything is built; its notes are given once.
func TestPrepare(t *testing.T) {
	opt, targets := setup(t, "echo work_ms: 1\n")
	j := loadJob(t, "3")
	prog := &building{}
	opt.Progress = prog
	opt.Executor = prep{Local: Local{CPU: -1}, err: errors.New("monitor perf-profile: perf is not installed (Debian package linux-perf)")}
	if _, err := Measure(context.Background(), j, targets, opt); err == nil || !strings.Contains(err.Error(), "linux-perf") || prog.builds != 0 {
		t.Errorf("error %v after %d builds; want the executor's, before any build", err, prog.builds)
	}
	opt.Executor = prep{Local: Local{CPU: -1}, notes: []string{"perf-stat: hardware counters are not supported on this machine"}}
	for range 2 {
		if _, err := Measure(context.Background(), j, targets, opt); err != nil {
			t.Fatal(err)
		}
	}
	if len(prog.got) != 1 || !strings.Contains(prog.got[0], "not supported on this machine") {
		t.Errorf("notes %q, want the one note once", prog.got)
	}
}
