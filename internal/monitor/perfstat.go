package monitor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/internal/metric"
)

// softwareEvents are the perf events the kernel counts without hardware
// counters (perf list sw), with their aliases.
var softwareEvents = []string{
	"cpu-clock", "task-clock", "page-faults", "faults", "minor-faults", "major-faults",
	"context-switches", "cs", "cpu-migrations", "migrations", "alignment-faults",
	"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
}

// isSoftware reports whether ev (with or without modifiers) is a software
// event; every other event needs hardware counters.
func isSoftware(ev string) bool {
	return slices.Contains(softwareEvents, eventBase(ev))
}

// statEvents returns the events perf-stat counts on this machine: all of
// them where it has hardware counters, else the software ones, with a
// note that names what is left out and why.
func statEvents(events []string, c counters) (keep []string, note string) {
	if c.ok {
		return events, ""
	}
	var dropped []string
	for _, ev := range events {
		if isSoftware(ev) {
			keep = append(keep, ev)
		} else {
			dropped = append(dropped, ev)
		}
	}
	if len(dropped) == 0 {
		return keep, ""
	}
	note = fmt.Sprintf("perf-stat: hardware counters are not supported on this machine (%s): %s not counted", c.note, strings.Join(dropped, ", "))
	if len(keep) == 0 {
		note += "; perf-stat does nothing here"
	} else {
		note += "; counting " + strings.Join(keep, ", ")
	}
	return keep, note
}

// statArgs is perf stat's command line, up to and with "--", with its
// control FIFOs ctl and ack (see run.Spec.WrapControl).
func statArgs(perf string, events []string, dir, ctl, ack string) []string {
	args := []string{perf, "stat", "-x,", "-D", "-1", "--control", "fifo:" + ctl + "," + ack, "-o", filepath.Join(dir, StatFile)}
	for _, ev := range events {
		args = append(args, "-e", ev)
	}
	return append(args, "--")
}

// readStat reads perf stat's -x, output: perf-stat.total.<event> for
// every counted event, and lkp's derived figures (stats/perf-stat):
// perf-stat.overall.ipc and .cpi, and perf-stat.overall.<stem>-miss-rate%
// for each <stem>-misses with its references, instructions or plain count.
// Events perf could not count are listed in notes.
func readStat(dir string) (vals []metric.Value, notes []string, err error) {
	b, err := os.ReadFile(filepath.Join(dir, StatFile))
	if err != nil {
		return nil, nil, err
	}
	totals := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if strings.HasPrefix(line, "#") || len(f) < 3 || f[2] == "" {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			notes = append(notes, fmt.Sprintf("perf-stat: %s: %s", f[2], f[0]))
			continue
		}
		totals[f[2]] = v
		vals = append(vals, metric.Value{Name: "perf-stat.total." + f[2], Unit: f[1], Better: metric.LowerIsBetter, Value: v})
	}
	return append(vals, derived(totals)...), notes, nil
}

// derived computes lkp's overall figures from the totals.
func derived(t map[string]float64) []metric.Value {
	var out []metric.Value
	var misses []string
	for k := range t {
		if strings.HasSuffix(k, "-misses") {
			misses = append(misses, k)
		}
	}
	sort.Strings(misses)
	for _, k := range misses {
		miss, stem := t[k], strings.TrimSuffix(k, "-misses")
		for _, sfx := range []string{"s", "-references", "-instructions"} {
			v := t[stem+sfx]
			if v == 0 {
				continue
			}
			total := v
			if sfx == "s" {
				total += miss
			}
			out = append(out, metric.Value{Name: "perf-stat.overall." + stem + "-miss-rate%", Unit: "%",
				Better: metric.LowerIsBetter, Value: 100 * miss / total})
			break
		}
	}
	cycles := t["cpu-cycles"]
	if cycles == 0 {
		cycles = t["cycles"]
	}
	if ins := t["instructions"]; cycles != 0 && ins != 0 {
		out = append(out,
			metric.Value{Name: "perf-stat.overall.ipc", Better: metric.HigherIsBetter, Value: ins / cycles},
			metric.Value{Name: "perf-stat.overall.cpi", Better: metric.LowerIsBetter, Value: cycles / ins})
	}
	return out
}
