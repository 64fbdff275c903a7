package monitor

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
)

// A /proc monitor reads one file before and after the run and stores the
// difference of each of its fields: system-wide figures (every CPU, every
// process), taken around the run's supervisor.
type procMonitor struct {
	name string // the monitor's name, and its figures' prefix
	path string
	// parse reads the file's fields: name, value and unit.
	parse func(data string) []procField
}

type procField struct {
	name  string
	value float64
	unit  string
}

var procMonitors = map[string]procMonitor{
	job.MonitorVMStat:     {job.MonitorVMStat, "/proc/vmstat", parseVMStat},
	job.MonitorMemInfo:    {job.MonitorMemInfo, "/proc/meminfo", parseMemInfo},
	job.MonitorInterrupts: {job.MonitorInterrupts, "/proc/interrupts", parseInterrupts},
}

// snapshot reads the monitor's file.
func (p procMonitor) snapshot() (map[string]procField, error) {
	b, err := os.ReadFile(p.path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	m := map[string]procField{}
	for _, f := range p.parse(string(b)) {
		m[f.name] = f
	}
	return m, nil
}

// deltas returns after - before of every field found in both, as
// <monitor>.<field>, in name order.
func (p procMonitor) deltas(before, after map[string]procField) []metric.Value {
	names := make([]string, 0, len(after))
	for n := range after {
		if _, ok := before[n]; ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]metric.Value, len(names))
	for i, n := range names {
		out[i] = metric.Value{Name: p.name + "." + n, Unit: after[n].unit, Better: metric.LowerIsBetter,
			Value: after[n].value - before[n].value}
	}
	return out
}

// parseVMStat reads "name value" lines.
func parseVMStat(s string) []procField {
	var out []procField
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out = append(out, procField{f[0], v, ""})
		}
	}
	return out
}

// parseMemInfo reads "Name:   value [kB]" lines; kB values are in KiB.
func parseMemInfo(s string) []procField {
	var out []procField
	for _, line := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(line, ":")
		f := strings.Fields(rest)
		if !ok || len(f) == 0 || len(f) > 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		unit := ""
		if len(f) == 2 && f[1] == "kB" {
			unit = "KiB"
		}
		out = append(out, procField{strings.TrimSpace(name), v, unit})
	}
	return out
}

// parseInterrupts reads /proc/interrupts: one figure per interrupt, the
// sum over the CPUs, named as lkp's stats/interrupts names it: numbered
// interrupts "<irq>:<description words joined by '.'>" ("24:PCI-MSI.
// 49152-edge.virtio0-config"), named ones "<NAME>:<words joined by '_'>"
// ("LOC:Local_timer_interrupts"), and "ERR" and "MIS".
func parseInterrupts(s string) []procField {
	lines := strings.Split(s, "\n")
	if len(lines) == 0 {
		return nil
	}
	cpus := len(strings.Fields(lines[0]))
	var out []procField
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasSuffix(f[0], ":") {
			continue
		}
		irq := strings.TrimSuffix(f[0], ":")
		if len(f) == 2 { // ERR: 0
			if v, err := strconv.ParseFloat(f[1], 64); err == nil {
				out = append(out, procField{irq, v, ""})
			}
			continue
		}
		n := min(cpus, len(f)-1)
		sum := 0.0
		ok := true
		for _, c := range f[1 : 1+n] {
			v, err := strconv.ParseFloat(c, 64)
			if err != nil {
				ok = false
				break
			}
			sum += v
		}
		if !ok {
			continue
		}
		desc := f[1+n:]
		sep := "_"
		if _, err := strconv.Atoi(irq); err == nil {
			sep = "."
		}
		name := irq + ":" + strings.ReplaceAll(strings.Join(desc, sep), ",.", ",")
		out = append(out, procField{name, sum, ""})
	}
	return out
}
