package stored_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/compare/stored"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/report"
	"github.com/perfbot/perfbot/internal/store"
)

// TestMonitorRows: the monitors' figures are rows after the job's metrics,
// never counted as regressions, and a symbol missing from a run's profile
// is a share of 0 in that run.
func TestMonitorRows(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	for r := 1; r <= 8; r++ {
		for _, c := range []struct {
			commit string
			hot    float64
		}{{a, 60}, {b, 90}} {
			f := float64(r)
			vals := []metric.Value{
				// Stored first, shown after the job's metric.
				{Name: "vmstat.pgfault", Value: 100 + f},
				{Name: "perf-profile.self.cpu-clock.hot_spin", Unit: "%", Value: c.hot + f/10},
				{Name: "time.elapsed_time", Unit: "s", Value: 1},
				{Name: "ops", Better: metric.HigherIsBetter, Value: 1000 + f},
			}
			if c.commit == a && r%2 == 0 {
				// In half of a's runs only: 0 in the others.
				vals = append(vals, metric.Value{Name: "perf-profile.self.cpu-clock.cold", Unit: "%", Value: 0.5})
			}
			for i := range vals {
				if vals[i].Better == 0 {
					vals[i].Better = metric.LowerIsBetter
				}
			}
			rec := &store.RunRecord{RunKey: store.RunKey{Job: "job", Commit: c.commit, Index: r},
				Status: store.RunOK, Session: "s", CPU: -1, Values: vals}
			if err := st.PutRun(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	rounds := stored.InRounds([]int{1, 2, 3, 4, 5, 6, 7, 8})
	tab, err := stored.Table(context.Background(), st, "job", []stored.Source{
		{Commit: gitrev.Commit{Hash: a}, Round: rounds}, {Commit: gitrev.Commit{Hash: b}, Round: rounds},
	}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range tab.Rows {
		names = append(names, r.Metric)
		if r.KPI != (r.Metric == "ops") {
			t.Errorf("%s: KPI %v", r.Metric, r.KPI)
		}
		if r.Metric == "perf-profile.self.cpu-clock.cold" {
			base, cur := r.Cells[0].Summary, r.Cells[1].Summary
			if base.N != 8 || base.Mean != 0.25 || cur.N != 8 || cur.Mean != 0 {
				t.Errorf("cold: base %+v, changed %+v; want 8 runs each, means 0.25 and 0", base, cur)
			}
		}
	}
	if names[0] != "ops" {
		t.Errorf("rows %v: the job's metric is not first", names)
	}
	// hot_spin's share rose in every pair, significantly: a monitor's
	// change is reported, never a regression of the job.
	if reg, _ := tab.Regressions(); reg != 0 {
		t.Errorf("%d regressions counted; want 0 (only the job's metric gates, and it did not change)", reg)
	}
	var out bytes.Buffer
	if err := report.WriteNCompare(&out, tab, report.Options{All: true}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	iOps, iHot := strings.Index(text, "  ops\n"), strings.Index(text, "perf-profile.self.cpu-clock.hot_spin\n")
	if iOps < 0 || iHot < 0 || iHot < iOps {
		t.Errorf("the table does not show the profile's row after the job's metric:\n%s", text)
	}
	// In points, as lkp shows a profile's shares.
	if !strings.Contains(text, "60.45           +30.0       90.45        perf-profile.self.cpu-clock.hot_spin") {
		t.Errorf("hot_spin's change is not shown:\n%s", text)
	}
	t.Logf("\n%s", text)
}
