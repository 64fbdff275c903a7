package measure

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/monitor"
	"github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/testutil"
)

// timedC spends its time in hot_spin and times its own work, as a job's
// metric would.
const timedC = `
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
__attribute__((noinline)) unsigned long hot_spin(unsigned long x) {
	for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ul + 1;
	return x;
}
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	struct timespec a, b;
	unsigned long s = 0;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n * 100; i++) s = hot_spin(s + i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("work_ms: %.3f\nsum: %lu\n", (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6, s);
	return 0;
}
`

// overheadConfigs are the monitor sets TestOverhead compares with none.
var overheadConfigs = []struct {
	name string
	ms   []job.Monitor
}{
	{"none", nil},
	{"none, again (noise)", nil},
	{"vmstat+meminfo+interrupts", []job.Monitor{{Name: "vmstat"}, {Name: "meminfo"}, {Name: "interrupts"}}},
	{"perf-profile", []job.Monitor{{Name: "perf-profile", Event: "auto", Freq: job.DefaultProfileFreq}}},
	{"perf-profile freq 4000", []job.Monitor{{Name: "perf-profile", Event: "auto", Freq: 4000}}},
	{"perf-profile callgraph", []job.Monitor{{Name: "perf-profile", Event: "auto", Freq: job.DefaultProfileFreq, CallGraph: true}}},
	{"perf-stat", []job.Monitor{{Name: "perf-stat", Events: job.DefaultPerfStatEvents}}},
	{"all five", []job.Monitor{{Name: "perf-profile", Event: "auto", Freq: job.DefaultProfileFreq, CallGraph: true},
		{Name: "perf-stat", Events: job.DefaultPerfStatEvents}, {Name: "vmstat"}, {Name: "meminfo"}, {Name: "interrupts"}}},
}

// overheadSample is what one run under one configuration cost.
type overheadSample struct {
	work    float64 // the benchmark's own timing of its work, ms
	elapsed float64 // time.elapsed_time (sh alone, as the timer measures it), ms
	wrapper float64 // the run's wall time, perf's start and end included, ms
	finish  float64 // reading the figures afterwards (perf report ...), ms
	total   float64 // from Start to the end of Finish, ms
}

var workMS = regexp.MustCompile(`work_ms: ([0-9.]+)`)

// TestMonitorOverhead measures what each monitor costs a short benchmark,
// side by side: rounds of one run under each configuration, in a random
// order, pinned to the quietest CPU, holding the machine's measuring lock
// as perfbot does; each figure is the median over the rounds of its ratio
// to the run without monitors of the same round. It is for
// docs/monitors.md, not for CI:
//
//	PERFBOT_MONITOR_OVERHEAD=1 go test -run TestMonitorOverhead -v ./internal/measure
//
// PERFBOT_MONITOR_ROUNDS sets the rounds (default 20), PERFBOT_MONITOR_N
// the benchmark's work (default 2000: about 0.2 s).
func TestMonitorOverhead(t *testing.T) {
	if os.Getenv("PERFBOT_MONITOR_OVERHEAD") == "" {
		t.Skip("set PERFBOT_MONITOR_OVERHEAD=1 to measure the monitors' overhead")
	}
	testutil.NeedTool(t, "gcc", "perf")
	rounds, n := envInt("PERFBOT_MONITOR_ROUNDS", 20), envInt("PERFBOT_MONITOR_N", 2000)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bench.c"), []byte(timedC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O2", "-fno-omit-frame-pointer", "-o", filepath.Join(dir, "bench"), filepath.Join(dir, "bench.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	release, err := LockMachine(context.Background(), func(h string) { t.Logf("waiting for %s", h) })
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	sets := make([]*monitor.Set, len(overheadConfigs))
	for i, c := range overheadConfigs {
		s, err := monitor.Prepare(c.ms)
		if err != nil {
			testutil.SkipIncapable(t, "%s: %v", c.name, err)
		}
		sets[i] = s
	}
	cal, err := run.Calibrate(context.Background(), run.Allowed(), run.CalibrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cpu := cal.Quietest()
	rng := rand.New(rand.NewSource(1))
	samples := make([][]overheadSample, len(sets))
	for r := 0; r < rounds+1; r++ { // round 0 warms up
		for _, i := range rng.Perm(len(sets)) {
			s := overheadRun(t, sets[i], dir, fmt.Sprintf("./bench %d", n), cpu)
			if r > 0 {
				samples[i] = append(samples[i], s)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rounds, ./bench %d pinned to CPU %d (perf-profile samples %s); medians, and in () the median ratio to no monitors in the same round\n",
		rounds, n, cpu, sets[3].Event())
	fmt.Fprintf(&b, "%-27s %16s %16s %16s %16s %16s\n", "monitors", "work_ms", "elapsed_time ms", "run wall ms", "read after ms", "whole run ms")
	for i, c := range overheadConfigs {
		fmt.Fprintf(&b, "%-27s", c.name)
		for col, f := range []func(overheadSample) float64{
			func(s overheadSample) float64 { return s.work }, func(s overheadSample) float64 { return s.elapsed },
			func(s overheadSample) float64 { return s.wrapper }, func(s overheadSample) float64 { return s.finish },
			func(s overheadSample) float64 { return s.total },
		} {
			var xs, ratios []float64
			for k, s := range samples[i] {
				xs = append(xs, f(s))
				if base := f(samples[0][k]); base > 0 {
					ratios = append(ratios, f(s)/base)
				}
			}
			cell := fmt.Sprintf("%.1f", median(xs))
			if i > 0 && len(ratios) > 0 && col != 3 { // no ratio to the 0 ms of reading nothing
				cell += fmt.Sprintf(" (%.3f)", median(ratios))
			}
			fmt.Fprintf(&b, " %16s", cell)
		}
		b.WriteString("\n")
	}
	t.Logf("\n%s", b.String())
}

func overheadRun(t *testing.T, s *monitor.Set, dir, command string, cpu int) overheadSample {
	logs := t.TempDir()
	t0 := time.Now()
	mon, err := s.Start(logs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Exec(context.Background(), run.Spec{Command: command, Dir: dir, CPU: cpu, Wrap: mon.Wrap(),
		WrapControl: mon.Control(), StdoutPath: filepath.Join(logs, "stdout"), StderrPath: filepath.Join(logs, "stderr")})
	if err != nil || res.ExitCode != 0 || res.WrapperFailed {
		t.Fatalf("%s: %+v %v", command, res, err)
	}
	t1 := time.Now()
	mon.Finish(context.Background(), true)
	t2 := time.Now()
	out, _ := os.ReadFile(filepath.Join(logs, "stdout"))
	m := workMS.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no work_ms in %q", out)
	}
	work, _ := strconv.ParseFloat(string(m[1]), 64)
	wrapper := res.WrapperWall
	if wrapper == 0 {
		wrapper = res.Usage.Wall
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return overheadSample{work: work, elapsed: ms(res.Usage.Wall), wrapper: ms(wrapper), finish: ms(t2.Sub(t1)), total: ms(t2.Sub(t0))}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
