// Instruction counts (the job's `builtin: instructions`): which counter
// this machine uses, and the count in a timed run's record.

package measure

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/store"
)

// ValgrindPackage is the Debian package that installs valgrind.
const ValgrindPackage = "valgrind"

// perfInstructions is the event perf counts for the instructions metric:
// user-space instructions retired, so that the kernel's work on the run's
// behalf (page faults, I/O), which varies from run to run, is not in it.
const perfInstructions = "instructions:u"

// instructionSpec returns the job's instructions metric, nil when it has
// none.
func instructionSpec(j *job.Job) *metric.Spec {
	for i := range j.Metrics {
		if j.Metrics[i].IsInstructions() {
			return &j.Metrics[i]
		}
	}
	return nil
}

// counterProbe finds out, once per process, whether this machine's perf
// counts instructions and where valgrind is.
type counterProbe struct {
	mu       sync.Mutex
	done     bool
	perf     string // perf's path when it counts instructions:u here
	perfNote string // why not, in perf's words
	valgrind string // valgrind's path, "" when not installed
}

var counters = &counterProbe{}

func (p *counterProbe) probe() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	if v, err := exec.LookPath("valgrind"); err == nil {
		p.valgrind = v
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		p.perfNote = "perf is not installed"
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, perf, "stat", "-x,", "-e", perfInstructions, "true").CombinedOutput()
	if err != nil {
		p.perfNote = fmt.Sprintf("perf stat -e %s true fails: %v: %s", perfInstructions, err, strings.TrimSpace(string(out)))
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, ",")
		if len(f) >= 3 && f[2] == perfInstructions {
			if strings.HasPrefix(f[0], "<") {
				p.perfNote = fmt.Sprintf("perf stat -e %s says %s (no hardware counters: a VM or a container without a PMU)", perfInstructions, f[0])
				return
			}
			p.perf = perf
			return
		}
	}
	p.perfNote = fmt.Sprintf("perf stat -e %s true printed no count", perfInstructions)
}

// ErrNoCounter is wrapped by the error of a job whose instructions metric
// this machine cannot count.
var ErrNoCounter = errors.New("no instruction counter")

// ResolveCounter says which counter counts instructions on this machine
// for a spec's counter: auto is perf where perf counts instructions:u
// here, else callgrind. A counter this machine lacks is an error that
// says why and what to install.
func ResolveCounter(want metric.Counter) (metric.Counter, error) {
	counters.probe()
	p := counters
	switch want {
	case metric.CounterPerf:
		if p.perf == "" {
			return "", fmt.Errorf("%w: counter perf: %s; use counter: callgrind (package %s) on this machine", ErrNoCounter, p.perfNote, ValgrindPackage)
		}
		return metric.CounterPerf, nil
	case metric.CounterCallgrind:
		if p.valgrind == "" {
			return "", fmt.Errorf("%w: counter callgrind: valgrind is not installed (Debian package %s)", ErrNoCounter, ValgrindPackage)
		}
		return metric.CounterCallgrind, nil
	case metric.CounterAuto, "":
		if p.perf != "" {
			return metric.CounterPerf, nil
		}
		if p.valgrind != "" {
			return metric.CounterCallgrind, nil
		}
		return "", fmt.Errorf("%w: counter auto: %s, and valgrind is not installed (Debian package %s)", ErrNoCounter, p.perfNote, ValgrindPackage)
	}
	return "", fmt.Errorf("%w: unknown counter %q", ErrNoCounter, want)
}

// perfMonitors are the monitors of a run that counts instructions with
// perf: the job's, with instructions:u added to its perf-stat monitor (or
// a perf-stat monitor of that event alone). added says whether the job's
// own monitors lacked the event, so that its figure is not stored as a
// monitor's too.
func perfMonitors(ms []job.Monitor) (out []job.Monitor, added bool) {
	out = make([]job.Monitor, 0, len(ms)+1)
	found := false
	for _, m := range ms {
		if m.Name == job.MonitorPerfStat {
			found = true
			if !slices.Contains(m.Events, perfInstructions) {
				m.Events = append(append([]string{}, m.Events...), perfInstructions)
				added = true
			}
		}
		out = append(out, m)
	}
	if !found {
		out = append(out, job.Monitor{Name: job.MonitorPerfStat, Events: []string{perfInstructions}})
		added = true
	}
	return out, added
}

// perfCount takes perf stat's count of instructions:u out of a run's
// monitor figures (out of them when the job's monitors did not ask for
// it), 0 when perf did not count it.
func perfCount(vals []metric.Value, added bool) (float64, []metric.Value) {
	const name = "perf-stat.total." + perfInstructions
	var n float64
	kept := vals[:0:0]
	for _, v := range vals {
		if v.Name == name {
			n = v.Value
			if added {
				continue
			}
		}
		kept = append(kept, v)
	}
	return n, kept
}

// withInstructions adds the build's instruction count, taken by callgrind
// in runs of its own (countInstructions), to a successful timed run of
// target i: the count of a deterministic program is the count of every
// run of it, so that compare and the gate pair it round by round like any
// metric. A timed run is never run under callgrind.
func (m *measurement) withInstructions(i int, rec *store.RunRecord) {
	if m.instr == nil || m.instr[i] <= 0 || rec.Status != store.RunOK {
		return
	}
	s := instructionSpec(m.j)
	rec.Values = append(rec.Values, metric.Value{Name: s.InstructionsName(), Unit: metric.UnitInstructions, Better: metric.LowerIsBetter, Value: m.instr[i]})
}

// runCounter is the counter of the job's instructions metric on this
// machine ("" when the job has none).
func runCounter(j *job.Job) (metric.Counter, error) {
	s := instructionSpec(j)
	if s == nil {
		return "", nil
	}
	c, err := ResolveCounter(s.Counter)
	if err != nil {
		return "", fmt.Errorf("%s: metric %s: %w", j.File, s.InstructionsName(), err)
	}
	return c, nil
}
