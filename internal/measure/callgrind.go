// Instruction counts by callgrind: runs of their own, a few per build,
// stored beside the build's timed runs and never among them.

package measure

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/profile"
	"github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
	"github.com/perfbot/perfbot/internal/version"
)

const (
	// CallgrindRuns is how many callgrind runs count each build's
	// instructions; they must agree (CallgrindAgreement).
	CallgrindRuns = 3
	// CallgrindAgreement is the largest spread of a build's callgrind
	// counts, relative to their median, that is still one count: a
	// program whose work depends on the clock (a benchmark that runs
	// for a fixed time) or on randomness spreads further, and its
	// instructions are not a deterministic metric.
	CallgrindAgreement = 1e-4
	// CallgrindSlack is the spread, in instructions, that counts as one
	// count whatever the total: the start of a process (the shell, the
	// dynamic loader) varies by some hundreds of instructions with the
	// run's environment (its run number, paths), which is noise of a
	// small program, not work that depends on the clock.
	CallgrindSlack = 2000
	// CallgrindSlowdown multiplies the job's run timeout for a run under
	// callgrind.
	CallgrindSlowdown = 100
	// CallgrindSuffix ends the store's variant ID of a build's callgrind
	// runs: VariantID(v) + CallgrindSuffix, which no variant's own ID can
	// be (those end in "@" and eight hex digits).
	CallgrindSuffix = "+callgrind"
	// CallgrindDir is the folder, in a callgrind run's log folder, of its
	// callgrind.out.<pid> files (one per process of the run).
	CallgrindDir = "callgrind"
)

// CallgrindVariant is the store's variant ID of the callgrind runs of a
// build of variant ID vid.
func CallgrindVariant(vid string) string { return vid + CallgrindSuffix }

// countInstructions counts, for a job whose instructions metric this
// machine counts with callgrind, the instructions of every built target:
// CallgrindRuns runs under callgrind, each stored, those already stored
// reused (a build's count does not change). A target whose runs do not
// agree is an error: its instructions are not deterministic.
func (m *measurement) countInstructions(ctx context.Context, remote bool) error {
	s := instructionSpec(m.j)
	if s == nil {
		return nil
	}
	if remote {
		if s.Counter == metric.CounterCallgrind {
			return fmt.Errorf("%s: metric %s: counter callgrind takes runs of its own, which a fleet's machines do not take; use counter: perf (machines with hardware counters)", m.j.File, s.InstructionsName())
		}
		return nil // each machine counts beside its runs (perf), see Local
	}
	c, err := ResolveCounter(s.Counter)
	if err != nil {
		return fmt.Errorf("%s: metric %s: %w", m.j.File, s.InstructionsName(), err)
	}
	if c != metric.CounterCallgrind {
		return nil
	}
	if m.opt.CallgrindRuns == 0 {
		m.opt.CallgrindRuns = CallgrindRuns
	}
	m.instr = make([]float64, len(m.out.Targets))
	for i, t := range m.out.Targets {
		if t.Build == nil || (m.opt.Instructions != nil && (i >= len(m.opt.Instructions) || !m.opt.Instructions[i])) {
			continue
		}
		if m.instr[i], err = m.callgrindCount(ctx, i, s); err != nil {
			return err
		}
	}
	return nil
}

// callgrindCount is target i's instruction count: the median of its
// callgrind runs, taken where the store lacks them.
func (m *measurement) callgrindCount(ctx context.Context, i int, s *metric.Spec) (float64, error) {
	t := m.out.Targets[i]
	vid := CallgrindVariant(VariantID(t.Target.Variant))
	recs, err := m.opt.Store.Runs(ctx, m.j.Key(), t.Target.Commit.Hash, vid)
	if err != nil {
		return 0, err
	}
	have := map[int]store.RunRecord{}
	for _, r := range recs {
		have[r.Index] = r
	}
	var counts []float64
	for idx := 1; idx <= m.opt.CallgrindRuns; idx++ {
		r, ok := have[idx]
		if !ok || r.Status != store.RunOK {
			key := store.RunKey{Job: m.j.Key(), Commit: t.Target.Commit.Hash, Variant: vid, Index: idx}
			rec, err := m.callgrindRun(ctx, key, t, s)
			if err != nil {
				return 0, err
			}
			if err := m.opt.Store.PutRun(ctx, rec); err != nil {
				return 0, fmt.Errorf("storing callgrind run %d of %s: %w", idx, t.Target, err)
			}
			r = *rec
		}
		if r.Status != store.RunOK {
			return 0, fmt.Errorf("%s: metric %s: callgrind run %d of %s failed (%s): %s; its logs are in %s",
				m.j.File, s.InstructionsName(), idx, t.Target, r.Status, r.Reason, filepath.Dir(r.StdoutPath))
		}
		for _, v := range r.Values {
			if v.Name == s.InstructionsName() {
				counts = append(counts, v.Value)
			}
		}
	}
	slices.Sort(counts)
	if len(counts) == 0 {
		return 0, fmt.Errorf("%s: metric %s: the callgrind runs of %s stored no count", m.j.File, s.InstructionsName(), t.Target)
	}
	med := counts[len(counts)/2]
	if spread := (counts[len(counts)-1] - counts[0]) / med; !CallgrindAgree(counts[0], counts[len(counts)-1]) {
		return 0, fmt.Errorf("%s: metric %s: the callgrind runs of %s disagree (%s instructions, a spread of %.2g%%, more than %.2g%% and %d instructions): the benchmark's instructions depend on the clock, randomness or its input, so they are no deterministic metric; make the run do fixed work, or count with counter: perf",
			m.j.File, s.InstructionsName(), t.Target, formatCounts(counts), 100*spread, 100*CallgrindAgreement, CallgrindSlack)
	}
	return med, nil
}

// CallgrindAgree reports whether the smallest and largest callgrind
// counts of a build are one count: within CallgrindAgreement of the
// larger, or CallgrindSlack instructions.
func CallgrindAgree(lo, hi float64) bool {
	return hi-lo <= max(CallgrindAgreement*hi, CallgrindSlack)
}

func formatCounts(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.0f", x)
	}
	return strings.Join(parts, ", ")
}

// callgrindRun takes one run of target t under callgrind (the run command
// as it runs, with its environment, in its build's worktree, pinned like
// the timed runs, every child process traced) and returns its record: the
// instruction count of every process summed, the only value it stores (its
// times are callgrind's, not the program's).
func (m *measurement) callgrindRun(ctx context.Context, key store.RunKey, t TargetOutcome, s *metric.Spec) (*store.RunRecord, error) {
	dir, err := RunLogDir(m.opt.Store, key)
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, CallgrindDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	rec := &store.RunRecord{RunKey: key, Session: m.out.Session, Machine: MachineID(), Version: version.Get().String(),
		CPU: m.opt.CPU, StdoutPath: filepath.Join(dir, "stdout"), StderrPath: filepath.Join(dir, "stderr")}
	j := m.j
	res, err := run.Exec(ctx, run.Spec{
		Command:    CallgrindCommand(counters.valgrind, out, j.Run.Command),
		Dir:        t.Build.Worktree,
		Env:        build.Env(j, key.Commit, t.Target.Variant, j.Run.Env),
		Timeout:    j.Run.Timeout * CallgrindSlowdown,
		CPU:        m.opt.CPU,
		StdoutPath: rec.StdoutPath,
		StderrPath: rec.StderrPath,
	})
	if err != nil {
		return nil, fmt.Errorf("callgrind run of %s: %w", gitrev.Short(key.Commit), err)
	}
	rec.Started, rec.Usage, rec.ExitCode = res.Started, res.Usage, res.ExitCode
	stderr, _ := os.ReadFile(rec.StderrPath)
	switch {
	case res.TimedOut:
		rec.Status, rec.Reason = store.RunTimeout, fmt.Sprintf("timed out after %v (%d times the run timeout)", j.Run.Timeout*CallgrindSlowdown, CallgrindSlowdown)
	case res.Signal != "":
		rec.Status, rec.Reason = store.RunCrashed, "killed by signal "+res.Signal+lastLine(stderr)
	case res.ExitCode != 0:
		rec.Status, rec.Reason = store.RunCrashed, fmt.Sprintf("exit status %d under callgrind%s", res.ExitCode, lastLine(stderr))
	default:
		n, err := CallgrindTotal(out)
		if err != nil {
			rec.Status, rec.Reason = store.RunError, storable(err.Error())
			break
		}
		rec.Status = store.RunOK
		rec.Values = []metric.Value{{Name: s.InstructionsName(), Unit: metric.UnitInstructions, Better: metric.LowerIsBetter, Value: n}}
	}
	return rec, nil
}

// CallgrindCommand is the shell command that runs command (as run.Exec
// runs it: sh -c) under valgrind's callgrind, every child traced, one
// callgrind.out.<pid> file per process in dir; valgrind's own messages
// are errors only (-q).
func CallgrindCommand(valgrind, dir, command string) string {
	return "exec " + shQuote(valgrind) + " -q --tool=callgrind --trace-children=yes --callgrind-out-file=" +
		shQuote(filepath.Join(dir, "callgrind.out.%p")) + " -- sh -c " + shQuote(command)
}

// CallgrindTotal sums the instruction counts (the summary lines) of
// every callgrind.out file in dir: the instructions of every process of
// a run.
func CallgrindTotal(dir string) (float64, error) {
	files, err := filepath.Glob(filepath.Join(dir, "callgrind.out.*"))
	if err != nil {
		return 0, err
	}
	if len(files) == 0 {
		return 0, fmt.Errorf("callgrind wrote no callgrind.out file in %s", dir)
	}
	var total float64
	for _, f := range files {
		h, err := profile.Read(f)
		if err != nil {
			return 0, fmt.Errorf("reading callgrind's count: %w", err)
		}
		if h.Unit != "Ir" || !(h.Total > 0) || math.IsInf(h.Total, 0) {
			return 0, fmt.Errorf("%s: no instruction count (events %s, total %v)", f, h.Unit, h.Total)
		}
		total += h.Total
	}
	return total, nil
}

// shQuote quotes s for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
