package monitor

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
)

// TestPerfStat: perf stat wraps a real run, inside perf record when both
// are on; on a machine without hardware counters the software events are
// counted and the note says what is not.
func TestPerfStat(t *testing.T) {
	s := prepare(t, []job.Monitor{
		{Name: "perf-profile", Event: "auto"},
		{Name: "perf-stat", Events: []string{"task-clock", "context-switches", "page-faults", "cycles"}},
	})
	dir := t.TempDir()
	buildBench(t, dir)
	res, vals := monitored(t, s, dir, "./bench 1000")
	if v := vals["perf-stat.total.task-clock"]; v.Unit != "msec" || v.Value < 0.5*1000*res.Usage.Wall.Seconds() {
		t.Errorf("task-clock %+v, over a run of %v", v, res.Usage.Wall)
	}
	if _, ok := vals["perf-stat.total.page-faults"]; !ok {
		t.Errorf("no page faults counted: %v", names(vals))
	}
	ev := strings.ReplaceAll(s.Event(), ":", "-")
	if vals["perf-profile.self."+ev+".hot_spin"].Value < 50 {
		t.Errorf("no profile beside perf stat: %v", names(vals))
	}
	if machine.hardwareCounters(s.perf).ok {
		if vals["perf-stat.total.cycles"].Value <= 0 {
			t.Errorf("cycles not counted: %v", names(vals))
		}
		return
	}
	if _, ok := vals["perf-stat.total.cycles"]; ok {
		t.Error("cycles counted without hardware counters")
	}
	if len(s.Notes()) != 1 || !strings.Contains(s.Notes()[0], "cycles not counted") {
		t.Errorf("notes %q", s.Notes())
	}
}

// TestReadStat reads perf stat output of a machine with counters, and
// derives lkp's overall figures.
func TestReadStat(t *testing.T) {
	dir := t.TempDir()
	out := `# started on Tue Dec  1 11:39:35 2026

1000000,,cpu-cycles,490692,100.00,,
2500000,,instructions,490692,100.00,2.50,insn per cycle
400,,cache-misses,490692,100.00,,
2000,,cache-references,490692,100.00,,
100,,branch-misses,490692,100.00,,
1000,,branch-instructions,490692,100.00,,
300,,dTLB-load-misses,490692,100.00,,
2700,,dTLB-loads,490692,100.00,,
0.49,msec,task-clock,490692,100.00,0.605,CPUs utilized
<not counted>,,major-faults,0,100.00,,
`
	if err := os.WriteFile(filepath.Join(dir, StatFile), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	vals, notes, err := readStat(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]metric.Value{}
	for _, v := range vals {
		got[v.Name] = v
	}
	for name, want := range map[string]float64{
		"perf-stat.total.cpu-cycles":          1e6,
		"perf-stat.total.task-clock":          0.49,
		"perf-stat.overall.ipc":               2.5,
		"perf-stat.overall.cpi":               0.4,
		"perf-stat.overall.cache-miss-rate%":  20,
		"perf-stat.overall.branch-miss-rate%": 10, // 100 of 900+100, lkp's rule
		"perf-stat.total.cache-references":    2000,
		"perf-stat.total.instructions":        2.5e6,
		"perf-stat.total.branch-instructions": 1000,
		"perf-stat.total.branch-misses":       100,
		"perf-stat.total.cache-misses":        400,
	} {
		if v, ok := got[name]; !ok || math.Abs(v.Value-want) > 1e-9 {
			t.Errorf("%s = %+v, want %v", name, v, want)
		}
	}
	if got["perf-stat.overall.ipc"].Better != metric.HigherIsBetter {
		t.Error("ipc: lower is better?")
	}
	if len(got) != 14 {
		t.Errorf("%d figures: %v", len(got), got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "major-faults: <not counted>") {
		t.Errorf("notes %q", notes)
	}
}
