package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/gate"
)

// machine is what the report says about the machine at one moment.
type machine struct {
	cpu, kernel, loadavg string
	load1                float64
	nproc                int
}

func machineNow() machine {
	m := machine{nproc: runtime.NumCPU(), cpu: "unknown CPU", kernel: "unknown kernel"}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.loadavg = strings.TrimSpace(string(b))
		if f := strings.Fields(m.loadavg); len(f) > 0 {
			m.load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = "Linux " + strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

func report(w io.Writer, o options, d gate.Design, b *bench, start, end machine, loads []float64, took time.Duration, scen []float64, ts map[float64]*tally) {
	fmt.Fprintf(w, "Machine: %s, %d CPUs (nproc), %s.\n", start.cpu, start.nproc, start.kernel)
	fmt.Fprintf(w, "Load: /proc/loadavg %q at the start, %q at the end; 1-minute load %.2f to %.2f over the study.\n",
		start.loadavg, end.loadavg, slices.Min(loads), slices.Max(loads))
	fmt.Fprintf(w, "Benchmark: gcc -O2, %d iterations of a dependent hash loop per run (about %g ms), timed in-process; a planted slowdown adds that percentage of iterations.\n", b.iters, o.runMs)
	fmt.Fprintf(w, "Gate: alpha %g, threshold %g %%, looks at %v pairs (at most %d runs of each revision); naive schemes: %d runs of each revision, base then head, Welch one-sided at %g, threshold %g %% on the means.\n",
		o.alpha, o.thresholdPct, d.Looks, o.maxRuns, o.naiveRuns, o.alpha, o.naivePct)
	fmt.Fprintf(w, "Took %s for %d benchmark runs.\n\n", took.Round(time.Second), b.runs)

	fmt.Fprintln(w, "| change | scheme | runs per gate (mean, both revisions) | flagged | rate [95 % Wilson] |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, p := range scen {
		t := ts[p]
		name := "A/A (none)"
		if p != 0 {
			name = fmt.Sprintf("+%g %% planted", p)
		}
		for _, s := range schemes {
			k := t.flagged[s]
			lo, hi := wilson(k, t.trials)
			fmt.Fprintf(w, "| %s | %s | %.1f | %d / %d | %.1f %% [%.1f, %.1f] |\n",
				name, s, float64(t.runs[s])/float64(t.trials), k, t.trials, 100*float64(k)/float64(t.trials), 100*lo, 100*hi)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| change | gate: inconclusive | pairs per gate: median, mean, max | wall per gate: median, mean, max |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, p := range scen {
		t := ts[p]
		name := "A/A (none)"
		if p != 0 {
			name = fmt.Sprintf("+%g %% planted", p)
		}
		pairs := slices.Clone(t.pairs)
		slices.Sort(pairs)
		wall := slices.Clone(t.wall)
		slices.Sort(wall)
		var sp int
		var sw time.Duration
		for i := range pairs {
			sp += pairs[i]
			sw += wall[i]
		}
		n := len(pairs)
		fmt.Fprintf(w, "| %s | %d / %d | %d, %.1f, %d | %s, %s, %s |\n", name, t.inconclusive, t.trials,
			pairs[n/2], float64(sp)/float64(n), pairs[n-1],
			ms(wall[n/2]), ms(sw/time.Duration(n)), ms(wall[n-1]))
	}
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }
