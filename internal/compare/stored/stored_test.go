package stored

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// put stores one run of metric x with value v.
func put(t *testing.T, st *store.Store, commit, variant, session string, idx int, status store.RunStatus, v float64) {
	t.Helper()
	rec := &store.RunRecord{RunKey: store.RunKey{Job: "job", Commit: commit, Variant: variant, Index: idx},
		Status: status, Session: session, CPU: -1, Reason: "boom"}
	if status == store.RunOK {
		rec.Values = []metric.Value{{Name: "x", Better: metric.LowerIsBetter, Value: v}}
	}
	if err := st.PutRun(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

// TestTablePairs: a table read from a real store pairs runs by
// session and round (issue 12: the pair key is explicit, not encoded in
// run numbers), keeps only the runs the sources select, and groups failed
// runs by status.
func TestTablePairs(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	// Session s1 took rounds 1..8 of both; run 4 of b failed. Session s0
	// took run 9 of a alone, which no source selects.
	for r := 1; r <= 8; r++ {
		put(t, st, a, "", "s1", r, store.RunOK, 100+float64(r))
		if r == 4 {
			put(t, st, b, "", "s1", r, store.RunCrashed, 0)
		} else {
			put(t, st, b, "", "s1", r, store.RunOK, 120+float64(r))
		}
	}
	put(t, st, a, "", "s0", 9, store.RunOK, 1000)
	rounds := []int{1, 2, 3, 4, 5, 6, 7, 8}
	tab, err := Table(context.Background(), st, "job", []Source{
		{Commit: gitrev.Commit{Hash: a}, Round: InRounds(rounds)},
		{Commit: gitrev.Commit{Hash: b}, Round: InRounds(rounds)},
	}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if c := tab.Columns[1]; c.Runs != 8 || c.Failed != 1 || len(c.Failures) != 1 || c.Failures[0].Count != 1 || c.Failures[0].Status != string(store.RunCrashed) {
		t.Errorf("column b: %+v; want 8 runs, 1 crashed", c)
	}
	row := tab.Rows[0]
	if n := len(row.Cells[0].Samples); n != 8 {
		t.Errorf("base has %d samples, want the 8 selected", n)
	}
	if d := row.Cells[1].Delta; d == nil || d.Stat.Test != "wilcoxon" || d.Stat.N != 7 {
		t.Errorf("delta %+v: want the signed-rank test on the 7 pairs of session s1", d)
	}

	// The same rounds taken in two sessions do not pair.
	c := strings.Repeat("c", 40)
	for r := 1; r <= 8; r++ {
		put(t, st, c, "", "s2", r, store.RunOK, 120+float64(r))
	}
	tab, err = Table(context.Background(), st, "job", []Source{
		{Commit: gitrev.Commit{Hash: a}, Round: InRounds(rounds)},
		{Commit: gitrev.Commit{Hash: c}, Round: InRounds(rounds)},
	}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if d := tab.Rows[0].Cells[1].Delta; d == nil || d.Stat.Test != "mann-whitney" {
		t.Errorf("runs of two sessions compared with %+v, want unpaired", d)
	}

	// Within numbers runs of two ranges alike: they pair.
	tab, err = Table(context.Background(), st, "job", []Source{
		{Commit: gitrev.Commit{Hash: a}, Round: Within(1, 7)},
		{Commit: gitrev.Commit{Hash: b}, Round: Within(2, 8)},
	}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if d := tab.Rows[0].Cells[1].Delta; d == nil || d.Stat.Test != "wilcoxon" {
		t.Errorf("Within ranges compared with %+v, want paired", d)
	}

	// A column without a successful run: an error, and the failures.
	tab, err = Table(context.Background(), st, "job", []Source{
		{Commit: gitrev.Commit{Hash: a}, Round: InRounds(rounds)},
		{Commit: gitrev.Commit{Hash: b}, Round: InRounds([]int{4})},
	}, 0.05)
	if err == nil || !strings.Contains(err.Error(), "no run succeeded for bbbbbbbbbbbb") || tab == nil || tab.Columns[1].Failed != 1 {
		t.Errorf("err %v, table %v: want an error naming the commit and the failures", err, tab)
	}
}

// TestTableMachines: the table says which machines took its runs, and
// when base and change ran on different machines (no run pairs), its
// warning names the machines, not another session.
func TestTableMachines(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	ctx := context.Background()
	for r := 1; r <= 8; r++ {
		for _, x := range []struct {
			commit, machine string
			v               float64
		}{{a, "m1", 100}, {b, "m2", 110}} {
			rec := &store.RunRecord{RunKey: store.RunKey{Job: "job", Commit: x.commit, Index: r}, Status: store.RunOK,
				Session: "s1", Machine: x.machine, CPU: -1,
				Values: []metric.Value{{Name: "x", Better: metric.LowerIsBetter, Value: x.v + float64(r)}}}
			if err := st.PutRun(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	rounds := InRounds([]int{1, 2, 3, 4, 5, 6, 7, 8})
	tab, err := Table(ctx, st, "job", []Source{{Commit: gitrev.Commit{Hash: a}, Round: rounds}, {Commit: gitrev.Commit{Hash: b}, Round: rounds}}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Machines(); len(got) != 2 || got[0] != "m1" || got[1] != "m2" {
		t.Errorf("Machines() = %v, want [m1 m2]", got)
	}
	if c := tab.Columns[0]; len(c.Machines) != 1 || c.Machines[0] != "m1" {
		t.Errorf("column a machines %v, want [m1]", c.Machines)
	}
	d := tab.Rows[0].Cells[1].Delta
	if d == nil || len(d.Stat.Warnings) == 0 || !strings.Contains(d.Stat.Warnings[0].Error(), "runs of different machines never pair: m1, m2") {
		t.Fatalf("delta %+v: want the unpaired warning to name the machines", d)
	}
}

// TestTableFleetLogs: a failed run a fleet worker took has its logs
// in the fleet's database, and the table says so instead of naming a
// local folder that does not exist.
func TestTableFleetLogs(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), ".perfbot"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := strings.Repeat("a", 40)
	ctx := context.Background()
	for r := 1; r <= 2; r++ {
		rec := &store.RunRecord{RunKey: store.RunKey{Job: "job", Commit: a, Index: r}, Status: store.RunCrashed, Reason: "boom",
			Session: "s1", Machine: "m1", CPU: -1, StdoutPath: "sha256:" + strings.Repeat("1", 64), StderrPath: "sha256:" + strings.Repeat("2", 64)}
		if err := st.PutRun(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	tab, _ := Table(ctx, st, "job", []Source{{Commit: gitrev.Commit{Hash: a}, Round: InRounds([]int{1, 2})}}, 0.05)
	if tab == nil || len(tab.Columns[0].Failures) != 1 || tab.Columns[0].Failures[0].LogDir != FleetLogs || tab.Columns[0].Failures[0].Count != 2 {
		t.Fatalf("table %+v: want one failure line of 2 runs with the fleet's logs", tab)
	}
}
