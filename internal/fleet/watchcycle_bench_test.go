package fleet_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/testutil"
)

// BenchmarkWatchCycle measures one watch cycle with its triage (a start
// commit, a planted 2x slowdown after it: measured, found, triaged, a
// real regression) run locally (perfbot watch --once) and on the fleet
// through 1 and 2 real workers (perfbot submit watch --once), side by
// side: each round runs the three on fresh histories, one after the
// other, and the log gives each one's wall time and stored runs, then the
// medians, the ratios to the local run and the machine's load. Run it
// with -benchtime 1x (each sub-benchmark is one cycle);
// PERFBOT_BENCH_ROUNDS sets the rounds (default 3):
//
//	go test ./internal/fleet -run '^$' -bench WatchCycle -benchtime 1x -v
func BenchmarkWatchCycle(b *testing.B) {
	rounds := 3
	if n, err := fmt.Sscan(os.Getenv("PERFBOT_BENCH_ROUNDS"), &rounds); n == 0 || err != nil {
		rounds = 3
	}
	modes := []string{"local", "fleet-1", "fleet-2"}
	wall := map[string][]float64{}
	runs := map[string][]float64{}
	missed := map[string]int{} // cycles whose measurement missed the slowdown (noise): not counted
	load0 := loadavg()
	for r := range rounds {
		for _, mode := range modes {
			b.Run(fmt.Sprintf("round%d/%s", r+1, mode), func(b *testing.B) {
				if b.N > 1 {
					b.Skip("one cycle per sub-benchmark: run with -benchtime 1x")
				}
				b.StopTimer()
				s, n, found := watchCycleOnce(b, mode)
				if !found {
					missed[mode]++
					return
				}
				b.ReportMetric(s, "wall-s")
				b.ReportMetric(float64(n), "runs")
				wall[mode] = append(wall[mode], s)
				runs[mode] = append(runs[mode], float64(n))
			})
		}
	}
	b.Logf("load average before %s, after %s (%d CPUs)", load0, loadavg(), numCPU())
	for _, mode := range modes {
		if len(wall[mode]) == 0 {
			continue
		}
		b.Logf("%-8s wall %v s, median %.1f s (x%.2f of local); runs %v, median %.0f; %d cycles missed the slowdown", mode, wall[mode], median(wall[mode]),
			median(wall[mode])/median(wall["local"]), runs[mode], median(runs[mode]), missed[mode])
	}
}

// watchCycleOnce runs one cycle of a fresh history in mode and returns
// its wall time in seconds and the runs it stored; found is false when
// the cycle ended without the slowdown a new real regression (its
// measurement's noise hid it: logged, not counted).
func watchCycleOnce(b *testing.B, mode string) (wall float64, runs int, found bool) {
	f := newFixture(b, 8, 200000)
	slow := f.repo.Commit("twice the work", map[string]string{"bench.c": testutil.BenchC(18, "v")})
	dir := filepath.Dir(f.spec.File)
	watchFile := filepath.Join(dir, "watch.yaml")
	if err := os.WriteFile(watchFile, []byte(fmt.Sprintf("class: test\njobs: [%s]\nbranches: [main]\nstart: %s\nreport: {dir: reports}\n",
		filepath.Base(f.spec.File), f.commits[1])), 0o644); err != nil {
		b.Fatal(err)
	}
	workers := map[string]int{"fleet-1": 1, "fleet-2": 2}[mode]
	for i := range workers {
		f.worker(b, fmt.Sprintf("w%d", i+1), i%2)
	}
	var code int
	var log string
	start := time.Now()
	b.StartTimer()
	if mode == "local" {
		bin, err := perfbotBinary()
		if err != nil {
			b.Fatal(err)
		}
		out, err := exec.Command(bin, "watch", "--once", watchFile).CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			b.Fatal(err)
		}
		code, log = exitCode(err), string(out)
	} else {
		code, log = submitWatch(b, f, watchFile)
	}
	b.StopTimer()
	s := time.Since(start).Seconds()
	if code == 2 {
		b.Fatalf("%s: exit 2:\n%s", mode, log)
	}
	if code != 1 || !strings.Contains(log, slow[:12]) {
		b.Logf("%s: exit %d, the slowdown %.12s not found (not counted)", mode, code, slow)
		return s, 0, false
	}
	var n int
	if mode == "local" {
		db, err := sql.Open("sqlite", filepath.Join(dir, ".perfbot", store.DBName))
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		if err := db.QueryRow(`SELECT count(*) FROM runs`).Scan(&n); err != nil {
			b.Fatal(err)
		}
	} else if err := f.pool.QueryRow(context.Background(), `SELECT count(*) FROM perfbot.runs`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return s, n, true
}

func exitCode(err error) int {
	if e, ok := err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	return 0
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func loadavg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func numCPU() int {
	data, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(data), "processor\t:")
}
