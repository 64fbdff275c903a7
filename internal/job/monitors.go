package job

import (
	"fmt"
	"hash"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Monitor is one of the job's monitors (lkp's word): a figure recorded
// beside every measured run, stored under its own names and never counted
// as one of the job's metrics. Package monitor runs them; see
// docs/monitors.md.
//
//	monitors: [perf-profile, vmstat]             # default options
//	monitors:                                    # or with options
//	  perf-profile: {callgraph: true, event: auto, freq: 1000}
//	  perf-stat: {events: [cycles, instructions]}
//	  meminfo:
type Monitor struct {
	// Name is one of MonitorNames.
	Name string
	// CallGraph (perf-profile) records call chains (perf record -g), for
	// the perf-profile.children.* figures.
	CallGraph bool
	// Event (perf-profile) is the sampled event: "auto" (the default:
	// cycles where the machine has hardware counters, else cpu-clock),
	// cpu-clock, task-clock, cycles, cycles:p or cycles:pp.
	Event string
	// Freq (perf-profile) is the sampling frequency in Hz:
	// DefaultProfileFreq when the job file gives none (0 leaves perf's
	// own default, 4000 Hz).
	Freq int
	// Events (perf-stat) are the counted events; DefaultPerfStatEvents
	// when the job names none.
	Events []string
}

// The monitors a job may name.
const (
	MonitorPerfProfile = "perf-profile"
	MonitorPerfStat    = "perf-stat"
	MonitorVMStat      = "vmstat"
	MonitorMemInfo     = "meminfo"
	MonitorInterrupts  = "interrupts"
)

// MonitorNames lists the monitors, in the order they are described.
var MonitorNames = []string{MonitorPerfProfile, MonitorPerfStat, MonitorVMStat, MonitorMemInfo, MonitorInterrupts}

// DefaultPerfStatEvents are lkp's perf-stat events: hardware counters
// (counted where the machine has them) and software events.
var DefaultPerfStatEvents = []string{
	"cpu-cycles", "instructions", "cache-references", "cache-misses", "branch-instructions", "branch-misses",
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations", "minor-faults", "major-faults",
}

// DefaultProfileFreq is perf-profile's default sampling frequency, in Hz:
// a quarter of perf's own default (4000 Hz), which slows a benchmark by
// about 4 % where hardware counters are missing and perf samples with
// timer interrupts (cpu-clock); 1000 Hz costs about 1.3 % and still gives
// 200 samples to a 0.2 s run (docs/monitors.md).
const DefaultProfileFreq = 1000

// PerfProfileEvents are the values perf-profile's event option takes.
var PerfProfileEvents = []string{"auto", "cpu-clock", "task-clock", "cycles", "cycles:p", "cycles:pp"}

// monitorOptions are the options of each monitor.
var monitorOptions = map[string][]string{
	MonitorPerfProfile: {"callgraph", "event", "freq"},
	MonitorPerfStat:    {"events"},
}

// Wraps reports whether the monitor runs the benchmark under a program of
// its own (perf record, perf stat), which costs time in the measured run;
// the /proc readers read before and after the run and cost it nothing.
func (m Monitor) Wraps() bool {
	return m.Name == MonitorPerfProfile || m.Name == MonitorPerfStat
}

// Monitor returns the job's monitor of that name.
func (j *Job) Monitor(name string) (Monitor, bool) {
	for _, m := range j.Monitors {
		if m.Name == name {
			return m, true
		}
	}
	return Monitor{}, false
}

var perfEventName = regexp.MustCompile(`^[A-Za-z0-9_.:/=,-]+$`)

// monitors reads "monitors:": a list of names (each may be a one-key
// mapping of a name to its options) or a mapping of names to options.
func (p *parser) monitors(n *yaml.Node) []Monitor {
	type entry struct {
		name    string
		k, opts *yaml.Node
		field   string
	}
	var entries []entry
	switch n = resolve(n); n.Kind {
	case yaml.SequenceNode:
		for i, e := range n.Content {
			e = resolve(e)
			field := fmt.Sprintf("monitors[%d]", i)
			switch {
			case e.Kind == yaml.ScalarNode && e.Tag != "!!null":
				entries = append(entries, entry{e.Value, e, nil, field})
			case e.Kind == yaml.MappingNode && len(e.Content) == 2:
				for _, f := range p.fields(e, field, nil) {
					entries = append(entries, entry{f.key, f.k, f.v, field})
				}
			default:
				p.errorf(e, field, "expected a monitor name (%s), or a name with its options, got %s", strings.Join(MonitorNames, ", "), describe(e))
			}
		}
	case yaml.MappingNode:
		for _, f := range p.fields(n, "monitors", nil) {
			entries = append(entries, entry{f.key, f.k, f.v, "monitors"})
		}
	default:
		p.errorf(n, "monitors", "expected a list of monitors (%s) or a mapping of monitors to their options, got %s", strings.Join(MonitorNames, ", "), describe(n))
		return nil
	}
	var out []Monitor
	seen := map[string]bool{}
	for _, e := range entries {
		field := join(e.field, e.name)
		if !slices.Contains(MonitorNames, e.name) {
			msg := fmt.Sprintf("unknown monitor %q (known: %s)", e.name, strings.Join(MonitorNames, ", "))
			if s := suggestion(e.name, MonitorNames); s != "" {
				msg = fmt.Sprintf("unknown monitor %q (did you mean %q?)", e.name, s)
			}
			p.errorf(e.k, e.field, "%s", msg)
			continue
		}
		if seen[e.name] {
			p.errorf(e.k, field, "given twice")
			continue
		}
		seen[e.name] = true
		m := Monitor{Name: e.name}
		if m.Name == MonitorPerfProfile {
			m.Event, m.Freq = "auto", DefaultProfileFreq
		}
		if e.opts != nil && !(e.opts.Kind == yaml.ScalarNode && e.opts.Tag == "!!null") {
			p.monitorOptions(e.opts, field, &m)
		}
		if m.Name == MonitorPerfStat && m.Events == nil {
			m.Events = slices.Clone(DefaultPerfStatEvents)
		}
		out = append(out, m)
	}
	return out
}

// monitorOptions reads the options of one monitor into m.
func (p *parser) monitorOptions(n *yaml.Node, field string, m *Monitor) {
	known := monitorOptions[m.Name]
	if known == nil {
		p.errorf(n, field, "%s takes no options", m.Name)
		return
	}
	for _, f := range p.fields(n, field, known) {
		ff := join(field, f.key)
		switch f.key {
		case "callgraph":
			if f.v.Kind != yaml.ScalarNode || f.v.Tag != "!!bool" {
				p.errorf(f.v, ff, "expected true or false, got %s", describe(f.v))
				continue
			}
			m.CallGraph = f.v.Value == "true"
		case "event":
			if s, ok := p.str(f.v, ff); ok {
				if !slices.Contains(PerfProfileEvents, s) {
					p.errorf(f.v, ff, "want one of %s, got %q", strings.Join(PerfProfileEvents, ", "), s)
					continue
				}
				m.Event = s
			}
		case "freq":
			if hz, ok := p.int(f.v, ff); ok {
				if hz < 1 || hz > 100000 {
					p.errorf(f.v, ff, "a sampling frequency in Hz, 1 to 100000, got %d", hz)
					continue
				}
				m.Freq = hz
			}
		case "events":
			list, ok := p.strList(f.v, ff)
			if !ok {
				continue
			}
			if len(list) == 0 {
				p.errorf(f.v, ff, "an empty list counts nothing (leave events out for lkp's list)")
				continue
			}
			for i, ev := range list {
				if !perfEventName.MatchString(ev) {
					p.errorf(resolve(f.v.Content[i]), fmt.Sprintf("%s[%d]", ff, i), "%q is not a perf event name", ev)
				}
			}
			m.Events = list
		}
	}
}

// writeMonitors adds the monitors that run with the benchmark (perf-profile,
// perf-stat: see Monitor.Wraps) to a job key, and nothing at all when there
// are none, so that the key of a job without them is what it always was.
// The /proc readers are left out: they read before the run starts and after
// it ends, and change nothing in it.
func writeMonitors(h hash.Hash, ms []Monitor) {
	var wrapping []Monitor
	for _, m := range ms {
		if m.Wraps() {
			wrapping = append(wrapping, m)
		}
	}
	if len(wrapping) == 0 {
		return
	}
	slices.SortFunc(wrapping, func(a, b Monitor) int { return strings.Compare(a.Name, b.Name) })
	writeString(h, "monitors")
	writeInt(h, len(wrapping))
	for _, m := range wrapping {
		writeStrings(h, []string{m.Name, strconv.FormatBool(m.CallGraph), m.Event, strconv.Itoa(m.Freq)})
		writeStrings(h, m.Events)
	}
}
