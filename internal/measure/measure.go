// Package measure takes the runs of a job on several commits: it builds each
// (commit, variant) target, then runs the benchmark the number of times the
// job asks for, interleaved across targets in randomised balanced order,
// pinned to one CPU, and commits every run to the store as it finishes.
// Runs the store already holds are reused, so an interrupted measurement
// resumes where it stopped.
//
// A run is a pure function of (job, commit, variant, run number): [RunOnce]
// is that function, so a job queue can later hand out single runs.
package measure

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/internal/build"
	"github.com/perfbot/perfbot/internal/gitrev"
	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/metric"
	"github.com/perfbot/perfbot/internal/run"
	"github.com/perfbot/perfbot/internal/store"
)

// Target is one commit built under one variant.
type Target struct {
	Commit  gitrev.Commit
	Variant job.Variant
}

func (t Target) String() string {
	if t.Variant.Name == "" {
		return t.Commit.Short()
	}
	return t.Commit.Short() + "+" + t.Variant.Name
}

// Progress receives events as the measurement goes on. Implementations must
// not block for long.
type Progress interface {
	// Building is called before each target is built (or found in the cache).
	Building(i, n int, t Target)
	// Built is called after each build, with its error.
	Built(i, n int, t Target, r *build.Result, err error)
	// Ran is called after each stored run; done counts runs taken so far in
	// this measurement, of total to take.
	Ran(done, total int, t Target, r *store.RunRecord)
}

// Options tune a measurement.
type Options struct {
	Store   *store.Store
	Builder *build.Builder
	// Runs is the number of runs per target (default: the job's Runs).
	Runs int
	// CPU pins every run to that CPU; -1 for no pinning.
	CPU int
	// Rand orders the runs; nil means a source seeded from the job key.
	Rand     *rand.Rand
	Progress Progress // may be nil
	// KeepFailed keeps stored failed runs as they are; by default a
	// measurement takes them again (the first attempt's logs are kept in a
	// folder beside the new ones).
	KeepFailed bool
	// WholeRounds measures in whole rounds: the runs to compare are Runs
	// rounds in which one session ran every target (Outcome.Rounds). When
	// the store holds fewer (a commit joins a comparison, a session was
	// killed mid-round, a run failed), new rounds of every target are taken
	// under new run numbers; the incomplete rounds stay stored. Without it,
	// runs 1..Runs of each target are taken or reused one by one.
	WholeRounds bool
}

// Outcome is what a measurement produced, per target in the given order.
type Outcome struct {
	Targets []TargetOutcome
	Taken   int // runs taken now (not reused from the store)
	// Rounds are the run numbers to compare, with Options.WholeRounds: in
	// each, one session ran every target and every run succeeded (new
	// rounds are listed even where a run failed).
	Rounds []int
}

// TargetOutcome is one target's build and runs.
type TargetOutcome struct {
	Target   Target
	Build    *build.Result
	BuildErr error // wraps build.ErrFailed when the build command failed
	Runs     []store.RunRecord
}

// Measure builds every target and takes the missing runs. A target whose
// build fails gets BuildErr and no runs; the others are measured anyway. An
// error is returned only for failures of perfbot itself or an interruption
// (ctx), after everything finished so far has been stored.
func Measure(ctx context.Context, j *job.Job, targets []Target, opt Options) (*Outcome, error) {
	runs := opt.Runs
	if runs <= 0 {
		runs = j.Runs
	}
	rng := opt.Rand
	if rng == nil {
		rng = rand.New(rand.NewSource(SeedOf(j.Key())))
	}
	progress := opt.Progress
	if progress == nil {
		progress = nopProgress{}
	}
	if err := saveJob(ctx, opt.Store, j); err != nil {
		return nil, err
	}

	out := &Outcome{Targets: make([]TargetOutcome, len(targets))}
	for i, t := range targets {
		out.Targets[i].Target = t
		progress.Building(i, len(targets), t)
		res, err := opt.Builder.Build(ctx, j, t.Commit, t.Variant)
		progress.Built(i, len(targets), t, res, err)
		if err != nil {
			if !errors.Is(err, build.ErrFailed) {
				return out, err
			}
			out.Targets[i].BuildErr = err
			continue
		}
		out.Targets[i].Build = res
	}

	// What the store already holds.
	done := make([]map[int]bool, len(targets))
	stored := make([]map[int]store.RunRecord, len(targets))
	maxIndex := 0
	for i, t := range targets {
		done[i] = map[int]bool{}
		stored[i] = map[int]store.RunRecord{}
		if out.Targets[i].Build == nil {
			continue
		}
		recs, err := opt.Store.RunsWithoutValues(ctx, j.Key(), t.Commit.Hash, VariantID(t.Variant))
		if err != nil {
			return out, err
		}
		for _, r := range recs {
			// A failed run is taken again by a later measurement (the user
			// may have fixed its cause); its logs are kept beside.
			done[i][r.Index] = r.Status == store.RunOK || opt.KeepFailed
			stored[i][r.Index] = r
			maxIndex = max(maxIndex, r.Index)
		}
	}

	// The interleaved plan: round r runs every buildable target once, as
	// run number r+1.
	var plan []run.Slot
	if opt.WholeRounds {
		out.Rounds = completeRounds(stored, out.Targets)
		if missing := runs - len(out.Rounds); missing > 0 {
			// New rounds for every target, numbered after everything
			// stored, so that runs of one round are always interleaved.
			for _, s := range run.Schedule(len(targets), missing, rng) {
				if out.Targets[s.Commit].Build != nil {
					s.Round += maxIndex
					plan = append(plan, s)
				}
			}
			for r := 1; r <= missing; r++ {
				out.Rounds = append(out.Rounds, maxIndex+r)
			}
		} else {
			out.Rounds = out.Rounds[:runs]
		}
	} else {
		for _, s := range run.Schedule(len(targets), runs, rng) {
			if out.Targets[s.Commit].Build != nil && !done[s.Commit][s.Round+1] {
				plan = append(plan, s)
			}
		}
	}

	// Warm-ups, interleaved too, for targets that still have runs to take.
	if j.Warmup > 0 && len(plan) > 0 {
		need := map[int]bool{}
		for _, s := range plan {
			need[s.Commit] = true
		}
		for w := 0; w < j.Warmup; w++ {
			for i := range targets {
				if !need[i] {
					continue
				}
				if err := warmup(ctx, j, out.Targets[i], opt, w+1); err != nil {
					return out, err
				}
			}
		}
	}

	session := newSession()
	for n, s := range plan {
		t := out.Targets[s.Commit]
		key := store.RunKey{Job: j.Key(), Commit: t.Target.Commit.Hash, Variant: VariantID(t.Target.Variant), Index: s.Round + 1}
		rec, err := runOnce(ctx, j, key, t.Target.Variant, t.Build.Worktree, opt.CPU, opt.Store, session)
		if err != nil {
			return out, err
		}
		out.Taken++
		progress.Ran(n+1, len(plan), t.Target, rec)
	}

	for i, t := range targets {
		if out.Targets[i].Build == nil {
			continue
		}
		recs, err := opt.Store.RunsWithoutValues(ctx, j.Key(), t.Commit.Hash, VariantID(t.Variant))
		if err != nil {
			return out, err
		}
		out.Targets[i].Runs = recs
	}
	return out, nil
}

// completeRounds lists, in order, the run numbers at which every buildable
// target has a successful run and all of them share one session.
func completeRounds(stored []map[int]store.RunRecord, targets []TargetOutcome) []int {
	var first int = -1
	for i, t := range targets {
		if t.Build != nil {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	var rounds []int
	for idx, r0 := range stored[first] {
		ok := r0.Status == store.RunOK && r0.Session != ""
		for i, t := range targets {
			if !ok || t.Build == nil {
				continue
			}
			r, found := stored[i][idx]
			ok = found && r.Status == store.RunOK && r.Session == r0.Session
		}
		if ok {
			rounds = append(rounds, idx)
		}
	}
	slices.Sort(rounds)
	return rounds
}

// RunOnce takes run key.Index of the job on the built worktree, reads its
// metrics and commits the record to the store. A run that crashes, times out
// or lacks a metric is stored as failed with its reason. It returns an error
// only when perfbot itself failed or ctx was cancelled; the run in flight is
// then not stored.
func RunOnce(ctx context.Context, j *job.Job, key store.RunKey, v job.Variant, worktree string, cpu int, st *store.Store) (*store.RunRecord, error) {
	return runOnce(ctx, j, key, v, worktree, cpu, st, "")
}

// newSession names one measurement: runs it takes with the same index
// are interleaved pairs.
func newSession() string {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func runOnce(ctx context.Context, j *job.Job, key store.RunKey, v job.Variant, worktree string, cpu int, st *store.Store, session string) (*store.RunRecord, error) {
	dir := st.RunDir(key)
	if _, err := os.Stat(dir); err == nil {
		// An earlier attempt (failed, or in flight when perfbot was
		// killed): keep its logs.
		if err := os.Rename(dir, fmt.Sprintf("%s.attempt-%d", dir, time.Now().UnixNano())); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rec, err := execRun(ctx, j, key.Commit, v, worktree, cpu, dir)
	if err != nil {
		return nil, err
	}
	rec.RunKey = key
	rec.Session = session
	if err := st.PutRun(ctx, rec); err != nil {
		return nil, fmt.Errorf("storing run %d of %s: %w", key.Index, gitrev.Short(key.Commit), err)
	}
	return rec, nil
}

// execRun runs the benchmark once with logs in dir and classifies the result.
func execRun(ctx context.Context, j *job.Job, commit string, v job.Variant, worktree string, cpu int, dir string) (*store.RunRecord, error) {
	rec := &store.RunRecord{
		CPU:        cpu,
		StdoutPath: filepath.Join(dir, "stdout"),
		StderrPath: filepath.Join(dir, "stderr"),
	}
	res, err := run.Exec(ctx, run.Spec{
		Command:    j.Run.Command,
		Dir:        worktree,
		Env:        build.Env(j, commit, v, j.Run.Env),
		Timeout:    j.Run.Timeout,
		CPU:        cpu,
		StdoutPath: rec.StdoutPath,
		StderrPath: rec.StderrPath,
	})
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
	rec.Values = metric.Builtins(res.Usage)

	switch {
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
	o := metric.Output{Stdout: stdout, Stderr: stderr, Dir: worktree, Usage: res.Usage}
	var missing []string
	for i := range j.Metrics {
		vals, err := j.Metrics[i].Extract(o)
		if err != nil {
			missing = append(missing, err.Error())
			continue
		}
		rec.Values = append(rec.Values, vals...)
	}
	if len(missing) > 0 {
		rec.Status = store.RunNoMetric
		rec.Reason = strings.Join(missing, "; ")
		return rec, nil
	}
	rec.Status = store.RunOK
	return rec, nil
}

func warmup(ctx context.Context, j *job.Job, t TargetOutcome, opt Options, n int) error {
	dir := filepath.Join(opt.Store.Dir(), "warmup", gitrev.Short(t.Target.Commit.Hash)+"-"+t.Target.Variant.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	_, err := execRun(ctx, j, t.Target.Commit.Hash, t.Target.Variant, t.Build.Worktree, opt.CPU, dir)
	return err
}

// syncFile flushes a file to disk, best effort.
func syncFile(path string) {
	if f, err := os.Open(path); err == nil {
		_ = f.Sync()
		f.Close()
	}
}

// lastLine returns "; stderr: <last non-empty line>" or "".
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if l == "" {
		return ""
	}
	if len(l) > 200 {
		l = l[:200] + "..."
	}
	return "; stderr: " + l
}

// SeedOf derives a run-order seed from a string (a job key, commits): the
// same measurement gets the same order, different ones differ.
func SeedOf(s string) int64 {
	var h int64 = 1469598103934665603
	for _, c := range []byte(s) {
		h = (h ^ int64(c)) * 1099511628211
	}
	return h
}

type nopProgress struct{}

func (nopProgress) Building(int, int, Target)                    {}
func (nopProgress) Built(int, int, Target, *build.Result, error) {}
func (nopProgress) Ran(int, int, Target, *store.RunRecord)       {}

// VariantID is how runs of a variant are keyed in the store: "" for the
// plain build, else the name and a hash of the variant's environment, so
// that editing a variant in the job file does not reuse runs of the old one.
func VariantID(v job.Variant) string {
	if v.Name == "" {
		return ""
	}
	return v.Name + "@" + v.Key()[:8]
}

// saveJob records what the job key means, so stored runs stay explainable.
func saveJob(ctx context.Context, st *store.Store, j *job.Job) error {
	spec, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return st.PutJob(ctx, j.Key(), j.Name, spec)
}
