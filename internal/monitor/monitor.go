// Package monitor runs a job's monitors (lkp's word) beside each measured
// run and reads their figures, stored with the run's own metrics under
// lkp's names but never counted as the job's metrics (metric.IsMonitor):
//
//   - perf-profile: the run under perf record (cycles where the machine
//     has hardware counters, cpu-clock where not; call graphs optional):
//     perf-profile.self.<event>.<symbol> and, with call graphs,
//     perf-profile.children.<event>.<symbol>, in percent of the samples.
//     perf.data and its report (perf-profile.txt) stay in the run's log
//     folder; [Profile] reads the report back.
//   - perf-stat: the run under perf stat: perf-stat.total.<event> and
//     lkp's derived perf-stat.overall.* figures. Hardware events are
//     counted only where the machine has counters (a note says so).
//   - vmstat, meminfo, interrupts: the change of each field of
//     /proc/vmstat, /proc/meminfo and /proc/interrupts over the run.
//
// The perf monitors wrap the benchmark (run.Spec.Wrap): the run's wall
// and CPU times stay the benchmark's, without perf's own start and end.
// See docs/monitors.md for the design and the measured overhead.
package monitor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
)

// LogFile, in a run's log folder, holds what the monitors could not do for
// the run (never a reason to fail it) and the notes of Set.Notes.
const LogFile = "monitors.log"

// Set is a job's monitors, ready to run on this machine.
type Set struct {
	perf    string       // perf's path, when a perf monitor is on
	profile *perfProfile // nil: perf-profile off
	event   string       // the event perf-profile records
	stat    []string     // the events perf-stat counts; nil: perf-stat off or nothing to count
	proc    []procMonitor
	notes   []string
}

// Prepare checks that this machine can run the monitors and finds out how
// (which event perf-profile samples, which events perf-stat counts); what
// it finds about the machine is kept for the process's later calls. A
// machine without perf, or whose perf cannot record the event asked for,
// is an error; hardware counters perf-stat cannot have are a note.
func Prepare(ms []job.Monitor) (*Set, error) {
	return machine.prepare(ms)
}

func (d *detector) prepare(ms []job.Monitor) (*Set, error) {
	s := &Set{}
	for _, m := range ms {
		if p, ok := procMonitors[m.Name]; ok {
			s.proc = append(s.proc, p)
			continue
		}
		if !m.Wraps() {
			return nil, fmt.Errorf("monitor %q: unknown", m.Name)
		}
		perf, err := d.perfPath()
		if err != nil {
			return nil, fmt.Errorf("monitor %s: %w", m.Name, err)
		}
		s.perf = perf
		switch m.Name {
		case job.MonitorPerfProfile:
			ev, err := d.profileEvent(perf, m.Event)
			if err != nil {
				return nil, fmt.Errorf("monitor perf-profile: %w", err)
			}
			s.profile, s.event = &perfProfile{CallGraph: m.CallGraph, Freq: m.Freq}, ev
		case job.MonitorPerfStat:
			keep, note := statEvents(m.Events, d.hardwareCounters(perf))
			if note != "" {
				s.notes = append(s.notes, note)
			}
			s.stat = keep
		}
	}
	return s, nil
}

// Notes are what the user should know of the monitors on this machine,
// such as the hardware events perf-stat cannot count.
func (s *Set) Notes() []string { return s.notes }

// Event is the event perf-profile samples ("" when it is off).
func (s *Set) Event() string { return s.event }

// Run is the monitors of one run.
type Run struct {
	set    *Set
	dir    string
	fifos  string                 // a temporary folder for the perf control FIFOs
	before []map[string]procField // by s.proc
	errs   []string
}

// Start begins the monitors of a run whose logs go to dir (an existing
// folder): it makes the perf monitors' control FIFOs and reads the /proc
// files. Call it just before the run, and Finish after it.
func (s *Set) Start(dir string) (*Run, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	r := &Run{set: s, dir: dir, before: make([]map[string]procField, len(s.proc))}
	if s.profile != nil || len(s.stat) > 0 {
		var err error
		if r.fifos, err = os.MkdirTemp("", "perfbot-monitor-"); err != nil {
			return nil, err
		}
		for _, f := range []string{"record.ctl", "record.ack", "stat.ctl", "stat.ack"} {
			if err := unix.Mkfifo(filepath.Join(r.fifos, f), 0o600); err != nil {
				os.RemoveAll(r.fifos)
				return nil, fmt.Errorf("monitors: control FIFO: %w", err)
			}
		}
	}
	for i, p := range s.proc {
		snap, err := p.snapshot()
		if err != nil {
			r.errs = append(r.errs, err.Error())
		}
		r.before[i] = snap
	}
	return r, nil
}

// Wrap is the command line the run's sh is to run under (run.Spec.Wrap),
// nil when no monitor wraps it: perf record, then perf stat.
func (r *Run) Wrap() []string {
	var w []string
	if r.set.profile != nil {
		w = append(w, recordArgs(r.set.perf, r.set.event, *r.set.profile, r.dir, r.fifo("record.ctl"), r.fifo("record.ack"))...)
	}
	if len(r.set.stat) > 0 {
		w = append(w, statArgs(r.set.perf, r.set.stat, r.dir, r.fifo("stat.ctl"), r.fifo("stat.ack"))...)
	}
	return w
}

// Control is the wrapper's control FIFOs (run.Spec.WrapControl): perf
// record and perf stat start with their events disabled, and the run's
// timer enables them just while the benchmark runs.
func (r *Run) Control() []string {
	var c []string
	if r.set.profile != nil {
		c = append(c, r.fifo("record.ctl"), r.fifo("record.ack"))
	}
	if len(r.set.stat) > 0 {
		c = append(c, r.fifo("stat.ctl"), r.fifo("stat.ack"))
	}
	return c
}

func (r *Run) fifo(name string) string { return filepath.Join(r.fifos, name) }

// Finish ends the monitors of a run and, when read is set (not for
// warm-ups), reads their figures: the /proc deltas, perf report of the
// profile (which it writes to the log folder as ProfileFile) and perf
// stat's counts. What fails is written to the run's LogFile, with the
// notes, and left out; it never fails the run.
func (r *Run) Finish(ctx context.Context, read bool) []metric.Value {
	if r.fifos != "" {
		os.RemoveAll(r.fifos)
	}
	if !read {
		return nil
	}
	var vals []metric.Value
	for i, p := range r.set.proc {
		after, err := p.snapshot()
		if err != nil {
			r.errs = append(r.errs, err.Error())
			continue
		}
		if r.before[i] != nil {
			vals = append(vals, p.deltas(r.before[i], after)...)
		}
	}
	if r.set.profile != nil {
		v, err := report(ctx, r.set.perf, r.dir, r.set.profile.CallGraph)
		if err != nil {
			r.errs = append(r.errs, "perf-profile: "+err.Error())
		}
		vals = append(vals, v...)
	}
	if len(r.set.stat) > 0 {
		v, notes, err := readStat(r.dir)
		if err != nil {
			r.errs = append(r.errs, "perf-stat: "+err.Error())
		}
		r.errs = append(r.errs, notes...)
		vals = append(vals, v...)
	}
	if lines := append(append([]string{}, r.set.notes...), r.errs...); len(lines) > 0 {
		_ = os.WriteFile(filepath.Join(r.dir, LogFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	}
	return vals
}
