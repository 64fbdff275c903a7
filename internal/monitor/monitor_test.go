package monitor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/profile"
	"github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/testutil"
)

// benchC spends nearly all its time in hot_spin, called from main through
// middle.
const benchC = `
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) unsigned long hot_spin(unsigned long x) {
	for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ul + 1;
	return x;
}
__attribute__((noinline)) unsigned long middle(unsigned long x) {
	for (int i = 0; i < 100; i++) x = hot_spin(x);
	return x;
}
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	unsigned long s = 0;
	for (int i = 0; i < n; i++) s += middle(i);
	printf("sum: %lu\n", s);
	return 0;
}
`

// buildBench compiles benchC into dir and returns the binary's path.
func buildBench(t *testing.T, dir string) string {
	t.Helper()
	testutil.NeedTool(t, "gcc")
	src := filepath.Join(dir, "bench.c")
	if err := os.WriteFile(src, []byte(benchC), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bench")
	if out, err := exec.Command("gcc", "-O2", "-fno-omit-frame-pointer", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// prepare is Prepare, skipping the test where perf cannot record here.
func prepare(t *testing.T, ms []job.Monitor) *Set {
	t.Helper()
	for _, m := range ms {
		if m.Wraps() {
			testutil.NeedTool(t, "perf")
		}
	}
	s, err := Prepare(ms)
	if err != nil {
		if errors.Is(err, ErrNoPerf) {
			t.Fatal(err)
		}
		testutil.SkipIncapable(t, "%v", err)
	}
	return s
}

// monitored runs command in dir under the monitors and returns the run's
// result and the monitors' figures by name.
func monitored(t *testing.T, s *Set, dir, command string) (run.Result, map[string]metric.Value) {
	t.Helper()
	logs := t.TempDir()
	mon, err := s.Start(logs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Exec(context.Background(), run.Spec{Command: command, Dir: dir, CPU: -1, Wrap: mon.Wrap(),
		WrapControl: mon.Control(), StdoutPath: filepath.Join(logs, "stdout"), StderrPath: filepath.Join(logs, "stderr")})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.WrapperFailed {
		b, _ := os.ReadFile(filepath.Join(logs, "stderr"))
		t.Fatalf("%s: exit %d (wrapper failed: %v): %s", command, res.ExitCode, res.WrapperFailed, b)
	}
	vals := map[string]metric.Value{}
	for _, v := range mon.Finish(context.Background(), true) {
		if _, dup := vals[v.Name]; dup {
			t.Errorf("%s stored twice", v.Name)
		}
		vals[v.Name] = v
	}
	if b, err := os.ReadFile(filepath.Join(logs, LogFile)); err == nil {
		t.Logf("%s:\n%s", LogFile, b)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(logs, "stderr"))
			t.Logf("stderr: %s", b)
		}
	})
	return res, vals
}

// TestPerfProfile: perf record wraps a real benchmark; its hot function
// is named as lkp names it, with call graphs its callers' children shares
// too; the report stays in the log folder; the benchmark's wall time is
// its own, not perf's.
func TestPerfProfile(t *testing.T) {
	s := prepare(t, []job.Monitor{{Name: "perf-profile", Event: "auto", CallGraph: true}})
	dir := t.TempDir()
	buildBench(t, dir)
	res, vals := monitored(t, s, dir, "./bench 2000")
	ev := strings.ReplaceAll(s.Event(), ":", "-")
	if c := machine.hardwareCounters(s.perf); !c.ok && ev != "cpu-clock" {
		t.Errorf("event %s on a machine without hardware counters, want cpu-clock", ev)
	}
	// (Frame-pointer call chains skip the caller of a leaf sampled before
	// it set up its frame: main is the caller every chain has.)
	self, children := vals["perf-profile.self."+ev+".hot_spin"], vals["perf-profile.children."+ev+".main"]
	if self.Value < 50 || self.Unit != "%" {
		t.Errorf("self share of hot_spin = %+v, want most of the samples (in %%); figures: %v", self, names(vals))
	}
	if children.Value < self.Value-1 {
		t.Errorf("children share of main = %v, want at least hot_spin's %v", children.Value, self.Value)
	}
	for name, v := range vals {
		if !metric.IsMonitor(name) || v.Value < 100*profileMin || v.Value > 100 {
			t.Errorf("%s = %v", name, v.Value)
		}
	}
	// What perf itself costs (over 0.1 s to start and to write its data)
	// is not the benchmark's.
	if res.WrapperWall < res.Usage.Wall {
		t.Errorf("wall %v, wrapper's %v", res.Usage.Wall, res.WrapperWall)
	}
	t.Logf("benchmark %v, under perf record %v; %d figures", res.Usage.Wall, res.WrapperWall, len(vals))
}

// TestProfileFiles: the raw profile and its report stay in the log folder,
// and the report reads back as the figures were.
func TestProfileFiles(t *testing.T) {
	s := prepare(t, []job.Monitor{{Name: "perf-profile", Event: "cpu-clock"}})
	dir := t.TempDir()
	buildBench(t, dir)
	logs := t.TempDir()
	mon, err := s.Start(logs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Exec(context.Background(), run.Spec{Command: "./bench 1000", Dir: dir, CPU: -1, Wrap: mon.Wrap(),
		WrapControl: mon.Control(), StdoutPath: filepath.Join(logs, "stdout"), StderrPath: filepath.Join(logs, "stderr")})
	if err != nil || res.ExitCode != 0 {
		t.Fatal(res, err)
	}
	vals := mon.Finish(context.Background(), true)
	for _, f := range []string{PerfData, ProfileFile} {
		if _, err := os.Stat(filepath.Join(logs, f)); err != nil {
			t.Error(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(logs, "stderr")); len(b) != 0 {
		t.Errorf("perf wrote to the benchmark's stderr: %s", b)
	}
	h, err := profile.Read(filepath.Join(logs, ProfileFile))
	if err != nil {
		t.Fatal(err)
	}
	if top := h.Top(1); len(top) != 1 || top[0].Name != "hot_spin" || h.Children != nil {
		t.Errorf("report: top %+v, children %v", top, h.Children)
	}
	got := map[string]float64{}
	for _, v := range vals {
		got[v.Name] = v.Value
	}
	if want := 100 * h.Of("hot_spin"); got["perf-profile.self.cpu-clock.hot_spin"] != want {
		t.Errorf("stored %v, report %v", got["perf-profile.self.cpu-clock.hot_spin"], want)
	}
}

func names(vals map[string]metric.Value) []string {
	var out []string
	for n := range vals {
		out = append(out, n)
	}
	return out
}

// TestWrappedLikePlain: under perf record and perf stat the benchmark gets
// what it gets without them: environment, argv, directory, signal mask and
// dispositions, limits (perf itself gives its children blocked and
// ignored signals and a longer PATH; the timer between them undoes that).
func TestWrappedLikePlain(t *testing.T) {
	s := prepare(t, []job.Monitor{{Name: "perf-profile", Event: "cpu-clock"}, {Name: "perf-stat", Events: []string{"task-clock"}}})
	dir := t.TempDir()
	const command = `grep -E '^Sig(Blk|Ign)' /proc/self/status; ulimit -a; env | sort; pwd; echo "$0"`
	var outs []string
	for _, wrap := range []bool{false, true} {
		logs := t.TempDir()
		mon, err := s.Start(logs)
		if err != nil {
			t.Fatal(err)
		}
		spec := run.Spec{Command: command, Dir: dir, CPU: -1,
			StdoutPath: filepath.Join(logs, "stdout"), StderrPath: filepath.Join(logs, "stderr")}
		if wrap {
			spec.Wrap, spec.WrapControl = mon.Wrap(), mon.Control()
		}
		res, err := run.Exec(context.Background(), spec)
		mon.Finish(context.Background(), false)
		if err != nil || res.ExitCode != 0 || res.WrapperFailed {
			t.Fatalf("wrapped %v: %+v, %v", wrap, res, err)
		}
		b, _ := os.ReadFile(spec.StdoutPath)
		outs = append(outs, string(b))
	}
	if outs[0] != outs[1] {
		t.Errorf("under the monitors the benchmark sees\n%s\nwithout them\n%s", outs[1], outs[0])
	}
}
