package measure

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/monitor"
	"github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/version"
)

// Task is one run to take: the benchmark of Job on a built target.
type Task struct {
	Job     *job.Job
	Key     store.RunKey // Key.Index is the run number; ignored for warm-ups
	Variant job.Variant
	Build   *build.Result // the target's build: Build.Worktree holds its artifacts
	Session string        // the measurement the run belongs to
	// LogDir is an existing, empty folder for the run's stdout and stderr.
	LogDir string
	// Warmup marks a warm-up run: taken the same way, never stored.
	Warmup bool
}

// Executor takes runs. Execute runs one task and returns its record, a
// failed run (crash, timeout, missing metric) being a record too; it does
// not store it. Its error is for failures of the executor itself or an
// interruption (ctx), and then nothing of the run is kept.
//
// [Local] runs on this machine; a queue worker of a fleet is another
// executor of the same measuring path.
type Executor interface {
	Execute(ctx context.Context, t Task) (*store.RunRecord, error)
}

// Local runs benchmarks as processes on this machine (package run), pinned
// to CPU (-1: not pinned).
type Local struct {
	CPU int
	// Machine names this machine in the records (default: [MachineID]).
	Machine string
}

// Prepare checks that this machine can run the job's monitors (see
// Preparer).
func (l Local) Prepare(j *job.Job) ([]string, error) {
	set, err := monitor.Prepare(j.Monitors)
	if err != nil {
		return nil, err
	}
	return set.Notes(), nil
}

// Execute runs the task's benchmark once with its logs in t.LogDir, under
// the job's monitors, reads its metrics and the monitors' figures and
// classifies the result.
func (l Local) Execute(ctx context.Context, t Task) (*store.RunRecord, error) {
	j := t.Job
	ic, err := runCounter(j)
	if err != nil {
		return nil, err
	}
	monitors, addedEvent := j.Monitors, false
	if ic == metric.CounterPerf {
		monitors, addedEvent = perfMonitors(j.Monitors)
	}
	mons, err := monitor.Prepare(monitors)
	if err != nil {
		return nil, err
	}
	rec := &store.RunRecord{
		RunKey:     t.Key,
		Session:    t.Session,
		Machine:    l.Machine,
		Version:    version.Get().String(), // this perfbot takes the run, on a fleet's worker too
		CPU:        l.CPU,
		StdoutPath: filepath.Join(t.LogDir, "stdout"),
		StderrPath: filepath.Join(t.LogDir, "stderr"),
	}
	if rec.Machine == "" {
		rec.Machine = MachineID()
	}
	mon, err := mons.Start(t.LogDir)
	if err != nil {
		return nil, err
	}
	res, err := run.Exec(ctx, run.Spec{
		Wrap:        mon.Wrap(),
		WrapControl: mon.Control(),
		Command:     j.Run.Command,
		Dir:         t.Build.Worktree,
		Env:         build.Env(j, t.Key.Commit, t.Variant, j.Run.Env),
		Timeout:     j.Run.Timeout,
		CPU:         l.CPU,
		StdoutPath:  rec.StdoutPath,
		StderrPath:  rec.StderrPath,
	})
	// Monitors' figures: stored, shown after the job's metrics, never
	// counted as one of them; warm-ups are not read.
	monVals := mon.Finish(ctx, err == nil && ctx.Err() == nil && !t.Warmup)
	var counted float64
	if ic == metric.CounterPerf {
		counted, monVals = perfCount(monVals, addedEvent)
	}
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rec.Started = res.Started
	rec.Usage = res.Usage
	rec.ExitCode = res.ExitCode
	// The logs are on disk before the record that points at them.
	syncFile(rec.StdoutPath)
	syncFile(rec.StderrPath)
	stdout, _ := os.ReadFile(rec.StdoutPath)
	stderr, _ := os.ReadFile(rec.StderrPath)
	rec.Values = append(metric.Builtins(res.Usage), monVals...)

	switch {
	case res.WrapperFailed && !res.TimedOut:
		rec.Status = store.RunError
		rec.Reason = fmt.Sprintf("the monitors' %s ended without running the benchmark to its end: %s%s", filepath.Base(mon.Wrap()[0]), exitText(res), lastLine(stderr))
		return rec, nil
	case res.TimedOut:
		rec.Status = store.RunTimeout
		rec.Reason = fmt.Sprintf("timed out after %v", j.Run.Timeout)
		return rec, nil
	case res.Signal != "":
		rec.Status = store.RunCrashed
		rec.Reason = "killed by signal " + res.Signal + lastLine(stderr)
		return rec, nil
	case res.ExitCode != 0:
		rec.Status = store.RunCrashed
		rec.Reason = fmt.Sprintf("exit status %d%s", res.ExitCode, lastLine(stderr))
		return rec, nil
	}
	o := metric.Output{Stdout: stdout, Stderr: stderr, Dir: t.Build.Worktree, Usage: res.Usage, Instructions: counted}
	var missing []string
	for i := range j.Metrics {
		if j.Metrics[i].IsInstructions() && ic == metric.CounterCallgrind {
			continue // counted in runs of their own: see callgrind.go
		}
		vals, err := j.Metrics[i].Extract(o)
		if err != nil {
			missing = append(missing, err.Error())
			continue
		}
		rec.Values = append(rec.Values, vals...)
	}
	if len(missing) > 0 {
		rec.Status = store.RunNoMetric
		rec.Reason = storable(strings.Join(missing, "; "))
		return rec, nil
	}
	rec.Status = store.RunOK
	return rec, nil
}

// exitText says how a process ended.
func exitText(res run.Result) string {
	if res.Signal != "" {
		return "killed by signal " + res.Signal
	}
	return fmt.Sprintf("exit status %d", res.ExitCode)
}

// MachineID names this machine in stored runs: its hostname (runs of a
// fleet are told apart by it), "unknown" when it has none.
func MachineID() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}

// syncFile flushes a file to disk, best effort.
func syncFile(path string) {
	if f, err := os.Open(path); err == nil {
		_ = f.Sync()
		f.Close()
	}
}

// storable makes text from a benchmark's output storable: the store
// refuses invalid UTF-8 and NUL bytes (PostgreSQL's text cannot hold them),
// and a failed run must be kept, not lost over its reason.
func storable(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// lastLine returns "; stderr: <last non-empty line>" or "", storable.
func lastLine(b []byte) string {
	b = []byte(storable(string(b)))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if l == "" {
		return ""
	}
	if len(l) > 200 {
		// Cut on a character's boundary: half a UTF-8 sequence is
		// text the store refuses.
		cut := 200
		for cut > 0 && !utf8.RuneStart(l[cut]) {
			cut--
		}
		l = l[:cut] + "..."
	}
	return "; stderr: " + l
}

// DescribeMachine describes this machine for reports: the number of CPUs,
// the CPU model, and the CPU runs are pinned to (cpu < 0: none).
func DescribeMachine(cpu int) string {
	model := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	s := fmt.Sprintf("%d CPUs", runtime.NumCPU())
	if model != "" {
		s += " " + model
	}
	if cpu >= 0 {
		s += fmt.Sprintf(", runs pinned to CPU %d", cpu)
	}
	return s
}
